import { describe, expect, it } from 'vitest';
import { NoNodeError, OPEN_ACL_UNSAFE, type ZooKeeper } from '@zk/protocol';
import { LeaseLostError } from '../errors.js';
import { fakeClient } from '../testing/fake-client.js';
import { createdThenGone } from './attempt.js';
import { mutexDriver } from './drivers.js';
import { acquireNode } from './engine.js';

describe('a create whose Stat finds its node gone (3.4: the Stat is a second request)', () => {
  it('createdThenGone tells our deleted node (LeaseLostError) from a missing parent (undefined)', () => {
    const prefix = '/l/_c_x-lock-';
    const lost = createdThenGone(new NoNodeError(undefined, { op: 'create', path: `${prefix}0000000001` }), prefix, '/l');
    expect(lost).toBeInstanceOf(LeaseLostError);
    expect(lost!.message).toContain(`our node ${prefix}0000000001 is gone`);
    expect(createdThenGone(new NoNodeError(undefined, { op: 'create', path: prefix }), prefix, '/l')).toBeUndefined();
    expect(createdThenGone(new NoNodeError(undefined, { op: 'create', path: '/other/x' }), prefix, '/l')).toBeUndefined();
    expect(createdThenGone(new Error('x'), prefix, '/l')).toBeUndefined();
  });

  it('the acquire fails with LeaseLostError and creates no second node (negative control: a missing parent is made and the create tried again)', async () => {
    const creates: string[] = [];
    const client = (failure: (prefix: string) => Error): ZooKeeper =>
      fakeClient({
        state: 'connected',
        checkLeaseProof: () => undefined,
        defaultACL: () => OPEN_ACL_UNSAFE, // open: no path check
        createWithStat: (p: string) => {
          creates.push(p);
          return Promise.reject(creates.length === 1 ? failure(p) : new Error('second create'));
        },
        getChildren: () => Promise.resolve([]),
        create: () => Promise.resolve('/l'),
      });
    const spec = (zk: ZooKeeper) => ({ zk, path: '/l', driver: mutexDriver, data: Buffer.alloc(0), timeout: undefined, signal: undefined });
    const gone = await acquireNode(spec(client((p) => new NoNodeError(undefined, { op: 'create', path: `${p}0000000007` })))).catch((e: unknown) => e);
    expect(gone).toBeInstanceOf(LeaseLostError);
    expect(creates).toHaveLength(1);
    creates.length = 0;
    const parent = await acquireNode(spec(client((p) => new NoNodeError(undefined, { op: 'create', path: p })))).catch((e: unknown) => e);
    expect((parent as Error).message).toBe('second create');
    expect(creates).toHaveLength(2);
  });
});

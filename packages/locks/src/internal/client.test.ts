import { describe, expect, it, vi } from 'vitest';
import { InvalidArgumentError, type ZooKeeper } from '@zk/protocol';
import { Mutex } from '../locks/mutex.js';
import { MultiLock } from '../locks/multi-lock.js';
import { SharedCount } from '../shared/shared-count.js';
import { checkClient } from './client.js';

/** A client with every member the recipes use, except `without`; records the requests it is asked for. */
function fakeClient(without: string[] = []): { zk: ZooKeeper; calls: string[] } {
  const calls: string[] = [];
  const members: Record<string, unknown> = { sessionTimeout: 6000, expiryDeadline: 0, quorumDeadline: 0, quorumRenewedBy: 0, state: 'connected' };
  for (const m of ['create', 'createWithStat', 'delete', 'exists', 'getData', 'getChildren', 'setData', 'multiRead', 'transaction', 'removeWatches', 'removeLocalWatch', 'onStateChange', 'holdQuorumProof', 'awaitQuorumDeadline']) {
    members[m] = (..._args: unknown[]) => {
      calls.push(m);
      return m === 'onStateChange' || m === 'holdQuorumProof' ? () => undefined : new Promise(() => undefined);
    };
  }
  for (const m of without) delete members[m];
  return { zk: members as unknown as ZooKeeper, calls };
}

describe('locks - a client of another version of @zk/protocol', () => {
  it('a client with every member the recipes use passes', () => {
    expect(() => checkClient(fakeClient().zk)).not.toThrow();
  });

  it('a client without the quorum proof (an older @zk/protocol) is refused before any request, naming what it lacks and why', async () => {
    const { zk, calls } = fakeClient(['holdQuorumProof', 'awaitQuorumDeadline', 'quorumDeadline']);
    const error = await new Mutex(zk, '/locks/a').acquire({ timeout: 1000 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidArgumentError);
    expect((error as InvalidArgumentError).argument).toBe('zk');
    expect((error as Error).message).toContain('holdQuorumProof(), awaitQuorumDeadline(), quorumDeadline');
    expect((error as Error).message).toContain('copy of @zk/protocol');
    await expect(new SharedCount(zk, '/count', 1).start()).rejects.toBeInstanceOf(InvalidArgumentError);
    expect(calls).toEqual([]);
  });

  it('something that is not a client is refused', () => {
    expect(() => checkClient(undefined as unknown as ZooKeeper)).toThrow(/must be a ZooKeeper client/);
  });
});

describe('multi-lock - a lock of another copy of @zk/locks', () => {
  it('is refused with a message naming the second copy, not "not a lock"', async () => {
    const { zk } = fakeClient();
    vi.resetModules();
    const copy = (await import('../index.js')) as typeof import('../index.js');
    expect(copy.Mutex).not.toBe(Mutex);
    const foreign = new copy.Mutex(zk, '/locks/b');
    expect(() => new MultiLock([new Mutex(zk, '/locks/a'), foreign])).toThrow(/element 1 is a lock of another copy of @zk\/locks/);
    expect(() => new MultiLock([new Mutex(zk, '/locks/a'), {} as Mutex])).toThrow(/element 1 is not a lock/);
  });
});

/**
 * AtomicInteger and AtomicValue (Curator's DistributedAtomicInteger and DistributedAtomicValue
 * layouts) against the real server: contended changes across sessions with promotion to the
 * mutex reaching the exact result, Curator's encodings (4 bytes big-endian; the bytes as they
 * are), 32-bit wrap-around, compare-and-set (an absent node is 0 / null, and is created), a
 * corrupted int refused with a typed error, the acl option on the node and its parents, bad input
 * refused before anything is sent, and no lock node or watch left behind.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CREATOR_ALL_ACL, digestId, InvalidArgumentError, Perm } from '@zk/protocol';
import { AtomicInteger, AtomicValue, AtomicValueError } from '@zk/locks';
import { TestSpace } from '../../harness/fixtures.js';

let space: TestSpace;

beforeEach(() => {
  space = new TestSpace();
});

afterEach(async () => {
  expect((await space.close()).leakedWatches).toBe(0);
});

const FEW_TRIES = { retry: { maxTries: 2, baseDelay: 1, maxDelay: 2 } } as const;

describe('atomic integer - DistributedAtomicInteger layout', () => {
  it('5 sessions x 30 contended increments reach exactly 150, each value handed out once; 4 bytes big-endian; no lock node left', async () => {
    const clients = await Promise.all(Array.from({ length: 5 }, () => space.client()));
    const counters = clients.map((zk) => new AtomicInteger(zk, '/ctr/i', { ...FEW_TRIES, promotedToLock: { lockPath: '/ctr/i-lock', retry: { maxTries: 100, baseDelay: 2, maxDelay: 20 } } }));
    const all = (await Promise.all(counters.map(async (c) => {
      const out = [];
      for (let i = 0; i < 30; i++) out.push(await c.increment());
      return out;
    }))).flat();
    expect(all.every((r) => r.succeeded && r.postValue === r.preValue + 1)).toBe(true);
    expect(new Set(all.map((r) => r.postValue)).size).toBe(150);
    const admin = await space.admin();
    expect((await admin.getData(`${space.root}/ctr/i`)).data.toString('hex')).toBe('00000096');
    expect(await space.children('/ctr/i-lock')).toEqual([]);
  });

  it('wraps at 32 bits as Java does; compareAndSet on an absent node counts it as 0; a 3-byte node is corrupted', async () => {
    const zk = await space.client();
    const c = new AtomicInteger(zk, '/ctr/w');
    expect((await c.get()).postValue).toBe(0);
    expect((await c.compareAndSet(1, 5)).succeeded).toBe(false);
    expect(await space.children('/ctr')).toEqual([]);
    expect((await c.compareAndSet(0, 2 ** 31 - 1)).succeeded).toBe(true);
    const wrapped = await c.increment();
    expect([wrapped.preValue, wrapped.postValue]).toEqual([2 ** 31 - 1, -(2 ** 31)]);
    expect((await c.subtract(1)).postValue).toBe(2 ** 31 - 1);
    await zk.setData('/ctr/w', Buffer.from([1, 2, 3]));
    const err = await c.get().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AtomicValueError);
    expect((err as AtomicValueError).kind).toBe('corrupted');
    expect((err as Error).message).toContain('not a 4-byte int');
  });
});

describe('atomic value - DistributedAtomicValue layout', () => {
  it('absent is null; compareAndSet(null, v) creates; a stale expected value fails and writes nothing; the bytes are stored as given', async () => {
    const zk = await space.client();
    const v = new AtomicValue(zk, '/cfg/a');
    expect((await v.get()).postValue).toBeNull();
    const created = await v.compareAndSet(null, 'one');
    expect([created.succeeded, created.preValue, created.postValue?.toString()]).toEqual([true, null, 'one']);
    const stale = await v.compareAndSet('zero', 'two');
    expect([stale.succeeded, stale.preValue?.toString(), stale.postValue?.toString()]).toEqual([false, 'one', 'one']);
    expect((await v.compareAndSet(Buffer.from('one'), Uint8Array.from([0, 255]))).succeeded).toBe(true);
    expect((await zk.getData('/cfg/a')).data).toEqual(Buffer.from([0, 255]));
    expect(await v.initialize('ignored')).toBe(false);
    await v.forceSet('forced');
    expect((await v.get()).postValue?.toString()).toBe('forced');
  });

  it('4 sessions x 15 contended updates appending an entry each: every entry once, none lost', async () => {
    const clients = await Promise.all(Array.from({ length: 4 }, () => space.client()));
    const values = clients.map((zk) => new AtomicValue(zk, '/cfg/list', { ...FEW_TRIES, promotedToLock: { lockPath: '/cfg/list-lock', retry: { maxTries: 100, baseDelay: 2, maxDelay: 20 } } }));
    const results = (await Promise.all(values.map(async (v, k) => {
      const out = [];
      for (let i = 0; i < 15; i++) out.push(await v.update((current) => `${current?.toString() ?? ''}${k}.${i};`));
      return out;
    }))).flat();
    expect(results.every((r) => r.succeeded)).toBe(true);
    const entries = (await values[0]!.get()).postValue!.toString().split(';').filter(Boolean);
    expect(entries).toHaveLength(60);
    expect(new Set(entries).size).toBe(60);
    expect(await space.children('/cfg/list-lock')).toEqual([]);
  });

  it('the acl option covers the node and its container parents; bad input is refused before anything is sent', async () => {
    const zk = await space.client({ auth: [{ scheme: 'digest', auth: 'owner:pw' }] });
    const v = new AtomicValue(zk, '/owned/deep/v', { acl: CREATOR_ALL_ACL });
    await v.trySet('x');
    const owned = [{ perms: Perm.ALL, id: digestId('owner', 'pw') }];
    for (const p of ['/owned', '/owned/deep', '/owned/deep/v']) expect({ p, acl: (await zk.getACL(p)).acl }).toEqual({ p, acl: owned });
    await zk.deleteRecursive('/owned');
    expect(() => new AtomicValue(zk, 'relative')).toThrow(InvalidArgumentError);
    expect(() => new AtomicInteger(zk, '/x', { promotedToLock: { lockPath: '/x' } })).toThrow(InvalidArgumentError);
    const before = zk.pendingRequests;
    await expect(v.trySet(42 as unknown as string)).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(new AtomicInteger(zk, '/n').add(2 ** 31)).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(new AtomicInteger(zk, '/n').add(1.5)).rejects.toBeInstanceOf(InvalidArgumentError);
    expect(zk.pendingRequests).toBe(before);
    expect(await space.children('/n')).toEqual([]);
  });
});

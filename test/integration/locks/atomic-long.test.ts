/**
 * AtomicLong (Curator's DistributedAtomicLong layout) against the real server: contended
 * increments across sessions reaching the exact total, promotion to the mutex, Curator's
 * encoding and operations (get, initialize, forceSet, trySet, compareAndSet, wrap-around), a
 * corrupted node refused with a typed error, an abort between tries, a loser's back-off (never
 * under 3/4 of its cap), and no lock node or watch left behind.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AtomicLong, AtomicValueError, Mutex } from '@zk/locks';
import { TestSpace } from '../../harness/fixtures.js';

let space: TestSpace;

beforeEach(() => {
  space = new TestSpace();
});

afterEach(async () => {
  expect((await space.close()).leakedWatches).toBe(0);
});

describe('atomic long - DistributedAtomicLong layout', () => {
  it('6 sessions x 30 contended increments reach exactly 180; every increment succeeded; 8 bytes big-endian; the promoted mutex leaves no node', async () => {
    const clients = await Promise.all(Array.from({ length: 6 }, () => space.client()));
    // Few optimistic tries, so that contention promotes to the mutex.
    const counters = clients.map((zk) => new AtomicLong(zk, '/ctr/a', { retry: { maxTries: 2, baseDelay: 1, maxDelay: 2 }, promotedToLock: { lockPath: '/ctr/a-lock', retry: { maxTries: 100, baseDelay: 2, maxDelay: 20 } } }));
    const results = await Promise.all(counters.map(async (c) => {
      const out = [];
      for (let i = 0; i < 30; i++) out.push(await c.increment());
      return out;
    }));
    const all = results.flat();
    expect(all.every((r) => r.succeeded)).toBe(true);
    expect(all.every((r) => r.postValue === r.preValue + 1n)).toBe(true);
    expect(new Set(all.map((r) => r.postValue)).size).toBe(180); // every value handed out once
    const promoted = all.filter((r) => r.stats.promotedTries > 0).length;
    console.log(`atomic long: 180 increments, ${promoted} promoted to the mutex, ${all.reduce((n, r) => n + r.stats.optimisticTries, 0)} optimistic tries`);
    expect((await counters[0]!.get()).postValue).toBe(180n);
    const admin = await space.admin();
    expect((await admin.getData(`${space.root}/ctr/a`)).data.toString('hex')).toBe('00000000000000b4');
    expect(await admin.getChildren(`${space.root}/ctr/a-lock`).catch(() => [])).toEqual([]);
  });

  it("get, initialize, forceSet, trySet, add, subtract, compareAndSet as Curator's; an absent node reads 0 and compareAndSet(0, x) creates it", async () => {
    const zk = await space.client();
    const c = new AtomicLong(zk, '/ctr/ops');
    expect(await c.get()).toMatchObject({ succeeded: true, preValue: 0n, postValue: 0n });
    expect(await c.compareAndSet(1, 5)).toMatchObject({ succeeded: false, preValue: 0n, postValue: 0n });
    expect(await zk.exists('/ctr/ops')).toBeNull();
    expect(await c.compareAndSet(0, 5)).toMatchObject({ succeeded: true, preValue: 0n, postValue: 5n });
    expect(await c.initialize(9)).toBe(false);
    expect(await c.add(10n)).toMatchObject({ succeeded: true, preValue: 5n, postValue: 15n });
    expect(await c.subtract(20)).toMatchObject({ succeeded: true, preValue: 15n, postValue: -5n });
    expect(await c.decrement()).toMatchObject({ postValue: -6n });
    expect(await c.trySet(2n ** 63n - 1n)).toMatchObject({ succeeded: true, postValue: 2n ** 63n - 1n });
    expect(await c.increment()).toMatchObject({ succeeded: true, postValue: -(2n ** 63n) }); // Java's long wraps
    await c.forceSet(42);
    expect((await c.get()).postValue).toBe(42n);
    const fresh = new AtomicLong(zk, '/ctr/fresh/deep');
    expect(await fresh.initialize(7)).toBe(true);
    expect((await fresh.get()).postValue).toBe(7n);
    await new AtomicLong(zk, '/ctr/forced').forceSet(-1);
    expect((await zk.getData('/ctr/forced')).data.toString('hex')).toBe('ffffffffffffffff');
  });

  it('a node of 1 to 7 bytes is refused with AtomicValueError (corrupted); empty data reads 0', async () => {
    const zk = await space.client();
    await zk.create('/bad', Buffer.from([1, 2, 3]));
    const c = new AtomicLong(zk, '/bad');
    await expect(c.increment()).rejects.toMatchObject({ name: 'AtomicValueError', kind: 'corrupted' });
    await expect(c.get()).rejects.toBeInstanceOf(AtomicValueError);
    expect((await zk.getData('/bad')).data).toHaveLength(3);
    await zk.setData('/bad', Buffer.alloc(0));
    expect(await c.increment()).toMatchObject({ succeeded: true, preValue: 0n, postValue: 1n });
  });

  it('an aborted change rejects with the reason and writes nothing; a promoted change waits for the mutex and leaves no lock node', async () => {
    const [a, b] = await Promise.all([space.client(), space.client()]);
    const c = new AtomicLong(a, '/ctr/p', { retry: { maxTries: 1 }, promotedToLock: { lockPath: '/ctr/p-lock', timeout: 200 } });
    await expect(c.increment({ signal: AbortSignal.abort(new Error('stop')) })).rejects.toThrow('stop');
    expect(await a.exists('/ctr/p')).toBeNull();
    // The mutex is only taken after a lost optimistic race; held elsewhere, it does not block an uncontended change.
    const holder = await new Mutex(b, '/ctr/p-lock').acquire();
    expect(await c.increment()).toMatchObject({ succeeded: true, postValue: 1n, stats: { optimisticTries: 1, promotedTries: 0 } });
    await holder.release();
    expect(await a.getChildren('/ctr/p-lock').catch(() => [])).toEqual([]);
  });

  it('a loser backs off at least 3/4 of the cap: 3 lost tries take 2 back-offs of 30-40 ms each, and write nothing', async () => {
    const zk = await space.client();
    const c = new AtomicLong(zk, '/ctr/b', { retry: { maxTries: 3, baseDelay: 40, maxDelay: 40 } });
    expect(await c.initialize(5n)).toBe(true);
    // Every conditional write goes out with a version the node does not have: the server answers BadVersion, each try loses.
    const setData = zk.setData.bind(zk);
    Object.defineProperty(zk, 'setData', { configurable: true, value: (path: string, data: Buffer, options: { version?: number }) => setData(path, data, { ...options, version: (options.version ?? 0) + 1000 }) });
    const spent = [];
    for (let i = 0; i < 3; i++) {
      const r = await c.increment();
      expect(r).toMatchObject({ succeeded: false, preValue: 5n, postValue: 5n, stats: { optimisticTries: 3, promotedTries: 0 } });
      spent.push(r.stats.optimisticMs);
    }
    delete (zk as { setData?: unknown }).setData;
    console.log(`atomic long back-off: 3 changes of 3 lost tries took ${spent.join(', ')} ms (2 back-offs each, 30-40 ms apiece)`);
    // Two back-offs of 30 ms at least, less 1 ms each that a timer may fire early against performance.now().
    // Full jitter (0-40 ms) sums to 58 ms or more about 1 time in 7: three changes pass about 1 time in 300.
    for (const ms of spent) expect(ms).toBeGreaterThanOrEqual(58);
    expect((await c.get()).postValue).toBe(5n);
  });
});

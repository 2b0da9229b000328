/**
 * MultiLock against the real server: one global order (no deadlock between overlapping sets in
 * different orders), all or nothing within one deadline or signal, one handle whose signal
 * aborts when any part is lost. Curator's InterProcessMultiLock: test/interop/multi-lock.test.ts.
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ChannelName, InvalidArgumentError, TransactionError, ZooKeeper, type RequestStartMessage } from '@zk/protocol';
import {
  ExclusiveLock,
  LeaseLostError,
  LockAbortedError,
  LockError,
  LockTimeoutError,
  LockUpgradeError,
  MultiLock,
  Mutex,
  NotHeldError,
  ReadWriteLock,
  revoke,
  RevocationRequestedError,
  type LockBase,
} from '@zk/locks';
import { waitFor } from '../../harness/index.js';
import { proxyToServer, TestSpace } from '../../harness/fixtures.js';

let space: TestSpace;

beforeEach(() => {
  space = new TestSpace();
});

afterEach(async () => {
  expect((await space.close()).leakedWatches).toBe(0);
});

/** Children of a lock directory. */
async function queue(path: string): Promise<string[]> {
  const admin = await space.admin();
  return (await admin.getChildren(`${space.root}${path}`).catch(() => [] as string[])).sort();
}

function queued(path: string, n: number): Promise<true> {
  return waitFor(`${n} nodes under ${path}`, async () => ((await queue(path)).length === n ? true : undefined), 10_000, 10);
}

/** Resolves when `signal` aborts, with its reason. */
function aborted(signal: AbortSignal): Promise<unknown> {
  return new Promise((resolve) => (signal.aborted ? resolve(signal.reason) : signal.addEventListener('abort', () => resolve(signal.reason), { once: true })));
}

/** Records the creates and deletes sent under `prefix` while `fn` runs: [op, lock path]. */
async function recordOps(prefix: string, fn: () => Promise<void>): Promise<string[]> {
  const ops: string[] = [];
  const onStart = (m: unknown) => {
    const { op, path } = m as RequestStartMessage;
    if (!path?.startsWith(prefix)) return;
    // create2, or a plain create on a 3.4 server (which has no create2)
    if (op === 15 || op === 1) ops.push(`create ${path.slice(0, path.lastIndexOf('/'))}`);
    if (op === 2) ops.push(`delete ${path.slice(0, path.lastIndexOf('/'))}`);
  };
  subscribe(ChannelName.requestStart, onStart);
  try {
    await fn();
  } finally {
    unsubscribe(ChannelName.requestStart, onStart);
  }
  return ops;
}

describe('multi-lock - order and handle', () => {
  it('acquires in path order whatever the given order, releases in reverse, one token per part', async () => {
    const zk = await space.client();
    const multi = new MultiLock([new Mutex(zk, '/ml/o/z'), new Mutex(zk, '/ml/o/a'), new Mutex(zk, '/ml/o/m')]);
    expect(multi.paths).toEqual(['/ml/o/a', '/ml/o/m', '/ml/o/z']);
    await (await multi.acquire()).release(); // the parents exist now
    let tokens: ReadonlyMap<string, bigint> = new Map();
    let max = 0n;
    const ops = await recordOps('/ml/o/', async () => {
      const lease = await multi.acquire();
      expect(lease.paths).toEqual(['/ml/o/a', '/ml/o/m', '/ml/o/z']);
      expect(lease.held).toBe(true);
      tokens = lease.fencingTokens;
      max = lease.fencingToken;
      for (const p of lease.paths) expect((await queue(p)).length).toBe(1);
      await lease.release();
    });
    expect(ops).toEqual(['create /ml/o/a', 'create /ml/o/m', 'create /ml/o/z', 'delete /ml/o/z', 'delete /ml/o/m', 'delete /ml/o/a']);
    expect([...tokens.keys()]).toEqual(['/ml/o/a', '/ml/o/m', '/ml/o/z']);
    expect(tokens.get('/ml/o/a')! < tokens.get('/ml/o/m')! && tokens.get('/ml/o/m')! < tokens.get('/ml/o/z')!).toBe(true);
    expect(max).toBe(tokens.get('/ml/o/z'));
    for (const p of multi.paths) expect(await queue(p)).toEqual([]);
  });

  it('fencing tokens grow with each holder; fenced() checks every part in one transaction', async () => {
    const [a, b, admin] = await Promise.all([space.client(), space.client(), space.admin()]);
    await a.create('/data', 'v0');
    const make = (zk: ZooKeeper) => new MultiLock([new Mutex(zk, '/ml/f/p2'), new Mutex(zk, '/ml/f/p1')]);
    let previous: { max: bigint; parts: bigint[] } | undefined;
    for (const [i, zk] of [a, b, a, b].entries()) {
      const lease = await make(zk).acquire();
      const parts = [...lease.fencingTokens.values()];
      if (previous) {
        expect(lease.fencingToken > previous.max).toBe(true);
        parts.forEach((t, k) => expect(t > previous!.parts[k]!).toBe(true));
      }
      previous = { max: lease.fencingToken, parts };
      await lease.fenced().setData('/data', `v${i + 1}`).commit();
      await lease.release();
    }
    expect((await a.getData('/data')).data.toString()).toBe('v4');

    const lease = await make(a).acquire();
    await admin.delete(`${space.root}${lease.nodes[1]}`);
    const err = await lease.fenced().setData('/data', 'stale').commit().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TransactionError);
    expect((err as TransactionError).failedIndex).toBe(1);
    expect((await a.getData('/data')).data.toString()).toBe('v4');
    await aborted(lease.signal);
    await lease.release();

    const split = await new MultiLock([new Mutex(a, '/ml/f/s1'), new Mutex(b, '/ml/f/s2')]).acquire();
    expect(() => split.fenced()).toThrow(LockError);
    await split.release();
  });

  it('the signal aborts when one part is lost: its node deleted, or its session closed; release still frees the rest', async () => {
    const [a, admin] = await Promise.all([space.client(), space.admin()]);
    const b = await space.client();
    const lease = await new MultiLock([new Mutex(a, '/ml/s/p1'), new Mutex(b, '/ml/s/p2')]).acquire();
    await admin.delete(`${space.root}${lease.nodes[0]}`);
    const reason = await aborted(lease.signal);
    expect(reason).toBeInstanceOf(LeaseLostError);
    expect((reason as LeaseLostError).path).toBe('/ml/s/p1');
    expect(lease.held).toBe(false);
    expect(() => lease.assertHeld()).toThrow(LeaseLostError);
    expect(lease.leases[1]!.held).toBe(true);
    await lease.release();
    expect(await queue('/ml/s/p2')).toEqual([]);

    const c = await space.client();
    const second = await new MultiLock([new Mutex(a, '/ml/s/q1'), new Mutex(c, '/ml/s/q2')]).acquire();
    await c.close();
    expect(((await aborted(second.signal)) as LeaseLostError).path).toBe('/ml/s/q2');
    await second.release();
    expect(await queue('/ml/s/q1')).toEqual([]);
    expect(await queue('/ml/s/q2')).toEqual([]);
  });

  it('the signal aborts when the session of one part is cut off, before another client can take that part', async () => {
    const proxy = await proxyToServer();
    try {
      const [a, other] = await Promise.all([space.client(), space.client()]);
      const cut = await ZooKeeper.connect(`${proxy.connectString}${space.root}`, { sessionTimeout: 3000, connectTimeout: 1000 });
      const lease = await new MultiLock([new Mutex(a, '/ml/c/p1'), new Mutex(cut, '/ml/c/p2')]).acquire();
      let abortedAt = 0;
      lease.signal.addEventListener('abort', () => (abortedAt = performance.now()));
      proxy.block();
      const next = await new Mutex(other, '/ml/c/p2').acquire({ timeout: 30_000 });
      const acquiredAt = performance.now();
      expect(lease.signal.reason).toMatchObject({ name: 'LeaseLostError', path: '/ml/c/p2' });
      expect(abortedAt).toBeGreaterThan(0);
      expect(abortedAt).toBeLessThanOrEqual(acquiredAt);
      expect(next.fencingToken > lease.fencingTokens.get('/ml/c/p2')!).toBe(true);
      await lease.release(); // p1 is deleted; p2's delete goes on in the background until the session ends
      expect(await queue('/ml/c/p1')).toEqual([]);
      await next.release();
      await cut.close();
    } finally {
      await proxy.close();
    }
  });

  it('run(): the MultiLock and each part are reentrant inside; every part is released after', async () => {
    const zk = await space.client();
    const [m1, m2] = [new Mutex(zk, '/ml/r/1'), new Mutex(zk, '/ml/r/2')];
    const multi = new MultiLock([m1, m2]);
    const result = await multi.run(async (outer) => {
      const again = await multi.acquire({ timeout: 0 });
      expect(again.nodes).toEqual(outer.nodes);
      await again.release();
      const part = await m2.acquire({ timeout: 0 });
      expect(part.node).toBe(outer.nodes[1]);
      await part.release();
      expect(outer.held).toBe(true);
      return 'done';
    });
    expect(result).toBe('done');
    expect(await queue('/ml/r/1')).toEqual([]);
    expect(await queue('/ml/r/2')).toEqual([]);
  });

  it('mixes lock kinds on distinct paths; a read part still shares with other readers', async () => {
    const [a, b] = await Promise.all([space.client(), space.client()]);
    const reader = await new ReadWriteLock(b, '/ml/k/rw').readLock().acquire();
    const multi = new MultiLock([new ReadWriteLock(a, '/ml/k/rw').readLock(), new ExclusiveLock(a, '/ml/k/x'), new ReadWriteLock(a, '/ml/k/w').writeLock(), new Mutex(a, '/ml/k/m')]);
    const lease = await multi.acquire({ timeout: 5000 });
    expect(lease.paths).toEqual(['/ml/k/m', '/ml/k/rw', '/ml/k/w', '/ml/k/x']);
    expect(await new Mutex(b, '/ml/k/m').tryAcquire()).toBeUndefined();
    expect(await new ExclusiveLock(b, '/ml/k/x').tryAcquire()).toBeUndefined();
    await lease.release();
    await reader.release();
  });
});

describe('multi-lock - all or nothing', () => {
  it('a part held elsewhere: a timed-out, an aborted and a try acquire leave no node and no watch on any part', async () => {
    const [a, b] = await Promise.all([space.client(), space.client()]);
    const held = await new Mutex(b, '/ml/n/p2').acquire();
    const multi = new MultiLock([new Mutex(a, '/ml/n/p1'), new Mutex(a, '/ml/n/p2'), new Mutex(a, '/ml/n/p3')]);
    const err = await multi.acquire({ timeout: 300 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LockTimeoutError);
    expect(err).toMatchObject({ path: '/ml/n/p2', timeout: 300 });
    expect(await queue('/ml/n/p1')).toEqual([]);
    expect(await queue('/ml/n/p2')).toHaveLength(1);
    expect(await queue('/ml/n/p3')).toEqual([]);
    expect(a.watchCount).toBe(0);

    const ac = new AbortController();
    const attempt = multi.acquire({ signal: ac.signal });
    await queued('/ml/n/p2', 2); // p1 taken, p2 queued
    expect(await queue('/ml/n/p1')).toHaveLength(1);
    ac.abort(new Error('changed my mind'));
    const aborted = await attempt.catch((e: unknown) => e);
    expect(aborted).toBeInstanceOf(LockAbortedError);
    expect((aborted as LockAbortedError).cause).toEqual(new Error('changed my mind'));
    expect(await queue('/ml/n/p1')).toEqual([]);
    expect(await queue('/ml/n/p2')).toHaveLength(1);
    expect(a.watchCount).toBe(0);

    expect(await multi.tryAcquire()).toBeUndefined();
    expect(await queue('/ml/n/p1')).toEqual([]);
    await held.release();
    const lease = await multi.tryAcquire();
    expect(lease?.held).toBe(true);
    await lease?.release();
  });

  it('the timeout bounds the whole acquire, not each part', async () => {
    const [a, b, c] = await Promise.all([space.client(), space.client(), space.client()]);
    const first = await new Mutex(b, '/ml/d/p1').acquire();
    const second = await new Mutex(c, '/ml/d/p2').acquire();
    const multi = new MultiLock([new Mutex(a, '/ml/d/p1'), new Mutex(a, '/ml/d/p2')]);
    const start = performance.now();
    const attempt = multi.acquire({ timeout: 1000 }).catch((e: unknown) => e);
    await queued('/ml/d/p1', 2);
    setTimeout(() => void first.release(), 500); // p1 comes free half-way; p2 never does
    const err = await attempt;
    const elapsed = performance.now() - start;
    expect(err).toMatchObject({ name: 'LockTimeoutError', path: '/ml/d/p2', timeout: 1000 });
    // A timeout per part (Curator's way) would have waited 500 + 1000 ms.
    expect(elapsed).toBeGreaterThanOrEqual(990);
    expect(elapsed).toBeLessThan(1400);
    expect(await queue('/ml/d/p1')).toEqual([]);
    await second.release();
  });

  it('a part failing with another error (a refused upgrade) releases the parts already taken', async () => {
    const zk = await space.client();
    const rw = new ReadWriteLock(zk, '/ml/u/z');
    const multi = new MultiLock([rw.writeLock(), new Mutex(zk, '/ml/u/a')]);
    await rw.readLock().run(async () => {
      await expect(multi.acquire()).rejects.toBeInstanceOf(LockUpgradeError);
      expect(await queue('/ml/u/a')).toEqual([]);
    });
    expect(await queue('/ml/u/z')).toEqual([]);
  });
});

describe('multi-lock - no deadlock', () => {
  it('two MultiLocks over [A, B] and [B, A]: 200 rounds each, one holder at a time, never stuck', async () => {
    const [a, b] = await Promise.all([space.client(), space.client()]);
    const ab = new MultiLock([new Mutex(a, '/ml/x/A'), new Mutex(a, '/ml/x/B')]);
    const ba = new MultiLock([new Mutex(b, '/ml/x/B'), new Mutex(b, '/ml/x/A')]);
    let inside = 0;
    let maxInside = 0;
    const rounds = { ab: 0, ba: 0 };
    const loop = async (multi: MultiLock, key: 'ab' | 'ba') => {
      for (let i = 0; i < 200; i++) {
        // A deadlock would show up as a LockTimeoutError here instead of a hang.
        const lease = await multi.acquire({ timeout: 10_000 });
        inside++;
        maxInside = Math.max(maxInside, inside);
        await new Promise((r) => setImmediate(r));
        inside--;
        rounds[key]++;
        await lease.release();
      }
    };
    await Promise.all([loop(ab, 'ab'), loop(ba, 'ba')]);
    expect(rounds).toEqual({ ab: 200, ba: 200 });
    expect(maxInside).toBe(1);
  }, 60_000);

  it('negative control: the same two locks taken one by one in opposite orders do deadlock (both time out)', async () => {
    const [a, b] = await Promise.all([space.client(), space.client()]);
    const heldA = await new Mutex(a, '/ml/y/A').acquire();
    const heldB = await new Mutex(b, '/ml/y/B').acquire();
    const results = await Promise.allSettled([new Mutex(a, '/ml/y/B').acquire({ timeout: 300 }), new Mutex(b, '/ml/y/A').acquire({ timeout: 300 })]);
    expect(results.map((r) => (r.status === 'rejected' ? (r.reason as Error).name : 'acquired'))).toEqual(['LockTimeoutError', 'LockTimeoutError']);
    await heldA.release();
    await heldB.release();
  });
});

describe('multi-lock - revocation', () => {
  it('revocationRequested aborts when any part is asked for', async () => {
    const [a, b] = await Promise.all([space.client(), space.client()]);
    const lease = await new MultiLock([new Mutex(a, '/ml/v/1'), new Mutex(a, '/ml/v/2')]).acquire({ revocable: true });
    expect(lease.revocationRequested.aborted).toBe(false);
    expect(await revoke(b, lease.nodes[1]!)).toBe(true);
    const reason = await aborted(lease.revocationRequested);
    expect(reason).toBeInstanceOf(RevocationRequestedError);
    expect((reason as RevocationRequestedError).node).toBe(lease.nodes[1]);
    expect(lease.held).toBe(true);
    await lease.release();
  });
});

describe('multi-lock - bad input', () => {
  it('refuses an empty list, duplicate paths, non-locks and bad options before anything is sent; release is idempotent', async () => {
    const zk = await space.client();
    const m = new Mutex(zk, '/ml/b/1');
    expect(() => new MultiLock([])).toThrow(InvalidArgumentError);
    expect(() => new MultiLock([m, m])).toThrow(/both on \/ml\/b\/1/);
    expect(() => new MultiLock([m, new ExclusiveLock(zk, '/ml/b/1')])).toThrow(InvalidArgumentError);
    const rw = new ReadWriteLock(zk, '/ml/b/rw');
    expect(() => new MultiLock([rw.readLock(), rw.writeLock()])).toThrow(InvalidArgumentError);
    expect(() => new MultiLock([m, {} as LockBase])).toThrow(InvalidArgumentError);
    expect(() => new MultiLock(undefined as unknown as LockBase[])).toThrow(InvalidArgumentError);
    const multi = new MultiLock([m, new Mutex(zk, '/ml/b/2')]);
    const pending = zk.pendingRequests;
    await expect(multi.acquire({ timeout: -1 })).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(multi.acquire({ timeout: Number.NaN })).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(multi.acquire({ revocable: 1 as unknown as boolean })).rejects.toBeInstanceOf(InvalidArgumentError);
    const ac = new AbortController();
    ac.abort(new Error('no'));
    await expect(multi.acquire({ signal: ac.signal })).rejects.toBeInstanceOf(LockAbortedError);
    expect(zk.pendingRequests).toBe(pending);
    expect(await zk.exists('/ml/b')).toBeNull();

    let lease;
    {
      await using scoped = await multi.acquire();
      lease = scoped;
      expect(lease.held).toBe(true);
    }
    expect(lease.held).toBe(false);
    await lease.release();
    await lease.release();
    expect(() => lease.assertHeld()).toThrow(NotHeldError);
    expect(await queue('/ml/b/1')).toEqual([]);
    expect(await queue('/ml/b/2')).toEqual([]);
  });
});

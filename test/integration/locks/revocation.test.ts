/**
 * Revocation (Curator's Revoker / makeRevocable protocol: the lock node's data set to
 * `__REVOKE__`) between our holders, and the lease guard that has to keep watching its node
 * after such a data change. Curator processes on either side: test/interop/multi-lock.test.ts.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '@zk/protocol';
import { ExclusiveLock, LeaseLostError, Mutex, ReadWriteLock, REVOKE_MESSAGE, RevocationRequestedError, revoke, revokeHolders } from '@zk/locks';
import { waitFor } from '../../harness/index.js';
import { TestSpace } from '../../harness/fixtures.js';

let space: TestSpace;

beforeEach(() => {
  space = new TestSpace();
});

afterEach(async () => {
  expect((await space.close()).leakedWatches).toBe(0);
});

/** Resolves when `signal` aborts. */
function aborted(signal: AbortSignal): Promise<unknown> {
  return new Promise((resolve) => (signal.aborted ? resolve(signal.reason) : signal.addEventListener('abort', () => resolve(signal.reason), { once: true })));
}

/** The lock's children in queue order (by sequence suffix). */
async function queue(path: string): Promise<string[]> {
  const admin = await space.admin();
  const children = await admin.getChildren(`${space.root}${path}`).catch(() => [] as string[]);
  return children.sort((a, b) => (a.slice(-10) < b.slice(-10) ? -1 : 1));
}

describe('lease guard - data changes', () => {
  it('a change of the lock node data does not blind the lease: its later deletion still aborts the signal', async () => {
    const [zk, admin] = await Promise.all([space.client(), space.admin()]);
    const lease = await new Mutex(zk, '/guard/a').acquire();
    await admin.setData(`${space.root}${lease.node}`, 'changed');
    await admin.setData(`${space.root}${lease.node}`, 'changed again');
    expect(lease.signal.aborted).toBe(false);
    await admin.delete(`${space.root}${lease.node}`);
    await waitFor('the lease signal to abort', () => (lease.signal.aborted ? true : undefined), 5000, 10);
    expect(lease.signal.reason).toBeInstanceOf(LeaseLostError);
    // Seen by the watch (deleted), or by the getData that sets it again when the delete came first (gone).
    expect((lease.signal.reason as Error).message).toMatch(/the lock node (was deleted|is gone)/);
    await lease.release();
  });
});

describe('revocation - between our holders', () => {
  it('a revocable holder gets the request as a signal, releases, and the waiter takes over', async () => {
    const [a, b] = await Promise.all([space.client(), space.client()]);
    const lease = await new Mutex(a, '/rv/m').acquire({ revocable: true });
    expect(lease.revocable).toBe(true);
    let released: Promise<void> | undefined;
    lease.revocationRequested.addEventListener('abort', () => (released = lease.release()), { once: true });
    const waiting = new Mutex(b, '/rv/m').acquire({ timeout: 10_000 });
    await waitFor('the waiter to queue', async () => ((await queue('/rv/m')).length === 2 ? true : undefined), 10_000, 10);
    expect(await revoke(b, lease.node)).toBe(true);
    const next = await waiting;
    await released;
    expect(lease.revocationRequested.reason).toBeInstanceOf(RevocationRequestedError);
    expect(lease.revocationRequested.reason).toMatchObject({ path: '/rv/m', node: lease.node });
    // A request is not a loss: the holder released it.
    expect((lease.signal.reason as Error).message).toMatch(/released/);
    expect(next.fencingToken > lease.fencingToken).toBe(true);
    expect(next.revocationRequested.aborted).toBe(false);
    await next.release();
    expect(await queue('/rv/m')).toEqual([]);
  });

  it('a holder that did not opt in is not told and keeps the lock; the request is Curator\'s bytes', async () => {
    const [a, b, admin] = await Promise.all([space.client(), space.client(), space.admin()]);
    const quiet = await new Mutex(a, '/rv/quiet').acquire();
    const listening = await new Mutex(a, '/rv/listening').acquire({ revocable: true });
    expect(quiet.revocable).toBe(false);
    expect(await revoke(b, quiet.node)).toBe(true);
    expect(await revoke(b, listening.node)).toBe(true);
    // Both notifications reach client a in order: once the second is delivered, the first was handled.
    await aborted(listening.revocationRequested);
    expect(quiet.revocationRequested.aborted).toBe(false);
    expect(quiet.held).toBe(true);
    const { data } = await admin.getData(`${space.root}${quiet.node}`);
    expect(data).toEqual(REVOKE_MESSAGE);
    expect(data.toString('latin1')).toBe('__REVOKE__');
    // Still guarded after the data change.
    await admin.delete(`${space.root}${quiet.node}`);
    await aborted(quiet.signal);
    expect(quiet.signal.reason).toBeInstanceOf(LeaseLostError);
    await quiet.release();
    await listening.release();
  });

  it('a request made while the acquire was queued is delivered as soon as the lock is held', async () => {
    const [a, b] = await Promise.all([space.client(), space.client()]);
    const first = await new Mutex(a, '/rv/queued').acquire();
    const waiting = new Mutex(b, '/rv/queued').acquire({ revocable: true });
    const [, theirs] = await waitFor('the waiter to queue', async () => {
      const q = await queue('/rv/queued');
      return q.length === 2 ? q : undefined;
    }, 10_000, 10);
    expect(await revoke(a, `/rv/queued/${theirs}`)).toBe(true);
    await first.release();
    const lease = await waiting;
    expect(lease.node).toBe(`/rv/queued/${theirs}`);
    expect(await aborted(lease.revocationRequested)).toBeInstanceOf(RevocationRequestedError);
    expect(lease.held).toBe(true);
    await lease.release();
  });

  it('revokeHolders asks the mutex holder, every reader, an ExclusiveLock holder, and nobody on a free lock', async () => {
    const [a, b, c, asker] = await Promise.all([space.client(), space.client(), space.client(), space.client()]);
    const m = await new Mutex(a, '/rv/h/m').acquire({ revocable: true });
    const waiter = new Mutex(b, '/rv/h/m').acquire({ revocable: true });
    await waitFor('the waiter to queue', async () => ((await queue('/rv/h/m')).length === 2 ? true : undefined), 10_000, 10);
    expect(await revokeHolders(asker, '/rv/h/m')).toEqual([m.node]);
    await aborted(m.revocationRequested);

    const r1 = await new ReadWriteLock(a, '/rv/h/rw').readLock().acquire({ revocable: true });
    const r2 = await new ReadWriteLock(c, '/rv/h/rw').readLock().acquire({ revocable: true });
    expect((await revokeHolders(asker, '/rv/h/rw')).sort()).toEqual([r1.node, r2.node].sort());
    await Promise.all([aborted(r1.revocationRequested), aborted(r2.revocationRequested)]);

    const x = await new ExclusiveLock(c, '/rv/h/x').acquire({ revocable: true });
    expect(await revokeHolders(asker, '/rv/h/x')).toEqual(['/rv/h/x']);
    await aborted(x.revocationRequested);

    expect(await revokeHolders(asker, '/rv/h/free')).toEqual([]);
    await m.release();
    const w = await waiter;
    // The waiter was not asked: only holders are.
    expect(w.revocationRequested.aborted).toBe(false);
    for (const l of [w, r1, r2, x]) await l.release();
  });

  it('a reentrant acquire shares the hold, and so the request', async () => {
    const [a, b] = await Promise.all([space.client(), space.client()]);
    const mutex = new Mutex(a, '/rv/reentrant');
    await mutex.run(async (outer) => {
      const inner = await mutex.acquire();
      expect(inner.node).toBe(outer.node);
      expect(await revoke(b, outer.node)).toBe(true);
      await aborted(inner.revocationRequested);
      expect(outer.revocationRequested.aborted).toBe(true);
      await inner.release();
    }, { revocable: true });
  });
});

describe('revocation - bad input and gone nodes', () => {
  it('a node that is gone: false; a node that is not ephemeral is refused and left alone; bad input is refused before anything is sent', async () => {
    const zk = await space.client();
    const lease = await new Mutex(zk, '/rv/bad').acquire();
    const node = lease.node;
    await lease.release();
    expect(await revoke(zk, node)).toBe(false);
    await zk.create('/rv/data', 'precious');
    await expect(revoke(zk, '/rv/data')).rejects.toBeInstanceOf(InvalidArgumentError);
    expect((await zk.getData('/rv/data')).data.toString()).toBe('precious');
    expect(await revokeHolders(zk, '/rv/data')).toEqual([]);
    const pending = zk.pendingRequests;
    await expect(revoke(zk, 'relative')).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(revokeHolders(zk, '/trailing/')).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(new Mutex(zk, '/rv/bad').acquire({ revocable: 'yes' as unknown as boolean })).rejects.toBeInstanceOf(InvalidArgumentError);
    expect(zk.pendingRequests).toBe(pending);
    expect(await queue('/rv/bad')).toEqual([]);
  });
});

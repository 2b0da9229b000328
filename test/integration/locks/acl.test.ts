/**
 * Recipes under a restrictive ACL (issue 27): with the lock path, its parents and its nodes under
 * CREATOR_ALL_ACL for the digest identity `owner`, a session that is unauthenticated or
 * authenticated as another user gets NoAuthError for everything that could take a hold away or
 * get in line, and the holder keeps its hold. The negative control, with the default world ACL,
 * shows what such a session could do before: delete the holder's node and hand the lock on.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { CREATOR_ALL_ACL, digestId, InvalidArgumentError, NoAuthError, OPEN_ACL_UNSAFE, Perm, ZooKeeper, type ACL } from '@zk/protocol';
import { ExclusiveLock, LeaderLatch, LeaderSelector, LeaseLostError, Mutex, UnsafeLockPathError, ReadWriteLock, Semaphore, SemaphoreMutex, SharedCount, revoke, revokeHolders, type Lease } from '@zk/locks';
import { outcome, waitFor } from '../../harness/index.js';
import { connectString, TestSpace } from '../../harness/fixtures.js';
import { holderAndWaiter, stillHeld } from './lease-checks.js';

const OWNER = { scheme: 'digest', auth: 'owner:owner-secret' };
const MALLORY = { scheme: 'digest', auth: 'mallory:mallory-secret' };
/** What the server stores for CREATOR_ALL_ACL created by a session authenticated as OWNER. */
const OWNED: ACL[] = [{ perms: Perm.ALL, id: digestId('owner', 'owner-secret') }];

let space: TestSpace;

beforeEach(() => {
  space = new TestSpace();
});

afterEach(async () => {
  // Owned nodes are out of the admin's reach: the owner removes what is left (containers are
  // reaped only after the server's next check).
  await using root = await ZooKeeper.connect(connectString(), { auth: [OWNER] });
  await root.deleteRecursive(space.root).catch(() => undefined);
  expect((await space.close()).leakedWatches).toBe(0);
});

/** The owner's client: authenticated as `owner`; `acl` as the client-wide option when given. */
function owner(acl?: readonly ACL[]): Promise<ZooKeeper> {
  return space.client({ auth: [OWNER], ...(acl ? { acl } : {}) });
}

/** An unauthenticated session and one authenticated as another digest user. */
async function intruders(): Promise<Array<[string, ZooKeeper]>> {
  return [
    ['unauthenticated', await space.client()],
    ['mallory', await space.client({ auth: [MALLORY] })],
  ];
}



describe('acl - a Mutex under CREATOR_ALL_ACL', () => {
  it('acl - its nodes and container parents carry the owner\'s identity', async () => {
    const zk = await owner();
    const lease = await new Mutex(zk, '/locks/job', { acl: CREATOR_ALL_ACL }).acquire();
    for (const p of ['/locks', '/locks/job', lease.node]) expect({ p, acl: (await zk.getACL(p)).acl }).toEqual({ p, acl: OWNED });
    await lease.release();
  });

  it('acl - an intruder cannot queue, create, delete or overwrite the holder\'s node or its parent, or revoke: NoAuthError, and the holder and its waiter keep their places', async () => {
    const [zk, zk2] = await Promise.all([owner(), owner()]);
    const { lease, keptTheirPlaces } = await holderAndWaiter(zk, zk2, '/locks/job');
    for (const [who, intruder] of await intruders()) {
      const tries: Record<string, () => Promise<unknown>> = {
        'queue on the mutex': () => new Mutex(intruder, '/locks/job').acquire({ timeout: 5000 }),
        'queue with its own open ACL': () => new Mutex(intruder, '/locks/job', { acl: OPEN_ACL_UNSAFE }).acquire({ timeout: 5000 }),
        'take the write lock': () => new ReadWriteLock(intruder, '/locks/job').writeLock().acquire({ timeout: 5000 }),
        'create under the lock path': () => intruder.create('/locks/job/x'),
        'delete the holder\'s node': () => intruder.delete(lease.node),
        'overwrite the holder\'s node': () => intruder.setData(lease.node, 'mine'),
        'delete the lock path': () => intruder.delete('/locks/job'),
        'delete the lock path recursively': () => intruder.deleteRecursive('/locks'),
        'change the lock path\'s ACL': () => intruder.setACL('/locks/job', OPEN_ACL_UNSAFE),
        'revoke the holder': () => revoke(intruder, lease.node),
        'revoke the holders': () => revokeHolders(intruder, '/locks/job'),
        'list the queue': () => intruder.getChildren('/locks/job'),
      };
      for (const [what, attempt] of Object.entries(tries)) expect({ who, what, error: await outcome(attempt()) }).toEqual({ who, what, error: expect.any(NoAuthError) });
    }
    await keptTheirPlaces();
  });

  it('acl - the same with the client-wide acl option and no recipe option', async () => {
    const zk = await owner(CREATOR_ALL_ACL);
    const lease = await new Mutex(zk, '/locks/provider').acquire();
    for (const p of ['/locks', '/locks/provider', lease.node]) expect((await zk.getACL(p)).acl).toEqual(OWNED);
    for (const [who, intruder] of await intruders()) {
      expect({ who, error: await outcome(intruder.delete(lease.node)) }).toEqual({ who, error: expect.any(NoAuthError) });
      expect({ who, error: await outcome(new Mutex(intruder, '/locks/provider').acquire({ timeout: 5000 })) }).toEqual({ who, error: expect.any(NoAuthError) });
    }
    stillHeld(lease);
    // A recipe's own acl wins over the client's.
    const open = await new Mutex(zk, '/open/m', { acl: OPEN_ACL_UNSAFE }).acquire();
    expect((await zk.getACL(open.node)).acl).toEqual(OPEN_ACL_UNSAFE);
    expect((await zk.getACL('/open')).acl).toEqual(OPEN_ACL_UNSAFE);
    await open.release();
    await lease.release();
  });

  it('acl - negative control, world ACL: the intruder\'s delete hands the lock to the waiter, the old holder\'s signal fires and its fenced write is refused', async () => {
    const [zk, zk2, intruder] = await Promise.all([owner(), owner(), space.client()]);
    await zk.create('/data', 'v0');
    const lease = await new Mutex(zk, '/locks/open').acquire();
    const waiting = new Mutex(zk2, '/locks/open').acquire({ timeout: 30_000 });
    await waitFor('the waiter to queue', async () => ((await zk.getChildren('/locks/open')).length === 2 ? true : undefined), 10_000, 10);
    await intruder.delete(lease.node);
    const next = await waiting;
    stillHeld(next);
    await waitFor('the old holder\'s signal', () => (lease.signal.aborted ? true : undefined), 10_000, 10);
    expect(lease.signal.reason).toBeInstanceOf(LeaseLostError);
    expect(lease.held).toBe(false);
    await expect(lease.fenced().setData('/data', 'stale').commit()).rejects.toThrow();
    await next.fenced().setData('/data', 'v1').commit();
    expect((await zk.getData('/data')).data.toString()).toBe('v1');
    await lease.release();
    await next.release();
  });
});

describe('acl - a waiter whose node an intruder deletes (world ACL)', () => {
  // The waiter takes the lock on its predecessor's deletion without listing the queue again; it
  // watches its own node in the same round trip, and its deletion (notified first: notifications
  // come in zxid order) ends the wait. Without that watch the waiter would be handed a lease
  // whose node is gone (its lease then lost one round trip later, at the first own-node check).
  it('acl - its acquire fails with LeaseLostError when its turn comes: no lease without a node', async () => {
    const [zk, zk2, intruder] = await Promise.all([owner(), owner(), space.client()]);
    const lease = await new Mutex(zk, '/locks/waiter').acquire();
    const holds: unknown[] = [];
    // Its outcome is taken at once: the waiter watches its own node, so the intruder's delete may
    // end its acquire before the holder's release does (unhandled until then, in CI on 3.4.13).
    const waiting = outcome(new Mutex(zk2, '/locks/waiter').acquire({ timeout: 30_000 }).then((l) => (holds.push(l), l)));
    const queue = await waitFor('the waiter to queue', async () => {
      const c = await zk.getChildren('/locks/waiter');
      return c.length === 2 ? c.sort((a, b) => a.slice(-10).localeCompare(b.slice(-10))) : undefined;
    }, 10_000, 10);
    await intruder.delete(`/locks/waiter/${queue[1]}`);
    await lease.release();
    const error = await waiting;
    expect(holds).toEqual([]);
    expect(error).toBeInstanceOf(LeaseLostError);
    expect((error as Error).message).toContain('is gone');
    expect(await zk.getChildren('/locks/waiter')).toEqual([]);
    expect(zk2.watchCount).toBe(0);
  });
});

describe('acl - the other recipes under CREATOR_ALL_ACL', () => {
  it('acl - ExclusiveLock and ReadWriteLock: an intruder can neither take them nor delete the holder\'s node', async () => {
    const zk = await owner();
    const exclusive = await new ExclusiveLock(zk, '/x/exclusive', { acl: CREATOR_ALL_ACL }).acquire();
    const rw = new ReadWriteLock(zk, '/x/rw', { acl: CREATOR_ALL_ACL });
    const read = await rw.readLock().acquire();
    expect((await zk.getACL('/x/exclusive')).acl).toEqual(OWNED);
    expect((await zk.getACL(read.node)).acl).toEqual(OWNED);
    for (const [who, intruder] of await intruders()) {
      const tries: Record<string, () => Promise<unknown>> = {
        'take the exclusive lock': () => new ExclusiveLock(intruder, '/x/exclusive').acquire({ timeout: 5000 }),
        'delete the exclusive holder\'s node': () => intruder.delete('/x/exclusive'),
        'take the read lock': () => new ReadWriteLock(intruder, '/x/rw').readLock().acquire({ timeout: 5000 }),
        'delete the reader\'s node': () => intruder.delete(read.node),
        'revoke the exclusive holder': () => revokeHolders(intruder, '/x/exclusive'),
      };
      for (const [what, attempt] of Object.entries(tries)) expect({ who, what, error: await outcome(attempt()) }).toEqual({ who, what, error: expect.any(NoAuthError) });
    }
    stillHeld(exclusive);
    stillHeld(read);
    await exclusive.release();
    await read.release();
  });

  it('acl - Semaphore, SemaphoreMutex and SharedCount: an intruder cannot take a permit, remove a lease or change the count', async () => {
    const zk = await owner();
    await using count = new SharedCount(zk, '/sem/count', 1, { acl: CREATOR_ALL_ACL });
    await count.start();
    const semaphore = new Semaphore(zk, '/sem/s', { maxLeases: count, acl: CREATOR_ALL_ACL });
    const lease = await semaphore.acquire();
    const mutexLease = await new SemaphoreMutex(zk, '/sem/m', { acl: CREATOR_ALL_ACL }).acquire();
    for (const p of ['/sem', '/sem/count', '/sem/s', '/sem/s/leases', '/sem/s/locks', lease.node, mutexLease.node]) expect({ p, acl: (await zk.getACL(p)).acl }).toEqual({ p, acl: OWNED });
    for (const [who, intruder] of await intruders()) {
      const tries: Record<string, () => Promise<unknown>> = {
        'take a permit': () => new Semaphore(intruder, '/sem/s', { maxLeases: 5 }).acquire({ timeout: 5000 }),
        'take the semaphore mutex': () => new SemaphoreMutex(intruder, '/sem/m').acquire({ timeout: 5000 }),
        'delete a lease node': () => intruder.delete(lease.node),
        'raise the count': () => intruder.setData('/sem/count', Buffer.from([0, 0, 0, 9])),
        'follow the count': () => new SharedCount(intruder, '/sem/count', 1).start(),
      };
      for (const [what, attempt] of Object.entries(tries)) expect({ who, what, error: await outcome(attempt()) }).toEqual({ who, what, error: expect.any(NoAuthError) });
    }
    expect(count.count).toBe(1);
    stillHeld(lease);
    stillHeld(mutexLease);
    await lease.release();
    await mutexLease.release();
  });

  it('acl - LeaderLatch and LeaderSelector: an intruder cannot join the election or end the leader\'s term', async () => {
    const zk = await owner();
    await using latch = new LeaderLatch(zk, '/elect/latch', { id: 'owner', acl: CREATOR_ALL_ACL });
    latch.start();
    const leadership = await latch.leadership({ timeout: 10_000 });
    await using selector = new LeaderSelector(zk, '/elect/selector', { id: 'owner', acl: CREATOR_ALL_ACL });
    let selected!: () => void;
    const leading = new Promise<void>((resolve) => (selected = resolve));
    const term = selector.run(async (l) => {
      selected();
      await new Promise((resolve) => l.signal.addEventListener('abort', resolve, { once: true }));
      return l.signal.reason;
    });
    await leading;
    const [latchNode] = await zk.getChildren('/elect/latch');
    expect((await zk.getACL(`/elect/latch/${latchNode}`)).acl).toEqual(OWNED);
    for (const [who, intruder] of await intruders()) {
      await using theirs = new LeaderLatch(intruder, '/elect/latch', { id: who });
      theirs.start();
      expect({ who, error: await outcome(theirs.leadership({ timeout: 5000 })) }).toEqual({ who, error: expect.any(NoAuthError) });
      await using theirSelector = new LeaderSelector(intruder, '/elect/selector', { id: who });
      expect({ who, error: await outcome(theirSelector.run(() => undefined, { timeout: 5000 })) }).toEqual({ who, error: expect.any(NoAuthError) });
      expect({ who, error: await outcome(intruder.delete(`/elect/latch/${latchNode}`)) }).toEqual({ who, error: expect.any(NoAuthError) });
    }
    expect(leadership.signal.aborted).toBe(false);
    expect(latch.hasLeadership).toBe(true);
    expect(selector.hasLeadership).toBe(true);
    expect(await zk.getChildren('/elect/latch')).toEqual([latchNode]);
    selector.interruptLeadership();
    await term;
  });

  it('acl - a bad acl option is refused when the recipe is made, before anything is sent', async () => {
    const zk = await owner();
    const bad = [{ perms: Perm.ALL, id: { scheme: 'digest', id: 'owner:owner-secret' } }];
    const makers: Array<[string, () => unknown]> = [
      ['Mutex', () => new Mutex(zk, '/b', { acl: bad })],
      ['ReadWriteLock', () => new ReadWriteLock(zk, '/b', { acl: [] })],
      ['ExclusiveLock', () => new ExclusiveLock(zk, '/b', { acl: [{ perms: 0, id: { scheme: 'world', id: 'anyone' } }] })],
      ['Semaphore', () => new Semaphore(zk, '/b', { maxLeases: 1, acl: [{ perms: Perm.ALL, id: { scheme: 'nope', id: 'x' } }] })],
      ['SemaphoreMutex', () => new SemaphoreMutex(zk, '/b', { acl: 'open' as never })],
      ['LeaderLatch', () => new LeaderLatch(zk, '/b', { acl: bad })],
      ['LeaderSelector', () => new LeaderSelector(zk, '/b', { acl: bad })],
      ['SharedCount', () => new SharedCount(zk, '/b', 1, { acl: bad })],
    ];
    for (const [name, make] of makers) expect({ name, thrown: (() => { try { make(); return undefined; } catch (e) { return e; } })() }).toEqual({ name, thrown: expect.any(InvalidArgumentError) });
    expect(await zk.exists('/b')).toBeNull();
  });
});

describe('acl - a lock path someone else made first, open (issue 37 item 11)', () => {
  // ZooKeeper checks a delete against the parent's ACL: under a path made with OPEN_ACL_UNSAFE,
  // an unauthenticated session deletes the holder's CREATOR_ALL_ACL node and the waiter takes the
  // lock. The safety property asserted: either the recipe refuses the path, or the intruder's
  // delete fails and the waiter keeps waiting (without the check the delete goes through).
  async function intruderAgainst(zk: ZooKeeper, zk2: ZooKeeper, path: string, acl: readonly ACL[] | undefined): Promise<unknown> {
    const [, intruder] = (await intruders())[0]!;
    const held = await outcome(new Mutex(zk, path, { acl }).acquire());
    if (!(held instanceof Error)) {
      const lease = held as Lease;
      const waiting = new Mutex(zk2, path, { acl }).acquire({ timeout: 30_000 });
      await waitFor('the waiter to queue', async () => ((await zk.getChildren(path)).length === 2 ? true : undefined), 10_000, 10);
      expect({ deleted: await outcome(intruder.delete(lease.node)) }).toEqual({ deleted: expect.any(NoAuthError) });
      stillHeld(lease);
      await lease.release();
      await (await waiting).release();
    }
    return held;
  }

  for (const [how, recipeAcl, clientAcl] of [
    ['the recipe\'s acl', CREATOR_ALL_ACL, undefined],
    ['the client-wide acl option', undefined, CREATOR_ALL_ACL],
  ] as const) {
    it(`acl - with ${how}: refused with UnsafeLockPathError naming what others may do, nothing left behind; an unauthenticated session cannot delete a holder`, async () => {
      const [, intruder] = (await intruders())[0]!;
      await intruder.create('/locks', null);
      await intruder.create('/locks/taken', null); // OPEN_ACL_UNSAFE, made first by someone else
      const [zk, zk2] = await Promise.all([owner(clientAcl), owner(clientAcl)]);
      const held = await intruderAgainst(zk, zk2, '/locks/taken', recipeAcl);
      expect(held).toBeInstanceOf(UnsafeLockPathError);
      expect((held as UnsafeLockPathError).grants).toEqual(['create to world:anyone', 'delete to world:anyone', 'admin to world:anyone']);
      expect((held as UnsafeLockPathError).path).toBe('/locks/taken');
      expect(await zk.getChildren('/locks/taken')).toEqual([]);
      // Made safe the documented way: the owner closes the path (or creates it first with the ACL).
      await zk.setACL('/locks/taken', CREATOR_ALL_ACL);
      expect(await intruderAgainst(zk, zk2, '/locks/taken', recipeAcl)).not.toBeInstanceOf(Error);
      // A path that another user owns is refused too (mallory may delete in it).
      const mallory = await space.client({ auth: [MALLORY] });
      await mallory.create('/locks/mallorys', null, { acl: CREATOR_ALL_ACL });
      await mallory.setACL('/locks/mallorys', [...OWNED, { perms: Perm.ALL, id: digestId('mallory', 'mallory-secret') }]);
      const refused = await outcome(new Mutex(zk, '/locks/mallorys', { acl: recipeAcl }).acquire());
      expect(refused).toBeInstanceOf(UnsafeLockPathError);
      expect((refused as UnsafeLockPathError).grants).toEqual(['create to digest:mallory', 'delete to digest:mallory', 'admin to digest:mallory']);
      await mallory.delete('/locks/mallorys');
    });
  }

  it('acl - an ExclusiveLock (its node is the lock path) under a parent someone else made open: refused, its node removed', async () => {
    const [, intruder] = (await intruders())[0]!;
    await intruder.create('/shared', null);
    const zk = await owner();
    const refused = await outcome(new ExclusiveLock(zk, '/shared/excl', { acl: CREATOR_ALL_ACL }).acquire());
    expect(refused).toBeInstanceOf(UnsafeLockPathError);
    expect((refused as UnsafeLockPathError).path).toBe('/shared');
    expect(await zk.exists('/shared/excl')).toBeNull();
    await zk.setACL('/shared', CREATOR_ALL_ACL);
    const lease = await new ExclusiveLock(zk, '/shared/excl', { acl: CREATOR_ALL_ACL }).acquire();
    expect({ deleted: await outcome(intruder.delete('/shared/excl')) }).toEqual({ deleted: expect.any(NoAuthError) });
    await lease.release();
    await zk.delete('/shared');
  });

  it('acl - what the check costs: nothing for open nodes; for closed ones the path\'s ACL with each create, and our node\'s once where `auth` stands for the identities', async () => {
    const open = await space.client();
    const openCalls = vi.spyOn(open, 'getACL');
    for (let i = 0; i < 2; i++) await (await new Mutex(open, '/open-cost/lock').acquire()).release();
    expect(openCalls).not.toHaveBeenCalled();
    const zk = await owner();
    const calls = vi.spyOn(zk, 'getACL');
    const mutex = new Mutex(zk, '/locks/cost', { acl: CREATOR_ALL_ACL });
    for (let i = 0; i < 2; i++) await (await mutex.acquire()).release();
    // The first acquire: the path's ACL beside the create (NoNode, like the create: the path is
    // made then), again beside the second create, and our node's; the second acquire: the path's.
    expect(calls.mock.calls.map(([p]) => p.replace(/\/_c_.*/, '/<our node>'))).toEqual(['/locks/cost', '/locks/cost', '/locks/cost/<our node>', '/locks/cost']);
  });

  it('acl - a path the recipe creates, and an open recipe on an open path, acquire as before', async () => {
    const zk = await owner();
    const lease = await new Mutex(zk, '/locks/fresh', { acl: CREATOR_ALL_ACL }).acquire();
    await lease.release();
    const [, open] = (await intruders())[0]!;
    await open.ensurePath('/open/lock');
    const plain = await new Mutex(open, '/open/lock').acquire();
    await plain.release();
    await open.deleteRecursive('/open');
  });
});

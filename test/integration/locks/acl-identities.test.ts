/**
 * CREATOR_ALL_ACL with SASL and x509 owners (issue 27): acl.test.ts's intruder scenarios with the
 * owner a SASL DIGEST-MD5 user (`sasl:bob`) or a TLS client certificate (`x509:CN=zk-test-client`,
 * on the secure port that requires one), on a secured server of this file's own
 * (test/harness/secured.ts). Intruders: an unauthenticated session, another SASL user, a digest
 * user, and a client with the other trusted certificate (a different x509 identity) or the
 * owner's certificate when the owner is the SASL user. Every attempt gets NoAuthError and the
 * holder keeps its hold. The control: with the default world ACL the same intruder deletes the
 * SASL holder's node and the waiter gets the lock.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { CREATOR_ALL_ACL, digestId, NoAuthError, OPEN_ACL_UNSAFE, Perm, ZooKeeper, type ACL } from '@zk/protocol';
import { LeaderLatch, LeaseLostError, Mutex, ReadWriteLock, Semaphore, revoke, revokeHolders, type Lease } from '@zk/locks';
import { isZooKeeper34, outcome, SECURED_DIGEST_USERS, type SecuredIdentity, SecuredSpace, type SecuredZooKeeper, startSecuredZooKeeper, TcpProxy, waitFor } from '../../harness/index.js';
import { holderAndWaiter, stillHeld } from './lease-checks.js';

// An own server with a TLS port: not with ZK_CONNECT; 3.4 has no TLS port and no containers.
const skip = process.env.ZK_CONNECT !== undefined || isZooKeeper34();

let secured: SecuredZooKeeper;
let space: SecuredSpace;

/** One owning identity, what the server stores for CREATOR_ALL_ACL created by it, and who must be refused. */
interface Owner {
  readonly name: string;
  readonly who: SecuredIdentity;
  /** Filled in once the server (and its certificates) exist. */
  owned(): ACL[];
  readonly intruders: ReadonlyArray<[string, SecuredIdentity]>;
}

const ANONYMOUS: [string, SecuredIdentity] = ['unauthenticated', { kind: 'anonymous' }];
const MALLORY: [string, SecuredIdentity] = ['digest mallory', { kind: 'digest', user: 'mallory' }];

const OWNERS: Owner[] = [
  {
    name: 'SASL user bob',
    who: { kind: 'sasl', user: 'bob' },
    owned: () => [{ perms: Perm.ALL, id: { scheme: 'sasl', id: 'bob' } }],
    intruders: [ANONYMOUS, ['SASL user carol', { kind: 'sasl', user: 'carol' }], MALLORY, ['x509 CN=zk-test-client', { kind: 'x509' }]],
  },
  {
    name: 'x509 client CN=zk-test-client',
    who: { kind: 'x509' },
    owned: () => [{ perms: Perm.ALL, id: { scheme: 'x509', id: secured.client.dn } }],
    intruders: [ANONYMOUS, ['SASL user bob', { kind: 'sasl', user: 'bob' }], MALLORY, ['x509 CN=zk-other-client', { kind: 'x509', other: true }]],
  },
];



/** Runs every attempt for every intruder of `owner`: each must fail with NoAuthError. Returns how many were refused. */
async function refuseAll(owner: Owner, tries: (intruder: ZooKeeper, who: string) => Record<string, () => Promise<unknown>>): Promise<number> {
  let refused = 0;
  for (const [who, identity] of owner.intruders) {
    const intruder = await space.client(identity);
    for (const [what, attempt] of Object.entries(tries(intruder, who))) {
      expect({ who, what, error: await outcome(attempt()) }).toEqual({ who, what, error: expect.any(NoAuthError) });
      refused++;
    }
  }
  return refused;
}

describe.skipIf(skip)('acl identities - CREATOR_ALL_ACL owned by SASL and x509 identities', () => {
  beforeAll(async () => {
    secured = await startSecuredZooKeeper();
  }, 180_000);

  afterAll(async () => {
    await secured?.close();
  });

  describe.each(OWNERS)('acl identities - owner $name', (owner) => {
    beforeEach(() => {
      space = new SecuredSpace(secured);
    });

    afterEach(async () => {
      expect((await space.close(owner.who)).leakedWatches).toBe(0);
    });

    it('acl identities - the session is who it should be, and the Mutex\'s nodes and container parents carry that identity only', async () => {
      const zk = await space.client(owner.who);
      const ids = (await zk.whoAmI()).map((i) => `${i.authScheme}:${i.user}`);
      expect(ids).toContain(`${owner.owned()[0]!.id.scheme}:${owner.owned()[0]!.id.id}`);
      const lease = await new Mutex(zk, '/locks/job', { acl: CREATOR_ALL_ACL }).acquire();
      for (const p of ['/locks', '/locks/job', lease.node]) expect({ p, acl: (await zk.getACL(p)).acl }).toEqual({ p, acl: owner.owned() });
      await lease.release();
    });

    it('acl identities - Mutex: no intruder can queue, create, delete or overwrite the holder\'s node or its parent, or revoke; the holder and its waiter keep their places', async () => {
      const [zk, zk2] = await Promise.all([space.client(owner.who), space.client(owner.who)]);
      const { lease, keptTheirPlaces } = await holderAndWaiter(zk, zk2, '/locks/job');
      const refused = await refuseAll(owner, (intruder) => ({
        'queue on the mutex': () => new Mutex(intruder, '/locks/job').acquire({ timeout: 5000 }),
        'queue with its own open ACL': () => new Mutex(intruder, '/locks/job', { acl: OPEN_ACL_UNSAFE }).acquire({ timeout: 5000 }),
        'create under the lock path': () => intruder.create('/locks/job/x'),
        'delete the holder\'s node': () => intruder.delete(lease.node),
        'overwrite the holder\'s node': () => intruder.setData(lease.node, 'mine'),
        'delete the lock path': () => intruder.delete('/locks/job'),
        'delete the lock path recursively': () => intruder.deleteRecursive('/locks'),
        'change the lock path\'s ACL': () => intruder.setACL('/locks/job', OPEN_ACL_UNSAFE),
        'revoke the holder': () => revoke(intruder, lease.node),
        'revoke the holders': () => revokeHolders(intruder, '/locks/job'),
        'list the queue': () => intruder.getChildren('/locks/job'),
      }));
      expect(refused).toBe(owner.intruders.length * 11);
      await keptTheirPlaces();
    });

    it('acl identities - ReadWriteLock: no intruder can take the read or the write lock or remove the reader\'s node', async () => {
      const zk = await space.client(owner.who);
      const read = await new ReadWriteLock(zk, '/x/rw', { acl: CREATOR_ALL_ACL }).readLock().acquire();
      for (const p of ['/x', '/x/rw', read.node]) expect({ p, acl: (await zk.getACL(p)).acl }).toEqual({ p, acl: owner.owned() });
      await refuseAll(owner, (intruder) => ({
        'take the write lock': () => new ReadWriteLock(intruder, '/x/rw').writeLock().acquire({ timeout: 5000 }),
        'take the read lock': () => new ReadWriteLock(intruder, '/x/rw').readLock().acquire({ timeout: 5000 }),
        'delete the reader\'s node': () => intruder.delete(read.node),
        'overwrite the reader\'s node': () => intruder.setData(read.node, 'mine'),
      }));
      stillHeld(read);
      expect((await zk.getChildren('/x/rw')).length).toBe(1);
      await read.release();
    });

    it('acl identities - Semaphore: no intruder can take a permit or remove a lease', async () => {
      const zk = await space.client(owner.who);
      const semaphore = new Semaphore(zk, '/sem/s', { maxLeases: 1, acl: CREATOR_ALL_ACL });
      const lease = await semaphore.acquire();
      for (const p of ['/sem', '/sem/s', '/sem/s/leases', '/sem/s/locks', lease.node]) expect({ p, acl: (await zk.getACL(p)).acl }).toEqual({ p, acl: owner.owned() });
      await refuseAll(owner, (intruder) => ({
        'take a permit': () => new Semaphore(intruder, '/sem/s', { maxLeases: 5 }).acquire({ timeout: 5000 }),
        'delete the lease node': () => intruder.delete(lease.node),
        'add a lease node': () => intruder.create('/sem/s/leases/x'),
      }));
      stillHeld(lease);
      expect((await zk.getChildren('/sem/s/leases')).length).toBe(1);
      await lease.release();
    });

    it('acl identities - LeaderLatch: no intruder can join the election or end the leader\'s term', async () => {
      const zk = await space.client(owner.who);
      await using latch = new LeaderLatch(zk, '/elect/latch', { id: 'owner', acl: CREATOR_ALL_ACL });
      latch.start();
      const leadership = await latch.leadership({ timeout: 10_000 });
      const [latchNode] = await zk.getChildren('/elect/latch');
      expect((await zk.getACL(`/elect/latch/${latchNode}`)).acl).toEqual(owner.owned());
      for (const [who, identity] of owner.intruders) {
        const intruder = await space.client(identity);
        await using theirs = new LeaderLatch(intruder, '/elect/latch', { id: who });
        theirs.start();
        expect({ who, error: await outcome(theirs.leadership({ timeout: 5000 })) }).toEqual({ who, error: expect.any(NoAuthError) });
        expect({ who, error: await outcome(intruder.delete(`/elect/latch/${latchNode}`)) }).toEqual({ who, error: expect.any(NoAuthError) });
      }
      expect(leadership.signal.aborted).toBe(false);
      expect(latch.hasLeadership).toBe(true);
      expect(await zk.getChildren('/elect/latch')).toEqual([latchNode]);
    });

    it('acl identities - across a reconnect the session is that identity again: the holder keeps its hold, creates under its owned parent and releases; its waiter takes over', async () => {
      const [host = '', port = ''] = (owner.who.kind === 'x509' ? secured.secure : secured.plain).split(':');
      const proxy = await TcpProxy.start({ host, port: Number(port) });
      const zk = await space.client(owner.who, {}, proxy.connectString).catch(async (e: unknown) => {
        await proxy.close();
        throw e;
      });
      try {
        const zk2 = await space.client(owner.who);
        const lease = await new Mutex(zk, '/locks/job', { acl: CREATOR_ALL_ACL }).acquire();
        const waiting = new Mutex(zk2, '/locks/job', { acl: CREATOR_ALL_ACL }).acquire({ timeout: 30_000 });
        await waitFor('the waiter to queue', async () => ((await zk.getChildren('/locks/job')).length === 2 ? true : undefined), 10_000, 10);
        const session = zk.sessionId;
        proxy.cut();
        await waitFor('a new connection through the proxy', () => (proxy.acceptedCount >= 2 && zk.state === 'connected' ? true : undefined), 10_000, 10);
        expect(zk.sessionId).toBe(session);
        // The server keeps identities per connection: these need the owner's on the new one.
        const { scheme, id } = owner.owned()[0]!.id;
        expect((await zk.whoAmI()).map((i) => `${i.authScheme}:${i.user}`)).toContain(`${scheme}:${id}`);
        expect((await zk.getACL(lease.node)).acl).toEqual(owner.owned());
        await new Mutex(zk, '/locks/other', { acl: CREATOR_ALL_ACL }).acquire().then((l) => l.release());
        stillHeld(lease);
        await lease.release();
        const next = await waiting;
        stillHeld(next);
        await next.release();
      } finally {
        await zk.close();
        await proxy.close();
      }
    });
  });

  describe('acl identities - the client-wide acl option and the world-ACL control (SASL owner)', () => {
    const bob = OWNERS[0]!;

    beforeEach(() => {
      space = new SecuredSpace(secured);
    });

    afterEach(async () => {
      expect((await space.close(bob.who)).leakedWatches).toBe(0);
    });

    it('acl identities - the client-wide acl option (no recipe option) gives the lock node and its container parents to sasl:bob', async () => {
      const zk = await space.client(bob.who, { acl: CREATOR_ALL_ACL });
      const lease = await new Mutex(zk, '/locks/provider/deep').acquire();
      for (const p of ['/locks', '/locks/provider', '/locks/provider/deep', lease.node]) expect({ p, acl: (await zk.getACL(p)).acl }).toEqual({ p, acl: bob.owned() });
      await refuseAll(bob, (intruder) => ({
        'delete the holder\'s node': () => intruder.delete(lease.node),
        'queue on the mutex': () => new Mutex(intruder, '/locks/provider/deep').acquire({ timeout: 5000 }),
        'create beside the lock path': () => intruder.create('/locks/provider/x'),
      }));
      stillHeld(lease);
      await lease.release();
    });

    it('acl identities - negative control, world ACL: an intruder deletes the SASL holder\'s node, the waiter gets the lock, the old holder\'s signal fires and its fenced write is refused', async () => {
      const [zk, zk2] = await Promise.all([space.client(bob.who), space.client(bob.who)]);
      await zk.create('/data', 'v0');
      const lease = await new Mutex(zk, '/locks/open').acquire();
      expect((await zk.getACL(lease.node)).acl).toEqual(OPEN_ACL_UNSAFE);
      const waiting = new Mutex(zk2, '/locks/open').acquire({ timeout: 30_000 });
      await waitFor('the waiter to queue', async () => ((await zk.getChildren('/locks/open')).length === 2 ? true : undefined), 10_000, 10);
      const intruder = await space.client({ kind: 'digest', user: 'mallory' });
      await intruder.delete(lease.node);
      const next = await waiting;
      stillHeld(next);
      await waitFor('the old holder\'s signal', () => (lease.signal.aborted ? true : undefined), 10_000, 10);
      expect(lease.signal.reason).toBeInstanceOf(LeaseLostError);
      await expect(lease.fenced().setData('/data', 'stale').commit()).rejects.toThrow();
      await next.fenced().setData('/data', 'v1').commit();
      expect((await zk.getData('/data')).data.toString()).toBe('v1');
      await lease.release();
      await next.release();
    });

    it('acl identities - an explicit digest ACL for mallory is not bob\'s: a node bob creates with it refuses bob (the identity is the scheme and id, not the session)', async () => {
      const zk = await space.client(bob.who);
      const mallory: ACL[] = [{ perms: Perm.ALL, id: digestId('mallory', SECURED_DIGEST_USERS.mallory) }];
      await zk.create('/m', 'x', { acl: mallory });
      await expect(zk.getData('/m')).rejects.toBeInstanceOf(NoAuthError);
      const her = await space.client({ kind: 'digest', user: 'mallory' });
      expect((await her.getData('/m')).data.toString()).toBe('x');
      await her.delete('/m');
    });
  });
});

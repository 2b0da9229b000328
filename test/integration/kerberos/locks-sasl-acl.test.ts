/**
 * Recipes under `sasl` ACLs with Kerberos identities (real MIT KDC, Kerberized ZooKeeper): a
 * Mutex and a LeaderLatch whose paths, parents and nodes are CREATOR_ALL for carol@ZK.TEST. Another
 * principal (dave) and an unauthenticated session get NoAuthError on every node, and the holder
 * and the leader keep their places. The control, a world ACL: the intruder's delete takes the lock
 * and the leadership away.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CREATOR_ALL_ACL, NoAuthError, OPEN_ACL_UNSAFE, Perm, ZooKeeper, type ACL } from '@zk/protocol';
import { LeaderLatch, LeaseLostError, Mutex } from '@zk/locks';
import { kerberizedServerOptions, startKdc, type TestKdc } from '../../harness/kdc.js';
import { outcome } from '../../harness/index.js';
import { timing, waitFor } from '../../harness/timing.js';
import { startZooKeeper, type ZooKeeperEnsemble } from '../../harness/zookeeper.js';
import { zookeeperLine } from '../../harness/versions.js';

/** What the server stores for CREATOR_ALL_ACL created by carol's Kerberos session. */
const CAROLS: ACL[] = [{ perms: Perm.ALL, id: { scheme: 'sasl', id: 'carol@ZK.TEST' } }];

describe.skipIf(process.env.ZK_CONNECT)(`kerberos - locks under sasl ACLs (real MIT KDC, ZooKeeper ${zookeeperLine()})`, () => {
  let kdc: TestKdc;
  let zk: ZooKeeperEnsemble;
  let keytab: string;
  const clients: ZooKeeper[] = [];
  const connect = async (who: 'carol' | 'dave' | 'nobody'): Promise<ZooKeeper> => {
    const sasl = who === 'carol' ? { mechanism: 'GSSAPI' as const, principal: 'carol', keytab, krb5Conf: kdc.krb5Conf } : who === 'dave' ? { mechanism: 'GSSAPI' as const, principal: 'dave', password: 'dave-pw', krb5Conf: kdc.krb5Conf } : undefined;
    const c = await ZooKeeper.connect(zk.connectString, sasl ? { sasl } : {});
    clients.push(c);
    return c;
  };
  /** dave (another Kerberos principal) and an unauthenticated session. */
  const intruders = async (): Promise<Array<[string, ZooKeeper]>> => [
    ['dave@ZK.TEST', await connect('dave')],
    ['unauthenticated', await connect('nobody')],
  ];
  /** Every attempt on `node` and its parent `path` that could take a hold away or get in line. */
  const everyNode = (intruder: ZooKeeper, path: string, node: string): Record<string, () => Promise<unknown>> => ({
    'read the node': () => intruder.getData(node),
    'delete the node': () => intruder.delete(node),
    'overwrite the node': () => intruder.setData(node, 'mine'),
    'list the path': () => intruder.getChildren(path),
    'create under the path': () => intruder.create(`${path}/x`),
    'delete the path': () => intruder.delete(path),
    'change the path’s ACL': () => intruder.setACL(path, OPEN_ACL_UNSAFE),
  });

  beforeAll(async () => {
    kdc = await startKdc();
    kdc.addPrincipal('carol');
    kdc.addPrincipal('dave', { password: 'dave-pw' });
    kdc.addPrincipal('zookeeper/localhost');
    keytab = kdc.keytab('carol');
    zk = await startZooKeeper({ servers: 1, own: true, ...kerberizedServerOptions(kdc, { keytab: kdc.keytab('zookeeper/localhost') }) });
  });
  afterAll(async () => {
    for (const c of clients) await c.close();
    await zk?.close();
    await kdc?.stop();
  });

  it('locks-sasl-acl - a Mutex with CREATOR_ALL_ACL under carol’s keytab: its path, parent and node are sasl:carol@ZK.TEST’s; dave and an unauthenticated session get NoAuth on every node and cannot queue; the holder keeps the lock and hands it to carol’s waiter', async () => {
    const [owner, owner2] = [await connect('carol'), await connect('carol')];
    const root = `/krb-mutex-${Date.now()}`;
    const path = `${root}/job`;
    const lease = await new Mutex(owner, path, { acl: CREATOR_ALL_ACL }).acquire();
    for (const p of [root, path, lease.node]) expect({ p, acl: (await owner.getACL(p)).acl }).toEqual({ p, acl: CAROLS });
    const waiting = new Mutex(owner2, path, { acl: CREATOR_ALL_ACL }).acquire({ timeout: timing(30_000) });
    await waitFor('carol’s second session to queue', async () => ((await owner.getChildren(path)).length === 2 ? true : undefined), timing(10_000), 20);
    for (const [who, intruder] of await intruders()) {
      const tries = { ...everyNode(intruder, path, lease.node), 'queue on the mutex': () => new Mutex(intruder, path).acquire({ timeout: 5000 }) };
      for (const [what, attempt] of Object.entries(tries)) expect({ who, what, error: await outcome(attempt()) }).toEqual({ who, what, error: expect.any(NoAuthError) });
    }
    expect(lease.signal.aborted).toBe(false);
    expect((await owner.getChildren(path)).length).toBe(2);
    await lease.release();
    const next = await waiting;
    expect(next.signal.aborted).toBe(false);
    await next.release();
  });

  it('locks-sasl-acl - a LeaderLatch with CREATOR_ALL_ACL under carol: dave and an unauthenticated session cannot join the election or end the term (NoAuth on every node)', async () => {
    const owner = await connect('carol');
    // Nested, so the path's parent is carol's too (deleting a node needs DELETE on its parent).
    const root = `/krb-latch-${Date.now()}`;
    const path = `${root}/election`;
    await using latch = new LeaderLatch(owner, path, { id: 'carol', acl: CREATOR_ALL_ACL });
    latch.start();
    const leadership = await latch.leadership({ timeout: timing(10_000) });
    const [node] = await owner.getChildren(path);
    for (const p of [root, path, `${path}/${node}`]) expect({ p, acl: (await owner.getACL(p)).acl }).toEqual({ p, acl: CAROLS });
    for (const [who, intruder] of await intruders()) {
      await using theirs = new LeaderLatch(intruder, path, { id: who });
      theirs.start();
      expect({ who, error: await outcome(theirs.leadership({ timeout: 5000 })) }).toEqual({ who, error: expect.any(NoAuthError) });
      for (const [what, attempt] of Object.entries(everyNode(intruder, path, `${path}/${node}`))) expect({ who, what, error: await outcome(attempt()) }).toEqual({ who, what, error: expect.any(NoAuthError) });
    }
    expect(leadership.signal.aborted).toBe(false);
    expect(latch.hasLeadership).toBe(true);
    expect(await owner.getChildren(path)).toEqual([node]);
  });

  it('locks-sasl-acl - the control, a world ACL: dave deletes carol’s Mutex node (her lease is lost) and her latch node (her leadership ends)', async () => {
    const [owner, dave] = [await connect('carol'), await connect('dave')];
    const path = `/krb-open-${Date.now()}`;
    const lease = await new Mutex(owner, `${path}/job`).acquire();
    expect((await owner.getACL(lease.node)).acl).toEqual(OPEN_ACL_UNSAFE);
    await dave.delete(lease.node);
    await waitFor('carol’s lease to be lost', () => (lease.signal.aborted ? true : undefined), timing(10_000), 10);
    expect(lease.signal.reason).toBeInstanceOf(LeaseLostError);
    await lease.release();

    await using latch = new LeaderLatch(owner, `${path}/latch`, { id: 'carol' });
    latch.start();
    const leadership = await latch.leadership({ timeout: timing(10_000) });
    const [node] = await owner.getChildren(`${path}/latch`);
    await dave.delete(`${path}/latch/${node}`);
    await waitFor('carol’s term to end', () => (leadership.signal.aborted ? true : undefined), timing(10_000), 10);
  });
});

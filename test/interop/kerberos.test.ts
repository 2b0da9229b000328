/**
 * Curator interop on a Kerberized ensemble (issue 40, "Interop"): a private MIT KDC
 * (harness/kdc.ts) and a ZooKeeper server with a JAAS Krb5LoginModule `Server` section of this
 * file's own. A Curator process (java/CuratorSecureParticipant.java with `sasl`) logs in through JAAS
 * (Krb5LoginModule, alice's keytab, the realm's own krb5.conf) and a Node session logs in with our
 * GSSAPI client from the same keytab: both are `sasl:alice@ZK.TEST`. They share an
 * InterProcessMutex / Mutex path under CREATOR_ALL_ACL (Curator's ACLProvider, the Mutex's `acl`),
 * and the lock passes both ways (Curator holds, Node waits and gets it on release, and back),
 * every node either creates carrying `sasl:alice@ZK.TEST` only. An unauthenticated Node session,
 * a Node session of mallory (GSSAPI) and a Curator process of mallory (JAAS) get NoAuth on the
 * holder's node, whichever language holds. Negative control: under the world ACL the same
 * deletes succeed, and the Node waiter takes the lock from the Curator holder, who still
 * believes it holds. And the participant's guard: a Curator whose JAAS login fails exits on
 * AuthFailed without READY (ZooKeeper's Java client would carry on unauthenticated), so READY in
 * the other tests means a Kerberos login.
 *
 * Skipped, with the reason in the suite's name, without javac and Curator's jars, without the MIT
 * KDC tools (outside CI, where the harness installs them), or with ZK_CONNECT (this suite needs a
 * Kerberized server of its own).
 */
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { CREATOR_ALL_ACL, NoAuthError, OPEN_ACL_UNSAFE, Perm, ZooKeeper, type ACL, type ClientOptions } from '@zk/protocol';
import { Mutex } from '@zk/locks';
import { fourLetter, outcome, versionManifest, waitFor, zookeeperLine } from '../harness/index.js';
import { compileCurator, curatorMissing, curatorVersion, type CompiledJava } from '../harness/java.js';
import { kdcMissing, kerberizedClientJvmOptions, kerberizedServerOptions, startKdc, type TestKdc } from '../harness/kdc.js';
import { startZooKeeper, type ZooKeeperEnsemble } from '../harness/zookeeper.js';
import { alternate, handOffs, javaSide, lockNodes, nodeSide, queued } from './handoff.js';
import { killAll, Participant } from './participants.js';

const SOURCES = ['./java/Interop.java', './java/CuratorSecureParticipant.java'].map((s) => fileURLToPath(new URL(s, import.meta.url)));
const missing = curatorMissing() ?? kdcMissing() ?? (process.env.ZK_CONNECT ? 'ZK_CONNECT: this suite starts a Kerberized server of its own' : undefined);
/** Every Java process halts after this long, whatever the test does. */
const JAVA_LIFETIME_MS = 120_000;
/** Holds per lock path, the languages alternating: 5 hand-offs on each path. */
const HOLDS_PER_PATH = 6;
const MALLORY_PASSWORD = 'mallory-Krb-7310';

let kdc: TestKdc;
let zk: ZooKeeperEnsemble;
let compiled: CompiledJava | undefined;
const keytabs: Record<'alice' | 'mallory', string> = { alice: '', mallory: '' };
/** alice as the server names her: the identity of every node under CREATOR_ALL_ACL. */
const ALICE = { scheme: 'sasl', id: 'alice@ZK.TEST' };
const OWNED: ACL[] = [{ perms: Perm.ALL, id: ALICE }];

/** One test's namespace (a chroot with a world ACL, made by an unauthenticated admin) and its Node clients. */
class Space {
  readonly root = `/krb-${randomUUID()}`;
  readonly #clients: ZooKeeper[] = [];
  #admin: ZooKeeper | undefined;

  /** A Node session in the namespace: alice (GSSAPI, her keytab), mallory (GSSAPI, a password) or unauthenticated. */
  async client(who: 'alice' | 'mallory' | 'anonymous', options: ClientOptions = {}): Promise<ZooKeeper> {
    if (!this.#admin) {
      this.#admin = await ZooKeeper.connect(zk.connectString, { sessionTimeout: 10_000 });
      await this.#admin.create(this.root);
    }
    const krb5Conf = kdc.krb5Conf;
    const sasl =
      who === 'alice' ? { sasl: { mechanism: 'GSSAPI' as const, principal: 'alice', keytab: keytabs.alice, krb5Conf } }
      : who === 'mallory' ? { sasl: { mechanism: 'GSSAPI' as const, principal: 'mallory', password: MALLORY_PASSWORD, krb5Conf } }
      : {};
    const c = await ZooKeeper.connect(`${zk.connectString}${this.root}`, { sessionTimeout: 10_000, connectTimeout: 10_000, ...sasl, ...options });
    this.#clients.push(c);
    return c;
  }

  /** A Curator process of `who` (JAAS Krb5LoginModule with `who`'s keytab, or `keytab`) on `path`, not yet READY. */
  spawnJava(who: 'alice' | 'mallory', path: string, acl: 'creator' | 'open', keytab = keytabs[who]): Participant {
    const jvm = kerberizedClientJvmOptions(kdc, { principal: who, keytab });
    return new Participant('java', 'java', [...jvm, '-cp', compiled!.classpath, 'CuratorSecureParticipant', `${zk.connectString}${this.root}`, path, acl, String(JAVA_LIFETIME_MS), 'sasl']);
  }

  /** {@link spawnJava}, once authenticated and READY. */
  async java(who: 'alice' | 'mallory', path: string, acl: 'creator' | 'open'): Promise<Participant> {
    const p = this.spawnJava(who, path, acl);
    await p.until('READY');
    return p;
  }

  /** Closes the Node clients (none may have pending requests) and removes the namespace; returns the watches left registered. */
  async close(): Promise<number> {
    let watches = 0;
    for (const c of this.#clients) {
      watches += c.watchCount;
      await c.close();
      if (c.pendingRequests !== 0) throw new Error(`client left ${c.pendingRequests} pending requests after close`);
    }
    // The lock nodes are alice's: only she can list and delete them.
    const alice = await ZooKeeper.connect(zk.connectString, { sasl: { mechanism: 'GSSAPI', principal: 'alice', keytab: keytabs.alice, krb5Conf: kdc.krb5Conf } });
    await alice.deleteRecursive(this.root).catch(() => undefined);
    await alice.close();
    await this.#admin?.close();
    return watches;
  }
}

let space: Space;

/** The `sasl:` identities of a participant's `WHOAMI scheme:id,...` line (the server adds `ip:` too). */
function saslIds(line: string): string[] {
  expect(line).toMatch(/^WHOAMI /);
  return line.slice('WHOAMI '.length).split(',').filter((id) => id.startsWith('sasl:'));
}

/** What a Node intruder tries on a held lock: each must be NoAuth under CREATOR_ALL_ACL. */
function nodeAttempts(intruder: ZooKeeper, path: string, held: string): Record<string, () => Promise<unknown>> {
  return {
    'delete the holder\'s node': () => intruder.delete(held),
    'overwrite the holder\'s node': () => intruder.setData(held, 'mine'),
    'read the holder\'s node': () => intruder.getData(held),
    'queue on the mutex': () => new Mutex(intruder, path).acquire({ timeout: 5_000 }),
    'queue with its own world ACL': () => new Mutex(intruder, path, { acl: OPEN_ACL_UNSAFE }).acquire({ timeout: 5_000 }),
  };
}

describe.skipIf(missing !== undefined)(`interop - Curator${missing ? '' : ` ${curatorVersion()}`} (JAAS Krb5LoginModule) and @zk/locks (GSSAPI) on a Kerberized ZooKeeper ${zookeeperLine()} under sasl ACLs${missing ? ` (skipped: ${missing})` : ''}`, () => {
  beforeAll(async () => {
    compiled = compileCurator(SOURCES);
    kdc = await startKdc();
    kdc.addPrincipal('alice');
    kdc.addPrincipal('mallory', { password: MALLORY_PASSWORD });
    kdc.addPrincipal('zookeeper/localhost');
    keytabs.alice = kdc.keytab('alice');
    keytabs.mallory = kdc.keytab('mallory');
    zk = await startZooKeeper({ servers: 1, own: true, ...kerberizedServerOptions(kdc, { keytab: kdc.keytab('zookeeper/localhost') }) });
  }, 180_000);

  afterAll(async () => {
    compiled?.remove();
    await zk?.close();
    await kdc?.stop();
  });

  afterEach(async () => {
    await killAll();
    expect(await space.close()).toBe(0);
  });

  it('interop kerberos - Curator (JAAS keytab) and Node (GSSAPI, the same keytab) are both sasl:alice@ZK.TEST and hand the CREATOR_ALL mutex to each other both ways; every node carries alice\'s ACL only', async () => {
    space = new Space();
    // The Kerberized server is of the line under test (ZK_VERSION): 3.8.0, or 3.9.3 with Curator 5.7.1.
    const server = zk.servers[0]!;
    const version = /Zookeeper version: (\d+\.\d+\.\d+)/.exec(await fourLetter(server.host, server.port, 'srvr'))?.[1];
    expect(version).toBe(versionManifest().version);
    const alice = await space.client('alice');
    expect(await alice.whoAmI()).toContainEqual({ authScheme: 'sasl', user: ALICE.id });
    const javaFirst = await space.java('alice', '/krb/java-first/lock', 'creator');
    expect(saslIds(await javaFirst.reply('whoami'))).toEqual([`sasl:${ALICE.id}`]);
    expect((await alice.whoAmI()).filter((i) => i.authScheme === 'sasl')).toEqual([{ authScheme: 'sasl', user: ALICE.id }]);
    const a = await alternate(alice, '/krb/java-first/lock', javaSide(javaFirst), nodeSide(new Mutex(alice, '/krb/java-first/lock', { acl: CREATOR_ALL_ACL })), OWNED, HOLDS_PER_PATH);
    // Node creates the path this time: Curator reads the ACL of the parents Node made.
    const nodeFirst = await space.java('alice', '/krb/node-first/lock', 'creator');
    const b = await alternate(alice, '/krb/node-first/lock', nodeSide(new Mutex(alice, '/krb/node-first/lock', { acl: CREATOR_ALL_ACL })), javaSide(nodeFirst), OWNED, HOLDS_PER_PATH);
    expect(await nodeFirst.reply('acl /krb/node-first/lock')).toBe(`ACL sasl:${ALICE.id}:${Perm.ALL}`);
    const counted = { javaFirst: handOffs(a.holds), nodeFirst: handOffs(b.holds) };
    expect(counted).toEqual({ javaFirst: { javaToNode: 3, nodeToJava: 2 }, nodeFirst: { javaToNode: 2, nodeToJava: 3 } });
    console.log(`interop kerberos (ZooKeeper ${version}, Curator ${curatorVersion()}): ${a.holds.length + b.holds.length} holds on 2 paths as sasl:${ALICE.id} (java-first ${JSON.stringify(counted.javaFirst)}, node-first ${JSON.stringify(counted.nodeFirst)}), ${a.checked + b.checked} ACLs checked`);
    for (const p of [javaFirst, nodeFirst]) p.send('exit');
    expect(await javaFirst.exited).toBe(0);
    expect(await nodeFirst.exited).toBe(0);
  }, 120_000);

  it('interop kerberos - the participant\'s guard: a Curator whose JAAS login fails (alice named, mallory\'s keytab) never says READY and exits 4 on AuthFailed, so READY above means a Kerberos login', async () => {
    space = new Space();
    await space.client('anonymous');
    const p = space.spawnJava('alice', '/krb/lock', 'creator', keytabs.mallory);
    expect(await p.exited).toBe(4);
    expect(p.lines).toEqual([]);
    expect(p.stderr).toMatch(/SASL AuthFailed/);
  });

  it('interop kerberos - an unauthenticated Node session, mallory from Node (GSSAPI) and mallory from Curator (JAAS) get NoAuth on the holder\'s node, whether Curator or Node holds; the holder keeps the lock and the waiter gets it on release', async () => {
    space = new Space();
    const alice = await space.client('alice');
    const intruders = { unauthenticated: await space.client('anonymous'), 'mallory (GSSAPI)': await space.client('mallory') };
    expect(await intruders['mallory (GSSAPI)'].whoAmI()).toContainEqual({ authScheme: 'sasl', user: 'mallory@ZK.TEST' });
    expect((await intruders.unauthenticated.whoAmI()).some((i) => i.authScheme === 'sasl')).toBe(false);
    const curatorMallory = await space.java('mallory', '/krb/lock', 'creator');
    expect(saslIds(await curatorMallory.reply('whoami'))).toEqual(['sasl:mallory@ZK.TEST']);
    const path = '/krb/lock';
    const owner = await space.java('alice', path, 'creator');
    let refused = 0;
    // Curator holds, Node waits; then Node holds, Curator waits.
    for (const [holderSide, waiterSide] of [[javaSide(owner), nodeSide(new Mutex(alice, path, { acl: CREATOR_ALL_ACL }))], [nodeSide(new Mutex(alice, path, { acl: CREATOR_ALL_ACL })), javaSide(owner)]] as const) {
      const held = await holderSide().hold;
      const waiter = waiterSide();
      await queued(alice, path, 2);
      expect((await alice.getACL(held.node)).acl).toEqual(OWNED);
      for (const [who, intruder] of Object.entries(intruders)) {
        for (const [what, attempt] of Object.entries(nodeAttempts(intruder, path, held.node))) {
          expect({ holder: held.lang, who, what, error: await outcome(attempt()) }).toEqual({ holder: held.lang, who, what, error: expect.any(NoAuthError) });
          refused++;
        }
      }
      const deleteError = await outcome(intruders.unauthenticated.delete(held.node));
      expect(deleteError).toMatchObject({ code: -102, path: held.node });
      for (const command of [`delete ${held.node}`, 'acquire 5000', `acl ${held.node}`]) {
        expect({ holder: held.lang, command, answer: await curatorMallory.reply(command) }).toEqual({ holder: held.lang, command, answer: 'FAILED NoAuthException' });
        refused++;
      }
      expect((await queued(alice, path, 2))[0]).toBe(held.node);
      expect(waiter.settled()).toBe(false);
      if (held.lang === 'java') expect(await owner.reply('status')).toBe('STATUS true present');
      await held.release();
      const next = await waiter.hold;
      expect(next.token).toBeGreaterThan(held.token);
      await next.release();
    }
    expect(refused).toBe(2 * (2 * 5 + 3));
    console.log(`interop kerberos: ${refused} intruder attempts refused with NoAuth (unauthenticated and mallory from Node, mallory from Curator; Curator and Node holding)`);
    for (const p of [owner, curatorMallory]) p.send('exit');
    expect(await owner.exited).toBe(0);
    expect(await curatorMallory.exited).toBe(0);
  }, 120_000);

  it('interop kerberos - negative control, the world ACL: the unauthenticated session deletes the Curator holder\'s node, the Node waiter gets the lock while the holder still believes it holds, and mallory deletes the Node holder\'s node', async () => {
    space = new Space();
    const path = '/krb/open/lock';
    const alice = await space.client('alice');
    const anonymous = await space.client('anonymous');
    const mallory = await space.client('mallory');
    const holder = await space.java('alice', path, 'open');
    const held = await javaSide(holder)().hold;
    const waiter = nodeSide(new Mutex(alice, path))();
    await queued(alice, path, 2);
    expect((await alice.getACL(held.node)).acl).toEqual(OPEN_ACL_UNSAFE);
    // The very call refused under CREATOR_ALL_ACL succeeds here.
    await anonymous.delete(held.node);
    const next = await waiter.hold;
    expect(next.token).toBeGreaterThan(held.token);
    expect(await holder.reply('status')).toBe('STATUS true gone');
    await mallory.delete(next.node);
    expect(await lockNodes(alice, path)).toEqual([]);
    console.log(`interop kerberos control: an unauthenticated session deleted the Curator holder's node (czxid ${held.token}), Node took the lock (${next.token}) while Curator reports STATUS true gone; mallory deleted Node's node`);
    await next.release();
    await held.release();
    holder.send('exit');
    expect(await holder.exited).toBe(0);
  }, 120_000);
});

/**
 * Curator interop under CREATOR_ALL_ACL with SASL and x509 identities (issue 27), on a secured
 * server of this file's own (test/harness/secured.ts). A Curator 5 process
 * (java/CuratorSecureParticipant.java) whose identity comes from JVM configuration only (a JAAS
 * `Client` section for SASL DIGEST-MD5 user bob; `zookeeper.client.secure` with the Netty client
 * socket and a PKCS#12 keystore for x509 CN=zk-test-client) and an ACLProvider answering
 * CREATOR_ALL_ACL, and Node sessions of the SAME identity, share one InterProcessMutex / Mutex
 * lock path: the lock passes back and forth (counted both ways), and every node either language
 * creates carries that identity only. Another identity, from Node (unauthenticated, digest, the
 * other SASL user or certificate) and from Curator (the other SASL user or certificate), gets
 * NoAuth on the Curator holder's node and the queue; the Curator holder keeps its lock.
 * Negative control, per identity: with Curator's default ACLProvider the same Curator intruder
 * deletes the Curator holder's node, the Node waiter gets the lock, and the holder still believes
 * it holds.
 */
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { CREATOR_ALL_ACL, NoAuthError, OPEN_ACL_UNSAFE, Perm, type ACL, type ZooKeeper } from '@zk/protocol';
import { Mutex } from '@zk/locks';
import { outcome, SECURED_SASL_USERS, type SecuredIdentity, SecuredSpace, type SecuredZooKeeper, startSecuredZooKeeper, waitFor } from '../harness/index.js';
import { compileCurator, curatorMissing, JARS, type CompiledJava } from '../harness/java.js';
import { alternate, handOffs, javaSide, nodeSide, queued } from './handoff.js';
import { killAll, Participant } from './participants.js';

const SOURCES = ['./java/Interop.java', './java/CuratorSecureParticipant.java'].map((s) => fileURLToPath(new URL(s, import.meta.url)));
const missing = curatorMissing() ?? (process.env.ZK_CONNECT ? 'ZK_CONNECT: this suite starts a secured server of its own' : undefined);
/** Every Java process halts after this long, whatever the test does. */
const JAVA_LIFETIME_MS = 90_000;
/** Holds per lock path, alternating languages: 5 hand-offs each. */
const HOLDS_PER_PATH = 6;

let secured: SecuredZooKeeper;
let compiled: CompiledJava | undefined;
let space: SecuredSpace;

/** A Java identity: the JVM options that give it, the port it must use, and jars it needs beyond Curator's. */
interface JavaIdentity {
  readonly jvm: () => string[];
  readonly port: 'plain' | 'secure';
  readonly classpath?: readonly string[];
}

/**
 * ZooKeeper's Netty client socket (the one TLS needs) loads io.netty.resolver and
 * io.netty.handler.codec classes, but Debian's zookeeper.jar manifest names only netty-buffer,
 * -common, -handler, -transport and -transport-native-epoll: without these two jars (libnetty-java)
 * the connection fails with NoClassDefFoundError io/netty/resolver/AddressResolverGroup, then
 * io/netty/handler/codec/ByteToMessageDecoder. The rest are named for lines whose jar has no manifest.
 */
const NETTY_CLIENT_JARS = ['netty-resolver', 'netty-codec', 'netty-transport-native-unix-common', 'netty-handler', 'netty-transport', 'netty-buffer', 'netty-common'].map((j) => `${JARS}/${j}.jar`);

/** JVM options of a SASL DIGEST-MD5 user: a JAAS `Client` section of its own. */
function saslJava(user: keyof typeof SECURED_SASL_USERS): JavaIdentity {
  return {
    port: 'plain',
    jvm: () => {
      const jaas = secured.secretFile(`client-${user}.jaas`, `Client {\n  org.apache.zookeeper.server.auth.DigestLoginModule required\n  username="${user}"\n  password="${SECURED_SASL_USERS[user]}";\n};\n`);
      return [`-Djava.security.auth.login.config=${jaas}`];
    },
  };
}

/** JVM options of a TLS client presenting the main (or the other) certificate: ZooKeeper's Netty client socket. */
function x509Java(other = false): JavaIdentity {
  return {
    port: 'secure',
    classpath: NETTY_CLIENT_JARS,
    jvm: () => {
      const c = other ? secured.otherClient : secured.client;
      return [
        '-Dzookeeper.client.secure=true',
        '-Dzookeeper.clientCnxnSocket=org.apache.zookeeper.ClientCnxnSocketNetty',
        `-Dzookeeper.ssl.keyStore.location=${c.pfxFile}`,
        `-Dzookeeper.ssl.keyStore.password=${c.passphrase}`,
        '-Dzookeeper.ssl.keyStore.type=PKCS12',
        `-Dzookeeper.ssl.trustStore.location=${secured.cert.truststore}`,
        `-Dzookeeper.ssl.trustStore.password=${secured.cert.password}`,
        '-Dzookeeper.ssl.trustStore.type=PKCS12',
      ];
    },
  };
}

/** A Curator process of `identity` on `path`, once READY. */
async function java(identity: JavaIdentity, path: string, acl: 'creator' | 'open'): Promise<Participant> {
  const connect = `${identity.port === 'plain' ? secured.plain : secured.secure}${space.root}`;
  const p = new Participant('java', 'java', [...identity.jvm(), '-cp', [compiled!.classpath, ...(identity.classpath ?? [])].join(':'), 'CuratorSecureParticipant', connect, path, acl, String(JAVA_LIFETIME_MS)]);
  await p.until('READY');
  return p;
}

interface Case {
  readonly name: string;
  readonly node: SecuredIdentity;
  readonly java: JavaIdentity;
  /** The server's id for the identity (`scheme:id`), as whoAmI reports it. */
  readonly id: () => { scheme: string; id: string };
  /** Node intruders, and a Curator process of another identity. */
  readonly nodeIntruders: ReadonlyArray<[string, SecuredIdentity]>;
  readonly javaIntruder: [string, JavaIdentity];
}

const CASES: Case[] = [
  {
    name: 'SASL user bob',
    node: { kind: 'sasl', user: 'bob' },
    java: saslJava('bob'),
    id: () => ({ scheme: 'sasl', id: 'bob' }),
    nodeIntruders: [['unauthenticated', { kind: 'anonymous' }], ['SASL carol', { kind: 'sasl', user: 'carol' }], ['digest mallory', { kind: 'digest', user: 'mallory' }], ['x509 CN=zk-test-client', { kind: 'x509' }]],
    javaIntruder: ['Curator as SASL carol', saslJava('carol')],
  },
  {
    name: 'x509 CN=zk-test-client',
    node: { kind: 'x509' },
    java: x509Java(),
    id: () => ({ scheme: 'x509', id: secured.client.dn }),
    nodeIntruders: [['unauthenticated', { kind: 'anonymous' }], ['SASL bob', { kind: 'sasl', user: 'bob' }], ['digest mallory', { kind: 'digest', user: 'mallory' }], ['x509 CN=zk-other-client', { kind: 'x509', other: true }]],
    javaIntruder: ['Curator as x509 CN=zk-other-client', x509Java(true)],
  },
];

describe.skipIf(missing !== undefined)(`interop - Curator and @zk/locks under CREATOR_ALL_ACL for SASL and x509 identities${missing ? ` (skipped: ${missing})` : ''}`, () => {
  beforeAll(async () => {
    compiled = compileCurator(SOURCES);
    secured = await startSecuredZooKeeper();
  }, 180_000);

  afterAll(async () => {
    compiled?.remove();
    await secured?.close();
  });

  describe.each(CASES)('interop acl identities - $name', (c) => {
    afterEach(async () => {
      await killAll();
      expect((await space.close(c.node)).leakedWatches).toBe(0);
    });

    it('interop acl identities - the same identity in both languages shares the lock both ways; another identity, from Node or Curator, is refused on the Curator-created nodes', async () => {
      space = new SecuredSpace(secured);
      const owned: ACL[] = [{ perms: Perm.ALL, id: c.id() }];
      const zk = await space.client(c.node, { acl: CREATOR_ALL_ACL }); // the client-wide option
      const plainZk = await space.client(c.node); // the Mutex's own option
      const owner = await java(c.java, '/ids/java-first/lock', 'creator');
      expect(await owner.reply('whoami')).toContain(`${c.id().scheme}:${c.id().id}`);
      const javaFirst = await alternate(zk, '/ids/java-first/lock', javaSide(owner), nodeSide(new Mutex(zk, '/ids/java-first/lock')), owned, HOLDS_PER_PATH);
      const other = await java(c.java, '/ids/node-first/lock', 'creator');
      const nodeFirst = await alternate(zk, '/ids/node-first/lock', nodeSide(new Mutex(plainZk, '/ids/node-first/lock', { acl: CREATOR_ALL_ACL })), javaSide(other), owned, HOLDS_PER_PATH);
      const holds = [...javaFirst.holds, ...nodeFirst.holds];
      const counted = { javaFirst: handOffs(javaFirst.holds), nodeFirst: handOffs(nodeFirst.holds) };
      expect(counted).toEqual({ javaFirst: { javaToNode: 3, nodeToJava: 2 }, nodeFirst: { javaToNode: 2, nodeToJava: 3 } });

      // The Curator process holds the lock on the path Curator created; a Node waiter of the same identity queues.
      const path = '/ids/java-first/lock';
      const held = await javaSide(owner)().hold;
      const waiter = nodeSide(new Mutex(zk, path))();
      await queued(zk, path, 2);
      let refused = 0;
      for (const [who, identity] of c.nodeIntruders) {
        const intruder = await space.client(identity);
        const tries: Record<string, () => Promise<unknown>> = {
          'delete the Curator holder\'s node': () => intruder.delete(held.node),
          'overwrite the Curator holder\'s node': () => intruder.setData(held.node, 'mine'),
          'queue on the mutex': () => new Mutex(intruder, path).acquire({ timeout: 5000 }),
          'queue with its own open ACL': () => new Mutex(intruder, path, { acl: OPEN_ACL_UNSAFE }).acquire({ timeout: 5000 }),
          'create under the lock path': () => intruder.create(`${path}/x`),
          'delete the lock path recursively': () => intruder.deleteRecursive('/ids'),
          'open the lock path\'s ACL': () => intruder.setACL(path, OPEN_ACL_UNSAFE),
        };
        for (const [what, attempt] of Object.entries(tries)) {
          expect({ who, what, error: await outcome(attempt()) }).toEqual({ who, what, error: expect.any(NoAuthError) });
          refused++;
        }
      }
      const [javaWho, javaIdentity] = c.javaIntruder;
      const intruder = await java(javaIdentity, path, 'creator');
      expect(await intruder.reply('whoami')).not.toContain(`${c.id().scheme}:${c.id().id}`);
      for (const command of ['acquire 5000', `delete ${held.node}`, `set ${held.node}`, `delete ${path}`, `acl ${held.node}`]) {
        expect({ javaWho, command, answer: await intruder.reply(command) }).toEqual({ javaWho, command, answer: 'FAILED NoAuthException' });
        refused++;
      }
      intruder.send('exit');
      expect(await intruder.exited).toBe(0);
      expect(refused).toBe(c.nodeIntruders.length * 7 + 5);
      expect(await owner.reply('status')).toBe('STATUS true present');
      expect(waiter.settled()).toBe(false);
      expect((await queued(zk, path, 2))[0]).toBe(held.node);
      expect(await owner.reply(`acl ${held.node}`)).toBe(`ACL ${c.id().scheme}:${c.id().id}:${Perm.ALL}`);
      await held.release();
      const next = await waiter.hold;
      expect(next.token).toBeGreaterThan(held.token);
      await next.release();
      console.log(
        `interop acl identities ${c.name}: ${holds.length} holds on 2 paths (java-first ${JSON.stringify(counted.javaFirst)}, node-first ${JSON.stringify(counted.nodeFirst)}), ${javaFirst.checked + nodeFirst.checked} ACLs checked, ${refused} intruder attempts refused with NoAuth`,
      );
      for (const p of [owner, other]) p.send('exit');
      expect(await owner.exited).toBe(0);
      expect(await other.exited).toBe(0);
    });

    it('interop acl identities - negative control, Curator\'s default ACLProvider: the Curator of another identity deletes the Curator holder\'s node, the Node waiter of the same identity gets the lock, the holder still believes it holds', async () => {
      space = new SecuredSpace(secured);
      const path = '/ids/open/lock';
      const zk = await space.client(c.node);
      const holder = await java(c.java, path, 'open');
      const held = await javaSide(holder)().hold;
      const waiter = nodeSide(new Mutex(zk, path))();
      await queued(zk, path, 2);
      expect((await zk.getACL(held.node)).acl).toEqual(OPEN_ACL_UNSAFE);
      // The very command refused under CREATOR_ALL_ACL above succeeds here.
      const intruder = await java(c.javaIntruder[1], path, 'open');
      expect(await intruder.reply(`delete ${held.node}`)).toBe('DONE');
      const next = await waiter.hold;
      expect(await holder.reply('status')).toBe('STATUS true gone');
      expect(next.token).toBeGreaterThan(held.token);
      console.log(`interop acl identities control ${c.name}: ${c.javaIntruder[0]} deleted the Curator holder's node (czxid ${held.token}), Node holds ${next.token}, the holder reports STATUS true gone`);
      await next.release();
      await held.release();
      for (const p of [holder, intruder]) p.send('exit');
      expect(await holder.exited).toBe(0);
      expect(await intruder.exited).toBe(0);
    });
  });

});

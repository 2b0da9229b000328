/**
 * A secured ZooKeeper of its own for a test file (issue 27): one server with a plain client port
 * (digest credentials, and SASL DIGEST-MD5 users from a JAAS `Server` section) and a TLS
 * `secureClientPort` that requires a client certificate (`ssl.clientAuth=need`), so the `x509`
 * scheme identifies each client by its certificate's subject DN. Two client certificates are
 * trusted: the server tells them apart. Start it once per file (a JVM: a few seconds) in
 * `beforeAll`, close it in `afterAll`. Local servers only: skip when `ZK_CONNECT` names one.
 */
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ConnectionOptions as TlsOptions } from 'node:tls';
import { ZooKeeper, type ClientOptions } from '@zk/protocol';
import { freePorts } from './ports.js';
import { makeCertificate, makeClientCertificate, serverTlsProperties, type TestCertificate } from './tls.js';
import { startZooKeeper, type StartOptions, type ZooKeeperEnsemble } from './zookeeper.js';

/** Digest users (`addAuth('digest', 'user:password')`); passwords distinctive enough to search output for. */
export const SECURED_DIGEST_USERS = { alice: 'alice-Pw-7731', mallory: 'mallory-Pw-1209' } as const;
/** SASL DIGEST-MD5 users known to the server's JAAS `Server` section. */
export const SECURED_SASL_USERS = { bob: 'bob-Sasl-4410', carol: 'carol-Sasl-0593' } as const;

/** One trusted client certificate: what node:tls and a Java keystore need, and the identity the server derives. */
export interface SecuredClientCertificate {
  /** Its common name; the subject DN is `CN=<cn>`. */
  readonly cn: string;
  /** The `x509` id the server gives a session presenting it (the subject DN). */
  readonly dn: string;
  readonly pfx: Buffer;
  /** The PKCS#12 file (0600): also a Java keystore (type PKCS12, password `passphrase`). */
  readonly pfxFile: string;
  readonly passphrase: string;
}

/** The running secured server and everything needed to reach it. */
export interface SecuredZooKeeper {
  readonly server: ZooKeeperEnsemble;
  /** The plain port's connect string (digest, SASL, or nothing). */
  readonly plain: string;
  /** The TLS port's connect string (`127.0.0.1:<port>`): a client certificate is required. */
  readonly secure: string;
  readonly securePort: number;
  /** A private directory (0600 files) removed on close. */
  readonly dir: string;
  readonly cert: TestCertificate;
  /** The server's certificate as PEM, in `dir`: the CA to pin. */
  readonly caFile: string;
  /** The main client certificate and a second one (another x509 identity). */
  readonly client: SecuredClientCertificate;
  readonly otherClient: SecuredClientCertificate;
  /** The JAAS file of the server (its `Server` section lists {@link SECURED_SASL_USERS}). */
  readonly jaasFile: string;
  /** node:tls options for `certificate` (default: the main client), the server name pinned to `localhost`. */
  tls(certificate?: SecuredClientCertificate): TlsOptions;
  /** Writes `content` to a 0600 file in `dir`; returns its path. */
  secretFile(name: string, content: string | Buffer): string;
  close(): Promise<void>;
}

/**
 * Starts the secured server (local JVM; ~5-10 s with the certificates). `jvm`: the JVM settings
 * of startZooKeeper (the bench's full JIT and heap, its pinned cores); default the harness's.
 */
export async function startSecuredZooKeeper(jvm: Pick<StartOptions, 'jvmOptions' | 'cpus'> = {}): Promise<SecuredZooKeeper> {
  const dir = mkdtempSync(join(tmpdir(), 'zk-secured-'));
  const secretFile = (name: string, content: string | Buffer): string => {
    const file = join(dir, name);
    writeFileSync(file, content);
    chmodSync(file, 0o600);
    return file;
  };
  const cert = await makeCertificate();
  const certificate = async (cn: string): Promise<SecuredClientCertificate> => {
    const made = await makeClientCertificate(cert, cn);
    return { cn, dn: `CN=${cn}`, pfx: made.pfx, pfxFile: secretFile(`${cn}.p12`, made.pfx), passphrase: made.passphrase };
  };
  const client = await certificate('zk-test-client');
  const otherClient = await certificate('zk-other-client');
  // makeClientCertificate's truststore trusts the server and one client: this one trusts both
  // clients (their PEMs are where makeClientCertificate exported them, in the server's dir).
  const truststore = join(cert.dir, 'trust-secured.p12');
  for (const [alias, pem] of [['server', 'server.pem'], ['client', `${client.cn}.pem`], ['other', `${otherClient.cn}.pem`]] as const) {
    execFileSync('keytool', ['-importcert', '-noprompt', '-alias', alias, '-file', join(cert.dir, pem), '-keystore', truststore, '-storetype', 'PKCS12', '-storepass', cert.password], { stdio: 'ignore' });
  }
  const caFile = secretFile('ca.pem', cert.pem);
  const users = Object.entries(SECURED_SASL_USERS).map(([user, password]) => `  user_${user}="${password}"`);
  const jaasFile = secretFile('jaas.conf', `Server {\n  org.apache.zookeeper.server.auth.DigestLoginModule required\n${users.join('\n')};\n};\n`);
  const [securePort] = (await freePorts(1)) as [number];
  let server: ZooKeeperEnsemble;
  try {
    server = await startZooKeeper({
      ...jvm,
      servers: 1,
      own: true,
      config: { secureClientPort: securePort, 'authProvider.1': 'org.apache.zookeeper.server.auth.SASLAuthenticationProvider' },
      systemProperties: { ...serverTlsProperties(cert, { clientAuth: 'need', truststore }), 'java.security.auth.login.config': jaasFile },
    });
  } catch (e) {
    rmSync(dir, { recursive: true, force: true });
    throw e;
  }
  return {
    server,
    plain: server.connectString,
    secure: `127.0.0.1:${securePort}`,
    securePort,
    dir,
    cert,
    caFile,
    client,
    otherClient,
    jaasFile,
    tls: (c = client) => ({ ca: cert.pem, pfx: c.pfx, passphrase: c.passphrase, servername: 'localhost' }),
    secretFile,
    async close() {
      await server.close();
      rmSync(dir, { recursive: true, force: true });
      rmSync(cert.dir, { recursive: true, force: true });
    },
  };
}

/** The identities a {@link SecuredSpace} client can take. */
export type SecuredIdentity =
  | { readonly kind: 'anonymous' }
  | { readonly kind: 'digest'; readonly user: keyof typeof SECURED_DIGEST_USERS }
  | { readonly kind: 'sasl'; readonly user: keyof typeof SECURED_SASL_USERS }
  | { readonly kind: 'x509'; readonly other?: boolean };

/** Connect options (and the connect string) for `who` on `zk`. */
export function securedConnect(zk: SecuredZooKeeper, who: SecuredIdentity): { connect: string; options: ClientOptions } {
  switch (who.kind) {
    case 'anonymous':
      return { connect: zk.plain, options: {} };
    case 'digest':
      return { connect: zk.plain, options: { auth: [{ scheme: 'digest', auth: `${who.user}:${SECURED_DIGEST_USERS[who.user]}` }] } };
    case 'sasl':
      return { connect: zk.plain, options: { sasl: { mechanism: 'DIGEST-MD5', username: who.user, password: SECURED_SASL_USERS[who.user] } } };
    case 'x509':
      return { connect: zk.secure, options: { tls: zk.tls(who.other ? zk.otherClient : zk.client) } };
  }
}

/**
 * A per-test namespace on a secured server (TestSpace's counterpart, which only knows the shared
 * server): a world-open root node, clients of any identity chrooted in it, and a teardown that
 * closes them, counts the watches they left and removes the namespace as `cleaner` (owned nodes
 * are out of everyone else's reach).
 */
export class SecuredSpace {
  readonly root = `/t-${randomUUID()}`;
  readonly #zk: SecuredZooKeeper;
  readonly #clients: ZooKeeper[] = [];
  #created: Promise<void> | undefined;

  constructor(zk: SecuredZooKeeper) {
    this.#zk = zk;
  }

  /**
   * A client of `who` chrooted in the namespace; `options` are added (e.g. a client-wide `acl`).
   * `via` (`host:port`, e.g. a TcpProxy's) replaces the port the identity uses.
   */
  async client(who: SecuredIdentity, options: ClientOptions = {}, via?: string): Promise<ZooKeeper> {
    this.#created ??= (async () => {
      await using admin = await ZooKeeper.connect(this.#zk.plain);
      await admin.create(this.root);
    })();
    await this.#created;
    const { connect, options: identity } = securedConnect(this.#zk, who);
    const zk = await ZooKeeper.connect(`${via ?? connect}${this.root}`, { sessionTimeout: 10_000, ...identity, ...options });
    this.#clients.push(zk);
    return zk;
  }

  /** Closes every client and deletes the namespace as `cleaner`; returns the watches the clients left registered. */
  async close(cleaner: SecuredIdentity): Promise<{ leakedWatches: number }> {
    let leakedWatches = 0;
    for (const zk of this.#clients) {
      leakedWatches += zk.watchCount;
      await zk.close();
    }
    if (this.#created) {
      const { connect, options } = securedConnect(this.#zk, cleaner);
      await using root = await ZooKeeper.connect(connect, options);
      await root.deleteRecursive(this.root);
    }
    return { leakedWatches };
  }
}

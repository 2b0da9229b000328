/**
 * The server the runtime suite talks to, started once for every runtime: a standalone ZooKeeper
 * with a plain client port, a TLS client port (a CA-verified server certificate; client
 * certificates wanted, not required, so one port serves both TLS checks) and SASL DIGEST-MD5
 * users from a JAAS file, plus a TCP proxy in front of the plain port. The suite asks for
 * faults by name ({@link SuiteServer.handle}). Where a KDC can be had (kdcMissing()), also a
 * private MIT KDC and a Kerberized ZooKeeper (SASL GSSAPI), started beside it.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePorts, makeCertificate, makeClientCertificate, serverTlsProperties, startZooKeeper, TcpProxy, type ZooKeeperEnsemble } from '../harness/index.js';
import { kdcMissing, kerberizedServerOptions, startKdc, TEST_ENCTYPES, type TestKdc } from '../harness/kdc.js';

/** The SASL users of the JAAS file. */
const SASL_USERS = { bob: 'bob-secret', ann: 'ann-secret' } as const;
const CLIENT_CN = 'zk-runtime-client';

/** What the suite's config says about the servers (see test/runtime/suite/main.mjs). */
export interface ServerConfig {
  connect: string;
  proxy: string;
  tls: {
    connect: string;
    ca: string;
    /** A certificate the server's is not signed by. */
    otherCa: string;
    /** The client certificate and key: keytool's PKCS12 (base64), the same without a friendlyName, and PEM. */
    pfx: string;
    plainPfx: string;
    passphrase: string;
    cert: string;
    key: string;
  };
  sasl: typeof SASL_USERS;
  /** The Kerberized server and its realm (kerberos-checks.mjs); absent where no KDC can be had. */
  kerberos?: KerberosConfig;
}

/** The enctype numbers of TEST_ENCTYPES, in its order (RFC 3961's registry). */
const ENCTYPE_NUMBERS: Readonly<Record<(typeof TEST_ENCTYPES)[number], number>> = {
  'aes256-cts-hmac-sha384-192': 20,
  'aes128-cts-hmac-sha256-128': 19,
  'aes256-cts-hmac-sha1-96': 18,
  'aes128-cts-hmac-sha1-96': 17,
};

/** What the suite's Kerberos checks connect with: no key, only paths and the test realm's passwords. */
export interface KerberosConfig {
  /** The Kerberized server (`127.0.0.1:port`: its service principal is zookeeper/localhost@realm). */
  connect: string;
  realm: string;
  /** The KDC's `host:port` (krb5.conf's kdc entry, TCP and UDP). */
  kdc: string;
  krb5Conf: string;
  /** The same with `udp_preference_limit = 1`: the KDC asked by TCP first. */
  tcpKrb5Conf: string;
  /** Per enctype number: a principal whose only key is of that enctype, and its password. */
  byEnctype: Record<string, { principal: string; password: string }>;
  /** A principal with a random key, and its keytab. */
  keytab: { principal: string; file: string };
  /** A kinit ccache (FILE: path) of another principal. */
  ccache: { principal: string; file: string };
}

/** A KDC and a Kerberized ZooKeeper for the suite. */
interface Kerberized {
  config: KerberosConfig;
  close(): Promise<void>;
}

/** Starts the realm (its principals, keytab and ccache) and the Kerberized server; stops the KDC again on a failure. */
async function startKerberized(): Promise<Kerberized> {
  const kdc: TestKdc = await startKdc();
  try {
    const byEnctype: KerberosConfig['byEnctype'] = {};
    for (const name of TEST_ENCTYPES) {
      const n = ENCTYPE_NUMBERS[name];
      const entry = { principal: `rt-e${n}`, password: `rt-e${n}-Pw-${randomBytes(4).toString('hex')}` };
      kdc.addPrincipal(entry.principal, { password: entry.password, enctypes: [name] });
      byEnctype[n] = entry;
    }
    kdc.addPrincipal('rt-keytab');
    kdc.addPrincipal('rt-ccache', { password: 'rt-ccache-Pw' });
    kdc.addPrincipal('zookeeper/localhost');
    const service = kdc.keytab('zookeeper/localhost');
    const config = {
      realm: kdc.realm,
      kdc: `${kdc.host}:${kdc.port}`,
      krb5Conf: kdc.krb5Conf,
      tcpKrb5Conf: join(kdc.dir, 'krb5-tcp.conf'),
      byEnctype,
      keytab: { principal: 'rt-keytab', file: kdc.keytab('rt-keytab') },
      ccache: { principal: 'rt-ccache', file: kdc.kinit('rt-ccache', { password: 'rt-ccache-Pw' }) },
    };
    await writeFile(config.tcpKrb5Conf, (await readFile(kdc.krb5Conf, 'utf8')).replace('[libdefaults]\n', '[libdefaults]\n  udp_preference_limit = 1\n'));
    const ensemble = await startZooKeeper({ servers: 1, own: true, ...kerberizedServerOptions(kdc, { keytab: service }) });
    return {
      config: { connect: ensemble.servers[0]!.connectString, ...config },
      async close() {
        await ensemble.close();
        await kdc.stop();
      },
    };
  } catch (err) {
    await kdc.stop();
    throw err;
  }
}

export class SuiteServer {
  readonly config: ServerConfig;
  readonly #ensemble: ZooKeeperEnsemble;
  readonly #proxy: TcpProxy;
  readonly #kerberized: Kerberized | undefined;
  /** Directories to remove at close (the JAAS file's, the certificates'). */
  readonly #dirs: string[];

  private constructor(config: ServerConfig, ensemble: ZooKeeperEnsemble, proxy: TcpProxy, kerberized: Kerberized | undefined, dirs: string[]) {
    this.config = config;
    this.#ensemble = ensemble;
    this.#proxy = proxy;
    this.#kerberized = kerberized;
    this.#dirs = dirs;
  }

  /**
   * Starts it all (the Kerberized server beside the others, when kdcMissing() allows); what was
   * made before a failure is removed again.
   */
  static async start(): Promise<SuiteServer> {
    const dirs: string[] = [];
    const kerberos = kdcMissing() === undefined ? startKerberized() : undefined;
    const [started, kerberized] = await Promise.allSettled([SuiteServer.#start(dirs), kerberos]);
    if (started.status === 'fulfilled' && kerberized.status === 'fulfilled') {
      const server = started.value;
      if (!kerberized.value) return server;
      return new SuiteServer({ ...server.config, kerberos: kerberized.value.config }, server.#ensemble, server.#proxy, kerberized.value, dirs);
    }
    if (started.status === 'fulfilled') await started.value.close();
    else await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
    if (kerberized.status === 'fulfilled') await kerberized.value?.close();
    throw started.status === 'rejected' ? started.reason : (kerberized as PromiseRejectedResult).reason;
  }

  static async #start(dirs: string[]): Promise<SuiteServer> {
    const dir = await mkdtemp(join(tmpdir(), 'zk-runtime-server-'));
    dirs.push(dir);
    const [cert, other] = await Promise.all([makeCertificate(), makeCertificate('elsewhere')]);
    dirs.push(cert.dir, other.dir);
    const client = await makeClientCertificate(cert, CLIENT_CN);
    // The same client key as PEM, for runtimes whose node:tls takes `cert` + `key` but not `pfx`.
    const p12 = join(cert.dir, `${CLIENT_CN}.p12`);
    const key = execFileSync('openssl', ['pkcs12', '-in', p12, '-nocerts', '-nodes', '-passin', `pass:${cert.password}`], { encoding: 'utf8' });
    const certPem = join(cert.dir, `${CLIENT_CN}.pem`);
    // And as a PKCS12 file without keytool's friendlyName attribute (its alias): see limitations.ts (Deno).
    const plainP12 = join(cert.dir, `${CLIENT_CN}-plain.p12`);
    const keyPem = join(cert.dir, `${CLIENT_CN}.key`);
    await writeFile(keyPem, key);
    execFileSync('openssl', ['pkcs12', '-export', '-in', certPem, '-inkey', keyPem, '-out', plainP12, '-passout', `pass:${cert.password}`]);
    const jaas = join(dir, 'jaas.conf');
    const users = Object.entries(SASL_USERS).map(([u, p]) => `  user_${u}="${p}"`).join('\n');
    await writeFile(jaas, `Server {\n  org.apache.zookeeper.server.auth.DigestLoginModule required\n${users};\n};\n`);
    const [securePort] = (await freePorts(1)) as [number];
    const ensemble = await startZooKeeper({
      servers: 1,
      own: true,
      config: { secureClientPort: securePort, 'authProvider.1': 'org.apache.zookeeper.server.auth.SASLAuthenticationProvider' },
      // `want` (not in the harness's options): a client certificate is checked when sent, not required.
      systemProperties: { ...serverTlsProperties(cert, { truststore: client.truststore }), 'zookeeper.ssl.clientAuth': 'want', 'java.security.auth.login.config': jaas },
    });
    const server = ensemble.servers[0]!;
    const proxy = await TcpProxy.start({ host: server.host, port: server.port }).catch(async (err: unknown) => {
      await ensemble.close();
      throw err;
    });
    const config: ServerConfig = {
      connect: server.connectString,
      proxy: proxy.connectString,
      tls: {
        connect: `127.0.0.1:${securePort}`,
        ca: cert.pem,
        otherCa: other.pem,
        pfx: client.pfx.toString('base64'),
        passphrase: client.passphrase,
        plainPfx: (await readFile(plainP12)).toString('base64'),
        cert: await readFile(certPem, 'utf8'),
        key,
      },
      sasl: SASL_USERS,
    };
    return new SuiteServer(config, ensemble, proxy, undefined, dirs);
  }

  /** Does what the suite asked (`restart`, `cut`, `pause`, `resume`). */
  async handle(ask: string): Promise<void> {
    switch (ask) {
      case 'restart':
        return this.#ensemble.servers[0]!.restart();
      case 'cut':
        return this.#proxy.cut();
      case 'pause':
        return this.#proxy.pause('both');
      case 'resume':
        return this.#proxy.resume('both');
      default:
        throw new Error(`the suite asked for ${JSON.stringify(ask)}, which the driver does not know`);
    }
  }

  logs(): Promise<string> {
    return this.#ensemble.logs();
  }

  async close(): Promise<void> {
    await this.#proxy.close();
    await this.#ensemble.close();
    await this.#kerberized?.close();
    await Promise.all(this.#dirs.map((d) => rm(d, { recursive: true, force: true })));
  }
}

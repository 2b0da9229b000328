/**
 * TLS material for tests, made with the JDK's keytool: a self-signed certificate for
 * `localhost` / 127.0.0.1 in a PKCS12 keystore (for the server), and the same certificate as
 * PEM (for the Node client's `ca`).
 */
import { execFileSync } from 'node:child_process';
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A keystore and its certificate. */
export interface TestCertificate {
  readonly keystore: string;
  /** A PKCS12 truststore holding the certificate as a trusted entry. */
  readonly truststore: string;
  readonly password: string;
  /** The certificate, PEM. */
  readonly pem: string;
  readonly dir: string;
}

/** Makes a fresh self-signed certificate (a few hundred ms: keytool is a JVM). */
export async function makeCertificate(cn = 'localhost'): Promise<TestCertificate> {
  const dir = await mkdtemp(join(tmpdir(), 'zk-tls-'));
  const keystore = join(dir, 'server.p12');
  const password = 'test-password';
  const pemFile = join(dir, 'server.pem');
  execFileSync('keytool', ['-genkeypair', '-alias', 'zk', '-keyalg', 'RSA', '-keysize', '2048', '-dname', `CN=${cn}`, '-ext', `SAN=dns:${cn},ip:127.0.0.1`, '-validity', '2', '-keystore', keystore, '-storetype', 'PKCS12', '-storepass', password], { stdio: 'ignore' });
  execFileSync('keytool', ['-exportcert', '-alias', 'zk', '-keystore', keystore, '-storepass', password, '-rfc', '-file', pemFile], { stdio: 'ignore' });
  // The server's X509 provider wants trust anchors too; a key pair entry is not one.
  const truststore = join(dir, 'trust.p12');
  execFileSync('keytool', ['-importcert', '-noprompt', '-alias', 'ca', '-file', pemFile, '-keystore', truststore, '-storetype', 'PKCS12', '-storepass', password], { stdio: 'ignore' });
  return { keystore, truststore, password, pem: await readFile(pemFile, 'utf8'), dir };
}

/** A client certificate (PKCS12, for node:tls `pfx`) and a server truststore that trusts it and the server's own. */
export interface TestClientCertificate {
  readonly pfx: Buffer;
  readonly passphrase: string;
  /** A truststore with both the server's and this client's certificates. */
  readonly truststore: string;
}

/** Makes a client certificate `CN=<cn>` and a truststore for a server that requires it. */
export async function makeClientCertificate(server: TestCertificate, cn = 'zk-test-client'): Promise<TestClientCertificate> {
  const p12 = join(server.dir, `${cn}.p12`);
  const pem = join(server.dir, `${cn}.pem`);
  const truststore = join(server.dir, `trust-with-${cn}.p12`);
  const pw = server.password;
  execFileSync('keytool', ['-genkeypair', '-alias', cn, '-keyalg', 'RSA', '-keysize', '2048', '-dname', `CN=${cn}`, '-validity', '2', '-keystore', p12, '-storetype', 'PKCS12', '-storepass', pw], { stdio: 'ignore' });
  execFileSync('keytool', ['-exportcert', '-alias', cn, '-keystore', p12, '-storepass', pw, '-rfc', '-file', pem], { stdio: 'ignore' });
  for (const [alias, file] of [['server', join(server.dir, 'server.pem')], ['client', pem]] as const) {
    execFileSync('keytool', ['-importcert', '-noprompt', '-alias', alias, '-file', file, '-keystore', truststore, '-storetype', 'PKCS12', '-storepass', pw], { stdio: 'ignore' });
  }
  return { pfx: await readFile(p12), passphrase: pw, truststore };
}

/** JVM properties that give a server a TLS client port (with `secureClientPort` in zoo.cfg). */
export function serverTlsProperties(cert: TestCertificate, options: { clientAuth?: 'none' | 'need'; truststore?: string } = {}): Record<string, string> {
  return {
    'zookeeper.serverCnxnFactory': 'org.apache.zookeeper.server.NettyServerCnxnFactory',
    'zookeeper.ssl.keyStore.location': cert.keystore,
    'zookeeper.ssl.keyStore.password': cert.password,
    'zookeeper.ssl.keyStore.type': 'PKCS12',
    'zookeeper.ssl.trustStore.location': options.truststore ?? cert.truststore,
    'zookeeper.ssl.trustStore.password': cert.password,
    'zookeeper.ssl.trustStore.type': 'PKCS12',
    'zookeeper.ssl.clientAuth': options.clientAuth ?? 'none',
  };
}

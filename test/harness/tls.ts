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

/** JVM properties that give a server a TLS client port (with `secureClientPort` in zoo.cfg). */
export function serverTlsProperties(cert: TestCertificate): Record<string, string> {
  return {
    'zookeeper.serverCnxnFactory': 'org.apache.zookeeper.server.NettyServerCnxnFactory',
    'zookeeper.ssl.keyStore.location': cert.keystore,
    'zookeeper.ssl.keyStore.password': cert.password,
    'zookeeper.ssl.keyStore.type': 'PKCS12',
    'zookeeper.ssl.trustStore.location': cert.truststore,
    'zookeeper.ssl.trustStore.password': cert.password,
    'zookeeper.ssl.trustStore.type': 'PKCS12',
    'zookeeper.ssl.clientAuth': 'none',
  };
}

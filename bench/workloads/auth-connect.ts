/**
 * Connects with credentials (issue 40): new sessions of ours, one after another (connect until
 * usable, then close, the close awaited), with no credentials, with DIGEST-MD5 SASL, with a
 * digest `addAuth` at connect, and with Kerberos (SASL GSSAPI) from a password, a keytab, a kinit
 * ccache and a TGT kept from the previous connect; ZooKeeper's Java client with a JAAS Kerberos
 * keytab beside them. All in one workload, repetitions interleaved.
 *
 * Servers of its own (a ZooKeeper 3.8 server does one SASL mechanism: GSSAPI once its JAAS
 * `Server` section logs in a Kerberos principal, DIGEST-MD5 otherwise): the test harness's
 * secured server (a JAAS DigestLoginModule section; its plain port) for the plain and digest
 * rows, and a Kerberized server (JAAS Krb5LoginModule, the service keytab) with a private MIT KDC
 * for the Kerberos rows; each server also takes plain connects, the control. Without a KDC the
 * Kerberos rows are skipped with the reason.
 *
 * What our client keeps: the Kerberos login (krb5.conf read, keys from the keytab or password,
 * the TGT) belongs to the `sasl` options object (one per client), so a new options object per
 * connect logs in again (an AS exchange: an AS-REQ, KDC_ERR_PREAUTH_REQUIRED, an AS-REQ with
 * PA-ENC-TIMESTAMP), and the same object given to every connect keeps its TGT. Service tickets are
 * not kept: every connect makes a TGS exchange, then the AP-REQ and the security-layer
 * negotiation with the server. Each Kerberos row counts its steps on the `zk:kerberos` channel.
 */
import { randomBytes } from 'node:crypto';
import { ZooKeeper, type ClientOptions } from '@zk/protocol';
import { kdcMissing, kerberizedClientJvmOptions, kerberizedServerOptions, securedConnect, startKdc, startSecuredZooKeeper, startZooKeeper, type SecuredZooKeeper, type TestKdc, type ZooKeeperEnsemble } from '@zk/test/harness';
import type { Bench, Repetition } from '../lib/bench.js';
import { kerberosSteps } from '../lib/kerberos-steps.js';
import { connectLoop } from '../lib/stats.js';
import { startJavaDriver, type JavaDriver } from '../peers/java.js';

/** The row's name: `--only authenticated` runs it alone. */
export const AUTH_CONNECT_WORKLOAD = 'connect, authenticated (new session)';

/** The clients of the row. */
export const AUTH_CLIENT = {
  plain: 'ours, no credentials',
  saslDigest: 'ours, SASL DIGEST-MD5',
  addAuthDigest: 'ours, digest addAuth',
  plainKerberized: 'ours, no credentials (Kerberized server)',
  password: 'ours, Kerberos password (new login)',
  keytab: 'ours, Kerberos keytab (new login)',
  ccache: 'ours, Kerberos kinit ccache (new login)',
  reused: 'ours, Kerberos keytab, TGT reused',
  javaPlain: 'ZooKeeper Java client, SASL off (Kerberized server)',
  javaKeytab: 'ZooKeeper Java client, JAAS Kerberos keytab',
} as const;

/** Settings of the row's servers and peers. */
export interface AuthConnectSettings {
  /** Run the Java client rows (false: --no-java). */
  readonly java: boolean;
  /** JVM settings of the bench's local servers (heap, pinned cores). */
  readonly serverOptions: { readonly jvmOptions?: readonly string[]; readonly cpus?: string };
}

/** The Kerberos principal the rows log in as (its password is random per run, never printed). */
const PRINCIPAL = 'bench';

/** Runs the row on servers of its own when `--only` selects it; they are stopped before returning. */
export async function authConnectWorkloads(bench: Bench, settings: AuthConnectSettings): Promise<void> {
  if (!bench.wants(AUTH_CONNECT_WORKLOAD)) return;
  // Connects per repetition (and warm-up) by what one costs, so that each repetition lasts a second
  // or a few: a new login from a password pays the string-to-key (PBKDF2, 32,768 iterations for
  // the RFC 8009 enctypes), and the Java client's close waits for its threads.
  const fast = { count: bench.n(100, 20), warmup: 100 };
  const kerberos = { count: bench.n(50, 10), warmup: 50 };
  const password = { count: bench.n(15, 5), warmup: 10 };
  const javaSized = { count: bench.n(20, 5), warmup: 30 };
  const server = { jvmOptions: [...(settings.serverOptions.jvmOptions ?? [])], ...(settings.serverOptions.cpus ? { cpus: settings.serverOptions.cpus } : {}) };
  const loop =
    (options: () => ClientOptions, connectString: string, size: { count: number; warmup: number }): Repetition =>
    (w) =>
      connectLoop(w ? size.warmup : size.count, async () => {
        const client = await ZooKeeper.connect(connectString, { sessionTimeout: 10_000, ...options() });
        return () => client.close();
      });
  let digest: SecuredZooKeeper | undefined;
  let kdc: TestKdc | undefined;
  let kerberized: ZooKeeperEnsemble | undefined;
  let java: JavaDriver | undefined;
  try {
    digest = await startSecuredZooKeeper(server);
    const sasl = securedConnect(digest, { kind: 'sasl', user: 'bob' }).options;
    const addAuth = securedConnect(digest, { kind: 'digest', user: 'alice' }).options;
    const clients: Array<readonly [string, Repetition]> = [
      [AUTH_CLIENT.plain, loop(() => ({}), digest.plain, fast)],
      [AUTH_CLIENT.saslDigest, loop(() => sasl, digest.plain, fast)],
      [AUTH_CLIENT.addAuthDigest, loop(() => addAuth, digest.plain, fast)],
    ];
    const missing = kdcMissing();
    if (missing) bench.skipped[`${AUTH_CONNECT_WORKLOAD}: Kerberos`] = missing;
    else {
      kdc = await startKdc();
      const secret = randomBytes(12).toString('base64url');
      kdc.addPrincipal(PRINCIPAL, { password: secret });
      kdc.addPrincipal('zookeeper/localhost');
      const keytab = kdc.keytab(PRINCIPAL);
      const ccache = kdc.kinit(PRINCIPAL, { password: secret });
      kerberized = await startZooKeeper({ servers: 1, own: true, ...server, ...kerberizedServerOptions(kdc, { keytab: kdc.keytab('zookeeper/localhost') }) });
      const at = kerberized.connectString;
      const krb5Conf = kdc.krb5Conf;
      // One options object for every connect of the row: the login, and its TGT, are kept.
      const kept = { mechanism: 'GSSAPI', principal: PRINCIPAL, keytab, krb5Conf } as const;
      clients.push(
        [AUTH_CLIENT.plainKerberized, loop(() => ({}), at, fast)],
        [AUTH_CLIENT.password, kerberosSteps(loop(() => ({ sasl: { mechanism: 'GSSAPI', principal: PRINCIPAL, password: secret, krb5Conf } }), at, password))],
        [AUTH_CLIENT.keytab, kerberosSteps(loop(() => ({ sasl: { mechanism: 'GSSAPI', principal: PRINCIPAL, keytab, krb5Conf } }), at, kerberos))],
        [AUTH_CLIENT.ccache, kerberosSteps(loop(() => ({ sasl: { mechanism: 'GSSAPI', ccache: `FILE:${ccache}`, krb5Conf } }), at, kerberos))],
        [AUTH_CLIENT.reused, kerberosSteps(loop(() => ({ sasl: kept }), at, kerberos))],
      );
      if (settings.java) {
        // A JVM of its own: JAAS and krb5.conf are JVM-wide settings (the Client section logs in with the keytab).
        const driver = await startJavaDriver(at, { jvmOptions: kerberizedClientJvmOptions(kdc, { principal: PRINCIPAL, keytab }) });
        if ('skipped' in driver) bench.skipped[`${AUTH_CONNECT_WORKLOAD}: ZooKeeper Java client`] = driver.skipped;
        else {
          java = driver;
          clients.push(
            [AUTH_CLIENT.javaPlain, (w) => driver.run({ workload: 'connect', count: w ? javaSized.warmup : javaSized.count, sasl: false })],
            [AUTH_CLIENT.javaKeytab, (w) => driver.run({ workload: 'connect', count: w ? javaSized.warmup : javaSized.count, sasl: true })],
          );
        }
      } else bench.skipped[`${AUTH_CONNECT_WORKLOAD}: ZooKeeper Java client`] = '--no-java';
    }
    await bench.compare('raw', AUTH_CONNECT_WORKLOAD, 'connects', clients);
  } finally {
    await java?.close();
    await kerberized?.close();
    await kdc?.stop();
    await digest?.close();
  }
}

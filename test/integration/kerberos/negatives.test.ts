/**
 * Issue 40's Kerberos negative cases against real servers: a principal of another realm (a realm
 * krb5.conf has no KDC for; a second private KDC, OTHER.TEST, with no cross-realm trust to the
 * ensemble's ZK.TEST), a server that requires SASL against a client that offers none, and a wrong
 * keytab (stale kvno after `cpw -randkey`; another principal's). Each is a typed error that says
 * what to check, with its control beside it.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { inspect } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CrossRealmError, KerberosConfigError, PreauthFailedError, PrincipalUnknownError, SessionClosedRequireSaslAuthError, ZooKeeper, type GssapiOptions } from '@zk/protocol';
import { requestTgt } from '../../../packages/protocol/src/kerberos/as-exchange.js';
import { keytabKeys } from '../../../packages/protocol/src/kerberos/credential.js';
import { keysFor, readKeytab } from '../../../packages/protocol/src/kerberos/keytab.js';
import { parsePrincipal, principalText } from '../../../packages/protocol/src/kerberos/principal.js';
import { TcpProxy } from '../../harness/proxy.js';
import { timing, waitFor } from '../../harness/timing.js';
import { kerberizedServerOptions, startKdc, type TestKdc } from '../../harness/kdc.js';
import { startZooKeeper, type ZooKeeperEnsemble } from '../../harness/zookeeper.js';
import { zookeeperLine } from '../../harness/versions.js';

const PASSWORD = 'carol-Krb-9c1e';
const OTHER_PASSWORD = 'carol-other-77f2';

/** The error and its causes, outermost first. */
function chain(err: unknown): unknown[] {
  const causes: unknown[] = [];
  for (let e: unknown = err; e instanceof Error; e = e.cause) causes.push(e);
  return causes;
}

/** The connect's failure: an AuthFailedError whose cause is the Kerberos error of class `cls`. */
async function connectFails<T extends Error>(connectString: string, sasl: GssapiOptions, cls: new (...args: never[]) => T): Promise<{ err: unknown; cause: T; text: string }> {
  const err = await ZooKeeper.connect(connectString, { sasl, connectTimeout: 5_000 }).then(
    async (zk) => {
      await zk.close();
      throw new Error('connected');
    },
    (e: unknown) => e,
  );
  const cause = chain(err).find((c): c is T => c instanceof cls);
  expect(cause, inspect(err, { depth: 9 })).toBeDefined();
  expect((err as Error).name).toBe('AuthFailedError');
  return { err, cause: cause as T, text: `${String(err)} ${inspect(err, { depth: 9 })}` };
}

describe(`kerberos - negative cases against a real MIT KDC and a Kerberized ZooKeeper ${zookeeperLine()}`, () => {
  let kdc: TestKdc;
  let other: TestKdc;
  let zk: ZooKeeperEnsemble;
  /** krb5.conf of both realms (default ZK.TEST), as a host of both would have. */
  let bothConf: string;
  let serviceKeytab: string;
  beforeAll(async () => {
    [kdc, other] = await Promise.all([startKdc(), startKdc({ realm: 'OTHER.TEST' })]);
    kdc.addPrincipal('carol', { password: PASSWORD });
    kdc.addPrincipal('zookeeper/localhost');
    other.addPrincipal('carol', { password: OTHER_PASSWORD });
    // OTHER.TEST has a service principal of that name too: the failure below is the realm, not the name.
    other.addPrincipal('zookeeper/localhost');
    bothConf = join(other.dir, 'krb5-both.conf');
    writeFileSync(
      bothConf,
      [
        '[libdefaults]',
        `  default_realm = ${kdc.realm}`,
        '  dns_lookup_kdc = false',
        '',
        '[realms]',
        `  ${kdc.realm} = {`,
        `    kdc = ${kdc.host}:${kdc.port}`,
        '  }',
        `  ${other.realm} = {`,
        `    kdc = ${other.host}:${other.port}`,
        '  }',
        '',
      ].join('\n'),
    );
    serviceKeytab = kdc.keytab('zookeeper/localhost');
    zk = await startZooKeeper({ servers: 1, own: true, ...kerberizedServerOptions(kdc, { keytab: serviceKeytab }) });
  });
  afterAll(async () => {
    await zk?.close();
    await Promise.all([kdc?.stop(), other?.stop()]);
  });

  describe('another realm', () => {
    it('negatives - a principal of a realm krb5.conf has no KDC for is KerberosConfigError naming the realm and krb5.conf (no KDC asked); control: the same krb5.conf’s own realm connects', async () => {
      const asked = kdc.log().length;
      const { cause, text } = await connectFails(zk.connectString, { mechanism: 'GSSAPI', principal: 'carol@OTHER.TEST', password: OTHER_PASSWORD, krb5Conf: kdc.krb5Conf }, KerberosConfigError);
      expect(cause.message).toBe(`no KDC known for realm OTHER.TEST: krb5.conf (${kdc.krb5Conf}) has no [realms] OTHER.TEST entry with a kdc (it knows: ZK.TEST); add one, give the kdcs option, or use a principal of a realm it knows`);
      expect(text).not.toContain(OTHER_PASSWORD);
      // Before the fix: KdcUnreachableError "no KDC answered (no KDC configured)".
      expect(text).not.toMatch(/KdcUnreachable|no KDC answered/);
      expect(kdc.log().slice(asked)).not.toContain('OTHER.TEST');
      await using carol = await ZooKeeper.connect(zk.connectString, { sasl: { mechanism: 'GSSAPI', principal: 'carol', password: PASSWORD, krb5Conf: kdc.krb5Conf } });
      expect(await carol.whoAmI()).toContainEqual({ authScheme: 'sasl', user: 'carol@ZK.TEST' });
    });

    it('negatives - a TGT of OTHER.TEST (its own KDC) asking for zookeeper/localhost@ZK.TEST, no cross-realm trust: CrossRealmError naming the service and both realms, with the KDC’s code', async () => {
      const sasl = { mechanism: 'GSSAPI' as const, principal: 'carol@OTHER.TEST', password: OTHER_PASSWORD, krb5Conf: bothConf, serviceRealm: 'ZK.TEST' };
      const { cause, text } = await connectFails(zk.connectString, sasl, CrossRealmError);
      expect(cause.message).toMatch(/^the KDC of realm OTHER.TEST gives carol@OTHER.TEST no ticket for zookeeper\/localhost@ZK.TEST \(error \d+.*\): the service is in realm ZK.TEST, and this client follows no cross-realm path \(krbtgt\/ZK.TEST@OTHER.TEST\), trusted or not; use a principal of realm ZK.TEST/);
      // MIT answers a request in ZK.TEST's name without a local krbtgt/ZK.TEST as KRB_ERR_GENERIC (60).
      expect([7, 60, 68]).toContain(cause.code);
      expect(text).not.toContain(OTHER_PASSWORD);
      // Real: OTHER.TEST's KDC issued the TGT, then refused the service ticket.
      await waitFor('OTHER.TEST’s KDC to log the TGT and the refused TGS request', () => (/ISSUE: .*carol@OTHER.TEST for krbtgt\/OTHER.TEST@OTHER.TEST[^]*TGS_REQ .*carol@OTHER.TEST for zookeeper\/localhost@ZK.TEST/.test(other.log()) ? true : undefined), timing(5_000));
    });

    it('negatives - a stated limitation: with a cross-realm trust (krbtgt/ZK.TEST@OTHER.TEST, one key in both KDCs) the answer is the same CrossRealmError, the client follows no cross-realm path', async () => {
      const trust = 'krbtgt/ZK.TEST@OTHER.TEST';
      for (const k of [kdc, other]) k.run('kadmin.local', ['-r', k.realm, '-q', `addprinc -pw trust-Krb-31 -e aes256-cts-hmac-sha1-96:normal ${trust}`]);
      try {
        const sasl = { mechanism: 'GSSAPI' as const, principal: 'carol@OTHER.TEST', password: OTHER_PASSWORD, krb5Conf: bothConf, serviceRealm: 'ZK.TEST' };
        const { cause, text } = await connectFails(zk.connectString, sasl, CrossRealmError);
        expect(cause.message).toContain('trusted or not; use a principal of realm ZK.TEST');
        expect(text).not.toContain('trust-Krb-31');
        // The trust exists: OTHER.TEST's KDC has the cross-realm key.
        expect(other.run('kadmin.local', ['-r', other.realm, '-q', `getprinc ${trust}`])).toContain(`Principal: ${trust}`);
      } finally {
        for (const k of [kdc, other]) k.run('kadmin.local', ['-r', k.realm, '-q', `delprinc -force ${trust}`]);
      }
    });

    it('negatives - control: with the same two-realm krb5.conf, a ZK.TEST principal connects; an OTHER.TEST principal with the default service realm (its own, where zookeeper/localhost exists too) gets a ticket the server’s keytab cannot read: AuthFailed from the server, not a realm error', async () => {
      await using carol = await ZooKeeper.connect(zk.connectString, { sasl: { mechanism: 'GSSAPI', principal: 'carol', password: PASSWORD, krb5Conf: bothConf } });
      expect(await carol.whoAmI()).toContainEqual({ authScheme: 'sasl', user: 'carol@ZK.TEST' });
      // zookeeper/localhost@OTHER.TEST exists, so OTHER.TEST's KDC issues a ticket: the ensemble's
      // keytab (ZK.TEST's key) cannot read it, and the server refuses the SASL exchange.
      const err = await ZooKeeper.connect(zk.connectString, { sasl: { mechanism: 'GSSAPI', principal: 'carol@OTHER.TEST', password: OTHER_PASSWORD, krb5Conf: bothConf }, connectTimeout: 5_000 }).catch((e: unknown) => e);
      expect((err as Error).message).toBe('SASL GSSAPI refused (-115)');
      expect(chain(err).some((c) => c instanceof CrossRealmError || c instanceof PrincipalUnknownError)).toBe(false);
    });
  });

  describe('a wrong keytab', () => {
    /** The kvno of `principal`'s keys in `keytab` (klist -kt) and at the KDC (kadmin getprinc). */
    function kvnos(principal: string, keytab: string): { keytab: number[]; kdc: number } {
      const listed = kdc.run('klist', ['-kt', keytab]);
      const inKeytab = [...listed.matchAll(new RegExp(`^\\s*(\\d+) .*${principal}@`, 'gm'))].map((m) => Number(m[1]));
      const kdcKvno = Number(/Key: vno (\d+)/.exec(kdc.run('kadmin.local', ['-r', kdc.realm, '-q', `getprinc ${principal}`]))?.[1]);
      return { keytab: [...new Set(inKeytab)], kdc: kdcKvno };
    }

    for (const preauth of [true, false]) {
      it(`negatives - a stale keytab (kvno behind after cpw -randkey${preauth ? '' : ', principal without requires_preauth: the AS-REP does not decrypt'}) is PreauthFailedError saying to compare klist -kt with kadmin getprinc; control: a keytab of the new kvno connects (without preauth: gets a TGT)`, async () => {
        const name = preauth ? 'dave' : 'dave-nopreauth';
        kdc.addPrincipal(name, { requiresPreauth: preauth });
        const stale = kdc.keytab(name, join(kdc.dir, `${name}-stale.keytab`));
        kdc.run('kadmin.local', ['-r', kdc.realm, '-q', `cpw -randkey ${name}`]);
        const kv = kvnos(name, stale);
        expect(kv.keytab).toEqual([kv.kdc - 1]);
        const { err, cause, text } = await connectFails(zk.connectString, { mechanism: 'GSSAPI', principal: name, keytab: stale, krb5Conf: kdc.krb5Conf }, PreauthFailedError);
        expect(cause.message).toContain(`the keytab ${stale} does not hold the current keys of ${name}@ZK.TEST (a stale kvno after kadmin cpw -randkey or ktadd, or another principal's keys): compare the kvno of \`klist -kt\` on it with \`kadmin getprinc ${name}@ZK.TEST\``);
        if (preauth) expect(cause.code).toBe(24);
        else expect(chain(err).map((c) => (c as Error).name)).toContain('IntegrityError');
        expect(text).not.toMatch(/KerberosDecodeError/);
        const fresh = kdc.keytab(name, join(kdc.dir, `${name}-fresh.keytab`));
        if (preauth) {
          await using ok = await ZooKeeper.connect(zk.connectString, { sasl: { mechanism: 'GSSAPI', principal: name, keytab: fresh, krb5Conf: kdc.krb5Conf } });
          expect(await ok.whoAmI()).toContainEqual({ authScheme: 'sasl', user: `${name}@ZK.TEST` });
        } else {
          // MIT issues no ticket for a requires_preauth service (the ensemble's) on a TGT got
          // without pre-authentication ("NO PREAUTH"): the control is the TGT itself.
          const client = parsePrincipal(name, kdc.realm);
          const tgt = await requestTgt({ client, keys: keytabKeys(keysFor(await readKeytab(fresh), client)), kdcs: [{ host: kdc.host, port: kdc.port }] });
          expect(principalText(tgt.client)).toBe(`${name}@ZK.TEST`);
        }
      });
    }

    it('negatives - another principal’s keytab is PreauthFailedError naming the principals it holds (was KerberosDecodeError); control: that principal with it connects', async () => {
      kdc.addPrincipal('erin');
      const erins = kdc.keytab('erin');
      const { cause, text } = await connectFails(zk.connectString, { mechanism: 'GSSAPI', principal: 'carol', keytab: erins, krb5Conf: kdc.krb5Conf }, PreauthFailedError);
      expect(cause.message).toBe(`${erins} has no key for carol@ZK.TEST (it holds: erin@ZK.TEST): give the keytab of carol@ZK.TEST, or the principal the keytab is for (klist -kt)`);
      expect(text).not.toMatch(/KerberosDecodeError/);
      await using erin = await ZooKeeper.connect(zk.connectString, { sasl: { mechanism: 'GSSAPI', principal: 'erin', keytab: erins, krb5Conf: kdc.krb5Conf } });
      expect(await erin.whoAmI()).toContainEqual({ authScheme: 'sasl', user: 'erin@ZK.TEST' });
    });
  });

  // ZooKeeper 3.6+ (AuthenticationHelper): the legacy property and the 3.7+ pair, each read by 3.8.0's jars.
  for (const [label, config] of [
    ['sessionRequireClientSASLAuth=true', { sessionRequireClientSASLAuth: 'true' }],
    ['enforce.auth.enabled=true, enforce.auth.schemes=sasl', { 'enforce.auth.enabled': 'true', 'enforce.auth.schemes': 'sasl' }],
  ] as const) {
    describe(`a server that requires SASL (${label})`, () => {
      let strict: ZooKeeperEnsemble;
      beforeAll(async () => {
        const kerberized = kerberizedServerOptions(kdc, { keytab: serviceKeytab });
        strict = await startZooKeeper({ servers: 1, own: true, config: { ...kerberized.config, ...config }, systemProperties: kerberized.systemProperties });
      });
      afterAll(async () => {
        await strict?.close();
      });

      it('negatives - a client without SASL: the server answers SESSIONCLOSEDREQUIRESASLAUTH and closes; the client ends (authFailed, no reconnect) and every call is SessionClosedRequireSaslAuthError saying to use the sasl option', async () => {
        const server = strict.servers[0]!;
        const proxy = await TcpProxy.start({ host: server.host, port: server.port });
        try {
          // The handshake is granted (the server checks at the first request, not at connect).
          await using plain = await ZooKeeper.connect(proxy.connectString, { connectTimeout: 5_000 });
          const ended = new Promise<string>((resolve) => plain.onStateChange((s) => s !== 'connected' && resolve(s)));
          const first = await plain.getData('/').catch((e: unknown) => e);
          expect(await ended).toBe('authFailed');
          for (const err of [first, await plain.exists('/').catch((e: unknown) => e)]) {
            expect(err, inspect(err)).toBeInstanceOf(SessionClosedRequireSaslAuthError);
            expect((err as SessionClosedRequireSaslAuthError).code).toBe(-124);
            expect((err as Error).message).toMatch(/^the server requires SASL authentication .* connect with the sasl option \(mechanism GSSAPI with a principal and a keytab, password or kinit ccache, for Kerberos/);
          }
          expect(plain.state).toBe('authFailed');
          expect(proxy.acceptedCount).toBe(1);
          await waitFor('the server to log why it closed the session', async () => (/does not match with any of the expected authentication scheme \[sasl\], closing session/.test(await strict.logs()) ? true : undefined), timing(5_000));
        } finally {
          await proxy.close();
        }
      });

      it('negatives - control: the same server admits a Kerberos client (whoAmI, a write and a read)', async () => {
        await using carol = await ZooKeeper.connect(strict.connectString, { sasl: { mechanism: 'GSSAPI', principal: 'carol', password: PASSWORD, krb5Conf: kdc.krb5Conf } });
        expect(await carol.whoAmI()).toContainEqual({ authScheme: 'sasl', user: 'carol@ZK.TEST' });
        const path = await carol.create(`/strict-${Date.now()}`, 'x');
        expect((await carol.getData(path)).data.toString()).toBe('x');
        expect(carol.state).toBe('connected');
      });
    });
  }
});

import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { inspect } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requestTgt } from '../../../packages/protocol/src/kerberos/as-exchange.js';
import { keytabKeys, passwordKeys } from '../../../packages/protocol/src/kerberos/credential.js';
import { ChannelName } from '../../../packages/protocol/src/diagnostics.js';
import { ClockSkewError, CrossRealmError, KdcUnreachableError, KerberosConfigError, NoUsableEnctypeError, PreauthFailedError, PrincipalUnknownError } from '../../../packages/protocol/src/kerberos/errors.js';
import { KerberosLogin } from '../../../packages/protocol/src/kerberos/gssapi-login.js';
import type { KerberosMessage } from '../../../packages/protocol/src/kerberos/trace.js';
import { loadKrb5Conf } from '../../../packages/protocol/src/kerberos/krb5-conf.js';
import { keysFor, readKeytab } from '../../../packages/protocol/src/kerberos/keytab.js';
import { parsePrincipal, principalText } from '../../../packages/protocol/src/kerberos/principal.js';
import { freePorts } from '../../harness/ports.js';
import { timing, waitFor } from '../../harness/timing.js';
import { startKdc, TEST_ENCTYPES, type TestKdc } from '../../harness/kdc.js';

const PASSWORD = 'alice-pw-Ω';

describe('kerberos - AS exchange against a real MIT KDC', () => {
  let kdc: TestKdc;
  const kdcs = () => [{ host: kdc.host, port: kdc.port }];
  beforeAll(async () => {
    kdc = await startKdc();
    kdc.addPrincipal('alice', { password: PASSWORD });
    kdc.addPrincipal('nopreauth', { password: PASSWORD, requiresPreauth: false });
    kdc.addPrincipal('zookeeper/localhost');
    for (const e of TEST_ENCTYPES) kdc.addPrincipal(`only-${e}`, { password: PASSWORD, enctypes: [e] });
  });
  afterAll(async () => {
    await kdc?.stop();
  });

  it('as-exchange - a password gets a TGT after PA-ENC-TIMESTAMP pre-authentication (strongest enctype)', async () => {
    const client = parsePrincipal('alice', kdc.realm);
    const tgt = await requestTgt({ client, keys: passwordKeys(PASSWORD, client), kdcs: kdcs() });
    expect(principalText(tgt.server)).toBe('krbtgt/ZK.TEST@ZK.TEST');
    expect(principalText(tgt.client)).toBe('alice@ZK.TEST');
    expect(tgt.sessionKey().enctype).toBe(20);
    expect(tgt.times.endtime.getTime()).toBeGreaterThan(Date.now());
    // The KDC's log is written through stdio buffering: wait for the line.
    await waitFor('the KDC to log the issue', () => (/NEEDED_PREAUTH: alice@ZK.TEST[^]*ISSUE: .*alice@ZK.TEST for krbtgt/.test(kdc.log()) ? true : undefined), timing(5_000));
  });

  for (const e of TEST_ENCTYPES) {
    it(`as-exchange - a principal with only ${e} keys (pre-authentication and AS-REP in that enctype)`, async () => {
      const client = parsePrincipal(`only-${e}`, kdc.realm);
      const tgt = await requestTgt({ client, keys: passwordKeys(PASSWORD, client), kdcs: kdcs() });
      expect(principalText(tgt.client)).toBe(`only-${e}@ZK.TEST`);
      const issued = new RegExp(`ISSUE: authtime \\d+, etypes \\{rep=${e}\\(\\d+\\).*only-${e}@ZK.TEST for krbtgt`);
      await waitFor(`the KDC to log a reply in ${e}`, () => (issued.test(kdc.log()) ? true : undefined), timing(5_000));
    });
  }

  it('as-exchange - the realm and KDC come from the krb5.conf the MIT tools use (KRB5_CONFIG)', async () => {
    const conf = await loadKrb5Conf(kdc.env.KRB5_CONFIG);
    const client = parsePrincipal('alice', conf.defaultRealm);
    const tgt = await requestTgt({ client, keys: passwordKeys(PASSWORD, client), kdcs: conf.realms.get(client.realm)?.kdcs ?? [] });
    expect(principalText(tgt.client)).toBe('alice@ZK.TEST');
    // The harness writes MIT's defaults out (dns_canonicalize_hostname and rdns true).
    expect([conf.rdns, conf.dnsCanonicalizeHostname]).toEqual([true, true]);
  });

  it('as-exchange - a principal without requires_preauth: the salt comes from the AS-REP', async () => {
    const client = parsePrincipal('nopreauth', kdc.realm);
    const tgt = await requestTgt({ client, keys: passwordKeys(PASSWORD, client), kdcs: kdcs() });
    expect(principalText(tgt.client)).toBe('nopreauth@ZK.TEST');
  });

  it('as-exchange - a keytab made by kadmin.local gets a TGT, over TCP and over UDP', async () => {
    const path = kdc.keytab('zookeeper/localhost');
    const entries = await readKeytab(path);
    const service = parsePrincipal('zookeeper/localhost', kdc.realm);
    expect(entries.map((e) => e.key.enctype).sort()).toEqual([17, 18, 19, 20]);
    for (const transport of ['tcp', 'udp'] as const) {
      const tgt = await requestTgt({ client: service, keys: keytabKeys(keysFor(entries, service)), kdcs: kdcs(), transport: { transport } });
      expect(principalText(tgt.client)).toBe('zookeeper/localhost@ZK.TEST');
    }
  });

  it('as-exchange - a wrong password is PreauthFailedError "pre-authentication failed", with no secret in it', async () => {
    const client = parsePrincipal('alice', kdc.realm);
    const err = await requestTgt({ client, keys: passwordKeys('wrong-password', client), kdcs: kdcs() }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PreauthFailedError);
    expect((err as Error).message).toMatch(/pre-authentication failed for alice@ZK.TEST/);
    expect((err as PreauthFailedError).code).toBe(24);
    expect(`${(err as Error).message} ${inspect(err)}`).not.toContain('wrong-password');
  });

  it('as-exchange - a wrong password on a principal without preauth fails at decryption as PreauthFailedError', async () => {
    const client = parsePrincipal('nopreauth', kdc.realm);
    await expect(requestTgt({ client, keys: passwordKeys('nope', client), kdcs: kdcs() })).rejects.toThrow(PreauthFailedError);
  });

  it('as-exchange - a clock an hour off is ClockSkewError (KRB_AP_ERR_SKEW on the encrypted timestamp) saying to synchronise', async () => {
    const client = parsePrincipal('alice', kdc.realm);
    const err = await requestTgt({ client, keys: passwordKeys(PASSWORD, client), kdcs: kdcs(), now: () => new Date(Date.now() - 3_600_000) }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ClockSkewError);
    expect((err as Error).message).toMatch(/clock skew too great .* synchronise the clocks/);
  });

  it('as-exchange - an unknown principal is PrincipalUnknownError naming it', async () => {
    const client = parsePrincipal('mallory', kdc.realm);
    const err = await requestTgt({ client, keys: passwordKeys('x', client), kdcs: kdcs() }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PrincipalUnknownError);
    expect((err as Error).message).toContain('mallory@ZK.TEST');
  });

  it('as-exchange - a keytab with no key of the enctypes asked for is NoUsableEnctypeError', async () => {
    const path = kdc.keytab('zookeeper/localhost');
    const service = parsePrincipal('zookeeper/localhost', kdc.realm);
    const keys = keytabKeys(keysFor(await readKeytab(path), service).filter((k) => k.enctype === 17));
    await expect(requestTgt({ client: service, keys, kdcs: kdcs(), enctypes: [18] })).rejects.toThrow(NoUsableEnctypeError);
  });

  it('as-exchange - no KDC listening is KdcUnreachableError naming the address, over both transports', async () => {
    const [port] = (await freePorts(1)) as [number];
    const client = parsePrincipal('alice', kdc.realm);
    const err = await requestTgt({ client, keys: passwordKeys(PASSWORD, client), kdcs: [{ host: '127.0.0.1', port }], transport: { timeout: 500 } }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(KdcUnreachableError);
    expect((err as Error).message).toContain(`127.0.0.1:${port}/udp`);
    expect((err as Error).message).toContain(`127.0.0.1:${port}/tcp`);
  });

  it('as-exchange - a reply too big for UDP (KRB_ERR_RESPONSE_TOO_BIG) is fetched again over TCP', async () => {
    const small = await startKdc({ maxDgramReplySize: 300 });
    try {
      small.addPrincipal('alice', { password: PASSWORD });
      const client = parsePrincipal('alice', small.realm);
      const at = [{ host: small.host, port: small.port }];
      const tgt = await requestTgt({ client, keys: passwordKeys(PASSWORD, client), kdcs: at });
      expect(principalText(tgt.server)).toBe('krbtgt/ZK.TEST@ZK.TEST');
      // Forced to UDP, the same request gets the KDC's error 52.
      await expect(requestTgt({ client, keys: passwordKeys(PASSWORD, client), kdcs: at, transport: { transport: 'udp' } })).rejects.toMatchObject({ code: 52 });
    } finally {
      await small.stop();
    }
  });

  it('as-exchange - credentials and keys print without secrets', async () => {
    const client = parsePrincipal('alice', kdc.realm);
    const keys = passwordKeys(PASSWORD, client);
    const tgt = await requestTgt({ client, keys, kdcs: kdcs() });
    const key = tgt.sessionKey().material().toString('hex');
    const ticket = tgt.ticket().raw.toString('hex');
    for (const shown of [inspect(tgt, { depth: 9 }), JSON.stringify(tgt), String(tgt), inspect(keys), JSON.stringify({ keys })]) {
      expect(shown).not.toContain(key);
      expect(shown).not.toContain(key.slice(0, 8));
      expect(shown).not.toContain(ticket.slice(-16));
      expect(shown).not.toContain(PASSWORD);
    }
  });

  it('as-exchange - the realm, cross-realm and wrong-keytab errors print without secrets: messages, util.inspect and the zk:kerberos channel', async () => {
    kdc.addPrincipal('stale-keys');
    const stale = kdc.keytab('stale-keys');
    kdc.run('kadmin.local', ['-r', kdc.realm, '-q', 'cpw -randkey stale-keys']);
    const service = kdc.keytab('zookeeper/localhost');
    // Every key of both keytabs, and the TGT (session key, ticket) of the cross-realm attempt.
    const keys = [...(await readKeytab(stale)), ...(await readKeytab(service))].map((e) => e.key.material().toString('hex'));
    const crossRealm = new KerberosLogin({ mechanism: 'GSSAPI', principal: 'alice', password: PASSWORD, krb5Conf: kdc.krb5Conf, serviceRealm: 'OTHER.TEST' });
    const tgt = await crossRealm.tgt();
    const secrets = [PASSWORD, ...keys, ...keys.map((k) => k.slice(0, 16)), tgt.sessionKey().material().toString('hex'), tgt.ticket().raw.toString('hex').slice(-32)];
    const steps: unknown[] = [];
    const listen = (m: unknown) => steps.push(m);
    subscribe(ChannelName.kerberos, listen);
    const errors: unknown[] = [];
    try {
      for (const run of [
        () => new KerberosLogin({ mechanism: 'GSSAPI', principal: 'stale-keys', keytab: stale, krb5Conf: kdc.krb5Conf }).tgt(),
        () => new KerberosLogin({ mechanism: 'GSSAPI', principal: 'alice', keytab: service, krb5Conf: kdc.krb5Conf }).tgt(),
        () => new KerberosLogin({ mechanism: 'GSSAPI', principal: 'alice@OTHER.TEST', password: PASSWORD, krb5Conf: kdc.krb5Conf }).tgt(),
        () => crossRealm.mechanism('localhost', '127.0.0.1'),
      ]) {
        errors.push(await run().then(() => undefined, (e: unknown) => e));
      }
    } finally {
      unsubscribe(ChannelName.kerberos, listen);
    }
    expect(errors.map((e) => (e as Error)?.name)).toEqual(['PreauthFailedError', 'PreauthFailedError', 'KerberosConfigError', 'CrossRealmError']);
    expect(errors[0]).toBeInstanceOf(PreauthFailedError);
    expect(errors[2]).toBeInstanceOf(KerberosConfigError);
    expect(errors[3]).toBeInstanceOf(CrossRealmError);
    // The steps that reached a KDC are on the channel, with the errors' names and messages.
    expect(steps.map((m) => { const k = m as KerberosMessage; return `${k.step} ${k.client} ${k.server} ${k.ok} ${k.error?.split(':')[0]}`; })).toEqual([
      'as stale-keys@ZK.TEST krbtgt/ZK.TEST@ZK.TEST false PreauthFailedError',
      'tgs alice@ZK.TEST zookeeper/localhost@OTHER.TEST false CrossRealmError',
    ]);
    const shown = [
      ...errors.flatMap((e) => [String(e), (e as Error).message, inspect(e, { depth: 9, showHidden: true }), JSON.stringify(e)]),
      JSON.stringify(steps),
      inspect(steps, { depth: 9, showHidden: true }),
    ].join('\n');
    for (const secret of secrets) expect(shown.includes(secret), 'a secret in an error or on the channel').toBe(false);
    // The control: the list holds real keys (4 enctypes in each keytab), so the scan looked for something.
    expect(new Set(keys).size).toBe(8);
  });
});

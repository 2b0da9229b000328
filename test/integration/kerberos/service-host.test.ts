/**
 * The service principal's host against a real MIT KDC and a Kerberized ZooKeeper whose
 * principal is zookeeper/localhost: the server dialed as 127.0.0.1 is found only when the name is
 * canonicalised (127.0.0.1 reverse-resolves to localhost). krb5.conf's dns_canonicalize_hostname
 * decides when the client option is unset; the option overrides it.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { inspect } from 'node:util';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PrincipalUnknownError, ZooKeeper } from '@zk/protocol';
import { kerberizedServerOptions, startKdc, type TestKdc } from '../../harness/kdc.js';
import { timing, waitFor } from '../../harness/timing.js';
import { startZooKeeper, type ZooKeeperEnsemble } from '../../harness/zookeeper.js';
import { zookeeperLine } from '../../harness/versions.js';

const causes = (err: unknown): unknown[] => {
  const out: unknown[] = [];
  for (let e: unknown = err; e instanceof Error; e = e.cause) out.push(e);
  return out;
};

describe.skipIf(process.env.ZK_CONNECT)(`kerberos - service host canonicalisation from krb5.conf and the option (real MIT KDC, ZooKeeper ${zookeeperLine()})`, () => {
  let kdc: TestKdc;
  let zk: ZooKeeperEnsemble;
  /** The realm's krb5.conf with [libdefaults] dns_canonicalize_hostname set to `value`. */
  const confWith = (value: string): string => {
    const file = join(kdc.dir, `krb5-canon-${value}.conf`);
    writeFileSync(file, readFileSync(kdc.krb5Conf, 'utf8').replace(/dns_canonicalize_hostname = \w+/, `dns_canonicalize_hostname = ${value}`));
    return file;
  };
  const sasl = (krb5Conf: string, canonicalizeHostname?: boolean) => ({ mechanism: 'GSSAPI' as const, principal: 'ivy', password: 'ivy-pw', krb5Conf, ...(canonicalizeHostname === undefined ? {} : { canonicalizeHostname }) });
  const port = () => zk.servers[0]!.port;
  /** TGS requests for `service` in the KDC log, as `ISSUE` or the refusal. */
  const tgs = (service: string) => kdc.log().split('\n').filter((l) => l.includes('TGS_REQ') && l.includes(`for ${service}`));

  beforeAll(async () => {
    kdc = await startKdc();
    kdc.addPrincipal('ivy', { password: 'ivy-pw' });
    kdc.addPrincipal('zookeeper/localhost');
    zk = await startZooKeeper({ servers: 1, own: true, ...kerberizedServerOptions(kdc, { keytab: kdc.keytab('zookeeper/localhost') }) });
  });
  afterAll(async () => {
    await zk?.close();
    await kdc?.stop();
  });

  it('service-host - dns_canonicalize_hostname = false: 127.0.0.1 is asked for as zookeeper/127.0.0.1 and the KDC does not know it (PrincipalUnknownError naming it); localhost as given connects', async () => {
    const off = confWith('false');
    const err = await ZooKeeper.connect(`127.0.0.1:${port()}`, { sasl: sasl(off), connectTimeout: 5_000 }).catch((e: unknown) => e);
    expect(causes(err).some((c) => c instanceof PrincipalUnknownError), inspect(err)).toBe(true);
    expect(inspect(err, { depth: 9 })).toContain('service principal zookeeper/127.0.0.1@ZK.TEST');
    await using c = await ZooKeeper.connect(`localhost:${port()}`, { sasl: sasl(off) });
    expect(await c.whoAmI()).toContainEqual({ authScheme: 'sasl', user: 'ivy@ZK.TEST' });
  });

  it('service-host - the option overrides krb5.conf: canonicalizeHostname true reaches zookeeper/localhost from 127.0.0.1 under dns_canonicalize_hostname = false, and false fails under the default (true)', async () => {
    await using c = await ZooKeeper.connect(`127.0.0.1:${port()}`, { sasl: sasl(confWith('false'), true) });
    expect(await c.whoAmI()).toContainEqual({ authScheme: 'sasl', user: 'ivy@ZK.TEST' });
    const err = await ZooKeeper.connect(`127.0.0.1:${port()}`, { sasl: sasl(kdc.krb5Conf, false), connectTimeout: 5_000 }).catch((e: unknown) => e);
    expect(causes(err).some((c) => c instanceof PrincipalUnknownError), inspect(err)).toBe(true);
    await using d = await ZooKeeper.connect(`127.0.0.1:${port()}`, { sasl: sasl(kdc.krb5Conf) });
    expect(await d.whoAmI()).toContainEqual({ authScheme: 'sasl', user: 'ivy@ZK.TEST' });
  });

  it('service-host - dns_canonicalize_hostname = fallback: zookeeper/127.0.0.1 is asked for first, refused, then zookeeper/localhost, which connects', async () => {
    const before = { raw: tgs('zookeeper/127.0.0.1@ZK.TEST').length, canonical: tgs('zookeeper/localhost@ZK.TEST').length };
    await using c = await ZooKeeper.connect(`127.0.0.1:${port()}`, { sasl: sasl(confWith('fallback')) });
    expect(await c.whoAmI()).toContainEqual({ authScheme: 'sasl', user: 'ivy@ZK.TEST' });
    // The KDC writes its log as it goes: both requests appear, one each.
    await waitFor('both TGS requests in the KDC log', () => (tgs('zookeeper/127.0.0.1@ZK.TEST').length > before.raw && tgs('zookeeper/localhost@ZK.TEST').length > before.canonical ? true : undefined), timing(5_000));
    expect(tgs('zookeeper/127.0.0.1@ZK.TEST').slice(before.raw)).toEqual([expect.stringMatching(/Server not found|UNKNOWN_SERVER|LOOKING_UP_SERVER/)]);
    expect(tgs('zookeeper/localhost@ZK.TEST').slice(before.canonical)).toEqual([expect.stringContaining('ISSUE')]);
  });
});

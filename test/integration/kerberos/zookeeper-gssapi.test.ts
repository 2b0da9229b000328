import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { inspect } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChannelName, KdcUnreachableError, Perm, TicketExpiredError, ZooKeeper, type KerberosMessage } from '@zk/protocol';
import { freePorts } from '../../harness/ports.js';
import { TcpProxy } from '../../harness/proxy.js';
import { waitForState } from '../../harness/faults.js';
import { timing, waitFor } from '../../harness/timing.js';
import { kerberizedServerOptions, startKdc, type TestKdc } from '../../harness/kdc.js';
import { startZooKeeper, type ZooKeeperEnsemble } from '../../harness/zookeeper.js';
import { zookeeperLine } from '../../harness/versions.js';

const PASSWORD = 'carol-Krb-5521';

describe(`kerberos - SASL GSSAPI against a Kerberized ZooKeeper ${zookeeperLine()} (JAAS Krb5LoginModule) and a real MIT KDC`, () => {
  let kdc: TestKdc;
  let zk: ZooKeeperEnsemble;
  let keytab: string;
  beforeAll(async () => {
    if (process.env.ZK_CONNECT) return;
    kdc = await startKdc();
    kdc.addPrincipal('carol', { password: PASSWORD });
    kdc.addPrincipal('dave', { password: 'dave-pw' });
    kdc.addPrincipal('erin', { password: 'erin-pw', maxLife: '8 seconds' });
    kdc.addPrincipal('zookeeper/localhost');
    keytab = kdc.keytab('zookeeper/localhost');
    zk = await startZooKeeper({ servers: 1, own: true, ...kerberizedServerOptions(kdc, { keytab }) });
  });
  afterAll(async () => {
    await zk?.close();
    await kdc?.stop();
  });

  it('zookeeper-gssapi - a password principal connects; whoAmI shows the Kerberos identity (principal@REALM: the server keeps the realm by default); a sasl ACL admits only it', async (ctx) => {
    if (process.env.ZK_CONNECT) ctx.skip();
    const sasl = { mechanism: 'GSSAPI' as const, principal: 'carol', password: PASSWORD, krb5Conf: kdc.krb5Conf };
    await using carol = await ZooKeeper.connect(zk.connectString, { sasl, connectTimeout: 10_000 });
    const who = await carol.whoAmI();
    expect(who).toContainEqual({ authScheme: 'sasl', user: 'carol@ZK.TEST' });
    const path = await carol.create(`/krb-${Date.now()}`, 'x', { acl: [{ perms: Perm.ALL, id: { scheme: 'sasl', id: 'carol@ZK.TEST' } }] });
    await using dave = await ZooKeeper.connect(zk.connectString, { sasl: { mechanism: 'GSSAPI', principal: 'dave', password: 'dave-pw', krb5Conf: kdc.krb5Conf } });
    await expect(dave.getData(path)).rejects.toThrow(/NoAuth/i);
    expect((await carol.getData(path)).data.toString()).toBe('x');
    expect(inspect(carol, { depth: 6 })).not.toContain(PASSWORD);
  });

  for (const enctype of [20, 19, 18, 17]) {
    it(`zookeeper-gssapi - session keys of enctype ${enctype}: JGSS reads the AP-REQ and the Wrap tokens both ways verify`, async (ctx) => {
      if (process.env.ZK_CONNECT) ctx.skip();
      await using c = await ZooKeeper.connect(zk.connectString, { sasl: { mechanism: 'GSSAPI', principal: 'carol', password: PASSWORD, krb5Conf: kdc.krb5Conf, enctypes: [enctype] } });
      expect(await c.whoAmI()).toContainEqual({ authScheme: 'sasl', user: 'carol@ZK.TEST' });
      await waitFor(`a TGS reply with a session key of enctype ${enctype}`, () => (new RegExp(`TGS_REQ .*ses=[a-z0-9-]+\\(${enctype}\\)\\}, carol@ZK.TEST for zookeeper/localhost`).test(kdc.log()) ? true : undefined), timing(5_000));
    });
  }

  it('zookeeper-gssapi - a service keytab connects as its principal', async (ctx) => {
    if (process.env.ZK_CONNECT) ctx.skip();
    await using svc = await ZooKeeper.connect(zk.connectString, { sasl: { mechanism: 'GSSAPI', principal: 'zookeeper/localhost', keytab, krb5Conf: kdc.krb5Conf } });
    expect((await svc.whoAmI()).filter((a) => a.authScheme === 'sasl').map((a) => a.user)).toEqual(['zookeeper/localhost@ZK.TEST']);
  });

  it('zookeeper-gssapi - a kinit ccache (KRB5CCNAME syntax) connects', async (ctx) => {
    if (process.env.ZK_CONNECT) ctx.skip();
    const ccache = kdc.kinit('carol', { password: PASSWORD });
    await using c = await ZooKeeper.connect(zk.connectString, { sasl: { mechanism: 'GSSAPI', ccache: `FILE:${ccache}`, krb5Conf: kdc.krb5Conf } });
    expect(await c.whoAmI()).toContainEqual({ authScheme: 'sasl', user: 'carol@ZK.TEST' });
  });

  it('zookeeper-gssapi - a session outlives its first ticket: after the TGT ends, a cut connection re-authenticates with a new one (while an expired kinit ccache alone is TicketExpiredError)', async (ctx) => {
    if (process.env.ZK_CONNECT) ctx.skip();
    const server = zk.servers[0]!;
    const proxy = await TcpProxy.start({ host: server.host, port: server.port });
    try {
      await using erin = await ZooKeeper.connect(proxy.connectString, { sasl: { mechanism: 'GSSAPI', principal: 'erin', password: 'erin-pw', krb5Conf: kdc.krb5Conf }, sessionTimeout: 30_000 });
      const session = erin.sessionId;
      expect(await erin.whoAmI()).toContainEqual({ authScheme: 'sasl', user: 'erin@ZK.TEST' });
      const ccache = kdc.kinit('erin', { password: 'erin-pw' });
      // The principal's max_life is 8 s: wait past it, then make the client reconnect.
      await new Promise((r) => setTimeout(r, timing(9_000)));
      // Meanwhile the kinit ccache has expired, and a client with only it cannot get another.
      const expired = await ZooKeeper.connect(proxy.connectString, { sasl: { mechanism: 'GSSAPI', ccache: `FILE:${ccache}`, krb5Conf: kdc.krb5Conf }, connectTimeout: 5_000 }).catch((e: unknown) => e);
      const causes: unknown[] = [];
      for (let e: unknown = expired; e instanceof Error; e = e.cause) causes.push(e);
      expect(causes.some((c) => c instanceof TicketExpiredError), inspect(expired)).toBe(true);
      expect(String(inspect(expired, { depth: 9 }))).toMatch(/expired at .*run kinit/);
      const issued = (kdc.log().match(/ISSUE: .*erin@ZK.TEST for krbtgt/g) ?? []).length;
      const away = new Promise<void>((resolve) => {
        const off = erin.onStateChange((s) => {
          if (s !== 'connected') {
            off();
            resolve();
          }
        });
      });
      proxy.cut();
      await away;
      await waitForState(erin, 'connected');
      expect(await erin.whoAmI()).toContainEqual({ authScheme: 'sasl', user: 'erin@ZK.TEST' });
      expect(erin.sessionId).toBe(session);
      await waitFor('a second TGT for erin in the KDC log', () => ((kdc.log().match(/ISSUE: .*erin@ZK.TEST for krbtgt/g) ?? []).length > issued ? true : undefined), timing(5_000));
    } finally {
      await proxy.close();
    }
  }, 60_000);

  it('zookeeper-gssapi - no KDC answering fails the connect with the KDC-unreachable error as cause', async (ctx) => {
    if (process.env.ZK_CONNECT) ctx.skip();
    const [port] = (await freePorts(1)) as [number];
    const sasl = { mechanism: 'GSSAPI' as const, principal: 'carol', password: PASSWORD, krb5Conf: kdc.krb5Conf, kdcs: [`127.0.0.1:${port}`] };
    const err = await ZooKeeper.connect(zk.connectString, { sasl, connectTimeout: 5_000 }).catch((e: unknown) => e);
    const causes: unknown[] = [];
    for (let e: unknown = err; e instanceof Error; e = e.cause) causes.push(e);
    expect(causes.some((c) => c instanceof KdcUnreachableError), inspect(err)).toBe(true);
    expect(String(inspect(err, { depth: 9 }))).toMatch(new RegExp(`no KDC answered \\(127.0.0.1:${port}/udp`));
  });

  it('zookeeper-gssapi - a wrong password fails the connect with AuthFailed caused by PreauthFailedError, without the password (nor on the zk:kerberos channel, which has the AS step with the error; the right password’s steps neither)', async (ctx) => {
    if (process.env.ZK_CONNECT) ctx.skip();
    const steps: KerberosMessage[] = [];
    const listen = (m: unknown) => steps.push(m as KerberosMessage);
    subscribe(ChannelName.kerberos, listen);
    const err = await ZooKeeper.connect(zk.connectString, { sasl: { mechanism: 'GSSAPI', principal: 'carol', password: 'not-the-password', krb5Conf: kdc.krb5Conf }, connectTimeout: 5_000 }).catch((e: unknown) => e);
    await (await ZooKeeper.connect(zk.connectString, { sasl: { mechanism: 'GSSAPI', principal: 'carol', password: PASSWORD, krb5Conf: kdc.krb5Conf } })).close();
    unsubscribe(ChannelName.kerberos, listen);
    expect(steps.map((m) => `${m.step} ${m.client} ${m.server} ${m.ok}`)).toEqual([
      'as carol@ZK.TEST krbtgt/ZK.TEST@ZK.TEST false',
      'as carol@ZK.TEST krbtgt/ZK.TEST@ZK.TEST true',
      'tgs carol@ZK.TEST zookeeper/localhost@ZK.TEST true',
    ]);
    expect(steps[0]!.error).toMatch(/^PreauthFailedError: pre-authentication failed for carol@ZK.TEST/);
    const published = `${JSON.stringify(steps)} ${inspect(steps, { depth: 9, showHidden: true })}`;
    for (const secret of ['not-the-password', PASSWORD]) expect(published).not.toContain(secret);
    expect(err).toBeInstanceOf(Error);
    const text = `${String(err)} ${inspect(err, { depth: 9 })}`;
    expect(text).toMatch(/pre-authentication failed/);
    expect(text).not.toContain('not-the-password');
  });
});

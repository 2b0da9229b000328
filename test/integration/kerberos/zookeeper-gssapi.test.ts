import { inspect } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KdcUnreachableError, Perm, ZooKeeper } from '@zk/protocol';
import { freePorts } from '../../harness/ports.js';
import { kerberizedServerOptions, startKdc, type TestKdc } from '../../harness/kdc.js';
import { startZooKeeper, type ZooKeeperEnsemble } from '../../harness/zookeeper.js';

const PASSWORD = 'carol-Krb-5521';

describe('kerberos - SASL GSSAPI against a Kerberized ZooKeeper 3.8 (JAAS Krb5LoginModule) and a real MIT KDC', () => {
  let kdc: TestKdc;
  let zk: ZooKeeperEnsemble;
  let keytab: string;
  beforeAll(async () => {
    if (process.env.ZK_CONNECT) return;
    kdc = await startKdc();
    kdc.addPrincipal('carol', { password: PASSWORD });
    kdc.addPrincipal('dave', { password: 'dave-pw' });
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

  it('zookeeper-gssapi - a wrong password fails the connect with AuthFailed caused by PreauthFailedError, without the password', async (ctx) => {
    if (process.env.ZK_CONNECT) ctx.skip();
    const err = await ZooKeeper.connect(zk.connectString, { sasl: { mechanism: 'GSSAPI', principal: 'carol', password: 'not-the-password', krb5Conf: kdc.krb5Conf }, connectTimeout: 5_000 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Error);
    const text = `${String(err)} ${inspect(err, { depth: 9 })}`;
    expect(text).toMatch(/pre-authentication failed/);
    expect(text).not.toContain('not-the-password');
  });
});

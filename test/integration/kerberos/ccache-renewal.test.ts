/**
 * A client with only a kinit ccache (no keytab, no password) against a real MIT KDC and a
 * Kerberized ZooKeeper: its TGT is renewed at the KDC (TGS with RENEW) while renew-till
 * allows, in the background while the session lives, so the session reconnects after its first
 * ticket has ended; once renew-till has passed, the reconnect fails and a new connect says to run
 * kinit again. The control: a ticket that is not renewable ends the session's reconnects at its end.
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { inspect } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChannelName, TicketExpiredError, ZooKeeper, type KerberosMessage } from '@zk/protocol';
import { readCcache, tgtOf } from '../../../packages/protocol/src/kerberos/ccache.js';
import { waitForState } from '../../harness/faults.js';
import { kerberizedServerOptions, startKdc, type TestKdc } from '../../harness/kdc.js';
import { TcpProxy } from '../../harness/proxy.js';
import { timing, waitFor } from '../../harness/timing.js';
import { startZooKeeper, type ZooKeeperEnsemble } from '../../harness/zookeeper.js';
import { zookeeperLine } from '../../harness/versions.js';

const causes = (err: unknown): unknown[] => {
  const out: unknown[] = [];
  for (let e: unknown = err; e instanceof Error; e = e.cause) out.push(e);
  return out;
};

/** Renewals in the KDC log: TGS requests (not AS) that issued a krbtgt ticket to `who`. */
const renewals = (kdc: TestKdc, who: string): number => (kdc.log().match(new RegExp(`TGS_REQ .*ISSUE: .*${who}@ZK.TEST for krbtgt/ZK.TEST@ZK.TEST`, 'g')) ?? []).length;

/** Resolves once the wall clock has passed `at` (ms): ticket lifetimes are the KDC's, in real time. */
const until = (at: number) => waitFor(`the clock past ${new Date(at).toISOString()}`, () => (Date.now() > at ? true : undefined), at - Date.now() + timing(5_000), 50);

describe.skipIf(process.env.ZK_CONNECT)(`kerberos - a ccache-only client renews its TGT (real MIT KDC, ZooKeeper ${zookeeperLine()})`, () => {
  let kdc: TestKdc;
  let zk: ZooKeeperEnsemble;
  let proxy: TcpProxy;
  beforeAll(async () => {
    kdc = await startKdc();
    // Tickets of 10 s, renewable for 22 s: the first ends at 10 s, renewals (at 8 s, 16 s) carry it to
    // 22 s. 2 s between a renewal and the end it averts: room for a loaded machine.
    kdc.addPrincipal('frank', { password: 'frank-pw', maxLife: '10 seconds', maxRenewLife: '22 seconds' });
    // gina's tickets are never renewable (kinit's renewable-ok would otherwise make them so).
    kdc.addPrincipal('gina', { password: 'gina-pw', maxLife: '10 seconds', maxRenewLife: '0 seconds' });
    kdc.addPrincipal('zookeeper/localhost');
    zk = await startZooKeeper({ servers: 1, own: true, ...kerberizedServerOptions(kdc, { keytab: kdc.keytab('zookeeper/localhost') }) });
    const server = zk.servers[0]!;
    proxy = await TcpProxy.start({ host: server.host, port: server.port });
  });
  afterAll(async () => {
    await proxy?.close();
    await zk?.close();
    await kdc?.stop();
  });

  /** Cuts the client's connection and resolves with the state it reaches next: connected again, or a terminal one. */
  async function cutAndSettle(client: ZooKeeper): Promise<string> {
    const away = waitForState(client, 'suspended', 'lost', 'authFailed', 'expired');
    proxy.cut();
    await away;
    return waitForState(client, 'connected', 'authFailed', 'expired');
  }

  it('ccache-renewal - a renewable kinit ticket is renewed before it ends: the session reconnects after the first ticket has ended, and once renew-till has passed the reconnect fails (authFailed) and a new connect is TicketExpiredError saying to run kinit again', async () => {
    const steps: KerberosMessage[] = [];
    const listen = (m: unknown) => steps.push(m as KerberosMessage);
    subscribe(ChannelName.kerberos, listen);
    const ccache = kdc.kinit('frank', { password: 'frank-pw', renewable: '22s' });
    const first = tgtOf(await readCcache(ccache))!;
    expect(first.times.renewTill!.getTime()).toBeGreaterThan(first.times.endtime.getTime());
    const sasl = { mechanism: 'GSSAPI' as const, ccache: `FILE:${ccache}`, krb5Conf: kdc.krb5Conf };
    await using frank = await ZooKeeper.connect(proxy.connectString, { sasl, sessionTimeout: 30_000 });
    const session = frank.sessionId;
    expect(await frank.whoAmI()).toContainEqual({ authScheme: 'sasl', user: 'frank@ZK.TEST' });

    // The background renewal at 80% of the first ticket's life (8 s), before it ends.
    await waitFor('a renewal of frank’s TGT in the KDC log', () => (renewals(kdc, 'frank') > 0 ? true : undefined), timing(15_000));
    expect(Date.now()).toBeLessThan(first.times.endtime.getTime());
    await until(first.times.endtime.getTime() + 500);
    expect(await cutAndSettle(frank)).toBe('connected');
    expect(frank.sessionId).toBe(session);
    expect(await frank.whoAmI()).toContainEqual({ authScheme: 'sasl', user: 'frank@ZK.TEST' });

    // Past renew-till no ticket is left: the next reconnect cannot authenticate.
    await until(first.times.renewTill!.getTime() + 500);
    expect(await cutAndSettle(frank)).toBe('authFailed');
    const renewed = renewals(kdc, 'frank');
    expect(renewed, kdc.log()).toBeGreaterThanOrEqual(2); // 8 s and about 16 s: the last one ends at renew-till

    const err = await ZooKeeper.connect(proxy.connectString, { sasl, connectTimeout: 5_000 }).catch((e: unknown) => e);
    expect(causes(err).some((c) => c instanceof TicketExpiredError), inspect(err)).toBe(true);
    expect(inspect(err, { depth: 9 })).toMatch(/TGT of frank@ZK.TEST from the credential cache expired at .* and its renewable life ended at .*run kinit again/);
    expect(renewals(kdc, 'frank')).toBe(renewed); // an ended ticket is not sent to be renewed

    // The steps on the zk:kerberos channel: the ccache's TGT, service tickets, as many renewals as
    // the KDC logged (the last one ending at renew-till), then the end, with the typed error.
    unsubscribe(ChannelName.kerberos, listen);
    const frankSteps = steps.filter((m) => m.client === 'frank@ZK.TEST');
    expect(frankSteps[0]).toMatchObject({ step: 'ccache', ok: true, server: 'krbtgt/ZK.TEST@ZK.TEST', endtime: first.times.endtime, renewTill: first.times.renewTill });
    const renewedSteps = frankSteps.filter((m) => m.step === 'renew');
    expect(renewedSteps.length).toBe(renewed);
    expect(renewedSteps.every((m) => m.ok && m.enctype === 20 && m.renewTill?.getTime() === first.times.renewTill!.getTime())).toBe(true);
    expect(renewedSteps.at(-1)!.endtime!.getTime()).toBe(first.times.renewTill!.getTime());
    expect(frankSteps.filter((m) => m.step === 'tgs' && m.ok && m.server === 'zookeeper/localhost@ZK.TEST').length).toBe(2);
    expect(frankSteps.at(-1)).toMatchObject({ step: 'ccache', ok: false, error: expect.stringMatching(/^TicketExpiredError: the TGT of frank@ZK.TEST .*its renewable life ended/) });
    expect(JSON.stringify(frankSteps)).not.toContain('frank-pw');
  }, 60_000);

  it('ccache-renewal - the control: a kinit ticket that is not renewable is used to its end, then the reconnect fails (authFailed) and a new connect is TicketExpiredError (not renewable, run kinit again); no renewal was asked', async () => {
    const ccache = kdc.kinit('gina', { password: 'gina-pw' });
    const first = tgtOf(await readCcache(ccache))!;
    expect(first.times.renewTill === undefined || first.times.renewTill <= first.times.endtime, `renew-till ${first.times.renewTill?.toISOString()}`).toBe(true);
    const sasl = { mechanism: 'GSSAPI' as const, ccache: `FILE:${ccache}`, krb5Conf: kdc.krb5Conf };
    await using gina = await ZooKeeper.connect(proxy.connectString, { sasl, sessionTimeout: 30_000 });
    expect(await gina.whoAmI()).toContainEqual({ authScheme: 'sasl', user: 'gina@ZK.TEST' });
    await until(first.times.endtime.getTime() + 500);
    expect(await cutAndSettle(gina)).toBe('authFailed');
    const err = await ZooKeeper.connect(proxy.connectString, { sasl, connectTimeout: 5_000 }).catch((e: unknown) => e);
    expect(causes(err).some((c) => c instanceof TicketExpiredError), inspect(err)).toBe(true);
    expect(inspect(err, { depth: 9 })).toMatch(/TGT of gina@ZK.TEST from the credential cache expired at .* and it is not renewable.*run kinit again/);
    expect(renewals(kdc, 'gina')).toBe(0);
  }, 60_000);
});

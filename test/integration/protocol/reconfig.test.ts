/**
 * Dynamic reconfiguration against a real ZooKeeper 3.8 ensemble (local JVMs, reconfigEnabled,
 * a dynamic config file, a super user): every refusal typed; the ensemble grown 3 -> 5 and then
 * moved off its three original servers, while a client tracking the ensemble and the lease it
 * holds keep their session, and clients spread over the new servers with updateServerList
 * (connections counted on each server with the `cons` four-letter word).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  BadVersionError,
  ConnectionLossError,
  InvalidArgumentError,
  NewConfigNoQuorumError,
  NoAuthError,
  ReconfigDisabledError,
  ReconfigInProgressError,
  ZooKeeper,
  type ZooKeeperError,
} from '@zk/protocol';
import { Mutex } from '@zk/locks';
import { findLocalInstall, fourLetter, freePorts, waitFor } from '../../harness/index.js';
import { RECONFIG_SUPER_AUTH, startZooKeeper, type ServerHandle, type ZooKeeperEnsemble } from '../../harness/zookeeper.js';
import { connectString as sharedServer } from '../../harness/fixtures.js';

const CLIENTS = 50;
const noLocalServers = findLocalInstall() === undefined;

let ensemble: ZooKeeperEnsemble;
let admin: ZooKeeper;
const clients: ZooKeeper[] = [];

beforeAll(async () => {
  if (noLocalServers) return;
  ensemble = await startZooKeeper({ servers: 3, reconfig: true });
  admin = await ZooKeeper.connect(ensemble.connectString, { sessionTimeout: 30_000, auth: [{ scheme: 'digest', auth: RECONFIG_SUPER_AUTH }] });
}, 120_000);

afterAll(async () => {
  await Promise.all(clients.map((zk) => zk.close()));
  await admin?.close();
  await ensemble?.close();
});

/** The sessions each server holds (`cons` lists one line per connection; ours carry a sid). */
async function sessionsOn(server: ServerHandle): Promise<number> {
  const cons = await fourLetter(server.host, server.port, 'cons', 3000);
  return cons.split('\n').filter((l) => /sid=0x[0-9a-f]*[1-9a-f]/.test(l)).length;
}

async function counts(servers: readonly ServerHandle[]): Promise<Record<number, number>> {
  const out: Record<number, number> = {};
  for (const s of servers) out[s.id] = await sessionsOn(s);
  return out;
}

async function refusal(p: Promise<unknown>): Promise<ZooKeeperError> {
  return (await p.then(
    () => {
      throw new Error('expected a refusal');
    },
    (err: unknown) => err,
  )) as ZooKeeperError;
}

describe.skipIf(noLocalServers)('reconfig - real 3.8 ensemble', () => {
  it('reconfig - getConfig parses the members and version; refusals are typed', async () => {
    const config = await admin.getConfig();
    expect(config.members.map((m) => m.id)).toEqual([1, 2, 3]);
    for (const [i, m] of config.members.entries()) {
      expect(m.role).toBe('participant');
      expect(m.client).toEqual({ host: '127.0.0.1', port: ensemble.servers[i]!.port });
      expect(m.spec).toBe(ensemble.servers[i]!.spec);
    }
    expect(config.raw).toContain(`version=${config.version.toString(16)}`);

    // Not enabled: the shared standalone server of the integration project.
    const plain = await ZooKeeper.connect(sharedServer());
    try {
      expect(await refusal(plain.reconfig({ leaving: [2] }))).toBeInstanceOf(ReconfigDisabledError);
    } finally {
      await plain.close();
    }

    // The config node is world-readable only: a valid change without the super user.
    const anonymous = await ZooKeeper.connect(ensemble.connectString);
    try {
      expect(await refusal(anonymous.reconfig({ leaving: [3] }))).toBeInstanceOf(NoAuthError);
      // A stale version, and a new membership without a synced quorum (two servers that do not run).
      expect(await refusal(admin.reconfig({ leaving: [3], fromConfig: config.version + 1n }))).toBeInstanceOf(BadVersionError);
      const [a, b, c, d] = await freePorts(4);
      const dead = [`server.8=127.0.0.1:${a}:${b}:participant;127.0.0.1:${a}`, `server.9=127.0.0.1:${c}:${d}:participant;127.0.0.1:${c}`];
      expect(await refusal(admin.reconfig({ members: [ensemble.servers[0]!.spec!, ...dead] }))).toBeInstanceOf(NewConfigNoQuorumError);
      // Bad input is refused before anything is sent.
      await expect(admin.reconfig({})).rejects.toThrow(InvalidArgumentError);
      await expect(admin.reconfig({ members: ['server.1=nonsense'] })).rejects.toThrow(InvalidArgumentError);
      await expect(admin.reconfig({ joining: [dead[0]!], members: [dead[1]!] })).rejects.toThrow(InvalidArgumentError);
    } finally {
      await anonymous.close();
    }
    // Nothing changed.
    expect((await admin.getConfig()).version).toBe(config.version);
  });

  it('reconfig - grow 3 -> 5 and leave the originals: the tracking client and its lease keep their session; clients spread', async () => {
    const originals = ensemble.servers.slice(0, 3);
    const originalConnect = ensemble.connectString;
    // The tracking client works under a chroot: the config node is read outside it.
    const tracker = await ZooKeeper.connect(`${originalConnect}/reconfig-app`, { sessionTimeout: 30_000, trackEnsemble: true, createChroot: true });
    clients.push(tracker);
    const session = tracker.sessionId;
    const states: string[] = [];
    tracker.onStateChange((s) => states.push(s));
    expect(tracker.serverList).toHaveLength(3);
    // The grace covers the shrink below: the originals stop, and the tracker reconnects to 4 or 5
    // while they may still be electing a leader. 10 s was too little once, in a flake hunt beside
    // two CPU hogs (1 run in 20); the session's own 30 s still bounds it.
    const lease = await new Mutex(tracker, '/lock', { suspendedGrace: 20_000 }).acquire({ timeout: 10_000 });

    // Control: a client that neither tracks nor is told stays on the original servers.
    const control = await ZooKeeper.connect(originalConnect, { sessionTimeout: 30_000 });
    clients.push(control);
    const many: ZooKeeper[] = [];
    for (let i = 0; i < CLIENTS; i++) many.push(await ZooKeeper.connect(originalConnect, { sessionTimeout: 30_000 }));
    clients.push(...many);
    const sessions = many.map((zk) => zk.sessionId);

    // Two more servers; each is a non-voting follower until a reconfig adds it.
    const [s4, s5] = await Promise.all([ensemble.addServer(), ensemble.addServer()]);
    const before = await counts(ensemble.servers);
    // Two reconfigs pipelined on one session: the leader proposes the first before it prepares the second.
    const [first, second] = await Promise.allSettled([admin.reconfig({ joining: [s4!.spec!] }), admin.reconfig({ joining: [s5!.spec!] })]);
    expect(first.status).toBe('fulfilled');
    expect(second.status === 'rejected' && second.reason).toBeInstanceOf(ReconfigInProgressError);
    const grown = await waitFor('the second reconfig', async () => {
      try {
        return await admin.reconfig({ joining: [s5!.spec!] });
      } catch (err) {
        if (err instanceof ReconfigInProgressError) return undefined;
        throw err;
      }
    });
    expect(grown.members.map((m) => m.id)).toEqual([1, 2, 3, 4, 5]);

    // The tracker follows; the others are told by hand.
    await waitFor('the tracker to know 5 servers', () => tracker.serverList.length === 5 || undefined);
    const fiveHosts = ensemble.servers.map((s) => s.connectString).join(',');
    const moved = many.filter((zk) => zk.updateServerList(fiveHosts)).length;
    await waitFor('every client connected', () => many.every((zk) => zk.state === 'connected') || undefined);
    // Where each client says it is, by server id: the servers' own session counts must agree.
    const idOf = (zk: ZooKeeper): number => ensemble.servers.find((s) => s.port === zk.server?.port)?.id ?? 0;
    const view = (): Record<number, number> => {
      const out: Record<number, number> = { 1: 0, 2: 0, 3: 0, 4: 0, 5: 0 };
      for (const zk of [admin, tracker, control, ...many]) out[idOf(zk)] = (out[idOf(zk)] ?? 0) + 1;
      return out;
    };
    // A server lists a closed connection until it notices: wait until the counts settle.
    const after = await waitFor('the servers to agree with the clients', async () => {
      const c = await counts(ensemble.servers);
      return JSON.stringify(c) === JSON.stringify(view()) ? c : undefined;
    });
    const onNew = many.filter((zk) => zk.server?.port === s4!.port || zk.server?.port === s5!.port).length;
    console.log(`[reconfig] 3 -> 5: ${moved}/${CLIENTS} clients moved (expected 2/5 = ${(CLIENTS * 2) / 5}); sessions per server before ${JSON.stringify(before)}, after ${JSON.stringify(after)}; ${onNew} clients on servers 4 and 5`);
    expect(before[4]! + before[5]!).toBe(0);
    expect(moved).toBe(onNew);
    // On growth each client moves with probability 2/5 (20 of 50 expected; outside 5..35 has
    // p < 1e-6), only to the new servers, and keeps its session. How the movers split between
    // servers 4 and 5 is a draw per client whose evenness the unit test of planServerList checks
    // with a seeded source (here one new server with a single client failed a CI run once).
    expect(moved).toBeGreaterThanOrEqual(5);
    expect(moved).toBeLessThanOrEqual(35);
    expect(after[4]! + after[5]!).toBeGreaterThanOrEqual(moved);
    expect(many.map((zk) => zk.sessionId)).toEqual(sessions);

    // Leave the original three, then stop them: the original connect string is dead. A server
    // that leaves closes its clients' connections once the change commits, so the admin first
    // moves to a server that stays (else the reconfig's own reply may be lost with it).
    const twoHosts = [s4!, s5!].map((s) => s.connectString).join(',');
    admin.updateServerList(twoHosts);
    await waitFor('the admin on server 4 or 5', () => (admin.state === 'connected' && [s4!.port, s5!.port].includes(admin.server?.port ?? 0)) || undefined);
    // When the leader is among those leaving, the remaining servers elect a new one right after
    // the commit and drop their clients meanwhile: the reply may be lost (ConnectionLoss, outcome
    // unknown). Then the config says whether it happened.
    const shrunk = await admin.reconfig({ leaving: [1, 2, 3], fromConfig: grown.version }).catch(async (err: unknown) => {
      if (!(err instanceof ConnectionLossError)) throw err;
      console.log(`[reconfig] the reply to the shrinking reconfig was lost (${err.message}); reading the config`);
      return waitFor('the config after the shrink', async () => {
        const c = await admin.getConfig();
        return c.version !== grown.version ? c : undefined;
      });
    });
    expect(shrunk.members.map((m) => m.id)).toEqual([4, 5]);
    await waitFor('the tracker to know 2 servers', () => tracker.serverList.length === 2 || undefined);
    const movedOff = many.filter((zk) => zk.updateServerList(twoHosts)).length;
    await Promise.all(originals.map((s) => s.stop()));
    await waitFor('every client connected to 4 or 5', () => [tracker, ...many].every((zk) => zk.state === 'connected' && (zk.server?.port === s4!.port || zk.server?.port === s5!.port)) || undefined, 30_000);
    const last = await counts([s4!, s5!]);
    console.log(`[reconfig] 5 -> 2: ${movedOff}/${CLIENTS} clients moved; sessions per server ${JSON.stringify(last)}`);
    await expect(ZooKeeper.connect(originalConnect, { connectTimeout: 1000 })).rejects.toThrow();
    expect(control.state).not.toBe('connected');
    expect(control.serverList.every((h) => originals.some((s) => s.port === h.port))).toBe(true);

    // The tracking client kept its session, its lease and its lock node throughout.
    expect(tracker.sessionId).toBe(session);
    expect(states).not.toContain('expired');
    expect(states).not.toContain('lost');
    expect(lease.signal.aborted ? `lost: ${String((lease.signal.reason as Error | undefined)?.message ?? lease.signal.reason)}` : 'held').toBe('held');
    expect((await tracker.exists(lease.node))?.ephemeralOwner).toBe(session);
    await lease.fenced().setData('/', 'still held').commit();
    await lease.release();
    expect(many.map((zk) => zk.sessionId)).toEqual(sessions);
    expect(many.every((zk) => zk.state === 'connected')).toBe(true);
  }, 90_000);
});

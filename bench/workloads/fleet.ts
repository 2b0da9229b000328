/**
 * The lease fleet (issue 35): what idle lease holders cost the ensemble. `n` sessions each hold
 * one Mutex on its own path (ours: `workloads/fleet-child.ts`, up to 500 sessions per process;
 * Curator: `java/FleetBenchDriver.java`, one InterProcessMutex per CuratorFramework, one JVM),
 * session timeout T, on servers with tickTime 2 s that this module's caller starts for the row.
 * One repetition per client:
 *
 * 1. the fleet connects and acquires (not measured), then settles;
 * 2. the hold window: nothing but the fleet runs; the leader's transactions, log bytes, fsyncs,
 *    snapshots and CPU over it (lib/fleet-servers.ts), per holder;
 * 3. the probe window, the fleet still holding: an unrelated client (two sessions of ours on one
 *    server: a follower of an ensemble) reads and writes a 100-byte node at a fixed rate, open loop;
 *    the p50 and p99 of each. Two sessions, because a session's read waits behind its own write;
 * 4. every lease released; the released window, the sessions still open: the transactions then
 *    (the target is none);
 * 5. the fleet closes its sessions and exits.
 *
 * Settings (environment; defaults in brackets): ZK_BENCH_FLEET_SERVERS [1,3] (the local servers:
 * a standalone server, a 3-node ensemble; the ensemble only when the run's ensemble passes
 * include 3; ignored with --connect), ZK_BENCH_FLEET_SESSIONS [100] and
 * ZK_BENCH_FLEET_T [10] (seconds), comma-separated lists, every pair a row;
 * ZK_BENCH_FLEET_CLIENTS [default,auto@2000,write@2000,off,curator]: `default` is ours with no
 * proof option, `<mode>[@<serverTickTime>]` ours with `leaseProof: <mode>` (auto, write, sync,
 * off) and that `serverTickTime`, `curator` Curator; ZK_BENCH_FLEET_SETTLE_S [10],
 * ZK_BENCH_FLEET_HOLD_S [60], ZK_BENCH_FLEET_PROBE_S [30], ZK_BENCH_FLEET_RELEASED_S [30],
 * ZK_BENCH_FLEET_PROBE_HZ [25] (reads and writes per second each), ZK_BENCH_FLEET_REPS [1].
 */
import { fileURLToPath } from 'node:url';
import { setTimeout as delay } from 'node:timers/promises';
import { ZooKeeper } from '@zk/protocol';
import { compileCurator, curatorMissing, type CompiledJava } from '@zk/test/harness';
import { JVM_METER } from '../peers/java.js';
import type { Bench, Repetition } from '../lib/bench.js';
import { LineChild } from '../lib/child.js';
import { LeaderMeter, spend, type FleetServer, type LeaderSpend } from '../lib/fleet-servers.js';
import { CLIENT, oursFleetClient, WORKLOAD } from '../lib/names.js';
import { percentile, type Sample } from '../lib/stats.js';

/** The servers' tickTime for the fleet row, ms (the issue's: 2 s). */
export const FLEET_TICK_MS = 2000;
/**
 * JVM properties of the fleet's servers: the container reaper (every 60 s by default) would
 * delete the lock paths a previous client left, a burst of transactions in the next client's
 * windows that no lease made (seen: 20 in a window, one per lock path). Once a day: never in a run.
 */
export const FLEET_SERVER_PROPERTIES = { 'znode.container.checkIntervalMs': 86_400_000 } as const;
const NODE_CHILD = fileURLToPath(new URL('./fleet-child.js', import.meta.url));
const JAVA_SOURCE = fileURLToPath(new URL('../../java/FleetBenchDriver.java', import.meta.url));
/** Sessions per Node process of ours. */
const SESSIONS_PER_CHILD = 500;
const PROOF_MODES = ['auto', 'write', 'sync', 'off'] as const;

/** One client of the row. */
type FleetClient = { readonly kind: 'ours'; readonly leaseProof?: string; readonly serverTickTime?: number } | { readonly kind: 'curator' };

/** The row's settings, from the environment. */
export interface FleetSettings {
  /** The local servers the row runs on, in order: 1 (standalone) and 3 (an ensemble). */
  readonly servers: readonly (1 | 3)[];
  readonly sessions: readonly number[];
  readonly timeoutsS: readonly number[];
  readonly clients: readonly FleetClient[];
  readonly settleS: number;
  readonly holdS: number;
  readonly probeS: number;
  readonly releasedS: number;
  readonly probeHz: number;
  readonly reps: number;
}

const list = (v: string | undefined, fallback: string) => (v?.trim() ? v : fallback).split(',').map((s) => s.trim()).filter(Boolean);
const positive = (name: string, v: string | undefined, fallback: number) => {
  const n = v === undefined || v.trim() === '' ? fallback : Number(v);
  if (!(n > 0) || !Number.isFinite(n)) throw new Error(`${name}: not a positive number: ${v}`);
  return n;
};

/** Parses one client token: `default`, `curator`, `<mode>` or `<mode>@<serverTickTime>`. */
export function parseFleetClient(token: string): FleetClient {
  if (token === 'curator') return { kind: 'curator' };
  const [mode, tick] = token.split('@');
  if (mode !== 'default' && !PROOF_MODES.includes(mode as (typeof PROOF_MODES)[number])) throw new Error(`ZK_BENCH_FLEET_CLIENTS: unknown client ${token} (default, curator, or ${PROOF_MODES.join('|')}, each with an optional @<serverTickTime>)`);
  const serverTickTime = tick === undefined ? undefined : positive('ZK_BENCH_FLEET_CLIENTS serverTickTime', tick, 0);
  return { kind: 'ours', ...(mode === 'default' ? {} : { leaseProof: mode }), ...(serverTickTime === undefined ? {} : { serverTickTime }) };
}

/**
 * The row's settings from the environment. `scale` (the bench's: 0.2 with `--quick`) shortens the
 * default windows (settle 10 s, hold 60 s, probe 30 s, released 30 s) to at least 5, 20, 10 and
 * 10 s, so the quick run's fleet takes about 50 s per client instead of 2.5 minutes.
 */
export function fleetSettings(env: NodeJS.ProcessEnv = process.env, scale = 1): FleetSettings {
  const window = (s: number, min: number) => Math.max(min, Math.round(s * scale));
  const servers = list(env.ZK_BENCH_FLEET_SERVERS, '1,3').map(Number);
  if (servers.some((n) => n !== 1 && n !== 3)) throw new Error(`ZK_BENCH_FLEET_SERVERS: 1 and/or 3, not ${env.ZK_BENCH_FLEET_SERVERS}`);
  return {
    servers: servers as (1 | 3)[],
    sessions: list(env.ZK_BENCH_FLEET_SESSIONS, '100').map((s) => Math.round(positive('ZK_BENCH_FLEET_SESSIONS', s, 0))),
    timeoutsS: list(env.ZK_BENCH_FLEET_T, '10').map((s) => positive('ZK_BENCH_FLEET_T', s, 0)),
    clients: list(env.ZK_BENCH_FLEET_CLIENTS, 'default,auto@2000,write@2000,off,curator').map(parseFleetClient),
    settleS: positive('ZK_BENCH_FLEET_SETTLE_S', env.ZK_BENCH_FLEET_SETTLE_S, window(10, 5)),
    holdS: positive('ZK_BENCH_FLEET_HOLD_S', env.ZK_BENCH_FLEET_HOLD_S, window(60, 20)),
    probeS: positive('ZK_BENCH_FLEET_PROBE_S', env.ZK_BENCH_FLEET_PROBE_S, window(30, 10)),
    releasedS: positive('ZK_BENCH_FLEET_RELEASED_S', env.ZK_BENCH_FLEET_RELEASED_S, window(30, 10)),
    probeHz: positive('ZK_BENCH_FLEET_PROBE_HZ', env.ZK_BENCH_FLEET_PROBE_HZ, 25),
    reps: Math.round(positive('ZK_BENCH_FLEET_REPS', env.ZK_BENCH_FLEET_REPS, 1)),
  };
}

/** True when `--only` selects any row of the fleet. */
export function fleetWanted(bench: Bench, settings = fleetSettings(process.env, bench.scale)): boolean {
  return settings.sessions.some((n) => settings.timeoutsS.some((t) => bench.wants(WORKLOAD.leaseFleet(n, t))));
}

/** What a fleet's processes report (summed over them). */
interface FleetStats {
  cpuUs: number;
  proofs: number;
  proofSyncs: number;
  lost: number;
  suspended: number;
}

/** A fleet holding its leases: one or more processes. */
interface Fleet {
  /** The negotiated session timeout, ms. */
  readonly sessionTimeoutMs: number;
  stats(): Promise<FleetStats>;
  release(): Promise<void>;
  /** Closes the sessions (stdin ends) and waits for the processes to exit. */
  end(): Promise<void>;
}

/** The line `word`, or a rejection with the child's `ERROR` line. */
async function expectLine(child: LineChild, word: string, timeoutMs: number): Promise<string> {
  const line = await Promise.race([child.line(word, timeoutMs), child.line('ERROR', timeoutMs).then((l) => Promise.reject(new Error(l.text)))]);
  return line.text;
}

async function startFleet(children: readonly LineChild[], n: number): Promise<Fleet> {
  const limit = 60_000 + 100 * n;
  try {
    const holding = await Promise.all(children.map((c) => expectLine(c, 'HOLDING', limit)));
    return {
      sessionTimeoutMs: Number(holding[0]!.split(' ')[2]),
      async stats() {
        const all = await Promise.all(
          children.map(async (c) => {
            c.send('stats');
            return JSON.parse((await expectLine(c, 'STATS', 30_000)).slice('STATS '.length)) as Partial<FleetStats>;
          }),
        );
        const sum = (k: keyof FleetStats) => all.reduce((s, x) => s + (x[k] ?? 0), 0);
        return { cpuUs: sum('cpuUs'), proofs: sum('proofs'), proofSyncs: sum('proofSyncs'), lost: sum('lost'), suspended: sum('suspended') };
      },
      async release() {
        await Promise.all(
          children.map((c) => {
            c.send('release');
            return expectLine(c, 'RELEASED', limit);
          }),
        );
      },
      async end() {
        await Promise.all(children.map((c) => c.end(30_000)));
      },
    };
  } catch (e) {
    await Promise.all(children.map((c) => c.kill()));
    throw e;
  }
}

/** Ours: `n` sessions over processes of up to {@link SESSIONS_PER_CHILD}. */
function oursFleet(client: Extract<FleetClient, { kind: 'ours' }>, connect: string, path: string, n: number, timeoutMs: number): Promise<Fleet> {
  const options = { ...(client.leaseProof === undefined ? {} : { leaseProof: client.leaseProof }), ...(client.serverTickTime === undefined ? {} : { serverTickTime: client.serverTickTime }) };
  const children: LineChild[] = [];
  for (let first = 0; first < n; first += SESSIONS_PER_CHILD) {
    const count = Math.min(SESSIONS_PER_CHILD, n - first);
    children.push(new LineChild('fleet child (ours)', process.execPath, [NODE_CHILD, connect, path, String(first), String(count), String(timeoutMs), JSON.stringify(options)]));
  }
  return startFleet(children, n);
}

function curatorFleet(java: CompiledJava, connect: string, path: string, n: number, timeoutMs: number): Promise<Fleet> {
  return startFleet([new LineChild('FleetBenchDriver (Curator)', 'java', ['-cp', java.classpath, 'FleetBenchDriver', connect, path, '0', String(n), String(timeoutMs)])], n);
}

/** The unrelated client: a reader and a writer session on one server. */
class Probe {
  private constructor(
    readonly reader: ZooKeeper,
    readonly writer: ZooKeeper,
    readonly path: string,
  ) {}

  static async open(connect: string, path: string): Promise<Probe> {
    const reader = await ZooKeeper.connect(connect, { sessionTimeout: 10_000 });
    const writer = await ZooKeeper.connect(connect, { sessionTimeout: 10_000 });
    await writer.ensurePath(path);
    await writer.setData(path, Buffer.alloc(100, 1));
    return new Probe(reader, writer, path);
  }

  /**
   * `hz` getData and `hz` setData per second for `seconds`, each issued on schedule whether or not
   * the previous one has returned (open loop: a slow reply does not hide the ones behind it); each
   * timed from its call to its reply.
   */
  async run(seconds: number, hz: number): Promise<{ reads: number[]; writes: number[]; errors: number }> {
    const reads: number[] = [];
    const writes: number[] = [];
    let errors = 0;
    const pending = new Set<Promise<void>>();
    const data = Buffer.alloc(100, 2);
    const timedOp = (into: number[], op: () => Promise<unknown>) => {
      const t0 = performance.now();
      const p: Promise<void> = op().then(
        () => void into.push((performance.now() - t0) * 1000),
        () => void errors++,
      );
      pending.add(p);
      void p.finally(() => pending.delete(p));
    };
    const period = 1000 / hz;
    const end = performance.now() + seconds * 1000;
    for (let next = performance.now(); next < end; next += period) {
      const wait = next - performance.now();
      if (wait > 0) await delay(wait);
      timedOp(reads, () => this.reader.getData(this.path));
      timedOp(writes, () => this.writer.setData(this.path, data));
    }
    await Promise.all(pending);
    return { reads, writes, errors };
  }

  async close(): Promise<void> {
    await Promise.all([this.reader.close(), this.writer.close()]);
  }
}

/** Where the fleet row runs. */
export interface FleetTarget {
  readonly connect: string;
  /** The ensemble's servers (a pid makes the leader's CPU measurable). */
  readonly servers: readonly FleetServer[];
  /** Curator beside ours (the Java peers are on). */
  readonly curator: boolean;
}

/** The per-holder figures of a window; undefined figures left out. */
function perHolder(s: LeaderSpend, n: number): Record<string, number> {
  const m: Record<string, number> = {};
  const put = (k: string, v: number | undefined) => {
    if (v !== undefined && Number.isFinite(v)) m[k] = v;
  };
  put('txnsPerHolderPerSec', s.txns === undefined ? undefined : s.txns / n / s.seconds);
  put('logBytesPerHolderPerHour', s.logBytes === undefined ? undefined : (s.logBytes / n / s.seconds) * 3600);
  put('logBytesPerTxn', s.logBytes === undefined || !s.logRecords ? undefined : s.logBytes / s.logRecords);
  put('fsyncsPerHolderPerSec', s.fsyncs === undefined ? undefined : s.fsyncs / n / s.seconds);
  put('snapshots', s.snapshots);
  put('snapshotsPerHolderPerHour', s.snapshots === undefined ? undefined : (s.snapshots / n / s.seconds) * 3600);
  put('leaderCpuUsPerHolderPerSec', s.cpuSeconds === undefined ? undefined : (s.cpuSeconds * 1e6) / n / s.seconds);
  put('leaderCpuPct', s.cpuSeconds === undefined ? undefined : (s.cpuSeconds / s.seconds) * 100);
  if (s.txns === undefined) m['leaderChanged'] = 1;
  return m;
}

/**
 * The fleet rows against one ensemble (the caller starts it with tickTime {@link FLEET_TICK_MS}
 * and sets `bench.suffix`): every (sessions, T) pair of the settings, each client in turn.
 */
export async function fleetWorkloads(bench: Bench, target: FleetTarget, base: string, settings = fleetSettings(process.env, bench.scale)): Promise<void> {
  if (!fleetWanted(bench, settings)) return;
  const meter = new LeaderMeter(target.servers);
  // The probe on one server: a follower of an ensemble (where most clients are), else the one server.
  const modes = await Promise.all(target.servers.map((s) => meter.modeOf(s)));
  const probeServer = target.servers[modes.indexOf('follower')] ?? target.servers[0]!;
  const probe = await Probe.open(`${probeServer.host}:${probeServer.port}`, `${base}/fleet-probe`);
  let java: CompiledJava | undefined;
  try {
    const wantsCurator = settings.clients.some((c) => c.kind === 'curator');
    if (wantsCurator && target.curator) {
      const missing = curatorMissing();
      if (missing) bench.skipped[`${CLIENT.curator}, lease fleet`] = missing;
      else java = compileCurator([JAVA_SOURCE, JVM_METER]);
    } else if (wantsCurator) bench.skipped[`${CLIENT.curator}, lease fleet`] = '--no-java';
    let run = 0;
    for (const n of settings.sessions) {
      for (const t of settings.timeoutsS) {
        const workload = WORKLOAD.leaseFleet(n, t);
        if (!bench.wants(workload)) continue;
        const clients = settings.clients.flatMap((c): Array<readonly [string, Repetition]> => {
          if (c.kind === 'curator' && !java) return [];
          const name = c.kind === 'curator' ? CLIENT.curator : oursFleetClient(c.leaseProof, c.serverTickTime);
          const rep: Repetition = async (warmup) => {
            // No warm-up run: the settle period before the windows is the warm-up.
            if (warmup) return { ops: 0, seconds: 1, latenciesUs: [], cpuUs: Number.NaN };
            const path = `${base}/fleet-${run++}`;
            const fleet = c.kind === 'curator' ? curatorFleet(java!, target.connect, path, n, t * 1000) : oursFleet(c, target.connect, path, n, t * 1000);
            return fleetRepetition(await fleet, { meter, probe, n, settings });
          };
          return [[name, rep] as const];
        });
        await bench.compare('locks', workload, 'transactions', clients, settings.reps);
      }
    }
  } finally {
    java?.remove();
    await probe.close();
  }
}

/** One client's repetition on a fleet that holds: the windows of the module comment. */
async function fleetRepetition(fleet: Fleet, ctx: { meter: LeaderMeter; probe: Probe; n: number; settings: FleetSettings }): Promise<Sample> {
  const { meter, probe, n, settings } = ctx;
  try {
    await delay(settings.settleS * 1000);
    // Hold: the fleet alone.
    const c0 = await fleet.stats();
    const h0 = await meter.read();
    await delay(settings.holdS * 1000);
    const h1 = await meter.read();
    const c1 = await fleet.stats();
    const hold = spend(h0, h1);
    // Probe: the unrelated client beside the fleet.
    const p = await probe.run(settings.probeS, settings.probeHz);
    const c2 = await fleet.stats();
    // Released: every lease gone, the sessions still open.
    await fleet.release();
    const r0 = await meter.read();
    const c3 = await fleet.stats();
    await delay(settings.releasedS * 1000);
    const r1 = await meter.read();
    const c4 = await fleet.stats();
    const released = spend(r0, r1);
    const sorted = (v: number[]) => Float64Array.from(v).sort();
    const reads = sorted(p.reads);
    const writes = sorted(p.writes);
    const metrics: Record<string, number> = {
      ...perHolder(hold, n),
      readP50Us: percentile(reads, 50),
      readP99Us: percentile(reads, 99),
      writeP50Us: percentile(writes, 50),
      writeP99Us: percentile(writes, 99),
      probeErrors: p.errors,
      clientCpuUsPerHolderPerSec: (c1.cpuUs - c0.cpuUs) / n / hold.seconds,
      // The proof's own requests (ours: zk:proof), writes and syncs apart.
      clientProofWritesPerHolderPerSec: (c1.proofs - c1.proofSyncs - (c0.proofs - c0.proofSyncs)) / n / hold.seconds,
      clientProofSyncsPerHolderPerSec: (c1.proofSyncs - c0.proofSyncs) / n / hold.seconds,
      releasedTxns: released.txns ?? Number.NaN,
      releasedTxnsPerHolderPerSec: released.txns === undefined ? Number.NaN : released.txns / n / released.seconds,
      releasedProofs: c4.proofs - c3.proofs,
      // Leases that were told they were at risk (ours: the signal; Curator: LOST), and Curator's
      // SUSPENDED, by the end of the probe window, and of those before the hold window.
      leasesLost: c2.lost,
      leasesLostBeforeHold: c0.lost,
      ...(c2.suspended > 0 ? { suspended: c2.suspended } : {}),
      sessionTimeoutMs: fleet.sessionTimeoutMs,
    };
    return { ops: hold.txns ?? Number.NaN, seconds: hold.seconds, latenciesUs: Array.from(reads), cpuUs: Number.NaN, metrics };
  } finally {
    await fleet.end();
  }
}

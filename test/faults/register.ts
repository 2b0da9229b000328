/**
 * The register workload (issue 39): a 3-server ensemble of the test's own whose server-to-server
 * links go through fault proxies (tickTime 1 s, syncLimit 5: a server cut off from its leader
 * keeps serving reads for about 5 s), one participant process pinned to each server
 * (register-participant.mjs), each with one session per read mode (plain, sync, linearizable)
 * writing and reading a few keys. A nemesis between the servers strikes during the run; then the
 * history of each mode (every write of the run, whoever made it, and that mode's reads) goes to
 * the linearizability checker (linearizability.ts), key by key, and stale reads are counted.
 */
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { ZooKeeper } from '@zk/protocol';
import { startZooKeeper, waitFor, type ServerLinks, type ZooKeeperEnsemble } from '../harness/index.js';
import { checkRegisters, staleReads, type LinearizabilityVerdict, type RegisterOp } from './linearizability.js';

const PARTICIPANT = fileURLToPath(new URL(import.meta.url.includes('/test/dist/') ? '../../faults/register-participant.mjs' : './register-participant.mjs', import.meta.url));

/** The read modes every participant runs, one session each. */
export const MODES = ['plain', 'sync', 'linearizable'] as const;
export type Mode = (typeof MODES)[number];

/** The ensemble's roles now. */
export interface Roles {
  leader: number;
  followers: number[];
}

/** A nemesis: what one strike does, given the roles at that moment. */
export interface RegisterNemesis {
  name: string;
  strike(links: ServerLinks, roles: Roles, i: number): string;
}

/** How long things last, ms. */
export interface RegisterTiming {
  /** Before the first strike. */
  beforeMs: number;
  /** Each fault. */
  faultMs: number;
  /** After each heal (the ensemble settles, the reads go on). */
  afterMs: number;
  strikes: number;
}

/** What one mode's history showed. */
export interface ModeResult {
  reads: number;
  failedReads: number;
  stale: number;
  verdict: LinearizabilityVerdict;
}

/** What a run found. */
export interface RegisterResult {
  name: string;
  durationMs: number;
  writes: number;
  unknownWrites: number;
  strikes: string[];
  modes: Record<Mode, ModeResult>;
  /** Failed operations by kind and error name, for the report. */
  failures: Record<string, number>;
  /** Stale reads by participant and mode (`p1.plain`), for the report. */
  staleBy: Record<string, number>;
  errors: string[];
  checkMs: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const KEYS = ['k0', 'k1', 'k2'];

/** Runs the workload under `nemesis` and checks each mode's history. */
export async function registerRun(nemesis: RegisterNemesis, timing: RegisterTiming): Promise<RegisterResult> {
  const started = Date.now();
  const ensemble = await startZooKeeper({ servers: 3, serverLinks: true, tickTime: 1000, config: { syncLimit: 5 } });
  const root = `/reg-${Date.now().toString(36)}`;
  const ops: Array<RegisterOp & { mode: Mode }> = [];
  const errors: string[] = [];
  const strikes: string[] = [];
  const failures = new Map<string, number>();
  try {
    const links = ensemble.links;
    if (!links) throw new Error('an ensemble without server links');
    const admin = await ZooKeeper.connect(ensemble.connectString, { sessionTimeout: 10_000 });
    await admin.create(root);
    for (const k of KEYS) await admin.create(`${root}/${k}`);
    await admin.close();
    // Every server takes sessions before the participants start (one still syncing with the
    // leader refuses handshakes), so each process starts on its own server.
    await ensemble.waitForQuorum(60_000, { all: true });
    for (const s of ensemble.servers) {
      const zk = await waitFor(`server ${s.id} takes a session`, () => ZooKeeper.connect(s.connectString, { sessionTimeout: 10_000, connectTimeout: 2000 }).catch(() => undefined), 60_000, 200);
      await zk.getData('/');
      await zk.close();
    }
    // Every session connected before the clock starts (a server may refuse handshakes for a
    // while after it joined); the participants stop when told, after the last strike.
    const ready = { count: 0 };
    const procs = ensemble.servers.map((s) => participant(`p${s.id}`, `${s.connectString}${root}`, 300_000, ops, errors, failures, ready));
    await waitFor('every participant session connected', () => (ready.count >= procs.length * (MODES.length + 1) ? true : undefined), 60_000, 50);
    await sleep(timing.beforeMs);
    for (let i = 0; i < timing.strikes; i++) {
      const what = nemesis.strike(links, await rolesOf(ensemble), i);
      strikes.push(what);
      await sleep(timing.faultMs);
      links.heal();
      await sleep(timing.afterMs);
    }
    for (const p of procs) p.stop();
    await Promise.all(procs.map((p) => p.exited));
  } finally {
    ensemble.links?.heal();
    await ensemble.close();
  }
  const checkStart = Date.now();
  const writes = ops.filter((o) => o.kind === 'write');
  const modes = Object.fromEntries(
    MODES.map((mode) => {
      const reads = ops.filter((o) => o.kind === 'read' && o.mode === mode);
      const done = reads.filter((o) => o.ret !== undefined);
      const history = [...writes, ...done];
      return [mode, { reads: done.length, failedReads: reads.length - done.length, stale: staleReads(history), verdict: checkRegisters(history) }];
    }),
  ) as Record<Mode, ModeResult>;
  const staleBy: Record<string, number> = {};
  for (const mode of MODES) {
    for (const who of new Set(ops.map((o) => o.who!))) {
      const n = staleReads([...writes, ...ops.filter((o) => o.kind === 'read' && o.ret !== undefined && o.mode === mode && o.who === who)]);
      if (n > 0) staleBy[`${who}.${mode}`] = n;
    }
  }
  return { name: nemesis.name, staleBy, failures: Object.fromEntries(failures), durationMs: Date.now() - started, writes: writes.length, unknownWrites: writes.filter((w) => w.ret === undefined).length, strikes, modes, errors, checkMs: Date.now() - checkStart };
}

/** Spawns one participant and collects its operations (`ready` counts its sessions once connected). */
function participant(who: string, connect: string, durationMs: number, ops: Array<RegisterOp & { mode: Mode }>, errors: string[], failures: Map<string, number>, ready: { count: number }): { stop: () => void; exited: Promise<void> } {
  const proc = spawn(process.execPath, [PARTICIPANT, connect, who, String(durationMs), KEYS.join(','), MODES.join(',')], { stdio: ['pipe', 'pipe', 'pipe'] });
  createInterface({ input: proc.stdout! }).on('line', (line) => {
    let e: { kind: string; mode: Mode; op: 'read' | 'write'; key: string; value?: string | null; call: string; ret?: string; error?: string; notSent?: boolean; message?: string };
    try {
      e = JSON.parse(line) as typeof e;
    } catch {
      errors.push(`${who}: ${line}`);
      return;
    }
    if (e.kind === 'error') errors.push(`${who}: ${e.message}`);
    if (e.kind === 'ready') ready.count++;
    if (e.kind !== 'op') return;
    if (e.error !== undefined) failures.set(`${e.op} ${e.error}${e.notSent ? ' (not sent)' : ''}`, (failures.get(`${e.op} ${e.error}${e.notSent ? ' (not sent)' : ''}`) ?? 0) + 1);
    // A write never sent was certainly not applied: left out.
    if (e.op === 'write' && e.notSent) return;
    if (e.op === 'read' && e.error !== undefined) {
      // A failed read returned nothing: counted, not checked.
      ops.push({ key: e.key, kind: 'read', value: null, call: BigInt(e.call), ret: undefined, who, mode: e.mode });
      return;
    }
    ops.push({ key: e.key, kind: e.op, value: e.value ?? null, call: BigInt(e.call), ret: e.ret === undefined ? undefined : BigInt(e.ret), who, mode: e.mode });
  });
  let stderr = '';
  proc.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<void>((resolve) => {
    proc.on('exit', (code) => {
      if (code !== 0) errors.push(`${who} exited ${code}: ${stderr.slice(-500)}`);
      resolve();
    });
  });
  return { stop: () => proc.stdin!.end('stop\n'), exited };
}

/** The roles once exactly one server leads and the others follow. */
async function rolesOf(ensemble: ZooKeeperEnsemble): Promise<Roles> {
  return waitFor(
    'one leader, every other server following',
    async () => {
      const modes = await Promise.all(ensemble.servers.map(async (s) => [s.id, await s.mode()] as const));
      const leaders = modes.filter(([, m]) => m === 'leader');
      if (leaders.length !== 1 || modes.some(([, m]) => m !== 'leader' && m !== 'follower')) return undefined;
      const leader = leaders[0]![0];
      return { leader, followers: modes.map(([id]) => id).filter((id) => id !== leader) };
    },
    60_000,
    100,
  );
}

/** The nemeses of quorum.ts, as strikes on the links (issue 39 names these three). */
export const NEMESES = {
  isolateFollower: { name: 'a follower isolated from both other servers', strike: (links, r, i) => (links.isolate(r.followers[i % 2]!, 'hold'), `follower ${r.followers[i % 2]} isolated`) },
  isolateLeader: { name: 'the leader isolated from both followers', strike: (links, r) => (links.isolate(r.leader, 'hold'), `leader ${r.leader} isolated`) },
  bridge: {
    name: 'a bridge: a follower cut from the leader, the other follower seeing both',
    strike: (links, r, i) => {
      const target = r.followers[i % 2]!;
      const other = r.followers[(i + 1) % 2]!;
      links.bridge([r.leader], [target], other, 'hold');
      return `follower ${target} cut from leader ${r.leader}, bridged by ${other}`;
    },
  },
} satisfies Record<string, RegisterNemesis>;

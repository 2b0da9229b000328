/**
 * The nemeses of the fault suite as functions, so the CI run (nemeses.test.ts) and the soak
 * (soak.test.ts) run the same code at different sizes. Each starts participants through a
 * FaultFixture, strikes, waits for every participant to exit, checks the history and returns the
 * summary row and the list of problems (empty when the run passed): the checker's violations,
 * stale writes accepted, too little progress (with the participants' errors) and what the
 * nemesis itself requires (enough kills, pauses that really overlapped, stale writes rejected).
 */
import { mkdirSync } from 'node:fs';
import { ZooKeeper } from '@zk/protocol';
import { startZooKeeper, TcpProxy, waitFor } from '../harness/index.js';
import { interleavedWriters, type HistoryEvent, type ResourceWrite, type Verdict } from './checker.js';
import { FaultFixture, SESSION_TIMEOUT, writeEvidence, type ParticipantKind } from './fixture.js';
import type { CuratorParticipants } from './java-participant.js';
import { WORK_DIR, type NemesisRow } from './summary.js';

/** Where a nemesis runs. */
export interface NemesisContext {
  /** The shared server's connect string (no chroot). */
  connect: string;
  /** A chroot for the participants (created if missing). */
  root: string;
  /** The lock node (default /faults/lock). */
  lockPath?: string;
}

/** How big a run is. */
export interface Sizing {
  /** How long participants take the lock, ms. */
  durationMs: number;
  /** Participants running at once. */
  processes: number;
  /** Sleep after each write of a hold, ms. */
  workMs: number;
  /** Minimum acquisitions per second of the run (see the README for how they were chosen). */
  minPerSecond: number;
  /** Curator participants (InterProcessMutex, `j<i>`) among the contenders, where the nemesis takes them (SIGSTOP, leader kills). */
  javas?: number;
  /** The compiled Curator participant; needed when `javas` > 0. */
  curator?: CuratorParticipants | undefined;
}

/** Starts contender `i` of a run: the first `s.javas` are Curator participants, the others Node ones named `prefix<i>`. */
function contender(fx: FaultFixture, s: Sizing, i: number, prefix: string, o: { connect: string; durationMs: number; workMs: number; sessionTimeoutMs?: number }): void {
  if (s.curator && i < (s.javas ?? 0)) s.curator.spawn(fx, { who: `j${i}`, ...o });
  else fx.spawn({ who: `${prefix}${i}`, ...o });
}

/** What a nemesis run found. */
export interface NemesisResult {
  row: NemesisRow;
  verdict: Verdict;
  /** Empty when the run passed. */
  problems: string[];
  /** Nemesis-specific counts (kills, pauses, partitions, interleavings...). */
  counts: Record<string, number>;
  /** The history and the resource's writes, to keep when the run failed. */
  evidence: { events: HistoryEvent[]; writes: ResourceWrite[] };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * When `result` has problems, writes its history and resource writes (time-ordered JSON lines)
 * to test/.work/faults-evidence-<nemesis>.jsonl and returns the file; undefined otherwise.
 */
export function keepEvidence(result: NemesisResult): string | undefined {
  if (result.problems.length === 0) return undefined;
  mkdirSync(WORK_DIR, { recursive: true });
  const file = `${WORK_DIR}faults-evidence-${result.row.nemesis.replace(/[^a-zA-Z0-9]+/g, '-').replace(/^-|-$/g, '')}.jsonl`;
  writeEvidence(file, result.evidence.events, result.evidence.writes);
  return file;
}

async function ensureRoot(connect: string, root: string): Promise<void> {
  const zk = await ZooKeeper.connect(connect, { sessionTimeout: 10_000 });
  try {
    await zk.create(root).catch(() => undefined);
  } finally {
    await zk.close();
  }
}

/** Waits for every participant, checks the history, then the nemesis's own requirements. */
async function finish(fx: FaultFixture, nemesis: string, sizing: Sizing, counts: Record<string, number>, requirements: (v: Verdict) => [ok: boolean, what: string][]): Promise<NemesisResult> {
  await fx.exited();
  const verdict = fx.check();
  const problems = fx.problems(verdict, { minPerSecond: sizing.minPerSecond });
  for (const [ok, what] of requirements(verdict)) if (!ok) problems.push(what);
  return { row: fx.row(nemesis, verdict), verdict, problems, counts, evidence: { events: fx.history(), writes: fx.resource.writes } };
}

/**
 * SIGKILL of whoever holds the lock every `killEveryMs`, a fresh participant started for each
 * victim; the lock must pass on only once the victim's session expired. `kind: 'rw'` takes either
 * side of a ReadWriteLock at random (no reader may overlap a writer).
 */
export async function sigkillHolders(ctx: NemesisContext, s: Sizing & { killEveryMs: number; minKills: number; kind?: 'mutex' | 'rw' }): Promise<NemesisResult> {
  const kind: ParticipantKind = s.kind ?? 'mutex';
  const nemesis = `SIGKILL of the ${kind === 'rw' ? 'ReadWriteLock' : 'Mutex'} holder every ${s.killEveryMs / 1000} s`;
  await ensureRoot(ctx.connect, ctx.root);
  const fx = await FaultFixture.start({ root: ctx.root, lockPath: ctx.lockPath });
  try {
    const prefix = kind === 'rw' ? 'rw' : 'p';
    for (let i = 0; i < s.processes; i++) fx.spawn({ who: `${prefix}${i}`, connect: ctx.connect, durationMs: s.durationMs, workMs: s.workMs, kind });
    let kills = 0;
    let next = s.processes;
    const deadline = fx.startedAt + s.durationMs - 3000;
    while (Date.now() < deadline) {
      await sleep(s.killEveryMs); // the nemesis's schedule
      const victim = fx.get(fx.holder() ?? '');
      if (!victim?.running) continue;
      victim.kill();
      kills++;
      fx.spawn({ who: `${prefix}${next++}`, connect: ctx.connect, durationMs: Math.max(1000, deadline - Date.now() + 1000), workMs: s.workMs, kind });
    }
    const reads = () => fx.events.filter((e) => e.kind === 'acquired' && e.mode === 'read').length;
    const result = await finish(fx, nemesis, s, { kills }, () => [
      [kills >= s.minKills, `only ${kills} kills (at least ${s.minKills} required)`],
      [kind !== 'rw' || reads() > 0, 'no read holds: the ReadWriteLock was not exercised'],
    ]);
    result.counts.reads = reads();
    return result;
  } finally {
    await fx.close();
  }
}

/**
 * SIGSTOP of the holder beyond the session timeout (the GC pause), `pauses` times: a slow
 * participant (`paused`, `victimWorkMs` = 400 ms after each write) is paused while it holds the
 * lock (a hold begun since it last woke) and has written, until another participant holds the
 * lock and has written; then SIGCONT. The checker excuses
 * only overlaps covered by a logged pause; the fenced resource must have rejected stale writes
 * (at least one: the test cannot pass vacuously) and accepted none; every pause must have caused
 * an overlap.
 */
export async function sigstopHolder(ctx: NemesisContext, s: Sizing & { pauses: number; victimWorkMs?: number }): Promise<NemesisResult> {
  const nemesis = 'SIGSTOP of the holder beyond the session timeout';
  await ensureRoot(ctx.connect, ctx.root);
  const fx = await FaultFixture.start({ root: ctx.root, lockPath: ctx.lockPath });
  try {
    const victim = fx.spawn({ who: 'paused', connect: ctx.connect, durationMs: s.durationMs, workMs: s.victimWorkMs ?? 400 });
    const others = Math.max(1, s.processes - 1);
    let pauses = 0;
    let resumedAt = 0n;
    const holding = () => {
      // The victim holds the lock (acquired since it was last woken) and has written since.
      const acquired = [...fx.events].reverse().find((e) => e.who === 'paused' && (e.kind === 'acquired' || e.kind === 'released'));
      return acquired?.kind === 'acquired' && acquired.t > resumedAt && fx.holder() === 'paused' && fx.resource.writes.some((w) => w.who === 'paused' && w.t > acquired.t) ? true : undefined;
    };
    await waitFor('the victim to hold the lock and write', holding, 20_000, 5);
    for (let i = 0; i < others; i++) contender(fx, s, i, 'q', { connect: ctx.connect, durationMs: s.durationMs - 2000, workMs: s.workMs });
    // The first pause always; more while there is time for one more round (pause, take-over, wake).
    while (pauses < s.pauses && (pauses === 0 || Date.now() < fx.startedAt + s.durationMs - 8000)) {
      if (pauses > 0) await waitFor('the victim to hold the lock and write again', holding, 30_000, 5);
      victim.pause();
      pauses++;
      const stoppedAt = process.hrtime.bigint();
      // Someone else holds the lock (the paused session expired) and has written: wake the sleeper.
      await waitFor('another holder', () => (fx.events.some((e) => e.kind === 'acquired' && e.who !== 'paused' && e.t > stoppedAt) ? true : undefined), 20_000, 20);
      await waitFor('the new holder to write', () => (fx.resource.writes.some((w) => w.who !== 'paused' && w.t > stoppedAt) ? true : undefined), 20_000, 5);
      victim.resume();
      resumedAt = process.hrtime.bigint();
    }
    const counts = { pauses, interleavings: 0, learned: 0 };
    return await finish(fx, nemesis, s, counts, (v) => {
      // A resource that trusts "I hold the lock" takes writes from two holders interleaved.
      counts.interleavings = interleavedWriters(fx.resource.writes.map((w) => ({ ...w, accepted: true })));
      counts.learned = learnedAfterPauses(fx.history());
      return [
        [counts.learned >= pauses, `the paused holder's signal aborted after only ${counts.learned} of ${pauses} pauses, before it released`],
        [pauses >= 1, 'no pause happened'],
        [v.pausedOverlaps >= pauses, `${v.pausedOverlaps} overlaps with the paused holder for ${pauses} pauses: a pause that caused no overlap tested nothing`],
        [fx.resource.staleRejected > 0, 'no stale write was rejected: the paused holder never wrote after waking, so fencing was not tested'],
        [counts.interleavings > 0, 'the unfenced view saw no interleaved writers'],
      ];
    });
  } finally {
    await fx.close();
  }
}

/** Pauses after which the paused holder's signal aborted before it released the hold it was paused in. */
function learnedAfterPauses(events: readonly HistoryEvent[]): number {
  const sorted = [...events].sort((a, b) => (a.t < b.t ? -1 : a.t > b.t ? 1 : 0));
  let learned = 0;
  for (const p of sorted) {
    if (p.kind !== 'paused') continue;
    const mine = sorted.filter((e) => e.who === p.who && (e.kind === 'acquired' || e.kind === 'released' || e.kind === 'lost'));
    const held = mine.filter((e) => e.t <= p.from).pop();
    const after = mine.filter((e) => e.t > p.from);
    if (held?.kind === 'acquired' && after[0]?.kind === 'lost') learned++;
  }
  return learned;
}

/**
 * The holder cut off from every server (its proxy blocked) for 2T, again and again (`gapMs`
 * apart): its signal must abort before the next holder acquires (no pause excuses anything here).
 */
export async function partitionHolder(ctx: NemesisContext, s: Sizing & { minPartitions: number; gapMs?: number }): Promise<NemesisResult> {
  const nemesis = 'partition of the holder for twice the session timeout';
  await ensureRoot(ctx.connect, ctx.root);
  const [host, port] = ctx.connect.split(',')[0]!.split(':');
  const proxies = await Promise.all(Array.from({ length: s.processes }, () => TcpProxy.start({ host: host!, port: Number(port) })));
  const fx = await FaultFixture.start({ root: ctx.root, lockPath: ctx.lockPath });
  try {
    const participants = proxies.map((p, i) => fx.spawn({ who: `c${i}`, connect: p.connectString, durationMs: s.durationMs, workMs: s.workMs }));
    let partitions = 0;
    const deadline = fx.startedAt + s.durationMs - 5000;
    while (Date.now() < deadline) {
      const who = await waitFor('a holder', () => fx.holder(), 10_000, 10);
      const i = participants.findIndex((p) => p.who === who);
      proxies[i]!.block();
      partitions++;
      await sleep(SESSION_TIMEOUT * 2); // the partition's length
      proxies[i]!.unblock();
      if (s.gapMs) await sleep(s.gapMs); // time without a partition
    }
    return await finish(fx, nemesis, s, { partitions }, () => [[partitions >= s.minPartitions, `only ${partitions} partitions (at least ${s.minPartitions} required)`]]);
  } finally {
    await fx.close();
    for (const p of proxies) await p.close();
  }
}

/**
 * A 3-node ensemble of its own whose leader is killed (SIGKILL) and restarted every
 * `killEveryMs`; participants ask for a 6 s session so they ride through elections. Not on an
 * external ensemble (ZK_CONNECT): the caller skips it.
 */
export async function leaderKills(ctx: Omit<NemesisContext, 'connect'>, s: Sizing & { killEveryMs: number; minKills: number }): Promise<NemesisResult> {
  const nemesis = `leader kill + restart every ${s.killEveryMs / 1000} s, 3 nodes`;
  const ensemble = await startZooKeeper({ servers: 3, own: true });
  try {
    await ensureRoot(ensemble.connectString, ctx.root);
    const fx = await FaultFixture.start({ root: ctx.root, lockPath: ctx.lockPath });
    try {
      for (let i = 0; i < s.processes; i++) contender(fx, s, i, 'l', { connect: ensemble.connectString, durationMs: s.durationMs, workMs: s.workMs, sessionTimeoutMs: 6000 });
      let kills = 0;
      const deadline = fx.startedAt + s.durationMs - 5000;
      while (Date.now() < deadline) {
        await sleep(s.killEveryMs); // the nemesis's schedule
        const leader = await ensemble.leader();
        if (!leader) continue;
        await leader.kill();
        kills++;
        await leader.start();
      }
      return await finish(fx, nemesis, s, { kills }, () => [[kills >= s.minKills, `only ${kills} leader kills (at least ${s.minKills} required)`]]);
    } finally {
      await fx.close();
    }
  } finally {
    await ensemble.close();
  }
}

/**
 * The control: honest participants and one that skips the lock. The checker must catch it: the
 * run's problems are empty only if violations naming the cheat were found.
 */
export async function cheatControl(ctx: NemesisContext, s: Omit<Sizing, 'minPerSecond'>): Promise<NemesisResult> {
  await ensureRoot(ctx.connect, ctx.root);
  const fx = await FaultFixture.start({ root: ctx.root, lockPath: ctx.lockPath });
  try {
    for (let i = 0; i < s.processes - 1; i++) fx.spawn({ who: `h${i}`, connect: ctx.connect, durationMs: s.durationMs, workMs: s.workMs });
    fx.spawn({ who: 'cheat', connect: ctx.connect, durationMs: s.durationMs, workMs: s.workMs, kind: 'cheat' });
    await fx.exited();
    const verdict = fx.check();
    const caught = verdict.violations.filter((v) => v.includes('cheat')).length;
    const problems = caught > 0 ? [] : [`the checker did not catch the participant that skips the lock (${verdict.violations.length} violations)`];
    return { row: fx.row('(control) a participant that skips the lock', verdict), verdict, problems, counts: { caught }, evidence: { events: fx.history(), writes: fx.resource.writes } };
  } finally {
    await fx.close();
  }
}

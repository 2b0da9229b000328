/**
 * The nemeses of the fault suite as functions, so the CI run (nemeses.test.ts) and the soak
 * (soak.test.ts) run the same code at different sizes. Each starts participants through a
 * FaultFixture, strikes, waits for every participant to exit, checks the history and returns the
 * summary row and the list of problems (empty when the run passed): the checker's violations,
 * stale writes accepted, too little progress (with the participants' errors) and what the
 * nemesis itself requires (enough kills, pauses that really overlapped, stale writes rejected).
 *
 * Every nemesis takes a `kind` (fixture.ts's ParticipantKind; default `mutex`): the same strikes
 * on a ReadWriteLock, a leader election (LeaderLatch, LeaderSelector: one acting leader) or a
 * Semaphore of `permits` permits (at most that many holders; the checker counts against the
 * capacity and the resource asks ZooKeeper whether each writer's lease is alive).
 */
import { mkdirSync } from 'node:fs';
import { ZooKeeper } from '@zk/protocol';
import { startZooKeeper, TcpProxy, waitFor } from '../harness/index.js';
import { interleavedWriters, peakHolders, type HistoryEvent, type ResourceWrite, type Verdict } from './checker.js';
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
  /** Minimum acquisitions per second of the run (rates.ts says how they were chosen). */
  minPerSecond: number;
  /** Curator participants (InterProcessMutex, `j<i>`) among the contenders, where the nemesis takes them (SIGSTOP, leader kills). */
  javas?: number;
  /** The compiled Curator participant; needed when `javas` > 0. */
  curator?: CuratorParticipants | undefined;
  /** What the participants take (default `mutex`). */
  kind?: ParticipantKind;
  /** A semaphore's permits (kind `semaphore`; default 3). */
  permits?: number;
}

/** The recipe of a kind, for nemesis names (`mutex` names none, as before there were kinds). */
export function recipeOf(s: Pick<Sizing, 'kind' | 'permits'>): string {
  switch (s.kind ?? 'mutex') {
    case 'rw':
      return 'ReadWriteLock';
    case 'latch':
      return 'LeaderLatch';
    case 'selector':
      return 'LeaderSelector';
    case 'semaphore':
      return `Semaphore, ${permitsOf(s)} permits`;
    default:
      return 'Mutex';
  }
}

/** Holders allowed at once by a sizing: the permits of a semaphore, else 1. */
export const permitsOf = (s: Pick<Sizing, 'kind' | 'permits'>): number => (s.kind === 'semaphore' ? (s.permits ?? 3) : 1);
/** ` (LeaderLatch)` and the like after a nemesis's name; nothing for a Mutex. */
const suffix = (s: Sizing) => ((s.kind ?? 'mutex') === 'mutex' ? '' : ` (${recipeOf(s)})`);
/** A fixture for the sizing's kind (its capacity, and the connect string its resource needs). */
const fixture = (ctx: Omit<NemesisContext, 'connect'>, connect: string, s: Sizing) => FaultFixture.start({ root: ctx.root, lockPath: ctx.lockPath, capacity: permitsOf(s), connect });

/** Starts contender `i` of a run: the first `s.javas` are Curator participants, the others Node ones named `prefix<i>`; all of the sizing's kind. */
function contender(fx: FaultFixture, s: Sizing, i: number, prefix: string, o: { connect: string; durationMs: number; workMs: number; sessionTimeoutMs?: number }): void {
  if (s.curator && i < (s.javas ?? 0)) s.curator.spawn(fx, { who: `j${i}`, kind: s.kind, ...o });
  else fx.spawn({ who: `${prefix}${i}`, kind: s.kind, ...o });
}

/** Participant name prefixes by kind. */
const PREFIX: Record<ParticipantKind, string> = { mutex: 'p', rw: 'rw', latch: 'll', selector: 'ls', semaphore: 's', cheat: 'cheat' };

/**
 * What every nemesis also requires of a semaphore run: its participants held up to all the
 * permits at once (else the capacity was never tested), or of a ReadWriteLock run: read holds.
 */
function kindRequirements(fx: FaultFixture, s: Sizing, counts: Record<string, number>): [ok: boolean, what: string][] {
  counts.peakHolders = peakHolders(fx.history());
  const permits = permitsOf(s);
  const reads = fx.events.filter((e) => e.kind === 'acquired' && e.mode === 'read').length;
  if (s.kind === 'rw') counts.reads = reads;
  return [
    [s.kind !== 'semaphore' || counts.peakHolders >= permits, `at most ${counts.peakHolders} holders at once: the ${permits} permits were never all held`],
    [s.kind !== 'rw' || reads > 0, 'no read holds: the ReadWriteLock was not exercised'],
  ];
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
  for (const [ok, what] of [...requirements(verdict), ...kindRequirements(fx, sizing, counts)]) if (!ok) problems.push(what);
  return { row: fx.row(nemesis, verdict), verdict, problems, counts, evidence: { events: fx.history(), writes: fx.resource.writes } };
}

/**
 * SIGKILL of whoever holds the lock every `killEveryMs`, a fresh participant started for each
 * victim; the lock must pass on only once the victim's session expired. `kind: 'rw'` takes either
 * side of a ReadWriteLock at random (no reader may overlap a writer); a leader kind kills the
 * leader; `semaphore` the longest-holding of the permit holders.
 */
export async function sigkillHolders(ctx: NemesisContext, s: Sizing & { killEveryMs: number; minKills: number }): Promise<NemesisResult> {
  const kind: ParticipantKind = s.kind ?? 'mutex';
  const victim = kind === 'semaphore' ? 'a Semaphore permit holder' : `the ${recipeOf(s)} ${kind === 'latch' || kind === 'selector' ? 'leader' : 'holder'}`;
  const nemesis = `SIGKILL of ${victim} every ${s.killEveryMs / 1000} s${kind === 'semaphore' ? ` (${permitsOf(s)} permits)` : ''}`;
  await ensureRoot(ctx.connect, ctx.root);
  const fx = await fixture(ctx, ctx.connect, s);
  try {
    const prefix = PREFIX[kind];
    for (let i = 0; i < s.processes; i++) fx.spawn({ who: `${prefix}${i}`, connect: ctx.connect, durationMs: s.durationMs, workMs: s.workMs, kind });
    let kills = 0;
    let next = s.processes;
    const deadline = fx.startedAt + s.durationMs - 3000;
    // A slow machine (participants start in seconds under load) fits fewer kill cycles into the
    // window: the run then goes on, up to half its length again, until it has its minimum (each
    // replacement then lives to the extended end, so someone is there to take the lock).
    const extended = deadline + s.durationMs / 2;
    const end = () => (kills < s.minKills ? extended : deadline);
    while (Date.now() < end()) {
      // The nemesis's schedule: once the lock moves again (after a kill it is free until the
      // victim's session expires), killEveryMs of progress, then whoever holds it. A fixed tick
      // that skipped the free time fitted too few kills into a slow run; killing at the first
      // new holder left too little progress for the minimum rate.
      if ((await fx.awaitHolder(end())) === undefined) continue;
      await sleep(s.killEveryMs);
      const victim = fx.get(fx.holder() ?? '');
      if (!victim?.running) continue;
      victim.kill();
      kills++;
      fx.spawn({ who: `${prefix}${next++}`, connect: ctx.connect, durationMs: Math.max(1000, end() - Date.now() + 1000), workMs: s.workMs, kind });
    }
    return await finish(fx, nemesis, s, { kills }, () => [[kills >= s.minKills, `only ${kills} kills (at least ${s.minKills} required)`]]);
  } finally {
    await fx.close();
  }
}

/**
 * SIGSTOP of the holder beyond the session timeout (the GC pause), `pauses` times: a slow
 * participant (`paused`, `victimWorkMs` = 400 ms after each write) stops itself, when told,
 * just before a write in a hold where it has written already, until another participant holds
 * the lock and has written; then SIGCONT. The checker excuses
 * only overlaps covered by a logged pause; the fenced resource must have rejected stale writes
 * (at least one: the test cannot pass vacuously) and accepted none; every pause must have caused
 * an overlap.
 */
export async function sigstopHolder(ctx: NemesisContext, s: Sizing & { pauses: number; victimWorkMs?: number }): Promise<NemesisResult> {
  const nemesis = `SIGSTOP of the holder beyond the session timeout${suffix(s)}`;
  await ensureRoot(ctx.connect, ctx.root);
  const fx = await fixture(ctx, ctx.connect, s);
  try {
    const victim = fx.spawn({ who: 'paused', connect: ctx.connect, durationMs: s.durationMs, workMs: s.victimWorkMs ?? 400, kind: s.kind });
    const others = Math.max(1, s.processes - 1);
    let pauses = 0;
    // The victim holds the lock and has written in this hold.
    const holding = () => {
      const acquired = [...fx.events].reverse().find((e) => e.who === 'paused' && (e.kind === 'acquired' || e.kind === 'released'));
      if (acquired?.kind !== 'acquired' || !fx.holders().includes('paused')) return undefined;
      return fx.resource.writes.some((w) => w.who === 'paused' && w.t > acquired.t) ? true : undefined;
    };
    // The victim's place was taken: with one holder at a time, anyone acquired since the pause;
    // with N permits, N others hold at once (at most N - 1 did beside the victim).
    const taken = (stoppedAt: bigint) =>
      fx.capacity === 1 ? fx.events.some((e) => e.kind === 'acquired' && e.who !== 'paused' && e.t > stoppedAt) : fx.holders().filter((w) => w !== 'paused').length >= fx.capacity;
    await waitFor('the victim to hold the lock and write', holding, 20_000, 5);
    for (let i = 0; i < others; i++) contender(fx, s, i, 'q', { connect: ctx.connect, durationMs: s.durationMs - 2000, workMs: s.workMs });
    // The first pause always; more while there is time for one more round (pause, take-over, wake).
    // Each pause is the victim's own, just before a write in a hold where it has written already
    // (participant.mjs): woken, it writes before it can learn its lease was lost, so every pause
    // tests the fencing. A SIGSTOP sent from here landed at any point: woken, a leader (which
    // writes no more once its signal aborted) often learned of the loss first and wrote nothing
    // stale (a LeaderLatch run in the 30 November flake hunt: its lease was due at risk before its
    // next write).
    while (pauses < s.pauses && (pauses === 0 || Date.now() < fx.startedAt + s.durationMs - 8000)) {
      await victim.stopBeforeWrite(30_000);
      pauses++;
      const stoppedAt = process.hrtime.bigint();
      // Someone else holds the victim's place (the paused session expired) and has written: wake the sleeper.
      await waitFor('another holder', () => (taken(stoppedAt) ? true : undefined), 20_000, 20);
      const takenAt = fx.capacity === 1 ? stoppedAt : process.hrtime.bigint();
      await waitFor('the new holder to write', () => (fx.resource.writes.some((w) => w.who !== 'paused' && w.t > takenAt) ? true : undefined), 20_000, 5);
      victim.resume();
    }
    const counts = { pauses, interleavings: 0, learned: 0 };
    return await finish(fx, nemesis, s, counts, (v) => {
      // A resource that trusts "I hold the lock" takes writes from two holders interleaved.
      // (With N permits many tokens interleave anyway: counted, not required.)
      counts.interleavings = interleavedWriters(fx.resource.writes.map((w) => ({ ...w, accepted: true })));
      counts.learned = learnedAfterPauses(fx.history());
      return [
        [counts.learned >= pauses, `the paused holder's signal aborted after only ${counts.learned} of ${pauses} pauses, before it released`],
        [pauses >= 1, 'no pause happened'],
        [v.pausedOverlaps >= pauses, `${v.pausedOverlaps} overlaps with the paused holder for ${pauses} pauses: a pause that caused no overlap tested nothing`],
        [fx.resource.staleRejected > 0, 'no stale write was rejected: the paused holder never wrote after waking, so fencing was not tested'],
        [fx.capacity > 1 || counts.interleavings > 0, 'the unfenced view saw no interleaved writers'],
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
  const nemesis = `partition of the holder for twice the session timeout${suffix(s)}`;
  await ensureRoot(ctx.connect, ctx.root);
  const [host, port] = ctx.connect.split(',')[0]!.split(':');
  const proxies = await Promise.all(Array.from({ length: s.processes }, () => TcpProxy.start({ host: host!, port: Number(port) })));
  const fx = await fixture(ctx, ctx.connect, s);
  try {
    const participants = proxies.map((p, i) => fx.spawn({ who: `c${i}`, connect: p.connectString, durationMs: s.durationMs, workMs: s.workMs, kind: s.kind }));
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
  const nemesis = `leader kill + restart every ${s.killEveryMs / 1000} s, 3 nodes${suffix(s)}`;
  const ensemble = await startZooKeeper({ servers: 3, own: true });
  try {
    await ensureRoot(ensemble.connectString, ctx.root);
    const fx = await fixture(ctx, ensemble.connectString, s);
    try {
      for (let i = 0; i < s.processes; i++) contender(fx, s, i, 'l', { connect: ensemble.connectString, durationMs: s.durationMs, workMs: s.workMs, sessionTimeoutMs: 6000 });
      let kills = 0;
      const deadline = fx.startedAt + s.durationMs - 5000;
      // Under load a JVM restart takes seconds, and the next kill waits for it, so a slow machine
      // fits fewer kills into the window: the run then goes on, up to half its length again,
      // until it has its minimum, with fresh participants that live to the extended end (the
      // first ones stop at their duration).
      const extended = deadline + s.durationMs / 2;
      const end = () => (kills < s.minKills ? extended : deadline);
      let refreshed = false;
      // A killed server restarts (a JVM start: seconds on a loaded machine) while the schedule's
      // interval runs, not after it; the next kill waits for it, so never two servers are down.
      let restarting: Promise<void> | undefined;
      while (Date.now() < end()) {
        await sleep(s.killEveryMs); // the nemesis's schedule
        await restarting;
        if (Date.now() >= end()) break;
        if (kills < s.minKills && !refreshed && Date.now() >= deadline - s.killEveryMs) {
          for (let i = 0; i < s.processes; i++) fx.spawn({ who: `lx${i}`, kind: s.kind, connect: ensemble.connectString, durationMs: extended - Date.now() + 5000, workMs: s.workMs, sessionTimeoutMs: 6000 });
          refreshed = true;
        }
        // The leader the servers agree on: every running server has joined (so the kill leaves a
        // quorum), and an election still under way is waited out rather than skipped.
        const leader = await ensemble.waitForQuorum(Math.max(1000, end() - Date.now())).catch(() => undefined);
        if (!leader || Date.now() >= end()) continue;
        await leader.kill();
        kills++;
        restarting = leader.start();
        restarting.catch(() => {}); // awaited (and thrown) at the next kill or below
      }
      await restarting;
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

/**
 * The capacity control: semaphore participants that each believe the semaphore has `permits` + 1
 * permits, checked against `permits`. The checker must find more holders at once than allowed;
 * the run's problems are empty only if it did (and the over-capacity holds really happened).
 */
export async function capacityControl(ctx: NemesisContext, s: Omit<Sizing, 'minPerSecond' | 'kind'> & { permits: number }): Promise<NemesisResult> {
  await ensureRoot(ctx.connect, ctx.root);
  const fx = await FaultFixture.start({ root: ctx.root, lockPath: ctx.lockPath, capacity: s.permits, connect: ctx.connect });
  try {
    for (let i = 0; i < s.processes; i++) fx.spawn({ who: `s${i}`, connect: ctx.connect, durationMs: s.durationMs, workMs: s.workMs, kind: 'semaphore', permits: s.permits + 1 });
    await fx.exited();
    const verdict = fx.check();
    const caught = verdict.violations.filter((v) => v.includes(`over the capacity of ${s.permits}`)).length;
    const peak = peakHolders(fx.history());
    const problems = caught > 0 && peak > s.permits ? [] : [`the checker did not catch ${s.permits + 1} permits taken where ${s.permits} are allowed (${verdict.violations.length} violations, at most ${peak} holders at once)`];
    return { row: fx.row(`(control) ${s.permits + 1} permits taken where ${s.permits} are allowed`, verdict), verdict, problems, counts: { caught, peakHolders: peak }, evidence: { events: fx.history(), writes: fx.resource.writes } };
  } finally {
    await fx.close();
  }
}

/**
 * The nemeses between the servers (quorum.test.ts; issue 21): faults on the links between the
 * ZooKeeper servers of an ensemble of the test's own (`startZooKeeper({ serverLinks: true })`,
 * tickTime 1 s, syncLimit 5), not between a client and its server. Every participant is pinned to
 * one server (its connect string names that server alone), so the nemesis knows whom a fault cuts
 * off; every participant's session timeout T is 2 s, two ticks.
 *
 * Why these faults: a follower cut off from the leader keeps answering its clients' pings and
 * reads for up to syncLimit ticks, while the leader, which alone expires sessions and hears of
 * the follower's clients only through the follower, expires them about T after the cut. A
 * client that trusts its server's answers then still believes it holds a lock another client has
 * already taken (issue 21: 5 of 5 runs at T = 2 s).
 *
 * Each nemesis repeats a strike: a fresh slow Node participant (the victim: each of its writes
 * followed by `slowWorkMs`, so its hold outlasts the session's expiry) is started pinned to the
 * server about to be struck; once it holds the lock, the fault (a partition, a bridge, a one-way
 * loss, SIGSTOP of the leader, a restart) lasts at least `minMs` and until another participant
 * has taken the victim's place (at most `maxMs`); then it is healed, every server must serve
 * again and the lock must move before the next strike. Fast Node contenders (and Curator ones,
 * placed where they are contenders, not victims: on a server that is not struck where the
nemesis allows, and holding 60 ms at a time, so that on a struck server they are waiters, never
the holder whose session expires) are pinned across the servers. The history
 * checker judges the whole run as usual: a victim whose lease signal had not aborted when its place
 * was taken is a violation (two holders). Each strike is analysed too (analyseStrike): whether it
 * tested anything (the victim held at the fault and its place was taken while it still held it,
 * or after it learned it had lost it), how long the struck server kept serving, when the victim
 * learned, and the margin to the next holder.
 */
import { ZooKeeper } from '@zk/protocol';
import { startZooKeeper, waitFor, type ServerHandle, type ServerLinks, type ZooKeeperEnsemble } from '../harness/index.js';
import { peakHolders, type HistoryEvent } from './checker.js';
import { FaultFixture, SESSION_TIMEOUT, type Participant } from './fixture.js';
import type { CuratorParticipants } from './java-participant.js';
import { permitsOf, recipeOf, type NemesisResult } from './nemeses.js';

/** The ensemble's tick, ms: the participants' session timeout ({@link SESSION_TIMEOUT}) is two ticks. */
export const TICK_MS = 1000;
/** The ensemble's syncLimit, ticks: how long a cut-off server may go on serving. */
export const SYNC_LIMIT = 5;

/** The recipes of these nemeses (participant kinds). */
export type QuorumKind = 'mutex' | 'rw' | 'latch' | 'semaphore';

/** Who runs, and how big a run is. */
export interface QuorumCast {
  kind: QuorumKind;
  /** A semaphore's permits (default 3). */
  permits?: number;
  /** Curator contenders (InterProcessMutex, LeaderLatch, InterProcessSemaphoreV2); 0 for `rw` (the Curator participant has no read-write lock). */
  javas: number;
  /** The compiled Curator participant; needed when `javas` > 0 or a Curator victim is asked for. */
  curator?: CuratorParticipants | undefined;
  /** Strikes to make. */
  strikes: number;
  /** Strikes that must have tested the lock (see {@link StrikeResult.tested}). */
  minStrikes: number;
  /** Minimum acquisitions per second of the run. */
  minPerSecond: number;
  /** Work after each write of the fast contenders, ms (default 20). */
  workMs?: number;
  /**
   * The ensemble's timing and the Node participants' proof (issue 35): default tick {@link TICK_MS},
   * syncLimit {@link SYNC_LIMIT}, leaseProof 'auto' with the tick unknown (so writes). A sync
   * proof needs T to be many ticks: {@link SYNC_PROFILE}.
   */
  proof?: ProofProfile;
}

/** An ensemble's tick and syncLimit, and the leaseProof mode (with serverTickTime set to the tick when `tellTick`). */
export interface ProofProfile {
  mode: 'auto' | 'write' | 'sync' | 'off';
  tickMs: number;
  syncLimit: number;
  tellTick: boolean;
}

/**
 * Sync proofs under the nemeses: T = 2 s is 8 ticks of 250 ms, and syncLimit 12 keeps a cut-off
 * server serving for 3 s, past T, as the default profile's 5 ticks of 1 s do (the case of issue 21).
 */
export const SYNC_PROFILE: ProofProfile = { mode: 'sync', tickMs: 250, syncLimit: 12, tellTick: true };
const DEFAULT_PROFILE: ProofProfile = { mode: 'auto', tickMs: TICK_MS, syncLimit: SYNC_LIMIT, tellTick: false };

/** Where a run works: its participants' chroot and lock. */
export interface QuorumContext {
  root: string;
  lockPath?: string;
}

/** The roles in the ensemble now. */
export interface Roles {
  leader: number;
  /** The other servers' ids, in id order. */
  followers: number[];
}

/** One strike, as the nemesis planned it. */
export interface StrikePlan {
  /** What the fault is, e.g. `server 2 isolated`. */
  what: string;
  /** The server the victim is pinned to: the one the fault cuts off, pauses or restarts. */
  target: number;
  fault: () => void | Promise<void>;
  heal: () => void | Promise<void>;
  /** The fault lasts at least this long, ms... */
  minMs: number;
  /** ... and until another participant has taken the victim's place, but at most this long. */
  maxMs: number;
  /** Each of the victim's three writes is followed by this long, ms: its hold must outlast the session. */
  slowWorkMs: number;
  /** Watch (srvr) how long the target keeps serving after the fault (not for a paused or stopped server). */
  watchServing: boolean;
  /** The victim's language (default `node`; `java` only for the negative control). */
  victim?: 'node' | 'java';
  /** What the target must be when the fault comes (checked just before it; else the strike is not made). */
  targetIs: 'leader' | 'follower';
}

/** What a strike did, stamped by the nemesis. */
interface StrikeRecord {
  what: string;
  target: number;
  victim: string;
  /** Just before the fault, CLOCK_MONOTONIC ns. */
  faultAt: bigint;
  /** Just after the heal. */
  healedAt: bigint;
  /** Fault to the target no longer answering srvr as leader or follower, ms (undefined: it kept serving, or not watched). */
  servedMs: number | undefined;
  /** How long the fault's and the heal's calls took, ms (a server's stop and start). */
  faultCallMs: number;
  healCallMs: number;
}

/** One strike, analysed from the history. */
export interface StrikeResult {
  what: string;
  victim: string;
  /** The victim held the lock (by its log) when the fault came. */
  heldAtFault: boolean;
  /** Fault to the victim's `lost`, ms (undefined: none during the hold it had at the fault). */
  detectionMs?: number | undefined;
  /** Fault to the first acquisition that took the victim's place, ms. */
  takenMs?: number | undefined;
  /** `taken` minus `lost`, ms: how long before its place was taken the victim knew (negative: after). */
  marginMs?: number | undefined;
  /** Its place was taken before the fault was healed. */
  takenDuringFault: boolean;
  /**
   * The strike tested the lock: the victim held at the fault and its place was taken while it
   * still held it by its log, or after it had learned (`lost`) that it lost it.
   */
  tested: boolean;
  /** Its place was taken while it still believed it held the lock (no `lost` yet): two holders. */
  overlapped: boolean;
  /** How long the fault lasted, ms. */
  faultMs: number;
  /** Fault to the struck server no longer serving, ms (undefined: it served until the heal, or not watched). */
  servedMs?: number | undefined;
  /** How long the fault's and the heal's calls took, ms, when that was long (over 100 ms: a server's stop and start). */
  faultCallMs?: number | undefined;
  healCallMs?: number | undefined;
}

/** What a quorum nemesis run found. */
export interface QuorumResult extends NemesisResult {
  strikes: StrikeResult[];
  /** Strikes not made, and why (a victim that never held, a target whose role had changed). */
  notMade: string[];
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const msOf = (ns: bigint) => Math.round(Number(ns) / 1e6);
const byT = (a: HistoryEvent, b: HistoryEvent) => (a.t < b.t ? -1 : a.t > b.t ? 1 : 0);
/** Participant names: `n<i>`/`j<i>` fast Node/Curator contenders, `v<i>`/`jv<i>` Node/Curator victims. */
const isJava = (who: string) => who.startsWith('j');
/** Each participant is pinned to one server: a run of this long (ms) is longer than any CI run; the run ends by killing its contenders. */
const CONTENDER_MS = 600_000;
/** A victim's run, ms: long enough to start and take the lock once, short enough that it does not come back for a second slow hold. */
const VICTIM_MS = 3000;

/**
 * When the victim's place was taken after `from`, from the history (see {@link analyseStrike}):
 * with one holder at a time, the first acquisition by another participant that conflicts with
 * the victim's mode; with N permits, the first that makes N other holders at once, counting, as
 * the checker does, only holds whose signal had not aborted (a holder that learned it lost its
 * permit keeps "holding" by its log until its hold ends).
 */
function takenAfter(sorted: readonly HistoryEvent[], victim: string, from: bigint, victimMode: 'read' | 'write', capacity: number): bigint | undefined {
  const open = new Map<string, { mode: 'read' | 'write'; lost: boolean }>();
  for (const e of sorted) {
    if (e.who === victim) continue;
    if (e.kind === 'released' || e.kind === 'killed') open.delete(e.who);
    const hold = open.get(e.who);
    if (e.kind === 'lost' && hold) hold.lost = true;
    if (e.kind !== 'acquired') continue;
    const mode = capacity > 1 ? 'write' : (e.mode ?? 'write');
    open.set(e.who, { mode, lost: false });
    if (e.t <= from) continue;
    if (capacity === 1 ? mode === 'write' || victimMode === 'write' : [...open.values()].filter((h) => !h.lost).length >= capacity) return e.t;
  }
  return undefined;
}

/**
 * A strike from the history: the victim's hold at the fault (its last acquisition before it, to
 * its release), its `lost` during that hold, and the first acquisition that took its place.
 */
function analyseStrike(events: readonly HistoryEvent[], s: StrikeRecord, capacity: number): StrikeResult {
  const sorted = [...events].sort(byT);
  const mine = sorted.filter((e) => e.who === s.victim);
  const acquired = mine.filter((e) => e.kind === 'acquired' && e.t <= s.faultAt).at(-1);
  const end = acquired && mine.find((e) => (e.kind === 'released' || e.kind === 'killed') && e.t > acquired.t)?.t;
  const heldAtFault = acquired !== undefined && (end === undefined || end > s.faultAt);
  const lost = acquired && mine.find((e) => e.kind === 'lost' && e.t > acquired.t && (end === undefined || e.t <= end))?.t;
  const mode = acquired?.kind === 'acquired' ? (acquired.mode ?? 'write') : 'write';
  const taken = heldAtFault ? takenAfter(sorted, s.victim, s.faultAt, mode, capacity) : undefined;
  const heldWhenTaken = taken !== undefined && (end === undefined || taken < end);
  const learned = lost !== undefined;
  return {
    what: s.what,
    victim: s.victim,
    heldAtFault,
    detectionMs: lost !== undefined ? msOf(lost - s.faultAt) : undefined,
    takenMs: taken !== undefined ? msOf(taken - s.faultAt) : undefined,
    marginMs: taken !== undefined && lost !== undefined ? msOf(taken - lost) : undefined,
    takenDuringFault: taken !== undefined && taken < s.healedAt,
    tested: taken !== undefined && (heldWhenTaken || learned),
    overlapped: heldWhenTaken && (lost === undefined || lost > taken),
    faultMs: msOf(s.healedAt - s.faultAt),
    servedMs: s.servedMs,
    ...(s.faultCallMs > 100 ? { faultCallMs: s.faultCallMs } : {}),
    ...(s.healCallMs > 100 ? { healCallMs: s.healCallMs } : {}),
  };
}

/** Where a run's participants are pinned, by server id. */
export interface Layout {
  /** One fast Node contender per entry, pinned to that server. */
  nodes: number[];
  /** One Curator contender per entry (up to the cast's `javas`), pinned to that server. */
  javas: number[];
  /** The servers the semaphore's resource asks whether a lease lives (keep it off struck servers). */
  resource: number[];
}

/** An ensemble with server links, a fault fixture whose participants are each pinned to one server, and the strikes made so far. */
export class QuorumRun {
  readonly records: StrikeRecord[] = [];
  /** Strikes not made, and why. */
  readonly skipped: string[] = [];
  /** Contenders replaced because they were stuck on a closed client (see #replaceStuck). */
  replaced = 0;
  /** Server id of each participant. */
  readonly pinned = new Map<string, number>();
  #next = { n: 0, j: 0, v: 0, jv: 0 };
  #closed = false;

  readonly #stuckTimer: NodeJS.Timeout;

  private constructor(
    readonly ensemble: ZooKeeperEnsemble,
    readonly links: ServerLinks,
    readonly fx: FaultFixture,
    readonly cast: QuorumCast,
  ) {
    this.#stuckTimer = setInterval(() => this.#replaceStuck(), 250); // the check's period
  }

  /**
   * Starts an ensemble of `servers` with server links, the chroot, the fixture, and the
   * contenders where `layout` puts them for the roles the ensemble started with.
   */
  static async start(ctx: QuorumContext, cast: QuorumCast, servers: 3 | 5, layout: (r: Roles) => Layout): Promise<QuorumRun> {
    if (cast.javas > 0 && !cast.curator) throw new Error('Curator participants need the compiled participant');
    if (cast.kind === 'rw' && cast.javas > 0) throw new Error('the Curator participant has no ReadWriteLock');
    const profile = cast.proof ?? DEFAULT_PROFILE;
    const ensemble = await startZooKeeper({ servers, serverLinks: true, tickTime: profile.tickMs, config: { syncLimit: profile.syncLimit } });
    try {
      if (!ensemble.links) throw new Error('startZooKeeper({ serverLinks: true }) gave an ensemble without links');
      const zk = await ZooKeeper.connect(ensemble.connectString, { sessionTimeout: 10_000 });
      await zk.create(ctx.root).catch(() => undefined);
      await zk.close();
      const roles = await rolesOf(ensemble);
      const where = layout(roles);
      const connect = where.resource.map((id) => serverOf(ensemble, id).connectString).join(',');
      const fx = await FaultFixture.start({ root: ctx.root, lockPath: ctx.lockPath, capacity: permitsOf(cast), connect });
      const run = new QuorumRun(ensemble, ensemble.links, fx, cast);
      for (const id of where.nodes) run.spawn('node', id, cast.workMs ?? 20, CONTENDER_MS, false);
      for (const id of where.javas.slice(0, cast.javas)) run.spawn('java', id, cast.workMs ?? 20, CONTENDER_MS, false);
      return run;
    } catch (err) {
      await ensemble.close();
      throw err;
    }
  }

  /** The server with id `id`. */
  server(id: number): ServerHandle {
    return serverOf(this.ensemble, id);
  }

  /** The leader and the followers now (waits for a quorum). */
  roles(): Promise<Roles> {
    return rolesOf(this.ensemble);
  }

  /** Starts a participant pinned to server `id`: a contender (`n<i>`, `j<i>`) or a victim (`v<i>`, `jv<i>`). */
  spawn(lang: 'node' | 'java', id: number, workMs: number, durationMs: number, victim: boolean): Participant {
    const prefix = lang === 'java' ? (victim ? 'jv' : 'j') : victim ? 'v' : 'n';
    const who = `${prefix}${this.#next[prefix]++}`;
    this.pinned.set(who, id);
    const profile = this.cast.proof ?? DEFAULT_PROFILE;
    const o = { who, connect: this.server(id).connectString, durationMs, workMs, kind: this.cast.kind, leaseProof: profile.mode, ...(profile.tellTick ? { serverTickTime: profile.tickMs } : {}) };
    return lang === 'java' ? this.cast.curator!.spawn(this.fx, o) : this.fx.spawn(o);
  }

  /** The first acquisition by `who` after `t`, if it happened. */
  #acquiredAfter(who: string, t: bigint): bigint | undefined {
    return this.fx.events.find((e) => e.who === who && e.kind === 'acquired' && e.t > t)?.t;
  }

  /**
   * One strike (see the file's comment). Returns false when nothing was struck: the victim never
   * took the lock within 20 s, or the target's role had changed.
   */
  async strike(plan: StrikePlan): Promise<boolean> {
    const since = process.hrtime.bigint();
    const victim = this.spawn(plan.victim ?? 'node', plan.target, plan.slowWorkMs, VICTIM_MS, true);
    // The fault comes while the victim holds, with all of its slow hold ahead of it.
    const held = await waitFor(`victim ${victim.who} on server ${plan.target} to hold the lock`, () => (this.#acquiredAfter(victim.who, since) !== undefined ? true : victim.running ? undefined : false), 20_000, 5).catch(() => false);
    if (!held) {
      this.skipped.push(`${plan.what}: victim ${victim.who} never held the lock`);
      return false;
    }
    // Issue 21's holder is at work: the fault comes once the victim has written under the lock,
    // when the requests of its acquisition are answered (a Semaphore lets its internal lock go
    // in the background; a delete in flight at the cut holds back the answers to the session's
    // pings, and the client finds out for another reason). A reader does not write.
    const acquiredAt = this.#acquiredAfter(victim.who, since)!;
    const reading = this.fx.events.some((e) => e.who === victim.who && e.kind === 'acquired' && e.t === acquiredAt && e.mode === 'read');
    if (!reading) await waitFor(`victim ${victim.who} to write`, () => (this.fx.resource.writes.some((w) => w.who === victim.who && w.t > acquiredAt) ? true : undefined), 5000, 5).catch(() => undefined);
    // The roles were read before the victim started: the target must still be what the nemesis strikes.
    const mode = await this.server(plan.target).mode();
    if (mode !== plan.targetIs) {
      this.skipped.push(`${plan.what}: server ${plan.target} was ${mode}, not ${plan.targetIs}, when the fault was due`);
      return false;
    }
    const faultAt = process.hrtime.bigint();
    await plan.fault();
    const faultCallMs = msOf(process.hrtime.bigint() - faultAt);
    const watch = plan.watchServing ? this.#watchServing(plan.target, faultAt) : undefined;
    const started = Date.now();
    await waitFor(
      `the fault's end (${plan.what})`,
      () => {
        const elapsed = Date.now() - started;
        if (elapsed >= plan.maxMs) return true;
        return elapsed >= plan.minMs && this.#taken(victim.who, faultAt) ? true : undefined;
      },
      plan.maxMs + 5000,
      20,
    );
    const healStart = process.hrtime.bigint();
    await plan.heal();
    const healedAt = process.hrtime.bigint();
    const healCallMs = msOf(healedAt - healStart);
    const servedMs = await watch?.stop();
    // Every server serves again, and the lock moves, before the next strike.
    await this.ensemble.waitForQuorum(60_000, { all: true });
    await waitFor('the lock to move after the heal', () => (this.fx.events.some((e) => e.kind === 'acquired' && e.t > healedAt) ? true : undefined), 20_000, 20).catch(() => undefined);
    this.records.push({ what: plan.what, target: plan.target, victim: victim.who, faultAt, healedAt, servedMs, faultCallMs, healCallMs });
    return true;
  }

  /**
   * Replaces Node contenders stuck on a closed client: participant.mjs starts a new session when
   * its session is lost or expired, but when that new session cannot connect (its only server
   * is down or cut off) it keeps the closed client and fails every acquire from then on ("session
   * closed while acquiring", with a latch's "leadership: " before it, 20 a second). Pinned to one
   * server, contenders meet that after most strikes. A stuck one holds nothing, so killing it
   * frees no place; a fresh one on the same server takes its part (participant.mjs retries its
   * first connection until it succeeds). Checked every 250 ms for the whole run, so the lock can
   * move during a fault.
   */
  #replaceStuck(): void {
    for (const p of [...this.fx.participants]) {
      if (!p.running || !p.who.startsWith('n')) continue;
      const last = this.fx.events.findLast((e) => e.who === p.who);
      if (last?.kind !== 'error' || !last.message.includes('session closed while acquiring')) continue;
      p.kill();
      this.replaced++;
      this.spawn('node', this.pinned.get(p.who)!, this.cast.workMs ?? 20, CONTENDER_MS, false);
    }
  }

  /** Whether another participant has taken the victim's place since `faultAt`, by the log so far. */
  #taken(victim: string, faultAt: bigint): boolean {
    const sorted = [...this.fx.events].sort(byT);
    const acquired = sorted.filter((e) => e.who === victim && e.kind === 'acquired' && e.t <= faultAt).at(-1);
    const mode = acquired?.kind === 'acquired' ? (acquired.mode ?? 'write') : 'write';
    return takenAfter(sorted, victim, faultAt, mode, this.fx.capacity) !== undefined;
  }

  /**
   * Asks server `id` for srvr every 100 ms from the fault: `stop()` resolves with the time from
   * the fault to its first answer that is not `leader` or `follower` (it gave up: it no longer
   * serves its clients), or undefined if it served until stopped.
   */
  #watchServing(id: number, from: bigint): { stop: () => Promise<number | undefined> } {
    let stopped = false;
    const server = this.server(id);
    const done = (async () => {
      while (!stopped) {
        const mode = await server.mode();
        const t = process.hrtime.bigint();
        if (mode !== 'leader' && mode !== 'follower') return msOf(t - from);
        await sleep(100); // the probe's period
      }
      return undefined;
    })();
    return {
      stop: async () => {
        stopped = true;
        return done;
      },
    };
  }

  /**
   * Ends the run: kills the participants still running (the contenders run until told: the run
   * ends when its strikes are done), checks the history, analyses the strikes and adds the
   * nemesis's requirements; always stops the ensemble.
   */
  async finish(nemesis: string, counts: Record<string, number>, requirements: (strikes: StrikeResult[]) => [ok: boolean, what: string][]): Promise<QuorumResult> {
    clearInterval(this.#stuckTimer);
    try {
      // The contenders run until told. Killed together, nobody acquires between these kills (a
      // killed holder's place frees only once its session expires).
      for (const p of this.fx.participants) p.kill();
      await this.fx.exited();
      const verdict = this.fx.check();
      const problems = this.fx.problems(verdict, { minPerSecond: this.cast.minPerSecond });
      const history = this.fx.history();
      const strikes = this.records.map((r) => analyseStrike(history, r, this.fx.capacity));
      const acquisitions = { node: 0, java: 0 };
      for (const e of history) if (e.kind === 'acquired') acquisitions[isJava(e.who) ? 'java' : 'node']++;
      const permits = permitsOf(this.cast);
      const reads = history.filter((e) => e.kind === 'acquired' && e.mode === 'read').length;
      Object.assign(counts, {
        strikes: strikes.length,
        tested: strikes.filter((s) => s.tested).length,
        overlaps: strikes.filter((s) => s.overlapped).length,
        // The checker's words: a signal that never aborted, or aborted only after the next holder came.
        twoHolders: verdict.violations.filter((v) => v.includes('never aborted')).length,
        lateSignals: verdict.violations.filter((v) => v.includes('aborted only')).length,
        nodeAcquisitions: acquisitions.node,
        javaAcquisitions: acquisitions.java,
        peakHolders: peakHolders(history),
      });
      if (this.cast.kind === 'rw') counts.reads = reads;
      const check: [boolean, string][] = [
        [this.cast.javas === 0 || acquisitions.java > 0, 'the Curator participants never acquired the lock'],
        [acquisitions.node > 0, 'the Node participants never acquired the lock'],
        [this.cast.kind !== 'semaphore' || counts.peakHolders! >= permits, `at most ${counts.peakHolders} holders at once: the ${permits} permits were never all held`],
        [this.cast.kind !== 'rw' || reads > 0, 'no read holds: the ReadWriteLock was not exercised'],
        ...requirements(strikes),
      ];
      for (const [ok, what] of check) if (!ok) problems.push(what);
      return { row: this.fx.row(nemesis, verdict), verdict, problems, counts, evidence: { events: history, writes: this.fx.resource.writes }, strikes, notMade: [...this.skipped] };
    } finally {
      await this.close();
    }
  }

  /** Kills what still runs, heals and resumes everything, stops the ensemble (once). */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    clearInterval(this.#stuckTimer);
    try {
      await this.fx.close();
    } finally {
      this.links.heal();
      for (const s of this.ensemble.servers) await s.resume().catch(() => undefined);
      await this.ensemble.close();
    }
  }
}

function serverOf(ensemble: ZooKeeperEnsemble, id: number): ServerHandle {
  const s = ensemble.servers.find((x) => x.id === id);
  if (!s) throw new RangeError(`no server ${id}`);
  return s;
}

/**
 * The roles once every server serves and exactly one says it leads: just after a heal a
 * resumed or reconnected old leader may still say `leader` beside its successor for a moment.
 */
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

/** The usual requirements of a strike run: enough strikes that tested the lock, during the fault when it is a partition. */
function strikeRequirements(cast: QuorumCast, duringFault: boolean, skipped: readonly string[]): (strikes: StrikeResult[]) => [boolean, string][] {
  return (strikes) => {
    const tested = strikes.filter((s) => s.tested && (!duringFault || s.takenDuringFault));
    const untested = strikes.filter((s) => !tested.includes(s)).map((s) => `${s.what} (victim ${s.victim}: ${!s.heldAtFault ? 'not holding at the fault' : s.takenMs === undefined ? 'its place was never taken' : !s.takenDuringFault && duringFault ? `taken only ${s.takenMs} ms after the fault, after the heal` : 'it released before its place was taken'})`);
    return [[tested.length >= cast.minStrikes, `only ${tested.length} of ${strikes.length} strikes tested the lock (at least ${cast.minStrikes} required): ${[...untested, ...skipped.map((x) => `not made: ${x}`)].join('; ')}`]];
  };
}

/** `(Mutex; 2 Node + 1 Curator)` after a nemesis's name. */
function castName(cast: QuorumCast, nodes: number): string {
  return `${recipeOf(cast)}; ${nodes} Node${cast.javas > 0 ? ` + ${cast.javas} Curator` : ''}`;
}

/** Strikes until `cast.strikes` were made (a strike whose victim never held is retried, up to twice as many attempts). */
async function strikeRepeatedly(run: QuorumRun, plan: (i: number) => Promise<StrikePlan>): Promise<void> {
  for (let attempts = 0, made = 0; made < run.cast.strikes && attempts < 2 * run.cast.strikes; attempts++) {
    if (await run.strike(await plan(made))) made++;
  }
}

/** The common shape of a strike run: start, strike, finish; the ensemble is stopped whatever happens. */
async function strikeRun(ctx: QuorumContext, cast: QuorumCast, o: { name: string; servers: 3 | 5; layout: (r: Roles) => Layout; plan: (run: QuorumRun, i: number) => Promise<StrikePlan>; duringFault: boolean; counts?: (run: QuorumRun) => Record<string, number> }): Promise<QuorumResult> {
  const run = await QuorumRun.start(ctx, cast, o.servers, o.layout);
  try {
    await strikeRepeatedly(run, (i) => o.plan(run, i));
  } catch (err) {
    await run.close();
    throw err;
  }
  const nodes = [...run.pinned.keys()].filter((w) => /^n\d/.test(w)).length - run.replaced;
  const servedMs = run.records.map((r) => r.servedMs).filter((x): x is number => x !== undefined);
  const counts: Record<string, number> = { ...(servedMs.length ? { maxServedMs: Math.max(...servedMs) } : {}), ...o.counts?.(run) };
  counts.notMade = run.skipped.length;
  counts.replacedStuck = run.replaced;
  return run.finish(`${o.name} (${castName(cast, nodes)})`, counts, strikeRequirements(cast, o.duringFault, run.skipped));
}

/** A partition's timing: at least 3T (past syncLimit: the cut server gives up), until the victim's place is taken, at most 15 s. */
const PARTITION = { minMs: 3 * SESSION_TIMEOUT, maxMs: 15_000 };
/** Victims struck on a follower: their place is taken about T after the fault; a hold of 3 x 1.5 s outlasts it. */
const FOLLOWER_VICTIM_WORK_MS = 1500;
/**
 * Victims struck on the leader: the others need syncLimit ticks to leave it, an election, then T
 * before its session expires (about 8 s); a hold of 3 x 3.5 s outlasts that.
 */
const LEADER_VICTIM_WORK_MS = 3500;

/**
 * 1. The holder's follower isolated from both other servers (issue 21's case): the holder is
 * connected only to it; contenders on every server, Curator ones on the leader. The two followers
 * take turns. Before the quorum proof (d69f599): two holders at both strikes, the follower served
 * its clients 5.0 s after the cut (syncLimit), the victim's place was taken after 2.2-2.9 s.
 */
export function isolateFollower(ctx: QuorumContext, cast: QuorumCast): Promise<QuorumResult> {
  return strikeRun(ctx, cast, {
    name: `the holder's follower isolated from the other servers for ${PARTITION.minMs / 1000}+ s, 3 servers`,
    servers: 3,
    layout: (r) => ({ nodes: [r.leader, ...r.followers], javas: [r.leader], resource: [r.leader] }),
    duringFault: true,
    plan: async (run, i) => {
      const r = await run.roles();
      const target = r.followers[i % r.followers.length]!;
      return { what: `follower ${target} isolated`, target, fault: () => run.links.isolate(target, 'hold'), heal: () => run.links.heal(), ...PARTITION, slowWorkMs: FOLLOWER_VICTIM_WORK_MS, watchServing: true, targetIs: 'follower' };
    },
  });
}

/**
 * 2. The leader isolated from both followers, participants on both sides: the victim on the
 * leader, contenders on every server, Curator ones on a follower. Each strike isolates whoever
 * leads at that moment (the old leader rejoins as a follower after the heal). Not a case of issue
 * 21 at these timings: the followers leave the leader after syncLimit ticks and only then elect
 * another, whose tracker gives every session a fresh T, while the old leader gives up at about the
 * same time (within a tick: measured 5.0-6.0 s) and its clients' leases abort on the disconnect.
 * Before the quorum proof the victim learned 1.8-3.0 s before its place was taken.
 */
export function isolateLeader(ctx: QuorumContext, cast: QuorumCast): Promise<QuorumResult> {
  return strikeRun(ctx, cast, {
    name: `the leader isolated from the followers for ${PARTITION.minMs / 1000}+ s, 3 servers`,
    servers: 3,
    layout: (r) => ({ nodes: [r.leader, ...r.followers], javas: [r.followers[0]!], resource: [...r.followers] }),
    duringFault: true,
    plan: async (run) => {
      const r = await run.roles();
      return { what: `leader ${r.leader} isolated`, target: r.leader, fault: () => run.links.isolate(r.leader, 'hold'), heal: () => run.links.heal(), ...PARTITION, slowWorkMs: LEADER_VICTIM_WORK_MS, watchServing: true, targetIs: 'leader' };
    },
  });
}

/**
 * 3. Five servers split 2 | 3: the minority is two followers, one of them the victim's; the
 * leader keeps its majority. Contenders on the leader, two majority followers and the other
 * minority follower. Five servers (and 4-5 participants) ran reliably on this 2-core machine.
 * Before the quorum proof: two holders at both strikes.
 */
export function splitFive(ctx: QuorumContext, cast: QuorumCast): Promise<QuorumResult> {
  return strikeRun(ctx, cast, {
    name: `two followers split from the other three servers for ${PARTITION.minMs / 1000}+ s, 5 servers`,
    servers: 5,
    layout: (r) => ({ nodes: [r.leader, r.followers[0]!, r.followers[1]!, r.followers[3]!], javas: [r.leader], resource: [r.leader] }),
    duringFault: true,
    plan: async (run, i) => {
      const r = await run.roles();
      // The victim's server and another follower make the minority; the strikes take turns between the last two followers.
      const minority = i % 2 === 0 ? [r.followers[2]!, r.followers[3]!] : [r.followers[3]!, r.followers[2]!];
      const majority = [r.leader, ...r.followers.filter((id) => !minority.includes(id))];
      return { what: `followers ${minority.join(', ')} split from ${majority.join(', ')}`, target: minority[0]!, fault: () => run.links.partition([minority, majority], 'hold'), heal: () => run.links.heal(), ...PARTITION, slowWorkMs: FOLLOWER_VICTIM_WORK_MS, watchServing: true, targetIs: 'follower' };
    },
  });
}

/**
 * 4. A bridge: the victim's follower cut from the leader, the other follower seeing both (3
 * servers: the only link cut is leader - victim's follower). Contenders on every server (two on
 * the leader), Curator ones on the leader. Before the quorum proof: two holders (over the
 * semaphore's capacity) at both strikes.
 */
export function bridge(ctx: QuorumContext, cast: QuorumCast): Promise<QuorumResult> {
  return strikeRun(ctx, cast, {
    name: `a bridge: the holder's follower cut from the leader, the other follower seeing both, ${PARTITION.minMs / 1000}+ s, 3 servers`,
    servers: 3,
    layout: (r) => ({ nodes: [r.leader, r.leader, ...r.followers], javas: [r.leader], resource: [r.leader] }),
    duringFault: true,
    plan: async (run, i) => {
      const r = await run.roles();
      const target = r.followers[i % 2]!;
      const other = r.followers[(i + 1) % 2]!;
      return { what: `follower ${target} cut from leader ${r.leader}, bridged by ${other}`, target, fault: () => run.links.bridge([r.leader], [target], other, 'hold'), heal: () => run.links.heal(), ...PARTITION, slowWorkMs: FOLLOWER_VICTIM_WORK_MS, watchServing: true, targetIs: 'follower' };
    },
  });
}

/**
 * 5. One server link losing its bytes one way (silently dropped): leader -> the victim's follower,
 * then the follower -> leader, in turn. Contenders on every server, Curator ones on the leader.
 * Before the quorum proof, leader -> follower lost: as an isolation (the follower hears nothing,
 * served 5.0 s; two holders); follower -> leader lost: the follower still hears the leader, so
 * it applies the leader's closeSession and drops the victim's connection, but only as the next
 * holder acquires (the victim's signal aborted 330-340 ms after its place was taken: a late
 * signal, twice).
 */
export function oneWay(ctx: QuorumContext, cast: QuorumCast): Promise<QuorumResult> {
  return strikeRun(ctx, cast, {
    name: `one-way loss between the leader and the holder's follower (each direction in turn) for ${PARTITION.minMs / 1000}+ s, 3 servers`,
    servers: 3,
    layout: (r) => ({ nodes: [r.leader, ...r.followers], javas: [r.leader], resource: [r.leader] }),
    duringFault: true,
    plan: async (run, i) => {
      const r = await run.roles();
      const target = r.followers[0]!;
      const [from, to] = i % 2 === 0 ? [r.leader, target] : [target, r.leader];
      return { what: `server ${from} -> server ${to} dropped`, target, fault: () => run.links.oneWay(from, to, 'drop'), heal: () => run.links.heal(), ...PARTITION, slowWorkMs: FOLLOWER_VICTIM_WORK_MS, watchServing: true, targetIs: 'follower' };
    },
  });
}

/**
 * 6. The leader paused (SIGSTOP) for longer than syncLimit ticks (at least 7 s: the followers
 * leave it and elect another), then resumed. The victim on the leader, contenders on every
 * server, Curator ones on a follower. Not a case of issue 21: nobody expires a session while the
 * leader is frozen, the new leader gives every session a fresh T, and the victim's client hears
 * nothing from its frozen server, so its lease aborts on its own (1.6 s before the quorum proof).
 */
export function pauseLeader(ctx: QuorumContext, cast: QuorumCast): Promise<QuorumResult> {
  const { syncLimit, tickMs } = cast.proof ?? DEFAULT_PROFILE;
  const pause = { minMs: (syncLimit + 2) * tickMs, maxMs: 15_000 };
  return strikeRun(ctx, cast, {
    name: `the leader paused (SIGSTOP) for ${pause.minMs / 1000}+ s, then resumed, 3 servers`,
    servers: 3,
    layout: (r) => ({ nodes: [r.leader, ...r.followers], javas: [r.followers[0]!], resource: [...r.followers] }),
    duringFault: true,
    plan: async (run) => {
      const r = await run.roles();
      const leader = run.server(r.leader);
      return { what: `leader ${r.leader} paused`, target: r.leader, fault: () => leader.pause(), heal: () => leader.resume(), ...pause, slowWorkMs: LEADER_VICTIM_WORK_MS, watchServing: false, targetIs: 'leader' };
    },
  });
}

/**
 * 7. Rolling restarts: every server in turn stopped (SIGTERM) and started again, followers first,
 * the leader last, the victim on the server restarted. A plain restart (about 1.2 s here) is
 * shorter than T: the victim's session lives on, its place is never taken and nothing is tested
 * but the lease's caution. So each server stays down until the victim's place was taken (its
 * session expired: about T after a follower's stop; an election and T after the leader's), at
 * most 10 s. Contenders on every server, Curator ones on the server restarted last. Not a case of
 * issue 21: a stopped server drops its clients at once (their leases abort 0.7 s after the stop).
 */
export function rollingRestart(ctx: QuorumContext, cast: QuorumCast): Promise<QuorumResult> {
  let order: number[] = [];
  return strikeRun(ctx, { ...cast, strikes: Math.max(cast.strikes, 3) }, {
    name: "rolling restart of every server, each down until its holder's session expired, 3 servers",
    servers: 3,
    layout: (r) => {
      order = [...r.followers, r.leader];
      return { nodes: [r.leader, ...r.followers], javas: [r.leader], resource: [r.leader, ...r.followers] };
    },
    duringFault: true,
    plan: async (run, i) => {
      const target = order[i % order.length]!;
      const server = run.server(target);
      const targetIs = (await run.roles()).leader === target ? 'leader' : 'follower';
      return { what: `server ${target} (${targetIs}) restarted`, target, fault: () => server.stop(), heal: () => server.start(), minMs: 0, maxMs: 10_000, slowWorkMs: LEADER_VICTIM_WORK_MS, watchServing: false, targetIs };
    },
  });
}

/**
 * The negative controls: issue 21's case with a victim that trusts its server's answers on the
 * isolated follower (slow), Node contenders on every server: a Curator InterProcessMutex
 * (`victim` 'java'), or ours with `leaseProof: 'off'` (`victim` 'node', every Node participant
 * of the run in that mode). Neither learns anything while its follower answers (Curator's
 * SUSPENDED, our lease's signal, come only when the follower gives up, syncLimit ticks after the
 * cut), so the checker must find it holding with the next holder. `counts.victimOverlaps` counts
 * the strikes where it did; the caller asserts the checker's violations name the victim.
 */
export async function victimControl(ctx: QuorumContext, cast: QuorumCast, victim: 'java' | 'node'): Promise<QuorumResult & { caught: number }> {
  if (victim === 'java' && !cast.curator) throw new Error('the negative control needs the compiled Curator participant');
  const c: QuorumCast = { ...cast, javas: 0, ...(victim === 'node' ? { proof: { ...DEFAULT_PROFILE, mode: 'off' as const } } : {}) };
  const run = await QuorumRun.start(ctx, c, 3, (r) => ({ nodes: [r.leader, r.leader, ...r.followers], javas: [], resource: [r.leader] }));
  try {
    await strikeRepeatedly(run, async (i) => {
      const r = await run.roles();
      const target = r.followers[i % r.followers.length]!;
      return { what: `follower ${target} isolated`, target, fault: () => run.links.isolate(target, 'hold'), heal: () => run.links.heal(), ...PARTITION, slowWorkMs: FOLLOWER_VICTIM_WORK_MS, watchServing: true, victim, targetIs: 'follower' };
    });
  } catch (err) {
    await run.close();
    throw err;
  }
  const counts: Record<string, number> = {};
  const who = victim === 'java' ? 'a Curator holder' : "a holder of ours with leaseProof 'off'";
  const result = await run.finish(`(control) ${who} on the isolated follower, 3 servers (${castName({ ...cast, javas: victim === 'java' ? 1 : 0 }, 4)})`, counts, () => []);
  const caught = result.verdict.violations.filter((v) => (victim === 'java' ? /\bjv\d+\b/ : /\bv\d+\b/).test(v)).length;
  counts.victimOverlaps = result.strikes.filter((s) => s.overlapped).length;
  counts.caught = caught;
  return { ...result, caught };
}

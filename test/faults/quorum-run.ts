/**
 * A quorum nemesis run: the ensemble with server links, the fault fixture whose participants are
 * each pinned to one server, the strikes (each as quorum.ts's header describes), the replacement
 * of stuck contenders, and the verdict with the strikes analysed; and the common shape of a run.
 */
import { ZooKeeper } from '@zk/protocol';
import { startZooKeeper, waitFor, type ServerHandle, type ServerLinks, type ZooKeeperEnsemble } from '../harness/index.js';
import { peakHolders } from './checker.js';
import { FaultFixture, type Participant } from './fixture.js';
import { permitsOf, recipeOf } from './nemeses.js';
import { DEFAULT_PROFILE, type QuorumCast, type QuorumContext, type QuorumResult } from './quorum-cast.js';
import { analyseStrike, byT, msOf, takenAfter, type StrikeRecord, type StrikeResult } from './quorum-strikes.js';

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

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** Participant names: `n<i>`/`j<i>` fast Node/Curator contenders, `v<i>`/`jv<i>` Node/Curator victims. */
const isJava = (who: string) => who.startsWith('j');
/** Each participant is pinned to one server: a run of this long (ms) is longer than any CI run; the run ends by killing its contenders. */
const CONTENDER_MS = 600_000;
/** A victim's run, ms: long enough to start and take the lock once, short enough that it does not come back for a second slow hold. */
const VICTIM_MS = 3000;

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
   * is down or cut off) it keeps the closed client and fails every acquire from then on ("the
   * client is closed (acquiring ...)", a latch's "leadership: ... (waiting for leadership of ...)", 20 a second). Pinned to one
   * server, contenders meet that after most strikes. A stuck one holds nothing, so killing it
   * frees no place; a fresh one on the same server takes its part (participant.mjs retries its
   * first connection until it succeeds). Checked every 250 ms for the whole run, so the lock can
   * move during a fault.
   */
  #replaceStuck(): void {
    for (const p of [...this.fx.participants]) {
      if (!p.running || !p.who.startsWith('n')) continue;
      const last = this.fx.events.findLast((e) => e.who === p.who);
      if (last?.kind !== 'error' || !last.message.includes('the client is closed (')) continue;
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
export function castName(cast: QuorumCast, nodes: number): string {
  return `${recipeOf(cast)}; ${nodes} Node${cast.javas > 0 ? ` + ${cast.javas} Curator` : ''}`;
}

/** Strikes until `cast.strikes` were made (a strike whose victim never held is retried, up to twice as many attempts). */
export async function strikeRepeatedly(run: QuorumRun, plan: (i: number) => Promise<StrikePlan>): Promise<void> {
  for (let attempts = 0, made = 0; made < run.cast.strikes && attempts < 2 * run.cast.strikes; attempts++) {
    if (await run.strike(await plan(made))) made++;
  }
}

/** The common shape of a strike run: start, strike, finish; the ensemble is stopped whatever happens. */
export async function strikeRun(ctx: QuorumContext, cast: QuorumCast, o: { name: string; servers: 3 | 5; layout: (r: Roles) => Layout; plan: (run: QuorumRun, i: number) => Promise<StrikePlan>; duringFault: boolean; counts?: (run: QuorumRun) => Record<string, number> }): Promise<QuorumResult> {
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

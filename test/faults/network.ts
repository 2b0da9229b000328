/**
 * The network nemeses (network.test.ts): every participant talks to the server through a TCP
 * proxy of its own (../harness/proxy.ts), and the nemesis works on the proxies: latency with
 * jitter, a one-way partition, a storm server (a handshake then an undecodable frame), a full
 * partition. Node participants (participant.mjs) and, when a JVM with Curator is here, Curator
 * participants (java/CuratorFaultParticipant.java) share the lock and the history. Each function
 * returns the summary row and the problems of its run, like nemeses.ts.
 */
import { ZooKeeper } from '@zk/protocol';
import { TcpProxy, waitFor } from '../harness/index.js';
import { peakHolders } from './checker.js';
import { FaultFixture, SESSION_TIMEOUT, type Participant, type ParticipantKind } from './fixture.js';
import type { CuratorParticipants } from './java-participant.js';
import { permitsOf, recipeOf, type NemesisContext, type NemesisResult } from './nemeses.js';

/** Participant names: `n<i>` runs participant.mjs, `j<i>` the Curator participant. */
export type Lang = 'node' | 'java';

/** Who runs and for how long. */
export interface Cast {
  /** Node participants. */
  nodes: number;
  /** Curator participants (needs `curator`). */
  javas: number;
  /** The compiled Curator participant; without it `javas` must be 0. */
  curator?: CuratorParticipants;
  durationMs: number;
  workMs: number;
  /** Minimum acquisitions per second of the run. */
  minPerSecond: number;
  /** What everyone takes (default `mutex`; not `rw` with Curator participants). */
  kind?: Exclude<ParticipantKind, 'cheat'>;
  /** A semaphore's permits (kind `semaphore`; default 3). */
  permits?: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const ms = (ns: bigint) => Math.round(Number(ns) / 1e6);
/** The language of a participant, by its name. */
export const langOf = (who: string): Lang => (who.startsWith('j') ? 'java' : 'node');

/** A fault fixture whose participants each connect through their own proxy. */
export class ProxiedRun {
  readonly proxies = new Map<string, TcpProxy>();
  #next = 0;

  private constructor(
    readonly fx: FaultFixture,
    readonly ctx: NemesisContext,
    readonly cast: Cast,
  ) {}

  /** Creates the chroot and the fixture, and spawns the cast (each behind a fresh proxy, set up by `prepare`). */
  static async start(ctx: NemesisContext, cast: Cast, prepare: (p: TcpProxy) => void = () => {}): Promise<ProxiedRun> {
    if (cast.javas > 0 && !cast.curator) throw new Error('Curator participants need the compiled participant');
    const zk = await ZooKeeper.connect(ctx.connect, { sessionTimeout: 10_000 });
    await zk.create(ctx.root).catch(() => undefined);
    await zk.close();
    const run = new ProxiedRun(await FaultFixture.start({ root: ctx.root, lockPath: ctx.lockPath, capacity: permitsOf(cast), connect: ctx.connect }), ctx, cast);
    for (let i = 0; i < cast.nodes + cast.javas; i++) await run.spawn(i < cast.nodes ? 'node' : 'java', cast.durationMs, prepare);
    return run;
  }

  /** Spawns one more participant of `lang` behind a new proxy (`workMs` defaults to the cast's). */
  async spawn(lang: Lang, durationMs: number, prepare: (p: TcpProxy) => void = () => {}, workMs = this.cast.workMs): Promise<Participant> {
    const who = `${lang === 'java' ? 'j' : 'n'}${this.#next++}`;
    const first = this.ctx.connect.split(',')[0]!;
    const colon = first.lastIndexOf(':');
    const proxy = await TcpProxy.start({ host: first.slice(0, colon), port: Number(first.slice(colon + 1)) });
    prepare(proxy);
    this.proxies.set(who, proxy);
    const o = { who, connect: proxy.connectString, durationMs, workMs, kind: this.cast.kind };
    return lang === 'java' ? this.cast.curator!.spawn(this.fx, o) : this.fx.spawn(o);
  }

  /**
   * The current holder: one `prefer` accepts if one holds within `preferMs`, else whoever holds
   * within 10 s (or, with `only`, nobody: undefined).
   */
  async holder(prefer?: (who: string) => boolean, preferMs = 4000, only = false): Promise<string | undefined> {
    if (prefer) {
      const deadline = Date.now() + preferMs;
      const who = await waitFor('a preferred holder', () => {
        const h = this.fx.holder();
        return h && prefer(h) ? h : Date.now() > deadline ? '' : undefined;
      }, preferMs + 1000, 5);
      if (who || only) return who || undefined;
    }
    return waitFor('a holder', () => this.fx.holder(), 10_000, 5);
  }

  /** Whether `who` acquired the lock after `t` (by its log). */
  acquiredAfter(who: string, t: bigint): boolean {
    return this.fx.events.some((e) => e.who === who && e.kind === 'acquired' && e.t > t);
  }

  /** The first event of `who` of `kind` after `t`. */
  eventAfter(who: string, kind: 'lost' | 'released' | 'acquired', t: bigint): bigint | undefined {
    return this.fx.events.find((e) => e.who === who && e.kind === kind && e.t > t)?.t;
  }

  /** The first acquisition by anyone but `who` after `t`. */
  nextHolderAfter(who: string, t: bigint): bigint | undefined {
    return this.fx.events.filter((e) => e.kind === 'acquired' && e.who !== who && e.t > t).sort((a, b) => (a.t < b.t ? -1 : 1))[0]?.t;
  }

  /** Whether `who` held the lock at `t` by its log (acquired before, not released before). */
  heldAt(who: string, t: bigint): boolean {
    const mine = this.fx.events.filter((e) => e.who === who && (e.kind === 'acquired' || e.kind === 'released' || e.kind === 'killed') && e.t <= t);
    return mine.sort((a, b) => (a.t < b.t ? -1 : 1)).at(-1)?.kind === 'acquired';
  }

  /** Acquisitions per language. */
  acquisitions(): Record<Lang, number> {
    const out: Record<Lang, number> = { node: 0, java: 0 };
    for (const e of this.fx.events) if (e.kind === 'acquired') out[langOf(e.who)]++;
    return out;
  }

  /** Consecutive holds passing from one language to the other. */
  crossings(): number {
    const holds = this.fx.events.filter((e) => e.kind === 'acquired').sort((a, b) => (a.t < b.t ? -1 : 1));
    let n = 0;
    for (let i = 1; i < holds.length; i++) if (langOf(holds[i]!.who) !== langOf(holds[i - 1]!.who)) n++;
    return n;
  }

  /**
   * Waits for every participant, checks the history, adds the nemesis's own requirements and
   * (with Curator participants) that both languages acquired; always closes everything.
   */
  async finish(nemesis: string, counts: Record<string, number>, requirements: () => [ok: boolean, what: string][]): Promise<NemesisResult> {
    try {
      await this.fx.exited();
      const verdict = this.fx.check();
      const problems = this.fx.problems(verdict, { minPerSecond: this.cast.minPerSecond });
      const per = this.acquisitions();
      Object.assign(counts, { nodeAcquisitions: per.node, javaAcquisitions: per.java, crossings: this.crossings() });
      if (this.cast.javas > 0 && per.java === 0) problems.push('the Curator participants never acquired the lock');
      if (this.cast.nodes > 0 && per.node === 0) problems.push('the Node participants never acquired the lock');
      counts.peakHolders = peakHolders(this.fx.history());
      if (this.cast.kind === 'semaphore' && counts.peakHolders < permitsOf(this.cast)) problems.push(`at most ${counts.peakHolders} holders at once: the ${permitsOf(this.cast)} permits were never all held`);
      for (const [ok, what] of requirements()) if (!ok) problems.push(what);
      return { row: this.fx.row(nemesis, verdict), verdict, problems, counts, evidence: { events: this.fx.history(), writes: this.fx.resource.writes } };
    } finally {
      await this.close();
    }
  }

  /** Kills what still runs and closes the proxies. */
  async close(): Promise<void> {
    await this.fx.close();
    for (const p of this.proxies.values()) await p.close();
  }
}

/** The cast in a nemesis's name, when Curator is in it, and the recipe unless it is a Mutex. */
const withJava = (c: Cast) => {
  const recipe = (c.kind ?? 'mutex') === 'mutex' ? '' : recipeOf(c);
  if (c.javas > 0) return ` (${c.nodes} Node + ${c.javas} Curator${recipe ? `, ${recipe}` : ''})`;
  return recipe ? ` (${recipe})` : '';
};

/** Latency with jitter on every participant's connection, both ways, from the first byte. */
export async function latencyJitter(ctx: NemesisContext, cast: Cast, latency: { min: number; max: number }): Promise<NemesisResult> {
  const run = await ProxiedRun.start(ctx, cast, (p) => p.setLatency(latency));
  return run.finish(`latency + jitter ${latency.min}-${latency.max} ms each way${withJava(cast)}`, {}, () => []);
}

/** One strike of a holder: when its lease was lost after the strike and when the next holder came. */
export interface Strike {
  who: string;
  /** Strike to the victim's `lost`, ms (undefined: it never logged one). */
  detectionMs?: number;
  /** The victim's `lost` to the next acquisition by another participant, ms. */
  marginMs?: number;
}

/** Slow participants (one per language in the cast), the victims of nemeses that need a hold to outlast detection. */
async function slowVictims(run: ProxiedRun, cast: Cast & { slowWorkMs: number }): Promise<Set<string>> {
  const victims = new Set<string>();
  for (const lang of ['node', 'java'] as const) {
    if (lang === 'java' && cast.javas === 0) continue;
    victims.add((await run.spawn(lang, cast.durationMs, undefined, cast.slowWorkMs)).who);
  }
  return victims;
}

function strikeOf(run: ProxiedRun, who: string, from: bigint): Strike {
  const lost = run.eventAfter(who, 'lost', from);
  const next = lost !== undefined ? run.nextHolderAfter(who, lost) : undefined;
  return { who, detectionMs: lost !== undefined ? ms(lost - from) : undefined, marginMs: lost !== undefined && next !== undefined ? ms(next - lost) : undefined };
}

/**
 * The holder partitioned for `partitionMs`, again and again: `drop` discards its
 * server-to-client bytes (its requests still reach the server: a one-way partition), `block`
 * cuts it off both ways. The victims are slow participants (one per language in the cast, holds
 * of 3 x `slowWorkMs`, longer than detection takes), struck in turn while they hold; the others
 * are fast. Every victim must log `lost`, and before anyone else acquires (the checker); each
 * strike measures the detection (strike to `lost`) and the margin (`lost` to the next
 * acquisition by another participant).
 */
export async function partitionHolders(ctx: NemesisContext, cast: Cast & { mode: 'drop' | 'block'; partitionMs: number; slowWorkMs: number; minStrikes: number }): Promise<NemesisResult & { strikes: Strike[] }> {
  const run = await ProxiedRun.start(ctx, cast);
  const struck: { who: string; from: bigint }[] = [];
  try {
    const victims = await slowVictims(run, cast);
    const deadline = run.fx.startedAt + cast.durationMs - cast.partitionMs - 1500;
    // On a loaded machine (a JVM that takes seconds to start, a test file running beside this
    // one) the window may hold too few strikes: the run goes on for at most half a window more
    // until it has them, with fresh slow victims when the first ones have ended.
    const lastChance = deadline + cast.durationMs / 2;
    const enough = () => struck.length >= cast.minStrikes && (cast.javas === 0 || new Set(struck.map((x) => langOf(x.who))).size === 2);
    for (let attempt = 0; Date.now() < deadline || (!enough() && Date.now() < lastChance); attempt++) {
      const lang: Lang = cast.javas > 0 && attempt % 2 === 0 ? 'java' : 'node';
      if (Date.now() >= deadline && ![...victims].some((v) => langOf(v) === lang && run.fx.get(v)?.running)) {
        victims.add((await run.spawn(lang, lastChance - Date.now() + cast.partitionMs + 3000, undefined, cast.slowWorkMs)).who);
      }
      // A hold that begins from now on, so all of it (3 x slowWorkMs) is ahead when the strike comes.
      const since = process.hrtime.bigint();
      const who = await run.holder((w) => victims.has(w) && langOf(w) === lang && run.acquiredAfter(w, since), 8000, true);
      if (!who) continue;
      const proxy = run.proxies.get(who)!;
      if (cast.mode === 'drop') proxy.drop('down');
      else proxy.block();
      const from = process.hrtime.bigint();
      await sleep(cast.partitionMs); // the partition's length
      if (cast.mode === 'drop') proxy.undrop('down');
      else proxy.unblock();
      if (run.heldAt(who, from)) struck.push({ who, from });
    }
  } catch (err) {
    await run.close();
    throw err;
  }
  const what = cast.mode === 'drop' ? 'one-way partition (server->client dropped)' : 'partition';
  const strikes: Strike[] = [];
  const counts: Record<string, number> = {};
  const result = await run.finish(`${what} of a slow holder for ${cast.partitionMs / 1000} s${withJava(cast)}`, counts, () => {
    strikes.push(...struck.map((x) => strikeOf(run, x.who, x.from)));
    const unaware = strikes.filter((r) => r.detectionMs === undefined).map((r) => r.who);
    const langs = new Set(strikes.map((r) => langOf(r.who)));
    Object.assign(counts, { strikes: strikes.length, lostLeases: strikes.length - unaware.length });
    return [
      [strikes.length >= cast.minStrikes, `only ${strikes.length} partitions of a holder (at least ${cast.minStrikes} required)`],
      [unaware.length === 0, `partitioned holders that never logged lost: ${unaware.join(', ')}`],
      [cast.javas === 0 || langs.size === 2, `holders of both languages must be struck (struck: ${[...langs].join(', ')})`],
    ];
  });
  return { ...result, strikes };
}

/**
 * A storm server: the holder's proxy answers every new connection's handshake and then sends an
 * undecodable frame, for `stormMs`. The victim is a slow Node participant (the client under
 * test) struck while it holds the lock. Measures connections per second through its proxy (each
 * whole second of the storm); it must lose its lease within the session timeout and before anyone
 * else acquires.
 */
export async function storm(ctx: NemesisContext, cast: Cast & { stormMs: number; slowWorkMs: number; maxPerSecond: number }): Promise<NemesisResult & { perSecond: number[]; strike: Strike }> {
  const run = await ProxiedRun.start(ctx, cast);
  const perSecond: number[] = [];
  let victim = '';
  let from = 0n;
  try {
    victim = (await run.spawn('node', cast.durationMs, undefined, cast.slowWorkMs)).who;
    if (!(await run.holder((w) => w === victim, 10_000, true))) throw new Error(`the storm's victim ${victim} never held the lock`);
    const proxy = run.proxies.get(victim)!;
    proxy.corrupt();
    proxy.cut();
    from = process.hrtime.bigint();
    let last = proxy.acceptedCount;
    for (let i = 0; i < Math.floor(cast.stormMs / 1000); i++) {
      await sleep(1000); // the measurement's one-second windows
      perSecond.push(proxy.acceptedCount - last);
      last = proxy.acceptedCount;
    }
    proxy.uncorrupt();
  } catch (err) {
    await run.close();
    throw err;
  }
  const counts: Record<string, number> = { stormMaxPerSecond: Math.max(...perSecond), stormConnections: perSecond.reduce((a, b) => a + b, 0) };
  let s: Strike = { who: victim };
  const result = await run.finish(`storm server (handshake, then an undecodable frame) for the holder, ${cast.stormMs / 1000} s${withJava(cast)}`, counts, () => {
    s = strikeOf(run, victim, from);
    Object.assign(counts, { detectionMs: s.detectionMs ?? -1, marginMs: s.marginMs ?? -1 });
    return [
      [run.heldAt(victim, from), `the storm's victim ${victim} no longer held the lock when the storm began`],
      [counts.stormMaxPerSecond! <= cast.maxPerSecond, `the storm drew ${counts.stormMaxPerSecond} connections in one second (per second: ${perSecond.join(', ')}); at most ${cast.maxPerSecond} allowed`],
      [s.detectionMs !== undefined && s.detectionMs <= SESSION_TIMEOUT + 500, `the storm's victim ${victim} ${s.detectionMs === undefined ? 'never lost its lease' : `lost its lease only ${s.detectionMs} ms after the storm began`} (the session timeout is ${SESSION_TIMEOUT} ms)`],
    ];
  });
  return { ...result, perSecond, strike: s };
}

/**
 * Node and Curator participants on one lock; every `everyMs` the holder is killed (SIGKILL),
 * alternating languages when it can, and a fresh participant of its language takes its place.
 */
export async function mixedSigkill(ctx: NemesisContext, cast: Cast & { everyMs: number; minKills: number }): Promise<NemesisResult> {
  const run = await ProxiedRun.start(ctx, cast);
  const killed: Record<Lang, number> = { node: 0, java: 0 };
  const deadline = run.fx.startedAt + cast.durationMs - 3000;
  // On a loaded machine (a JVM that takes seconds to start, a test file running beside this one)
  // the window may hold too few kills: the schedule goes on for at most half a window more until
  // it has them, its replacements living to that later end.
  const lastChance = deadline + cast.durationMs / 2;
  const enough = () => killed.node + killed.java >= cast.minKills && (cast.javas === 0 || (killed.java >= 1 && killed.node >= 1));
  let extra = 0;
  try {
    while (Date.now() < deadline || (!enough() && Date.now() < lastChance)) {
      await sleep(cast.everyMs); // the nemesis's schedule
      const end = Date.now() < deadline ? deadline : lastChance;
      const want: Lang = killed.java <= killed.node ? 'java' : 'node';
      // A holder of the wanted language within 3 s, else whoever holds now: near the end of the
      // run the replacements (short-lived) may be gone and a hand-over may be waiting for an
      // expiry, so no holder at all is a skipped strike, not a failure.
      const who = (await run.holder((w) => langOf(w) === want, 3000, true)) ?? run.fx.holder();
      const victim = run.fx.get(who ?? '');
      if (!who || !victim?.running) {
        // Past the window the first cast has ended: someone of the wanted language to strike.
        if (Date.now() >= deadline && extra++ < 2) await run.spawn(want, Math.max(1000, lastChance - Date.now() + 1000));
        continue;
      }
      victim.kill();
      killed[langOf(who)]++;
      await run.spawn(langOf(who), Math.max(1000, end - Date.now() + 1000));
    }
  } catch (err) {
    await run.close();
    throw err;
  }
  return run.finish(`SIGKILL of the holder every ${cast.everyMs / 1000} s${withJava(cast)}`, { nodeKilled: killed.node, javaKilled: killed.java }, () => [
    [killed.node + killed.java >= cast.minKills, `only ${killed.node + killed.java} kills (at least ${cast.minKills} required)`],
    [cast.javas === 0 || (killed.java >= 1 && killed.node >= 1), `holders of both languages must be killed (Node ${killed.node}, Curator ${killed.java})`],
    [cast.javas === 0 || run.crossings() > 0, 'the lock never passed between the languages'],
  ]);
}

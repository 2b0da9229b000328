/**
 * Leader workloads (issue 13), ours and Curator's LeaderLatch in the same run:
 *
 * - failover after the leader is SIGKILLed, and after its link is silently partitioned (a TCP
 *   proxy holding every byte): each participant is its own process (ours
 *   `leader-participant.mjs`, Curator `LeaderBenchDriver participant`), and the figure is the time
 *   from the kill (the partition) to the next leader's process printing that it leads. For the
 *   partition, also when the old leader is told (ours: `leadership.signal`; Curator:
 *   `LeaderLatchListener.notLeader`) and the gap between the two.
 * - 100 participants (100 sessions; ours in this process, Curator's in one JVM): per leadership
 *   change, the watch notifications the server sent (`mntr`) and how many participants other than
 *   the old leader were woken (the sessions watching the deleted node, by `wchp` just before).
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { fileURLToPath } from 'node:url';
import { ChannelName, NoNodeError, ZooKeeper, type EventMessage, type WatchedEvent } from '@zk/protocol';
import { LeaderLatch } from '@zk/locks';
import { compileCurator, fourLetter, TcpProxy, type CompiledJava } from '@zk/test/harness';
import type { Bench, Repetition } from '../lib/bench.js';
import { LineChild } from '../lib/child.js';
import { parseCons, parseWchp, watchNotifications } from '../lib/fourletter.js';
import { CLIENT, WORKLOAD } from '../lib/names.js';
import { median, type Sample } from '../lib/stats.js';

/** Session timeout of the failover participants, ms (the harness's servers tick every 500 ms). */
export const FAILOVER_SESSION_MS = 2000;
/** The harness servers' tick, ms. */
const SERVER_TICK_MS = 500;
/**
 * Our failover rows beside the default (leaseProof 'auto', the tick unknown: writes every 706 ms):
 * writes with the tick told (every 706 ms; 'auto' told the tick does the same at T = 4 ticks),
 * syncs (every 537 ms), and no proof. `ZK_BENCH_PROOF_ROWS=0` leaves them out.
 */
const PROOF_VARIANTS: ReadonlyArray<readonly [string, number | undefined]> =
  process.env.ZK_BENCH_PROOF_ROWS === '0' ? [] : [['write', SERVER_TICK_MS], ['sync', SERVER_TICK_MS], ['off', undefined]];
/** Participants of the latch workload. */
const LATCH_PARTICIPANTS = 100;
const PARTICIPANT = fileURLToPath(new URL('../../workloads/leader-participant.mjs', import.meta.url));
const JAVA_SOURCE = fileURLToPath(new URL('../../java/LeaderBenchDriver.java', import.meta.url));

/** Starts one participant process of one language. */
type Spawn = (name: string, connect: string, path: string) => LineChild;

/** Runs the leader workloads under `base`; Curator's beside ours when `curator` (the Java peer runs). */
export async function leaderWorkloads(bench: Bench, connect: string, curator: boolean, base: string): Promise<void> {
  const kill = WORKLOAD.leaderFailover('SIGKILL', FAILOVER_SESSION_MS);
  const cut = WORKLOAD.leaderFailover('partition', FAILOVER_SESSION_MS);
  const latch = WORKLOAD.leaderLatch(LATCH_PARTICIPANTS);
  if (![kill, cut, latch].some((w) => bench.wants(w))) return;
  const observer = await ZooKeeper.connect(connect, { sessionTimeout: 10_000 });
  let java: CompiledJava | undefined;
  try {
    java = curator ? compileCurator([JAVA_SOURCE]) : undefined;
    const classpath = java?.classpath;
    const spawns: Array<readonly [string, Spawn]> = [
      [CLIENT.ours, (name, c, path) => new LineChild(name, process.execPath, [PARTICIPANT, c, path, String(FAILOVER_SESSION_MS), name])],
      // Each proof mode (issue 35): the quorum's promise by writes with the tick told, by syncs,
      // and none (Curator's guarantee); the plain row above writes with the tick unknown.
      ...PROOF_VARIANTS.map(([mode, tick]) => [`${CLIENT.ours}, leaseProof ${mode}${tick ? `, serverTickTime ${tick}` : ''}`, (name: string, c: string, path: string) => new LineChild(name, process.execPath, [PARTICIPANT, c, path, String(FAILOVER_SESSION_MS), name, mode, tick ? String(tick) : ''])] as const),
      ...(classpath ? [[CLIENT.curator, (name: string, c: string, path: string) => new LineChild(name, 'java', ['-cp', classpath, 'LeaderBenchDriver', 'participant', c, path, String(FAILOVER_SESSION_MS), name])] as const] : []),
    ];
    // One repetition is `rounds` failovers (each needs fresh processes and a session timeout).
    const rounds = bench.n(8, 3);
    const rttUs = await roundTripUs(observer);
    const failover = (how: 'kill' | 'cut', spawn: Spawn, client: string): Repetition => async (warmup) => {
      const results: Round[] = [];
      for (let i = 0; i < (warmup ? 1 : rounds); i++) {
        const path = `${base}/leader-${how}-${client === CLIENT.ours ? 'ours' : 'curator'}-${warmup ? 'w' : 'r'}${i}`;
        const round = await (how === 'kill' ? killRound : cutRound)(spawn, connect, observer, path);
        results.push(round);
        // ZK_BENCH_FAILOVER_TRACE=1: each round on stderr, for the distributions behind the medians.
        if (process.env.ZK_BENCH_FAILOVER_TRACE === '1' && !warmup) process.stderr.write(`failover ${how} ${client} ${i}: ${JSON.stringify(round)}\n`);
      }
      return failoverSample(results, rttUs);
    };
    await bench.compare('locks', kill, 'failovers', spawns.map(([client, spawn]) => [client, failover('kill', spawn, client)] as const), 1);
    await bench.compare('locks', cut, 'failovers', spawns.map(([client, spawn]) => [client, failover('cut', spawn, client)] as const), 1);
    if (bench.wants(latch)) await latchWorkload(bench, connect, observer, classpath, `${base}/latch-${LATCH_PARTICIPANTS}`);
  } finally {
    java?.remove();
    await observer.close();
  }
}

/**
 * One failover, ms from the kill (the partition): the next leader's first act; the old leader's
 * node seen deleted by our observer session (the server expired the session); for a partition,
 * the old leader's signal.
 */
interface Round {
  readonly sessionTimeoutMs: number;
  readonly nextLeaderMs: number;
  readonly deletedMs: number;
  readonly signalMs?: number;
  /** How long before the kill (the partition) the server last answered the old leader's session, and what. */
  readonly touch?: { readonly ms: number; readonly op: string };
}

/** Leader `a` (its own process) killed with SIGKILL; `b`, queued behind it, leads next. */
async function killRound(spawn: Spawn, connect: string, observer: ZooKeeper, path: string): Promise<Round> {
  const a = spawn('leader', connect, path);
  const b = spawn('next', connect, path);
  try {
    const [ready] = await Promise.all([a.line('READY', 60_000), b.line('READY', 60_000)]);
    await randomPhase(); // the leader's heartbeats, off the server's tick (see randomPhase)
    a.send('join');
    await a.line('LEADER');
    b.send('join');
    await childrenAtLeast(observer, path, 2);
    const deleted = await firstDeletion(observer, path);
    await randomPhase();
    // Asked just before the kill (after it the server drops the connection); a heartbeat sent in
    // the few milliseconds between would go unseen.
    const touched = await lastTouch(observer, firstServer(connect), ready.text.split(' ')[2]);
    const t0 = performance.now();
    a.child.kill('SIGKILL');
    const led = await b.line('LEADER');
    return { sessionTimeoutMs: Number(ready.text.split(' ')[1]), nextLeaderMs: led.at - t0, deletedMs: (await deleted.at) - t0, ...touchAt(touched, t0) };
  } finally {
    await a.kill();
    await b.end();
  }
}

/**
 * Leader `a` connected through a proxy that starts holding every byte both ways (the socket stays
 * open, new connections get through the TCP handshake only: a silent partition); `b` leads next.
 */
async function cutRound(spawn: Spawn, connect: string, observer: ZooKeeper, path: string): Promise<Round> {
  const proxy = await TcpProxy.start(firstServer(connect));
  const a = spawn('leader', proxy.connectString, path);
  const b = spawn('next', connect, path);
  try {
    const [ready] = await Promise.all([a.line('READY', 60_000), b.line('READY', 60_000)]);
    await randomPhase(); // the leader's heartbeats, off the server's tick (see randomPhase)
    a.send('join');
    await a.line('LEADER');
    b.send('join');
    await childrenAtLeast(observer, path, 2);
    const deleted = await firstDeletion(observer, path);
    await randomPhase();
    const t0 = performance.now();
    proxy.pause('both');
    // Asked after the cut: the server keeps the silent connection, and nothing more reaches it.
    const touched = await lastTouch(observer, firstServer(connect), ready.text.split(' ')[2]);
    const [lost, led] = await Promise.all([a.line('LOST'), b.line('LEADER')]);
    return { sessionTimeoutMs: Number(ready.text.split(' ')[1]), nextLeaderMs: led.at - t0, deletedMs: (await deleted.at) - t0, signalMs: lost.at - t0, ...touchAt(touched, t0) };
  } finally {
    await a.kill();
    await proxy.close();
    await b.end();
  }
}

/**
 * When (`performance.now()`) the server last answered session `sid`, and with what: from `cons`,
 * whose response times are on the server's own monotonic clock, placed on ours by the observer's
 * `exists` answered just before (the same server: standalone runs). Undefined when either
 * session is not on `server` or `cons` is refused.
 */
async function lastTouch(observer: ZooKeeper, server: Server, sid: string | undefined): Promise<{ at: number; op: string } | undefined> {
  await observer.exists('/');
  const answered = performance.now();
  const cons = parseCons(await fourLetter(server.host, server.port, 'cons').catch(() => undefined));
  const mine = cons?.get(`0x${observer.sessionId.toString(16)}`);
  const theirs = sid === undefined ? undefined : cons?.get(sid);
  if (!mine || !theirs || mine.lastOp !== 'EXIS') return undefined;
  return { at: answered - (mine.lastResponseMs - theirs.lastResponseMs), op: theirs.lastOp };
}

/** The round's `touch`: ms from the last answer to the kill at `t0`. */
function touchAt(touched: { at: number; op: string } | undefined, t0: number): Pick<Round, 'touch'> {
  return touched ? { touch: { ms: t0 - touched.at, op: touched.op } } : {};
}

/**
 * Waits a random 0-1000 ms. A round is a chain of server replies that starts when the previous
 * round's session expired, and the server expires sessions on its tick (500 ms here): without
 * this the kill would fall at the same point of the tick and of the leader's heartbeat in every
 * round, and the failovers would all look alike (seen: 2.31-2.37 s over 8 rounds, where anything
 * from 1.33 to 2.5 s can happen). 1000 ms covers two ticks and the heartbeat interval (a third of
 * the 2 s timeout).
 *
 * Called twice per round. Before the kill, it places the kill at a random point of the leader's
 * heartbeat. Before the leader joins, it places the heartbeats themselves at a random point of the
 * tick. The server expires a session at the first tick after its last heartbeat plus the timeout,
 * and a heartbeat comes a fixed time after the leader's last request. Without the second call,
 * every round's chain (the previous expiry on a tick, then process start, connect, join) put the
 * heartbeats at the same point of the tick, and each client at its own point: its start-up time.
 * Seen at 5040246, 8 rounds per row: the wait for the tick averaged 391-448 ms in our rows and
 * 324 ms in Curator's (SIGKILL), where a random point gives 250. That, not the client, was most
 * of the gap between the rows' medians.
 */
function randomPhase(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.random() * 1000));
}

/**
 * The rounds of one repetition as a sample: ops the failovers, seconds their sum, latencies the
 * failover times. Metrics: the slowest against the session timeout plus one round trip (`rttUs`,
 * an `exists`); `expiryMs` until the old node was seen deleted (the server's part: the timeout
 * counts from the session's last heartbeat and the server's tick rounds it up); `handoverMs`
 * (median) and `maxHandoverMs` from that deletion to the next leader acting (the recipe's part).
 * No client CPU (several processes, mostly idle).
 */
function failoverSample(rounds: readonly Round[], rttUs: number): Sample {
  const next = rounds.map((r) => r.nextLeaderMs);
  const handover = rounds.map((r) => r.nextLeaderMs - r.deletedMs);
  const timeout = Math.max(...rounds.map((r) => r.sessionTimeoutMs));
  const bound = timeout + rttUs / 1000;
  const metrics: Record<string, number> = {
    sessionTimeoutMs: timeout,
    rttUs,
    maxMs: Math.max(...next),
    maxOverTimeoutPlusRtt: Math.max(...next) / bound,
    expiryMs: median(rounds.map((r) => r.deletedMs)),
    handoverMs: median(handover),
    maxHandoverMs: Math.max(...handover),
  };
  // Why the server expired the session when it did: it counts the timeout from its last answer to
  // the session (`lastTouchMs` before the kill), then rounds up to its next tick (`tickWaitMs`:
  // expiry - (timeout - lastTouchMs)); `pingShare`, how often that last answer was a heartbeat.
  const touched = rounds.flatMap((r) => (r.touch ? [{ ...r.touch, deletedMs: r.deletedMs, timeout: r.sessionTimeoutMs }] : []));
  if (touched.length === rounds.length) {
    Object.assign(metrics, {
      lastTouchMs: median(touched.map((t) => t.ms)),
      tickWaitMs: median(touched.map((t) => t.deletedMs - (t.timeout - t.ms))),
      pingShare: touched.filter((t) => t.op === 'PING').length / touched.length,
    });
  }
  const signals = rounds.flatMap((r) => (r.signalMs === undefined ? [] : [r.signalMs]));
  if (signals.length === rounds.length) {
    const gaps = rounds.map((r) => r.nextLeaderMs - r.signalMs!);
    Object.assign(metrics, { signalMs: median(signals), gapMs: median(gaps), minGapMs: Math.min(...gaps) });
  }
  return { ops: rounds.length, seconds: next.reduce((s, n) => s + n, 0) / 1000, latenciesUs: next.map((n) => n * 1000), cpuUs: Number.NaN, metrics };
}

/**
 * Watches every child of `path` (the leader's node and the next one's); resolves once the watches
 * are set, with `at`: the time (`performance.now()`) the first of them is deleted (NaN after a minute).
 */
async function firstDeletion(zk: ZooKeeper, path: string): Promise<{ at: Promise<number> }> {
  let seen!: (at: number) => void;
  const deleted = new Promise<number>((resolve) => (seen = resolve));
  const onEvent = (e: WatchedEvent) => e.type === 'NodeDeleted' && seen(performance.now());
  for (const child of await zk.getChildren(path)) await zk.exists(`${path}/${child}`, { watch: onEvent });
  setTimeout(() => seen(Number.NaN), 60_000).unref();
  return { at: deleted };
}

/** Median of 50 `exists` round trips, µs (after 20 unrecorded). */
async function roundTripUs(zk: ZooKeeper): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < 70; i++) {
    const t = performance.now();
    await zk.exists('/');
    if (i >= 20) times.push((performance.now() - t) * 1000);
  }
  return median(times);
}

/** Resolves once `path` has `n` children or more, woken by child watches (the last one removed). */
async function childrenAtLeast(zk: ZooKeeper, path: string, n: number, timeoutMs = 30_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    let onChange!: () => void;
    const changed = new Promise<void>((resolve) => (onChange = resolve));
    const children = await zk.getChildren(path, { watch: onChange }).catch((e: unknown) => (e instanceof NoNodeError ? undefined : Promise.reject(e)));
    if (children === undefined) {
      // No election node yet: nothing to watch; the participants create it.
      await zk.exists(path, { watch: onChange });
    } else if (children.length >= n) {
      await zk.removeWatches(path, { kind: 'child', listener: onChange }).catch(() => zk.removeLocalWatch('child', path, onChange));
      return;
    }
    const left = deadline - performance.now();
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), Math.max(0, left))));
    const r = await Promise.race([changed, late]);
    clearTimeout(timer);
    if (r === 'late') throw new Error(`${path}: fewer than ${n} children after ${timeoutMs} ms`);
  }
}

/** One change of leadership: how long it took, and whose node went. */
interface Change {
  readonly latencyUs: number;
  /** The old leader's session, `0x<hex>` as the server's `wchp` prints it. */
  readonly releaser: string;
  /** The deleted node's path. */
  readonly node: string;
}

/** Participants of one language on one election path. */
interface Latches {
  readonly path: string;
  /** The leader gives leadership up; resolves once the next participant leads. */
  change(): Promise<Change>;
  close(): Promise<void>;
}

const hex = (sessionId: bigint) => `0x${sessionId.toString(16)}`;

/**
 * Ours: one LeaderLatch per session, in this process. A change closes the leader's latch and,
 * once the next one leads, starts a new latch with the same id on the same session (a node at the
 * back), as the Curator driver does.
 */
class OursLatches implements Latches {
  readonly latches: LeaderLatch[];
  #leader = -1;
  #wake: ((at: number) => void) | undefined;

  constructor(readonly clients: readonly ZooKeeper[], readonly path: string) {
    this.latches = clients.map((_, i) => this.#latch(i));
  }

  #latch(i: number): LeaderLatch {
    const latch = new LeaderLatch(this.clients[i]!, this.path, { id: `p${i}` });
    latch.onChange((change) => {
      if (!change.isLeader) return;
      const at = performance.now();
      this.#leader = i;
      this.#wake?.(at);
      this.#wake = undefined;
    });
    return latch;
  }

  async start(observer: ZooKeeper): Promise<this> {
    const first = new Promise<number>((resolve) => (this.#wake = resolve));
    for (const latch of this.latches) latch.start();
    await within(first, 30_000, 'no leader among our latches');
    await childrenAtLeast(observer, this.path, this.latches.length);
    return this;
  }

  async change(): Promise<Change> {
    const i = this.#leader;
    const latch = this.latches[i];
    const leadership = latch?.current;
    if (!latch || !leadership) throw new Error(`latch p${i} was told it leads but has no leadership`);
    const next = new Promise<number>((resolve) => (this.#wake = resolve));
    const t0 = performance.now();
    const closed = latch.close();
    const at = await within(next, 30_000, 'no next leader among our latches');
    await closed;
    const again = (this.latches[i] = this.#latch(i));
    again.start();
    return { latencyUs: (at - t0) * 1000, releaser: hex(latch.zk.sessionId), node: leadership.node };
  }

  async close(): Promise<void> {
    await Promise.all(this.latches.map((l) => l.close()));
  }
}

/** Curator's: `LeaderBenchDriver latches`, one JVM. */
class CuratorLatches implements Latches {
  private constructor(readonly child: LineChild, readonly path: string) {}

  static async start(classpath: string, connect: string, path: string, count: number, observer: ZooKeeper): Promise<CuratorLatches> {
    const child = new LineChild('Curator latches', 'java', ['-cp', classpath, 'LeaderBenchDriver', 'latches', connect, path, String(count), '10000']);
    try {
      await child.line('READY', 120_000);
      await childrenAtLeast(observer, path, count, 60_000);
      return new CuratorLatches(child, path);
    } catch (e) {
      await child.kill();
      throw e;
    }
  }

  async change(): Promise<Change> {
    this.child.send('change');
    const reply = JSON.parse((await this.child.line('CHANGED')).text.slice('CHANGED '.length)) as Partial<Change> & { error?: string };
    if (reply.error !== undefined || reply.latencyUs === undefined || reply.releaser === undefined || reply.node === undefined) throw new Error(`Curator latches: ${reply.error ?? 'malformed reply'}`);
    return { latencyUs: reply.latencyUs, releaser: reply.releaser, node: reply.node };
  }

  close(): Promise<void> {
    return this.child.end(30_000);
  }
}

/** `promise`, or a rejection after `ms`. */
async function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([promise, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what} within ${ms} ms`)), ms)))]);
  } finally {
    clearTimeout(timer);
  }
}

/** A server's address: host and port. */
interface Server {
  readonly host: string;
  readonly port: number;
}

/** The first host of a connect string (a chroot dropped). */
function firstServer(connect: string): Server {
  const first = connect.split(',')[0]!.replace(/\/.*$/, '');
  const colon = first.lastIndexOf(':');
  return { host: first.slice(0, colon), port: Number(first.slice(colon + 1)) };
}

/**
 * Watch notifications the server has sent so far: the sums of its `node_*_watch_count`
 * summaries (the watchers each trigger reached, by event type), from `mntr`. Undefined when the
 * server does not answer `mntr` with them (four-letter words not whitelisted, an older server).
 */
async function notificationsSent(server: Server): Promise<number | undefined> {
  return watchNotifications(await fourLetter(server.host, server.port, 'mntr').catch(() => ''));
}

/**
 * `wchp`: the sessions with a data or exists watch on each path (the server lists no child
 * watches there), or undefined when refused.
 */
async function watchersByPath(server: Server): Promise<Map<string, Set<string>> | undefined> {
  return parseWchp(await fourLetter(server.host, server.port, 'wchp').catch(() => undefined));
}

/**
 * `count` leadership changes, each measured on its own: before it the watchers by path and the
 * server's notification count; after it (the old leader queued again: `participants` nodes) the
 * count again. Notifications our observer session received (its child watch while it waits for
 * the queue) are taken off. Woken: the sessions that had a data or exists watch on the deleted
 * node, the old leader aside (child watches on the election path would show in the count; the
 * recipes set none). For ours also counted in the client: the sessions, the old leader aside,
 * that received any notification during the change (`zk:event`).
 */
async function changes(latches: Latches, count: number, participants: number, observer: ZooKeeper, server: Server | undefined): Promise<Sample> {
  const latenciesUs: number[] = [];
  const woken: number[] = [];
  const notifications: number[] = [];
  const clientWoken: number[] = [];
  const own = hex(observer.sessionId);
  for (let i = 0; i < count; i++) {
    const watchers = server && (await watchersByPath(server));
    const before = server && (await notificationsSent(server));
    const events: EventMessage[] = [];
    const onEvent = (m: unknown) => void events.push(m as EventMessage);
    subscribe(ChannelName.event, onEvent);
    let change: Change;
    try {
      change = await latches.change();
      await childrenAtLeast(observer, latches.path, participants);
    } finally {
      unsubscribe(ChannelName.event, onEvent);
    }
    const after = server && (await notificationsSent(server));
    latenciesUs.push(change.latencyUs);
    const others = (sessions: Iterable<string>) => [...sessions].filter((s) => s !== change.releaser && s !== own);
    if (watchers) woken.push(others(watchers.get(change.node) ?? []).length);
    const observed = events.filter((e) => e.sessionId === observer.sessionId).length;
    if (before !== undefined && after !== undefined) notifications.push(after - before - observed);
    if (latches instanceof OursLatches) clientWoken.push(new Set(others(events.map((e) => hex(e.sessionId)))).size);
  }
  const mean = (v: readonly number[]) => v.reduce((s, n) => s + n, 0) / v.length;
  const metrics: Record<string, number> = {};
  if (notifications.length === count) metrics['notificationsPerChange'] = mean(notifications);
  if (woken.length === count) Object.assign(metrics, { wokenPerChange: mean(woken), wokenMin: Math.min(...woken), wokenMax: Math.max(...woken) });
  if (clientWoken.length === count) metrics['clientWokenPerChange'] = mean(clientWoken);
  return { ops: count, seconds: latenciesUs.reduce((s, n) => s + n, 0) / 1e6, latenciesUs, cpuUs: Number.NaN, metrics };
}

/** 100 participants of each language, each its own session; leadership handed on `changes` times per repetition. */
async function latchWorkload(bench: Bench, connect: string, observer: ZooKeeper, classpath: string | undefined, path: string): Promise<void> {
  const n = LATCH_PARTICIPANTS;
  const count = bench.n(50, 10);
  // One server sees only its own connections' watches: on an ensemble the counts stay out.
  const server = connect.includes(',') ? undefined : firstServer(connect);
  const clients = await Promise.all(Array.from({ length: n }, () => ZooKeeper.connect(connect, { sessionTimeout: 10_000 })));
  let ours: OursLatches | undefined;
  let curator: CuratorLatches | undefined;
  try {
    ours = await new OursLatches(clients, `${path}-ours`).start(observer);
    curator = classpath ? await CuratorLatches.start(classpath, connect, `${path}-curator`, n, observer) : undefined;
    const rep = (latches: Latches): Repetition => (warmup) => changes(latches, warmup ? Math.min(10, count) : count, n, observer, server);
    await bench.compare('locks', WORKLOAD.leaderLatch(n), 'changes', [[CLIENT.ours, rep(ours)], ...(curator ? [[CLIENT.curator, rep(curator)] as const] : [])]);
  } finally {
    await ours?.close();
    await curator?.close();
    await Promise.all(clients.map((c) => c.close()));
  }
}

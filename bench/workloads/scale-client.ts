/**
 * Client scale curves (issue 16): what a client costs as the work grows, ours beside a peer at
 * every point. Each point is its own workload, named `curvePoint(curve, n)` by the n actually run
 * (`--quick` shrinks them).
 *
 * - **Reconnect with watches** (n = 1,000 / 10,000 / 100,000 watches on one session; ours and
 *   ZooKeeper's Java client): the session reaches the server through the harness's TCP proxy, run
 *   in a process of its own (`scale-proxy.mjs`) so that copying the SetWatches is neither client's
 *   work. The client sets an exists watch on each of n existing nodes, the proxy resets the
 *   connection, and a request issued once the client has seen the drop is timed until it returns:
 *   it can return only after every watch is re-armed (why, for each client, at {@link oursRewatch}
 *   and in ScaleBenchDriver.rearm). The proxy and both clients stamp with CLOCK_MONOTONIC
 *   (`process.hrtime`, Java's `System.nanoTime`), so the times compare across processes. Then
 *   another session changes a sample of the watched nodes and the client must see each change.
 * - **Sessions in one process** (n = 10 / 100 / 1,000; ours, node-zookeeper-client and the Java
 *   client): n sessions connected together, the time until the last is usable, and the memory
 *   they hold.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { ZooKeeper, type WatchedEvent } from '@zk/protocol';
import { compileCurator, curatorMissing, fourLetter, type CompiledJava } from '@zk/test/harness';
import type { Bench, Repetition } from '../lib/bench.js';
import { LineChild } from '../lib/child.js';
import { CLIENT, CURVE, curvePoint } from '../lib/names.js';
import type { Sample } from '../lib/stats.js';
import { connectNzc, type NzcClient } from '../peers/nzc.js';

const JAVA_SOURCE = fileURLToPath(new URL('../../java/ScaleBenchDriver.java', import.meta.url));
const PROXY = fileURLToPath(new URL('../../workloads/scale-proxy.mjs', import.meta.url));
/** The points of each curve at full size. */
const WATCH_POINTS = [1_000, 10_000, 100_000];
const SESSION_POINTS = [10, 100, 1_000];
/** Requests in flight while watches are set or nodes made (the Java driver uses the same window). */
const WINDOW = 1024;
/** Creates (and deletes) per transaction when making the watched nodes. */
const BATCH = 1000;
/** Watched nodes changed after the reconnect, each of which must fire. */
const SAMPLE = 100;
/** Session timeout of the watching sessions: well over the Java client's reconnect delay (up to 2 s). */
const WATCH_SESSION_MS = 30_000;
/** Session timeout of the sessions curve (node-zookeeper-client's, fixed in peers/nzc.ts). */
const SESSION_MS = 10_000;
/** How long a sampled change may take to reach the watching client. */
const FIRE_WAIT_MS = 10_000;
const JAVA_WAIT_MS = 180_000;
/** Sessions the Java driver connects and closes before the measured ones (closing takes 100 ms each). */
const JAVA_WARM_SESSIONS = 20;

interface Server {
  readonly host: string;
  readonly port: number;
}

/**
 * Runs the client scale curves under `base` (`zk` is the bench's own session: it makes the
 * watched nodes and the sampled changes). `java` false leaves the Java client out, with the
 * reason in `bench.skipped`.
 */
export async function clientScaleWorkloads(bench: Bench, connect: string, zk: ZooKeeper, base: string, java: boolean): Promise<void> {
  const reps = Math.max(1, Math.min(3, Math.round(bench.scale * 3)));
  const watchPoints = WATCH_POINTS.map((n) => bench.n(n, 100)).filter((n) => bench.wants(curvePoint(CURVE.reconnectWatches, n)));
  const sessionPoints = SESSION_POINTS.map((n) => bench.n(n, 5)).filter((n) => bench.wants(curvePoint(CURVE.sessions, n)));
  if (watchPoints.length === 0 && sessionPoints.length === 0) return;
  const skipKey = `${CLIENT.java} (${CURVE.reconnectWatches}, ${CURVE.sessions})`;
  const missing = java ? curatorMissing() : 'not run (java = false)';
  let compiled: CompiledJava | undefined;
  if (missing) bench.skipped[skipKey] = missing;
  else compiled = compileCurator([JAVA_SOURCE]);
  try {
    if (watchPoints.length > 0) await rewatchCurve(bench, connect, zk, `${base}/rewatch`, watchPoints, compiled?.classpath, reps);
    if (sessionPoints.length > 0) await sessionsCurve(bench, connect, sessionPoints, compiled?.classpath, reps);
  } finally {
    compiled?.remove();
  }
}

/** What one repetition of the watch curve needs. */
interface WatchContext {
  /** The bench's session, directly on the server. */
  readonly zk: ZooKeeper;
  readonly proxy: LineChild;
  readonly proxyConnect: string;
  readonly server: Server;
  /** The parent of the watched nodes `0` .. `n-1`. */
  readonly dir: string;
}

async function rewatchCurve(bench: Bench, connect: string, zk: ZooKeeper, dir: string, points: number[], classpath: string | undefined, reps: number): Promise<void> {
  const most = Math.max(...points);
  await eachBatch(most, (from, to) => {
    const t = zk.transaction();
    for (let i = from; i < to; i++) t.create(`${dir}/${i}`);
    return t.commit();
  }, () => zk.create(dir));
  const server = firstServer(connect);
  const proxy = new LineChild('watch proxy', process.execPath, [PROXY, server.host, String(server.port)]);
  let driver: LineChild | undefined;
  try {
    const ready = await proxy.line('READY', 30_000);
    const ctx: WatchContext = { zk, proxy, proxyConnect: `127.0.0.1:${ready.text.split(' ')[1]}`, server, dir };
    if (classpath) {
      driver = new LineChild('Java scale driver', 'java', ['-cp', classpath, 'ScaleBenchDriver']);
      await driver.line('READY', 60_000);
    }
    const d = driver;
    for (const n of points) {
      // The warm-up sets fewer watches: it warms the code paths, the size is what is measured.
      const size = (warmup: boolean) => (warmup ? Math.min(n, 1000) : n);
      await bench.compare(
        'scale',
        curvePoint(CURVE.reconnectWatches, n),
        'watches',
        [[CLIENT.ours, (w) => oursRewatch(ctx, size(w))], ...(d ? [[CLIENT.java, (w: boolean) => javaRewatch(ctx, d, size(w))] as const] : [])] as ReadonlyArray<readonly [string, Repetition]>,
        reps,
      );
    }
  } finally {
    await driver?.end();
    await proxy.end();
    await eachBatch(most, (from, to) => {
      const t = zk.transaction();
      for (let i = from; i < to; i++) t.delete(`${dir}/${i}`);
      return t.commit();
    });
    await zk.delete(dir);
  }
}

/** CUT, DIALED (the proxy's stamps) and the moment the request after the cut returned, ns. */
interface Stamps {
  readonly cutNs: bigint;
  readonly dialNs: bigint;
  readonly returnedNs: bigint;
  readonly cpuUs: number;
}

/**
 * One repetition with ours: n exists watches (one listener), the cut, and `exists('/')` once the
 * session is `suspended`. It returns only after every watch is re-armed: with `whileDisconnected:
 * 'wait'` the request is held until the session is connected again, and the session
 * (session.ts, #rearm) reports `connected` on a resumed session only once the server has answered
 * every SetWatches batch (split under 128 KiB by rewatch.ts, as Java does).
 */
async function oursRewatch(ctx: WatchContext, n: number): Promise<Sample> {
  const baseline = await serverWatches(ctx.server);
  const client = await ZooKeeper.connect(ctx.proxyConnect, { sessionTimeout: WATCH_SESSION_MS, whileDisconnected: 'wait' });
  try {
    const seen = new FiredPaths();
    const listener = (e: WatchedEvent) => seen.add(e);
    const t0 = performance.now();
    await eachWindowed(n, async (i) => {
      if ((await client.exists(`${ctx.dir}/${i}`, { watch: listener })) === null) throw new Error(`${ctx.dir}/${i} does not exist`);
    });
    const setMs = performance.now() - t0;
    if (client.watchCount !== n) throw new Error(`ours holds ${client.watchCount} watches, expected ${n}`);
    const id = client.sessionId;
    const suspended = new Promise<void>((resolve) => {
      const off = client.onStateChange((state) => state === 'suspended' && (off(), resolve()));
    });
    const cpu0 = process.cpuUsage();
    ctx.proxy.send('cut');
    await suspended;
    await client.exists('/');
    const returnedNs = process.hrtime.bigint();
    const cpu = process.cpuUsage(cpu0);
    if (client.sessionId !== id) throw new Error('ours: the session changed across the reconnect');
    const stamps = { ...(await proxyStamps(ctx.proxy)), returnedNs, cpuUs: cpu.user + cpu.system };
    return await rewatchSample(ctx, n, baseline, stamps, setMs, (k) => seen.wait(k, FIRE_WAIT_MS));
  } finally {
    await client.close();
  }
}

/** One repetition with the Java client, the same steps in the driver's JVM (see ScaleBenchDriver.rearm). */
async function javaRewatch(ctx: WatchContext, d: LineChild, n: number): Promise<Sample> {
  const baseline = await serverWatches(ctx.server);
  const opened = await ask(d, `open ${ctx.proxyConnect} ${ctx.dir} ${n}`, 'OPENED');
  try {
    d.send('rearm');
    await d.line('ARMED', JAVA_WAIT_MS);
    ctx.proxy.send('cut');
    const r = await reply(d, 'rearm', 'REARMED');
    const stamps = { ...(await proxyStamps(ctx.proxy)), returnedNs: BigInt(r.returnedNs as string), cpuUs: Number(r.cpuUs) };
    return await rewatchSample(ctx, n, baseline, stamps, Number(opened.setMs), async (k) => {
      const f = await ask(d, `fired ${k} ${FIRE_WAIT_MS}`, 'FIRED');
      return { fired: Number(f.fired), other: Number(f.other) };
    });
  } finally {
    await ask(d, 'close', 'CLOSED');
  }
}

async function proxyStamps(proxy: LineChild): Promise<{ cutNs: bigint; dialNs: bigint }> {
  const [cut, dial] = await Promise.all([proxy.line('CUT'), proxy.line('DIALED', JAVA_WAIT_MS)]);
  return { cutNs: BigInt(cut.text.split(' ')[1]!), dialNs: BigInt(dial.text.split(' ')[1]!) };
}

/**
 * The repetition's sample, once the server's watch count is read and a sample of the watched
 * nodes changed (each must fire: a client that re-armed nothing would fail here, not post a fast
 * time). ops: watches; seconds: cut until the request returned (rearmMs). dialMs: cut until the
 * client's new connection reached the proxy (its reconnect delay: none for ours; the Java client
 * 3.8 sleeps 100 ms in ClientCnxnSocketNIO.cleanup, a random 0-1 s before every reconnect, and
 * 1 s more when it has tried every server of its connect string since the last success, here the
 * only one: 1.2-2 s measured); afterDialMs the rest, which grows with n. watchesOnServer: `wchs` total less the same before the session (no figure without the
 * four-letter words).
 */
async function rewatchSample(ctx: WatchContext, n: number, baseline: number | undefined, s: Stamps, setMs: number, fired: (k: number) => Promise<{ fired: number; other: number }>): Promise<Sample> {
  const after = await serverWatches(ctx.server);
  const k = Math.min(SAMPLE, n);
  const paths = Array.from({ length: k }, (_, j) => `${ctx.dir}/${Math.floor((j * n) / k)}`);
  await Promise.all(paths.map((p) => ctx.zk.setData(p, 'changed')));
  const f = await fired(k);
  if (f.fired !== k) throw new Error(`${f.fired} of ${k} sampled watches fired after the reconnect (n = ${n})`);
  const ms = (a: bigint, b: bigint) => Number(b - a) / 1e6;
  const rearmMs = ms(s.cutNs, s.returnedNs);
  return {
    ops: n,
    seconds: rearmMs / 1000,
    latenciesUs: [],
    cpuUs: s.cpuUs,
    metrics: {
      rearmMs,
      dialMs: ms(s.cutNs, s.dialNs),
      afterDialMs: ms(s.dialNs, s.returnedNs),
      firedSample: f.fired,
      sample: k,
      otherEvents: f.other,
      setMs,
      ...(after !== undefined && baseline !== undefined ? { watchesOnServer: after - baseline } : {}),
    },
  };
}

/** NodeDataChanged paths a listener saw, and a wait for k of them. */
class FiredPaths {
  readonly #paths = new Set<string>();
  #other = 0;
  #waiter: { k: number; resolve: () => void } | undefined;

  add(e: WatchedEvent): void {
    if (e.type !== 'NodeDataChanged') this.#other++;
    else this.#paths.add(e.path);
    if (this.#waiter && this.#paths.size >= this.#waiter.k) this.#waiter.resolve();
  }

  /** Resolves once `k` distinct paths fired, or after `timeoutMs` with what did. */
  async wait(k: number, timeoutMs: number): Promise<{ fired: number; other: number }> {
    if (this.#paths.size < k) {
      let timer: NodeJS.Timeout | undefined;
      await new Promise<void>((resolve) => {
        this.#waiter = { k, resolve };
        timer = setTimeout(resolve, timeoutMs);
      });
      clearTimeout(timer);
      this.#waiter = undefined;
    }
    return { fired: this.#paths.size, other: this.#other };
  }
}

async function sessionsCurve(bench: Bench, connect: string, points: number[], classpath: string | undefined, reps: number): Promise<void> {
  for (const n of points) {
    const size = (warmup: boolean) => (warmup ? Math.min(n, 100) : n);
    await bench.compare(
      'scale',
      curvePoint(CURVE.sessions, n),
      'sessions',
      [
        [CLIENT.ours, (w) => nodeSessions(size(w), () => ZooKeeper.connect(connect, { sessionTimeout: SESSION_MS }), (c) => c.close())],
        [CLIENT.nzc, (w) => nodeSessions(size(w), () => withTimeout(connectNzc(connect), JAVA_WAIT_MS, 'node-zookeeper-client connect'), async (c: NzcClient) => c.close())],
        ...(classpath ? [[CLIENT.java, (w: boolean) => javaSessions(classpath, connect, size(w))] as const] : []),
      ] as ReadonlyArray<readonly [string, Repetition]>,
      reps,
    );
  }
}

/**
 * n sessions of a Node client (ours or node-zookeeper-client) connected together in this
 * process: the time until the last is usable (ops/s: sessions connected per second), each
 * session's time until it was (latencies), and what they hold after full collections: the V8
 * heap plus ArrayBuffers (Buffers live outside the V8 heap; the JVM's heap holds its byte[]), and
 * the resident set. Then closed.
 */
async function nodeSessions<C>(n: number, open: () => Promise<C>, close: (c: C) => Promise<void>): Promise<Sample> {
  const m0 = memory();
  const overflows0 = listenOverflows();
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const latenciesUs: number[] = [];
  const settled = await Promise.allSettled(
    Array.from({ length: n }, () =>
      open().then((c) => {
        latenciesUs.push((performance.now() - t0) * 1000);
        return c;
      }),
    ),
  );
  const seconds = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  const overflows = listenOverflows();
  const clients = settled.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
  try {
    const failed = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
    if (failed) throw failed.reason;
    const m1 = memory();
    return sessionsSample(n, seconds, latenciesUs, cpu.user + cpu.system, m1.heap - m0.heap, m1.rss - m0.rss, overflows0, overflows);
  } finally {
    await Promise.all(clients.map(close));
  }
}

/**
 * The same with the Java client, in a JVM of its own that first connects and closes
 * {@link JAVA_WARM_SESSIONS} sessions (heap: used heap after System.gc()). The measured sessions
 * are not closed there: in one JVM the Java client closes sessions 100 ms each, one after another
 * (ScaleBenchDriver.closeAll), 100 s for 1,000. The JVM is killed instead and each session is
 * closed from here, resumed by its id and password (so the server does not expire 1,000 sessions
 * in the middle of the next repetition).
 */
async function javaSessions(classpath: string, connect: string, n: number): Promise<Sample> {
  const d = new LineChild('Java scale driver', 'java', ['-cp', classpath, 'ScaleBenchDriver']);
  let r: Record<string, unknown>;
  let overflows0: number | undefined;
  let overflows: number | undefined;
  try {
    await d.line('READY', 60_000);
    d.send(`sessions ${connect} ${JAVA_WARM_SESSIONS} ${n}`);
    // Counted from here: the driver's 20 warm-up connects are in too.
    overflows0 = listenOverflows();
    r = await reply(d, 'sessions', 'SESSIONS');
    overflows = listenOverflows();
  } finally {
    await d.kill();
  }
  await closeSessions(connect, r.sessions as Array<[string, string]>);
  const sample = sessionsSample(n, Number(r.connectUs) / 1e6, (r.latenciesUs as number[]).map(Number), Number(r.cpuUs), Number(r.heapBytes), Number(r.rssBytes), overflows0, overflows);
  return { ...sample, metrics: { ...sample.metrics, threadsPerSession: Number(r.threads) / n } };
}

/** Ends sessions another process left open: each resumed by id and password, then closed, 100 at a time. */
async function closeSessions(connect: string, sessions: ReadonlyArray<readonly [string, string]>): Promise<void> {
  for (let i = 0; i < sessions.length; i += 100) {
    await Promise.all(
      sessions.slice(i, i + 100).map(async ([id, password]) => {
        const c = await ZooKeeper.connect(connect, { sessionTimeout: SESSION_MS, session: { id: BigInt(`0x${id}`), password: Buffer.from(password, 'hex') } });
        await c.close();
      }),
    );
  }
}

/**
 * listenOverflows: the machine's TCP ListenOverflows count grew by this much meanwhile (a
 * connect refused by a full accept queue is retried by the kernel a second later: a slow point
 * with overflows says so).
 */
function sessionsSample(n: number, seconds: number, latenciesUs: number[], cpuUs: number, heapBytes: number, rssBytes: number, overflows0: number | undefined, overflows: number | undefined): Sample {
  return {
    ops: n,
    seconds,
    latenciesUs,
    cpuUs,
    metrics: {
      connectMs: seconds * 1000,
      heapKiBPerSession: heapBytes / n / 1024,
      rssKiBPerSession: rssBytes / n / 1024,
      ...(overflows0 !== undefined && overflows !== undefined ? { listenOverflows: overflows - overflows0 } : {}),
    },
  };
}

/** The V8 heap plus ArrayBuffers, and the resident set, after full collections (with --expose-gc), bytes. */
function memory(): { heap: number; rss: number } {
  for (let i = 0; i < 4; i++) (globalThis as { gc?: () => void }).gc?.();
  const m = process.memoryUsage();
  return { heap: m.heapUsed + m.arrayBuffers, rss: m.rss };
}

/** TcpExt ListenOverflows of /proc/net/netstat (Linux), or undefined. */
function listenOverflows(): number | undefined {
  try {
    const lines = readFileSync('/proc/net/netstat', 'utf8').split('\n').filter((l) => l.startsWith('TcpExt:'));
    const names = lines[0]?.split(/\s+/) ?? [];
    const i = names.indexOf('ListenOverflows');
    const value = i > 0 ? Number(lines[1]?.split(/\s+/)[i]) : Number.NaN;
    return Number.isFinite(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

/** The server's total watch count (`wchs`), or undefined when it does not answer with one. */
async function serverWatches(server: Server): Promise<number | undefined> {
  try {
    const m = /Total watches:\s*(\d+)/.exec(await fourLetter(server.host, server.port, 'wchs'));
    return m ? Number(m[1]) : undefined;
  } catch {
    return undefined;
  }
}

/** Sends a command to the Java driver and awaits its reply line. */
async function ask(d: LineChild, command: string, word: string): Promise<Record<string, unknown>> {
  d.send(command);
  return reply(d, command.split(' ')[0]!, word);
}

/** The driver's `word {json}` line; a failed command answers `word {"error": ...}`. */
async function reply(d: LineChild, command: string, word: string): Promise<Record<string, unknown>> {
  const line = await d.line(word, JAVA_WAIT_MS);
  const r = JSON.parse(line.text.slice(word.length + 1)) as Record<string, unknown>;
  if (typeof r.error === 'string') throw new Error(`Java scale driver, ${command}: ${r.error}`);
  return r;
}

/** `fn(i)` for i < n with {@link WINDOW} calls in flight. */
async function eachWindowed(n: number, fn: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(WINDOW, n) }, async () => {
      while (next < n) await fn(next++);
    }),
  );
}

/** `fn(from, to)` over [0, n) in {@link BATCH}es, 4 in flight, after `first` when given. */
async function eachBatch(n: number, fn: (from: number, to: number) => Promise<unknown>, first?: () => Promise<unknown>): Promise<void> {
  await first?.();
  let next = 0;
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      while (next < n) {
        const from = next;
        next = Math.min(n, next + BATCH);
        await fn(from, next);
      }
    }),
  );
}

function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms)));
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}

function firstServer(connect: string): Server {
  const first = connect.split(',')[0]!.replace(/\/.*$/, '');
  const colon = first.lastIndexOf(':');
  return { host: first.slice(0, colon), port: Number(first.slice(colon + 1)) };
}

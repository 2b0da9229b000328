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
 *   they hold (scale-sessions.ts).
 *
 * The Java client runs in bench/java/ScaleBenchDriver.java (scale-driver.ts speaks to it).
 */
import { fileURLToPath } from 'node:url';
import { ZooKeeper, type WatchedEvent } from '@zk/protocol';
import { compileCurator, curatorMissing, fourLetter, type CompiledJava } from '@zk/test/harness';
import { JVM_METER } from '../peers/java.js';
import type { Bench, Repetition } from '../lib/bench.js';
import { LineChild } from '../lib/child.js';
import { CLIENT, CURVE, curvePoint } from '../lib/names.js';
import type { Sample } from '../lib/stats.js';
import { ask, JAVA_WAIT_MS, reply, startScaleDriver } from './scale-driver.js';
import { sessionsCurve } from './scale-sessions.js';

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
/** How long a sampled change may take to reach the watching client. */
const FIRE_WAIT_MS = 10_000;

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
  else compiled = compileCurator([JAVA_SOURCE, JVM_METER]);
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
    if (classpath) driver = await startScaleDriver(classpath);
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

/** The server's total watch count (`wchs`), or undefined when it does not answer with one. */
async function serverWatches(server: Server): Promise<number | undefined> {
  try {
    const m = /Total watches:\s*(\d+)/.exec(await fourLetter(server.host, server.port, 'wchs'));
    return m ? Number(m[1]) : undefined;
  } catch {
    return undefined;
  }
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

function firstServer(connect: string): Server {
  const first = connect.split(',')[0]!.replace(/\/.*$/, '');
  const colon = first.lastIndexOf(':');
  return { host: first.slice(0, colon), port: Number(first.slice(colon + 1)) };
}

/**
 * The curve of sessions in one process (issue 16, see scale-client.ts): n sessions of ours,
 * node-zookeeper-client and the Java client connected together, the time until the last is
 * usable, and the memory they hold.
 */
import { readFileSync } from 'node:fs';
import { ZooKeeper } from '@zk/protocol';
import type { Bench, Repetition } from '../lib/bench.js';
import { CLIENT, CURVE, curvePoint } from '../lib/names.js';
import type { Sample } from '../lib/stats.js';
import { connectNzc, type NzcClient } from '../peers/nzc.js';
import { JAVA_WAIT_MS, reply, startScaleDriver } from './scale-driver.js';

/** Session timeout of the sessions curve (node-zookeeper-client's, fixed in peers/nzc.ts). */
const SESSION_MS = 10_000;
/** Sessions the Java driver connects and closes before the measured ones (closing takes 100 ms each). */
const JAVA_WARM_SESSIONS = 20;

/** Runs the points `points` (n, already scaled); the Java client's beside when `classpath` (ScaleBenchDriver compiled). */
export async function sessionsCurve(bench: Bench, connect: string, points: number[], classpath: string | undefined, reps: number): Promise<void> {
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
  const d = await startScaleDriver(classpath);
  let r: Record<string, unknown>;
  let overflows0: number | undefined;
  let overflows: number | undefined;
  try {
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

function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms)));
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}

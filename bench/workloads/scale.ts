/**
 * The lock scale curves (issue 16): waiters queued on one Mutex and Mutexes held by one session,
 * each at growing n, ours against Curator's InterProcessMutex. Every repetition runs in a fresh
 * process (ours: workloads/scale-child.ts; Curator: java/ScaleLockDriver.java, one JVM per
 * repetition), so the heap and the resident memory a point adds are its own.
 */
import { fileURLToPath } from 'node:url';
import { compileCurator, type CompiledJava } from '@zk/test/harness';
import { JVM_METER } from '../peers/java.js';
import type { Bench, Repetition } from '../lib/bench.js';
import { LineChild } from '../lib/child.js';
import { CLIENT, CURVE, curvePoint } from '../lib/names.js';
import type { Sample } from '../lib/stats.js';

const JAVA_SOURCE = fileURLToPath(new URL('../../java/ScaleLockDriver.java', import.meta.url));
const NODE_CHILD = fileURLToPath(new URL('./scale-child.js', import.meta.url));

/** The points of each curve (before `--quick` shrinks them). */
export const WAITER_POINTS = [100, 1_000, 10_000] as const;
export const LOCK_POINTS = [1_000, 10_000, 100_000] as const;
/** Sessions the waiters are spread over (ours and Curator alike). */
const WAITER_SESSIONS = 10;
/** Acquires in flight while one session takes many locks. */
const IN_FLIGHT = 64;
/** Warm-ups (one per client and point) run at most this many waiters or locks: they warm the server, the figures come from the repetitions. */
const WARMUP_MAX = 1_000;

/** One repetition's line from either child. */
interface ChildResult {
  ops: number;
  seconds: number;
  cpuUs: number;
  heapBytes: number;
  rssBytes: number;
  threads?: number;
  notificationsPerRelease?: number;
  waiterNotificationsPerRelease?: number;
}

/**
 * Runs the lock scale curves under `base`; Curator's beside ours when `curator` (the Java peer
 * runs). A Curator repetition that fails (a JVM that cannot start another thread) drops Curator
 * from that point and the larger ones, with the reason in `bench.skipped`.
 */
export async function scaleWorkloads(bench: Bench, connect: string, base: string, curator: boolean): Promise<void> {
  const waiterPoints = WAITER_POINTS.map((n) => bench.n(n, 10));
  const lockPoints = LOCK_POINTS.map((n) => bench.n(n, 100));
  const points = [...waiterPoints.map((n) => curvePoint(CURVE.waiters, n)), ...lockPoints.map((n) => curvePoint(CURVE.locksHeld, n))];
  if (!points.some((p) => bench.wants(p))) return;
  const reps = Math.max(1, Math.min(3, Math.round(bench.scale * 3)));
  const java = curator ? compileCurator([JAVA_SOURCE, JVM_METER]) : undefined;
  let run = 0;
  try {
    for (const [curve, ns, command, unit, per] of [
      [CURVE.waiters, waiterPoints, 'waiters', 'hand-offs', 'Waiter'],
      [CURVE.locksHeld, lockPoints, 'locks', 'acquisitions', 'Lock'],
    ] as const) {
      // Set when Curator failed at a point: the larger points leave it out too.
      let peerStopped: string | undefined;
      for (const n of ns) {
        const workload = curvePoint(curve, n);
        if (!bench.wants(workload)) continue;
        const k = command === 'waiters' ? WAITER_SESSIONS : IN_FLIGHT;
        const size = (w: boolean) => (w ? Math.min(n, WARMUP_MAX) : n);
        const ours: Repetition = async (w) => sample(await oursChild(connect, command, `${base}/scale-${command}/${run++}`, size(w), k), size(w), per);
        let failure: string | undefined;
        const peer: Repetition = async (w) => {
          // After a failure the remaining repetitions return at once; the row is dropped below.
          if (failure !== undefined) return { ops: 0, seconds: 1, latenciesUs: [], cpuUs: 0 };
          try {
            return sample(await javaChild(java!, connect, command, `${base}/scale-${command}-curator/${run++}`, size(w), k), size(w), per);
          } catch (e) {
            failure = (e as Error).message.split('\n')[0];
            return { ops: 0, seconds: 1, latenciesUs: [], cpuUs: 0 };
          }
        };
        const withPeer = java !== undefined && peerStopped === undefined;
        await bench.compare('scale', workload, unit, [[CLIENT.ours, ours], ...(withPeer ? [[CLIENT.curator, peer] as const] : [])], reps);
        if (failure !== undefined) {
          const i = bench.rows.findIndex((r) => r.workload === workload + bench.suffix && r.client === CLIENT.curator);
          if (i >= 0) bench.rows.splice(i, 1);
          peerStopped = `${n.toLocaleString('en-US')}`;
          bench.skipped[`${CLIENT.curator}, ${curve}: n >= ${peerStopped}`] = failure;
        }
      }
    }
  } finally {
    java?.remove();
  }
}

/** A child's result as a repetition's sample, memory per item in KiB. */
function sample(r: ChildResult, n: number, per: 'Waiter' | 'Lock'): Sample {
  if (r.ops !== n) throw new Error(`the child did ${r.ops} of ${n}`);
  const metrics: Record<string, number> = { [`heapKiBPer${per}`]: r.heapBytes / 1024 / n, [`rssKiBPer${per}`]: r.rssBytes / 1024 / n };
  if (r.notificationsPerRelease !== undefined) metrics['notificationsPerRelease'] = r.notificationsPerRelease;
  if (r.waiterNotificationsPerRelease !== undefined) metrics['waiterNotificationsPerRelease'] = r.waiterNotificationsPerRelease;
  if (r.threads !== undefined) metrics['threads'] = r.threads;
  return { ops: r.ops, seconds: r.seconds, latenciesUs: [], cpuUs: r.cpuUs, metrics };
}

/** Runs one child to its RESULT line; rejects with its ERROR line (or its exit). */
async function result(child: LineChild, timeoutMs: number): Promise<ChildResult> {
  try {
    // Both waits settle when the child exits (the kill below), and the race handles both.
    const line = await Promise.race([child.line('RESULT', timeoutMs), child.line('ERROR', timeoutMs).then((l) => Promise.reject(new Error(l.text.slice(6))))]);
    return JSON.parse(line.text.slice(7)) as ChildResult;
  } finally {
    await child.kill();
  }
}

/** A point's time limit: 10,000 waiters list a long queue on every hand-off. */
const limitMs = (n: number) => 180_000 + 40 * n;

function oursChild(connect: string, command: string, path: string, n: number, k: number): Promise<ChildResult> {
  return result(new LineChild('scale child (ours)', process.execPath, ['--expose-gc', NODE_CHILD, connect, command, path, String(n), String(k)]), limitMs(n));
}

function javaChild(java: CompiledJava, connect: string, command: string, path: string, n: number, k: number): Promise<ChildResult> {
  return result(new LineChild('ScaleLockDriver (Curator)', 'java', ['-cp', java.classpath, 'ScaleLockDriver', connect, command, path, String(n), String(k)]), limitMs(n));
}

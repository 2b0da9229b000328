/**
 * In-process hand-offs (issue 16): many contenders of one process on one lock path, ours with
 * and without the Mutex `localQueue` option, Curator's InterProcessMutex shared by threads beside
 * them. Two shapes: 32 contenders on one session (one process), and 4 sessions x 8 contenders
 * (four processes' worth: each session with its own Mutex object and local queue, all in this
 * one Node process, as Curator's four sessions share its one JVM).
 */
import { ZooKeeper } from '@zk/protocol';
import { Mutex } from '@zk/locks';
import type { Bench, Repetition } from '../lib/bench.js';
import { CLIENT, WORKLOAD } from '../lib/names.js';
import { timed, type Sample } from '../lib/stats.js';
import type { JavaDriver } from '../peers/java.js';

/** The bound used for `localQueue` here (the option's default). */
const MAX_HANDOFFS = 8;

/** Runs the hand-off workloads under `base`. */
export async function handoffWorkloads(bench: Bench, connect: string, java: JavaDriver | undefined, base: string): Promise<void> {
  const seconds = Math.max(1, 5 * bench.scale);
  for (const [sessions, perSession] of [
    [1, 32],
    [4, 8],
  ] as const) {
    const workload = WORKLOAD.localHandoffs(sessions, perSession);
    if (!bench.wants(workload)) continue;
    const clients = await Promise.all(Array.from({ length: sessions }, () => ZooKeeper.connect(connect, { sessionTimeout: 10_000 })));
    try {
      const path = `${base}/handoff-${sessions}x${perSession}`;
      const run =
        (localQueue: boolean): Repetition =>
        (w) =>
          contend(
            clients.map((zk) => new Mutex(zk, `${path}-${localQueue ? 'local' : 'plain'}`, localQueue ? { localQueue: { maxHandoffs: MAX_HANDOFFS } } : {})),
            perSession,
            w ? 1 : seconds,
          );
      await bench.compare('locks', workload, 'hand-offs', [
        [CLIENT.oursLocalQueue, run(true)],
        [CLIENT.ours, run(false)],
        ...(java ? [[CLIENT.curator, (w: boolean) => java.run({ workload: 'mutexContended', path: `${path}-curator`, sessions, threads: perSession, seconds: w ? 1 : seconds })] as const] : []),
      ]);
    } finally {
      await Promise.all(clients.map((c) => c.close()));
    }
  }
}

/**
 * `perLock` contenders on each lock loop acquire/release (no hold) for `seconds`. ops: hand-offs;
 * latencies: the gap from one release call to the next acquire returning. Metrics: longestWaitMs
 * (the longest acquire, call to return: what the fairness bound limits), and per lock object the
 * share of the hand-offs (minShare: the least served session's share x the number of sessions,
 * 1 when even).
 */
async function contend(locks: readonly Mutex[], perLock: number, seconds: number): Promise<Sample> {
  const gaps: number[] = [];
  const perSession = locks.map(() => 0);
  let lastRelease: number | undefined;
  let longestWait = 0;
  const deadline = performance.now() + seconds * 1000;
  const sample = await timed(async () => {
    await Promise.all(
      locks.flatMap((lock, s) =>
        Array.from({ length: perLock }, async () => {
          while (performance.now() < deadline) {
            const asked = performance.now();
            const lease = await lock.acquire();
            const t = performance.now();
            if (t < deadline) {
              longestWait = Math.max(longestWait, t - asked);
              perSession[s]!++;
              if (lastRelease !== undefined) gaps.push((t - lastRelease) * 1000);
            }
            lastRelease = performance.now();
            await lease.release();
          }
        }),
      ),
    );
    return { ops: gaps.length, latenciesUs: gaps, seconds };
  });
  const total = perSession.reduce((a, b) => a + b, 0);
  const minShare = locks.length > 1 && total > 0 ? (Math.min(...perSession) / total) * locks.length : 1;
  return { ...sample, metrics: { longestWaitMs: longestWait, minShare } };
}

/**
 * Semaphore workloads: sessions contending for the permits of one Semaphore (Curator's
 * InterProcessSemaphoreV2 layout), ours and Curator's InterProcessSemaphoreV2 in the same run.
 */
import { ZooKeeper } from '@zk/protocol';
import { Semaphore } from '@zk/locks';
import type { Bench, Repetition } from '../lib/bench.js';
import { CLIENT, WORKLOAD } from '../lib/names.js';
import { median, timed, type Sample } from '../lib/stats.js';
import type { JavaDriver } from '../peers/java.js';

/** Permits of the contended semaphore: fewer than the sessions, so acquirers wait for each other. */
const PERMITS = 4;

/** Runs the semaphore workloads under `base`. */
export async function semaphoreWorkloads(bench: Bench, connect: string, java: JavaDriver | undefined, base: string): Promise<void> {
  const seconds = Math.max(1, 5 * bench.scale);
  for (const count of [8, 32]) {
    const workload = WORKLOAD.semaphore(count, PERMITS);
    if (!bench.wants(workload)) continue;
    const clients = await Promise.all(Array.from({ length: count }, () => ZooKeeper.connect(connect, { sessionTimeout: 10_000 })));
    const path = `${base}/semaphore-${count}`;
    const semaphores = clients.map((c) => new Semaphore(c, path, { maxLeases: PERMITS }));
    const ours: Repetition = (w) => contend(semaphores, w ? 1 : seconds);
    await bench.compare('locks', workload, 'acquisitions', [
      [CLIENT.ours, ours],
      ...(java ? [[CLIENT.curator, (w: boolean) => java.run({ workload: 'semaphoreContended', path: `${path}-curator`, sessions: count, permits: PERMITS, seconds: w ? 1 : seconds })] as const] : []),
    ]);
    await Promise.all(clients.map((c) => c.close()));
  }
}

/**
 * Every session loops acquire and release of one permit, no hold, for `seconds`: acquisitions
 * (those returning inside the window) and the acquire's latency; metric releaseP50Us.
 */
async function contend(semaphores: readonly Semaphore[], seconds: number): Promise<Sample> {
  const latenciesUs: number[] = [];
  const releases: number[] = [];
  const deadline = performance.now() + seconds * 1000;
  const sample = await timed(async () => {
    await Promise.all(
      semaphores.map(async (semaphore) => {
        while (performance.now() < deadline) {
          const t0 = performance.now();
          const lease = await semaphore.acquire();
          const t = performance.now();
          await lease.release();
          if (t < deadline) {
            latenciesUs.push((t - t0) * 1000);
            releases.push((performance.now() - t) * 1000);
          }
        }
      }),
    );
    return { ops: latenciesUs.length, latenciesUs, seconds };
  });
  return { ...sample, metrics: { releaseP50Us: median(releases) } };
}

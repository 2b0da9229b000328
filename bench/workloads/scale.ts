/**
 * Scale: many locks held on one session, many sessions in one process.
 */
import { ZooKeeper } from '@zk/protocol';
import { Mutex, type Lease } from '@zk/locks';
import { heapMiB, type Bench } from '../lib/bench.js';
import { CLIENT, WORKLOAD } from '../lib/names.js';
import { timed, type Sample } from '../lib/stats.js';

/** Runs the scale workloads under `base`. */
export async function scaleWorkloads(bench: Bench, connect: string, zk: ZooKeeper, base: string): Promise<void> {
  const reps = Math.max(1, Math.min(3, Math.round(bench.scale * 3)));
  const locks = bench.n(10_000, 500);
  let run = 0;
  await bench.compare('scale', WORKLOAD.manyLocks(10_000), 'acquisitions', [[CLIENT.ours, (w) => manyLocks(zk, `${base}/many/${run++}`, w ? 500 : locks)]], reps);
  const sessions = bench.n(100, 20);
  await bench.compare('scale', WORKLOAD.manySessions(100), 'ops', [[CLIENT.ours, (w) => manySessions(connect, w ? 10 : sessions, w ? 10 : 200)]], reps);
}

/**
 * `count` Mutexes on distinct paths acquired by one session (64 acquires in flight) and all held
 * at once: acquisitions per second and the heap they hold; then released (not timed).
 */
async function manyLocks(zk: ZooKeeper, base: string, count: number): Promise<Sample> {
  const mutexes = Array.from({ length: count }, (_, i) => new Mutex(zk, `${base}/${i}`));
  const leases: Lease[] = [];
  const heap0 = heapMiB();
  let next = 0;
  const sample = await timed(async () => {
    await Promise.all(
      Array.from({ length: 64 }, async () => {
        while (next < count) leases.push(await mutexes[next++]!.acquire());
      }),
    );
    return { ops: count };
  });
  const heap = heapMiB() - heap0;
  for (let i = 0; i < leases.length; i += 256) await Promise.all(leases.slice(i, i + 256).map((l) => l.release()));
  return { ...sample, metrics: { heapMiB: heap, heapKiBPerLock: (heap * 1024) / count } };
}

/**
 * `count` sessions connected at once, then each reads `reads` times one after another, all
 * sessions in parallel: connect time of the lot, heap per session, and the read rate.
 */
async function manySessions(connect: string, count: number, reads: number): Promise<Sample> {
  const heap0 = heapMiB();
  const t0 = performance.now();
  const clients = await Promise.all(Array.from({ length: count }, () => ZooKeeper.connect(connect, { sessionTimeout: 10_000 })));
  const connectMs = performance.now() - t0;
  const heap = heapMiB() - heap0;
  try {
    const sample = await timed(async () => {
      await Promise.all(
        clients.map(async (c) => {
          for (let i = 0; i < reads; i++) await c.exists('/');
        }),
      );
      return { ops: count * reads };
    });
    return { ...sample, metrics: { connectMs, heapMiB: heap, heapKiBPerSession: (heap * 1024) / count } };
  } finally {
    await Promise.all(clients.map((c) => c.close()));
  }
}

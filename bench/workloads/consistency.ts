/**
 * The cost of read consistency (issue 39): getData of a 100-byte node at 1 and 64 outstanding,
 * plain, then `sync` and the read as an application writes it today (`await zk.sync()`, then
 * getData: two round trips), then `{ consistency: 'sync' }` (the sync pipelined before the reads of
 * a tick) and `{ consistency: 'linearizable' }` (the quorum proof's no-op write pipelined before
 * the reads of a tick: one transaction per tick, fsynced by a quorum). One client of ours, default
 * options; `--only consistency` runs just these rows.
 */
import { ZooKeeper } from '@zk/protocol';
import type { Bench, Repetition } from '../lib/bench.js';
import { measure } from '../lib/stats.js';

/** The row names. */
export const CONSISTENCY_WORKLOAD = {
  get1: 'getData 100 B by read consistency, 1 outstanding',
  get64: 'getData 100 B by read consistency, 64 outstanding',
} as const;

/** Runs the read-consistency rows against `connect` under `base` (created by the caller). */
export async function consistencyWorkloads(bench: Bench, connect: string, base: string): Promise<void> {
  if (!bench.wants(CONSISTENCY_WORKLOAD.get1) && !bench.wants(CONSISTENCY_WORKLOAD.get64)) return;
  const zk = await ZooKeeper.connect(connect, { sessionTimeout: 10_000 });
  try {
    const node = `${base}/consistency`;
    await zk.create(node, Buffer.alloc(100, 7));
    const clients = (n: number, outstanding: number): Array<readonly [string, Repetition]> => {
      const warm = (w: boolean) => (w ? Math.max(50, Math.round(n / 5)) : n);
      return [
        ['plain', (w) => measure(warm(w), outstanding, () => zk.getData(node))],
        ['sync, then read (two round trips)', (w) => measure(warm(w), outstanding, async () => { await zk.sync(node); return zk.getData(node); })],
        ["consistency: 'sync' (pipelined)", (w) => measure(warm(w), outstanding, () => zk.getData(node, { consistency: 'sync' }))],
        ["consistency: 'linearizable'", (w) => measure(warm(w), outstanding, () => zk.getData(node, { consistency: 'linearizable' }))],
      ];
    };
    await bench.compare('raw', CONSISTENCY_WORKLOAD.get1, 'ops', clients(bench.n(1000, 50), 1));
    await bench.compare('raw', CONSISTENCY_WORKLOAD.get64, 'ops', clients(bench.n(20_000, 500), 64));
  } finally {
    await zk.close();
  }
}

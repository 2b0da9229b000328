/**
 * Ours in the lease fleet row (issue 35; bench/workloads/fleet.ts): `count` sessions in this
 * process, each holding one Mutex on its own path, idle. bench/java/FleetBenchDriver.java is
 * the Curator side and speaks the same lines:
 *
 *   node fleet-child.js <connect> <path> <first> <count> <sessionTimeoutMs> <optionsJson>
 *
 * `optionsJson` is added to every session's connect options (`leaseProof`, `serverTickTime`).
 * The sessions connect and acquire 50 at a time, lock `<path>/<first + i>` each. Then prints
 * `HOLDING <count> <negotiated session timeout ms>`. On stdin:
 *
 * - `stats`: prints `STATS {"cpuUs","proofs","proofSyncs","lost"}`: this process's CPU so far, the
 *   quorum proof's own round trips settled so far (messages on `zk:proof`; `proofSyncs` those of
 *   kind `sync`, the rest are writes), and leases whose signal aborted.
 * - `release`: releases every lease, then prints `RELEASED`.
 * - stdin ends: closes every session and exits.
 *
 * A failure prints `ERROR <message>` and exits 1.
 * @module
 */
import { subscribe } from 'node:diagnostics_channel';
import { createInterface } from 'node:readline';
import { ChannelName, ZooKeeper } from '@zk/protocol';
import { Mutex, type Lease } from '@zk/locks';

const [connect, path, firstArg, countArg, timeoutArg, optionsArg] = process.argv.slice(2);
if (!connect || !path || !firstArg || !countArg || !timeoutArg || !optionsArg) {
  process.stderr.write('usage: fleet-child.js <connect> <path> <first> <count> <sessionTimeoutMs> <optionsJson>\n');
  process.exit(2);
}
const first = Number(firstArg);
const count = Number(countArg);
const options = JSON.parse(optionsArg) as Record<string, unknown>;
/** Sessions connecting (leases acquiring) at once. */
const BATCH = 50;

let proofs = 0;
let proofSyncs = 0;
subscribe(ChannelName.proof, (m) => {
  proofs++;
  // `kind` since leaseProof (430e5c8); before, every proof was a write.
  if ((m as { kind?: string }).kind === 'sync') proofSyncs++;
});
let lost = 0;

const sessions: ZooKeeper[] = [];
const leases: Lease[] = [];

async function inBatches<T>(n: number, fn: (i: number) => Promise<T>): Promise<T[]> {
  const out: T[] = [];
  for (let i = 0; i < n; i += BATCH) out.push(...(await Promise.all(Array.from({ length: Math.min(BATCH, n - i) }, (_, j) => fn(i + j)))));
  return out;
}

async function closeAll(): Promise<void> {
  await Promise.all(sessions.map((zk) => zk.close().catch(() => undefined)));
}

try {
  // Passed through as given (`leaseProof` is newer than 430e5c8's parent, which ignores it).
  const connectOptions = { sessionTimeout: Number(timeoutArg), ...options } as Parameters<typeof ZooKeeper.connect>[1];
  sessions.push(...(await inBatches(count, () => ZooKeeper.connect(connect, connectOptions))));
  await sessions[0]!.ensurePath(path);
  leases.push(
    ...(await inBatches(count, async (i) => {
      const lease = await new Mutex(sessions[i]!, `${path}/${first + i}`).acquire();
      lease.signal.addEventListener(
        'abort',
        () => {
          lost++;
          // ZK_BENCH_FLEET_TRACE=1: why each lease ended, on stderr.
          if (process.env.ZK_BENCH_FLEET_TRACE === '1') process.stderr.write(`LOST ${first + i} ${String((lease.signal.reason as Error | undefined)?.message ?? lease.signal.reason)}\n`);
        },
        { once: true },
      );
      return lease;
    })),
  );
  process.stdout.write(`HOLDING ${count} ${sessions[0]!.sessionTimeout}\n`);
} catch (e) {
  process.stdout.write(`ERROR ${String((e as Error).message ?? e).replace(/\n/g, ' ')}\n`);
  await closeAll();
  process.exit(1);
}

const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
lines.on('line', (line) => {
  if (line === 'stats') {
    const cpu = process.cpuUsage();
    process.stdout.write(`STATS ${JSON.stringify({ cpuUs: cpu.user + cpu.system, proofs, proofSyncs, lost })}\n`);
  } else if (line === 'release') {
    void Promise.all(leases.splice(0).map((l) => l.release())).then(
      () => process.stdout.write('RELEASED\n'),
      (e: unknown) => process.stdout.write(`ERROR release: ${String((e as Error).message ?? e)}\n`),
    );
  }
});
lines.on('close', () => {
  void closeAll().then(() => process.exit(0));
});

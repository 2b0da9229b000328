/**
 * cron-once: run a scheduled job once per slot, however many machines start it.
 *
 * Every machine's cron starts this program at the same minute. Each one tries the lock once
 * (`tryAcquire`, no waiting): the one that gets it runs the job; the others skip. A lock alone is
 * not enough when clocks or start-up times differ: a late starter could take the lock after the
 * first run released it and run the job again. So the winner also records the run in a node
 * named after the slot, written with `lease.fenced()` (it commits only while the lock is still
 * ours), and every holder checks for that node before running.
 *
 * Run it (a server on 127.0.0.1:2181, or set ZK_CONNECT):
 *   npm run zk -- start
 *   npm run build
 *   for i in 1 2 3; do node examples/dist/cron-once.js & done; wait
 * Output: one process prints "ran nightly-report ...", the others "skipped ...".
 * `node examples/dist/cron-once.js 2026-11-23T02:00` runs a given slot (default: this minute in
 * UTC; passing the scheduled time is safer when clocks may straddle a minute).
 *
 * From a shell, `zk-lock --timeout 0 /cron/nightly-report/lock -- ./job.sh` is the lock half of this:
 * it exits with 75 when another machine holds the lock (add your own record of the run).
 */
import { hostname } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { ZooKeeper } from '@zk/protocol';
import { Mutex, type Lease } from '@zk/locks';

const job = 'nightly-report';
const slot = process.argv[2] ?? new Date().toISOString().slice(0, 16); // e.g. 2026-11-23T02:00
const me = `${hostname()}:${process.pid}`;
const runs = `/cron/${job}/runs`; // one node per slot that ran

await using zk = await ZooKeeper.connect(process.env.ZK_CONNECT ?? '127.0.0.1:2181', { sessionTimeout: 10_000 });
await zk.ensurePath(runs);

const mutex = new Mutex(zk, `/cron/${job}/lock`);
await using lease = await mutex.tryAcquire(); // undefined at once when another process holds it
if (!lease) {
  console.log(`skipped ${job} ${slot}: another process holds the lock (${me})`);
} else if (await zk.exists(`${runs}/${slot}`)) {
  console.log(`skipped ${job} ${slot}: it already ran (${me})`);
} else {
  await runJob(lease);
  // Record the run: commits only while our lock node exists, so a holder that lost the lock
  // meanwhile cannot claim the slot (the commit then rejects with a TransactionError, and the
  // slot may run again elsewhere: fence the job's own writes with the token too, see fenced-write).
  await lease.fenced().create(`${runs}/${slot}`, JSON.stringify({ by: me, token: String(lease.fencingToken) })).commit();
  console.log(`ran ${job} ${slot} with fencing token ${lease.fencingToken} (${me})`);
}
// The lease (if any) is released, then the client closed, as the `await using` scopes end.

/** Stands in for the job: it stops as soon as the lease is at risk. */
async function runJob(lease: Lease): Promise<void> {
  await sleep(200, undefined, { signal: lease.signal });
}

/**
 * leader-worker: work that only the leader may do, stopped the moment leadership is at risk.
 *
 * Start several copies: they join one election (a LeaderSelector, on the same nodes as Curator's),
 * and one at a time leads. The leader does a few units of work, passing its fencing token to what
 * it writes, then returns, and leadership passes to the next. If leadership is lost meanwhile (the
 * session suspended too long or expired, the node deleted), `leadership.signal` aborts: the work
 * stops at once instead of running on beside a new leader.
 *
 * Run it (a server on 127.0.0.1:2181, or set ZK_CONNECT):
 *   npm run zk -- start
 *   npm run build
 *   for id in a b c; do node examples/dist/leader-worker.js $id 3 & done; wait
 * Arguments: [id] (default host:pid) [units of work] (default 5).
 * Exit code: 0 after a term that finished its work, 1 when leadership was lost during it.
 */
import { hostname } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { ZooKeeper } from '@zk/protocol';
import { LeaderSelector, type Leadership } from '@zk/locks';

const id = process.argv[2] ?? `${hostname()}:${process.pid}`;
const units = Number(process.argv[3] ?? 5);

await using zk = await ZooKeeper.connect(process.env.ZK_CONNECT ?? '127.0.0.1:2181', { sessionTimeout: 10_000 });
await using selector = new LeaderSelector(zk, '/services/report-worker/leader', { id });

try {
  // Waits for our turn, runs the function as leader, and gives leadership up when it returns.
  await selector.run(async (leadership) => {
    console.log(`${id} leading with fencing token ${leadership.fencingToken}`);
    for (let unit = 1; unit <= units; unit++) await doUnit(leadership, unit);
    console.log(`${id} done, stepping down`);
  });
} catch (err) {
  // A lost leadership surfaces here: as the abort of our own wait, with the LeaseLostError as its cause.
  const reason = err instanceof Error && err.name === 'AbortError' ? err.cause : err;
  console.log(`${id} stopped: ${reason instanceof Error ? reason.message : String(reason)}`);
  process.exitCode = 1;
}

/** One unit of leader-only work; `signal` makes it stop, and the token fences its write. */
async function doUnit(leadership: Leadership, unit: number): Promise<void> {
  await sleep(100, undefined, { signal: leadership.signal });
  // A real worker passes the token to the resource it writes (see fenced-write).
  console.log(`${id} unit ${unit} written with fencing token ${leadership.fencingToken}`);
}

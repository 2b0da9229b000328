// One LeaderLatch participant in its own process, for the bench's failover workloads
// (bench/workloads/leader.ts); LeaderBenchDriver.java's "participant" mode speaks the same lines
// on Curator. Runs the built packages (`tsc -b` first).
//
//   node leader-participant.mjs <connect> <path> <sessionTimeoutMs> <id> [<leaseProof> [<serverTickTime>]]
//
// Prints "READY <negotiated session timeout ms> <session id, 0x hex>" once connected; stdin "join" starts the latch.
// Prints "LEADER" when leadership comes and "LOST <reason>" the moment its signal aborts. When
// stdin ends it closes the latch and the session and exits.
import { createInterface } from 'node:readline';
import { ZooKeeper } from '@zk/protocol';
import { LeaderLatch, parseAcl, securityFromEnv } from '@zk/locks';

const [connect, path, timeout, id, leaseProof, tick] = process.argv.slice(2);
// The client's proof options (issue 35: the failover rows of each proof mode); unset: the defaults.
const proof = { ...(leaseProof ? { leaseProof } : {}), ...(tick ? { serverTickTime: Number(tick) } : {}) };
// On a secured ensemble, the settings the bench was given (bench/lib/secure.ts).
const secured = { ...securityFromEnv().options, ...(process.env.ZK_BENCH_ACL ? { acl: parseAcl(process.env.ZK_BENCH_ACL) } : {}) };
const zk = await ZooKeeper.connect(connect, { ...secured, ...proof, sessionTimeout: Number(timeout), connectTimeout: Math.min(Number(timeout), 15_000) });
process.stdout.write(`READY ${zk.sessionTimeout} 0x${zk.sessionId.toString(16)}\n`);
let latch;
for await (const line of createInterface({ input: process.stdin, crlfDelay: Infinity })) {
  if (line !== 'join' || latch) continue;
  latch = new LeaderLatch(zk, path, { id });
  latch.onChange((change) => {
    if (!change.isLeader) return;
    process.stdout.write('LEADER\n');
    const { signal } = change.leadership;
    signal.addEventListener('abort', () => process.stdout.write(`LOST ${signal.reason?.message ?? signal.reason}\n`), { once: true });
  });
  latch.start();
}
await latch?.close();
await zk.close();

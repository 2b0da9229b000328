/**
 * node-and-curator: a Node process and a Java process using Apache Curator share one lock.
 *
 * `Mutex` uses the node names and ordering of Curator's `InterProcessMutex`, so both queue on the
 * same path, first come first served, and exclude each other. While holding the lock, each side
 * appends "enter" and "leave" lines to one shared file: no line of the other side ever falls
 * between one side's enter and leave. Both sides start their rounds together, then take turns:
 * each queues again while the other holds the lock. The Java half is examples/CuratorTurns.java.
 *
 * Run it (a server on 127.0.0.1:2181, or set ZK_CONNECT; Java 11+ and Debian's Curator jars:
 * apt-get install libcurator-recipes-java libslf4j-java):
 *   npm run zk -- start
 *   npm run build
 *   rm -f /tmp/zk-example-turns.log
 *   java -cp /usr/share/java/curator-recipes.jar:/usr/share/java/slf4j-nop.jar examples/CuratorTurns.java &
 *   node examples/dist/node-and-curator.js; wait
 *   cat /tmp/zk-example-turns.log
 * Arguments: [rounds] (default 3) [file] (default /tmp/zk-example-turns.log).
 */
import { appendFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { CreateMode, ZooKeeper } from '@zk/protocol';
import { Mutex } from '@zk/locks';

const rounds = Number(process.argv[2] ?? 3);
const file = process.argv[3] ?? '/tmp/zk-example-turns.log';

await using zk = await ZooKeeper.connect(process.env.ZK_CONNECT ?? '127.0.0.1:2181', { sessionTimeout: 10_000 });
const mutex = new Mutex(zk, '/examples/node-and-curator/lock'); // CuratorTurns.LOCK_PATH

// Start together with the Java side: each announces itself under ready/ and waits for the other.
const ready = '/examples/node-and-curator/ready'; // CuratorTurns.READY_PATH
await zk.create(`${ready}/node`, undefined, { mode: CreateMode.EPHEMERAL, parents: 'container' });
const deadline = performance.now() + 30_000;
while ((await zk.getChildren(ready)).length < 2) { // polls: short and plain
  if (performance.now() > deadline) throw new Error('the Curator side did not start within 30 s');
  await sleep(50);
}

for (let round = 1; round <= rounds; round++) {
  await using lease = await mutex.acquire({ timeout: 30_000 });
  await appendFile(file, `enter node ${round}\n`);
  console.log(`node holds the lock, round ${round} (fencing token ${lease.fencingToken})`);
  await sleep(200, undefined, { signal: lease.signal }); // the work done under the lock
  await appendFile(file, `leave node ${round}\n`);
} // each round's lease is released at the end of its iteration
console.log('node done');

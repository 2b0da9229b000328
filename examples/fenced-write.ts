/**
 * fenced-write: why a lock holder passes its fencing token on, and what it buys.
 *
 * A lock cannot stop a holder that was paused (a GC pause, a stalled event loop) past its session
 * timeout from waking up and writing after someone else took the lock. The resource has to refuse
 * it. Two ways, both shown here with two clients in one process:
 *   1. A store outside ZooKeeper remembers the highest fencing token it has seen and rejects
 *      writes with a lower one (`FencedStore` below: a map; in real life a database row's token
 *      column, or a storage service's conditional write).
 *   2. Data in ZooKeeper itself is written with `lease.fenced()`: a transaction that commits only
 *      while the writer's lock node still exists.
 * The stale holder's session expiring is played by deleting its lock node, which is what the
 * expiry does to it; the holder, "paused", does not look at its `lease.signal` before writing.
 *
 * Run it (a server on 127.0.0.1:2181, or set ZK_CONNECT):
 *   npm run zk -- start
 *   npm run build
 *   node examples/dist/fenced-write.js
 * It exits with 0 when both stale writes were refused, 1 otherwise.
 */
import { ZooKeeper } from '@zk/protocol';
import { Mutex } from '@zk/locks';

/** A resource that accepts a write only with a token at least as high as any it has seen. */
class FencedStore {
  readonly #data = new Map<string, string>();
  #highest = -1n;

  write(key: string, value: string, token: bigint): void {
    if (token < this.#highest) throw new Error(`stale fencing token ${token} (highest seen ${this.#highest})`);
    this.#highest = token;
    this.#data.set(key, value);
  }

  read(key: string): string | undefined {
    return this.#data.get(key);
  }
}

const connect = process.env.ZK_CONNECT ?? '127.0.0.1:2181';
await using alice = await ZooKeeper.connect(connect, { sessionTimeout: 10_000 });
await using bob = await ZooKeeper.connect(connect, { sessionTimeout: 10_000 });
const lockPath = '/examples/fenced-write/lock';
const dataPath = '/examples/fenced-write/report';
await alice.ensurePath(dataPath);
const store = new FencedStore();

// Alice takes the lock and writes with her token, to the store and to ZooKeeper.
const aliceLease = await new Mutex(alice, lockPath).acquire();
store.write('report', 'alice v1', aliceLease.fencingToken);
await aliceLease.fenced().setData(dataPath, 'alice v1').commit();
console.log(`alice wrote with token ${aliceLease.fencingToken}`);

// Alice pauses; her session "expires" and her lock node is gone. Bob gets the lock.
await bob.delete(aliceLease.node);
await using bobLease = await new Mutex(bob, lockPath).acquire({ timeout: 5_000 });
store.write('report', 'bob v2', bobLease.fencingToken);
await bobLease.fenced().setData(dataPath, 'bob v2').commit();
console.log(`bob wrote with token ${bobLease.fencingToken}`);

// Alice wakes up and, not checking aliceLease.signal, writes with what she had.
let refused = 0;
try {
  store.write('report', 'alice v1 (stale)', aliceLease.fencingToken);
} catch (err) {
  refused++;
  console.log(`store refused alice: ${(err as Error).message}`);
}
try {
  await aliceLease.fenced().setData(dataPath, 'alice v1 (stale)').commit();
} catch (err) {
  refused++;
  console.log(`zookeeper refused alice: ${(err as Error).message}`);
}
await aliceLease.release(); // the hold is already lost; this only ends the handle
const zkData = (await bob.getData(dataPath)).data.toString();
console.log(`refused ${refused} of 2 stale writes; store has "${store.read('report')}", zookeeper has "${zkData}"`);
process.exitCode = refused === 2 ? 0 : 1;

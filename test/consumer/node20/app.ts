// A consumer program for Node 20: `await using` for the client and the lease, compiled with the
// tsconfig.json beside it. ZK_CONNECT names the server (the test points it at its own).
import { ZooKeeper } from '@zk/protocol';
import { Mutex } from '@zk/locks';

await using zk = await ZooKeeper.connect(process.env.ZK_CONNECT ?? '127.0.0.1:2181', { sessionTimeout: 10_000, createChroot: true });
{
  await using lease = await new Mutex(zk, '/locks/node20').acquire({ timeout: 10_000 });
  console.log(`held with fencing token ${lease.fencingToken}`);
}
console.log(`released: ${(await zk.getChildren('/locks/node20')).length} lock nodes left`);

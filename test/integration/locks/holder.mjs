// A lock holder in its own process, for kill tests: connects, takes the Mutex, says so, waits.
// Runs the built packages (the test command builds before testing).
import { ZooKeeper } from '@zk/protocol';
import { Mutex } from '@zk/locks';

const [connect, path, timeout] = process.argv.slice(2);
const zk = await ZooKeeper.connect(connect, { sessionTimeout: Number(timeout ?? 2000) });
const lease = await new Mutex(zk, path).acquire();
process.stdout.write(`HELD ${lease.fencingToken} ${zk.sessionTimeout}\n`);
setInterval(() => {}, 60_000);

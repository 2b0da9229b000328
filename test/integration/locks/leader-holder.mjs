// A leader in its own process, for kill tests: connects, leads through a LeaderLatch, says so, waits.
// Runs the built packages (the test command builds before testing).
import { ZooKeeper } from '@zk/protocol';
import { LeaderLatch } from '@zk/locks';

const [connect, path, timeout] = process.argv.slice(2);
const zk = await ZooKeeper.connect(connect, { sessionTimeout: Number(timeout ?? 2000) });
const latch = new LeaderLatch(zk, path, { id: `pid-${process.pid}` });
latch.start();
const leadership = await latch.leadership();
process.stdout.write(`LEADS ${leadership.fencingToken} ${zk.sessionTimeout}\n`);
setInterval(() => {}, 60_000);

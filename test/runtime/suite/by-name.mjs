/**
 * A program of the suite's "allowed only the connect string's host:port" check: connects to the
 * connect string given as its argument, writes and reads a node, prints `ok`. It reads no
 * environment variable and no host name of its own, so that on Deno a network grant is all it
 * needs.
 */
import { ZooKeeper } from '@zk/protocol';

const zk = await ZooKeeper.connect(process.argv[2], { sessionTimeout: 10_000, connectTimeout: 3000 });
try {
  await zk.create('/scoped', 'x');
  if ((await zk.getData('/scoped')).data.toString() !== 'x') throw new Error('read back something else');
  process.stdout.write('ok\n');
} finally {
  await zk.close();
}

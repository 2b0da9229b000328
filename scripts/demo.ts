/**
 * The README's first command. Until the lock demo lands: start a local ZooKeeper (unless
 * ZK_CONNECT names one), connect with a raw socket, print the server's `srvr` answer, and stop
 * what it started.
 */
import { fourLetter, startZooKeeper } from '@zk/test/harness';

const ensemble = await startZooKeeper({ servers: 1 });
try {
  const server = ensemble.servers[0];
  if (!server) throw new Error('no server');
  const how = ensemble.source === 'external' ? 'the ensemble in ZK_CONNECT' : `a ${ensemble.source} ZooKeeper started in ${Math.round(ensemble.startMs)} ms`;
  process.stdout.write(`Connected to ${server.connectString} (${how}); its answer to "srvr":\n\n`);
  process.stdout.write(await fourLetter(server.host, server.port, 'srvr'));
} finally {
  await ensemble.close();
}

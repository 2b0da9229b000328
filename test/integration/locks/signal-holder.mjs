// A Mutex holder in its own process for the Ctrl-C tests (signals.test.ts). Runs the built
// packages. Modes: `helper` (closeOnSignals on its client), `none` (Node's default action),
// `stuck` (closeOnSignals on a client whose close never ends, a 60 s close timeout), `idle`
// (closeOnSignals installed, nothing else to do: the process must still end by itself).
import { closeOnSignals, ZooKeeper } from '@zk/protocol';
import { Mutex } from '@zk/locks';

const [mode, connect, path, timeout] = process.argv.slice(2);
if (mode === 'stuck') {
  closeOnSignals({ close: () => new Promise(() => {}) }, { timeout: 60_000 });
  process.stdout.write('READY\n');
  setInterval(() => {}, 60_000);
} else if (mode === 'idle') {
  closeOnSignals({ close: async () => {} });
  process.stdout.write('READY\n');
} else {
  const zk = await ZooKeeper.connect(connect, { sessionTimeout: Number(timeout) });
  if (mode === 'helper') closeOnSignals(zk);
  const lease = await new Mutex(zk, path).acquire();
  process.stdout.write(`HELD ${lease.node} ${zk.sessionTimeout}\n`);
  setInterval(() => {}, 60_000);
}

// How a client's connect cost settles as a process warms up (run by hand; bench/README.md,
// "Connect"): one fresh process connects and closes 2,000 times in a row, each close awaited,
// and prints the client CPU per connect (process CPU: V8's compiler threads count) and the
// connects per second of each stretch: 1-50, 51-100, 101-250, 251-500, 501-1,000, 1,001-2,000.
//
//   node bench/workloads/connect-warmup.mjs ours|ours-true|nzc <connect string>
//
// ours: @zk/protocol as built in the workspace (`tsc -b` first), default options; ours-true:
// with coalesceReads: true (no multiRead probe with the handshake).
import { createRequire } from 'node:module';
import { cpuUsage } from 'node:process';

const [client, connect] = process.argv.slice(2);
let open;
if (client === 'ours' || client === 'ours-true') {
  const { ZooKeeper } = await import('@zk/protocol');
  const options = { sessionTimeout: 10_000, ...(client === 'ours-true' ? { coalesceReads: true } : {}) };
  open = async () => {
    const zk = await ZooKeeper.connect(connect, options);
    return () => zk.close();
  };
} else if (client === 'nzc') {
  const nzc = createRequire(import.meta.url)('node-zookeeper-client');
  open = () =>
    new Promise((resolve) => {
      const zk = nzc.createClient(connect, { sessionTimeout: 10_000 });
      zk.once('connected', () =>
        resolve(
          () =>
            new Promise((closed) => {
              zk.once('disconnected', closed);
              zk.close();
            }),
        ),
      );
      zk.connect();
    });
} else {
  throw new Error('usage: node connect-warmup.mjs ours|ours-true|nzc <connect string>');
}
const out = { client };
let done = 0;
for (const upTo of [50, 100, 250, 500, 1000, 2000]) {
  const cpu0 = cpuUsage();
  const t0 = performance.now();
  const n = upTo - done;
  for (; done < upTo; done++) {
    const close = await open();
    await close();
  }
  const cpu = cpuUsage(cpu0);
  out[`to ${upTo}`] = { cpuUs: Math.round((cpu.user + cpu.system) / n), perSecond: Math.round(n / ((performance.now() - t0) / 1000)) };
}
process.stdout.write(`${JSON.stringify(out)}\n`);

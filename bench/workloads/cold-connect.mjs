// The first connect of a fresh process, for the bench's cold-connect row (bench/workloads/raw.ts):
// imports the client, opens one session, closes it, and prints one JSON line. Runs the built
// packages (`tsc -b` first).
//
//   node cold-connect.mjs ours|nzc <connect string>
//
// connectedMs: from the process's start (performance.timeOrigin) until the session is usable;
// importMs: the client's module loading alone; cpuUs: the process's CPU until connected (Node's
// own start-up included, the same for both clients).
import { createRequire } from 'node:module';

const [client, connect] = process.argv.slice(2);
const t0 = performance.now();
let close;
let imported;
if (client === 'ours') {
  const { ZooKeeper } = await import('@zk/protocol');
  imported = performance.now();
  const zk = await ZooKeeper.connect(connect, { sessionTimeout: 10_000 });
  close = () => zk.close();
} else if (client === 'nzc') {
  const nzc = createRequire(import.meta.url)('node-zookeeper-client');
  imported = performance.now();
  const zk = nzc.createClient(connect, { sessionTimeout: 10_000 });
  await new Promise((resolve) => {
    zk.once('connected', resolve);
    zk.connect();
  });
  close = () =>
    new Promise((resolve) => {
      zk.once('disconnected', resolve);
      zk.close();
    });
} else {
  throw new Error(`usage: node cold-connect.mjs ours|nzc <connect string>`);
}
const connectedMs = performance.now();
const cpu = process.cpuUsage();
await close();
process.stdout.write(`${JSON.stringify({ connectedMs, importMs: imported - t0, cpuUs: cpu.user + cpu.system })}\n`);

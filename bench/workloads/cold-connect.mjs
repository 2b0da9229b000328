// The first connect of a fresh process, for the bench's cold-connect row (bench/workloads/raw.ts):
// imports the client, opens one session, closes it, and prints one JSON line. Runs the built
// packages (`tsc -b` first).
//
//   node cold-connect.mjs ours|ours-modules|nzc <connect string>
//
// ours: @zk/protocol's published entry, the single file its publishConfig names (built by
// scripts/bundle.mjs); ours-modules: the workspace's tsc output, one module per source file.
//
// connectedMs: from the process's start (performance.timeOrigin) until the session is usable;
// importMs: the client's module loading alone; cpuUs: the process's CPU until connected (Node's
// own start-up included, the same for both clients).
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const [client, connect] = process.argv.slice(2);
const entry = client === 'ours' ? published() : '@zk/protocol'; // read before the clock starts
const t0 = performance.now();
let close;
let imported;
if (client === 'ours' || client === 'ours-modules') {
  const { ZooKeeper } = await import(entry);
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
  throw new Error(`usage: node cold-connect.mjs ours|ours-modules|nzc <connect string>`);
}
const connectedMs = performance.now();
const cpu = process.cpuUsage();
await close();
process.stdout.write(`${JSON.stringify({ connectedMs, importMs: imported - t0, cpuUs: cpu.user + cpu.system })}\n`);

/** The file @zk/protocol's tarball names as its entry (publishConfig.exports), as a URL. */
function published() {
  const pkg = new URL('../../packages/protocol/', import.meta.url);
  const manifest = JSON.parse(readFileSync(new URL('package.json', pkg), 'utf8'));
  return new URL(manifest.publishConfig.exports['.'].default, pkg).href;
}

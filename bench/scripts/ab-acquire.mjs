#!/usr/bin/env node
/**
 * Two builds of @zk/locks side by side (issue 26, the uncontended acquire), interleaved op by op
 * in one process on one server: per round and build, a plain ephemeral-sequential create, the
 * raw pair an acquire sends (create2 then the listing, in one write: the floor, no lock code),
 * and an uncontended `Mutex.acquire()` then its release; the order of the builds alternates by
 * round. For "did this change make the acquire cheaper" questions, which the bench (us against
 * peers, in separate repetitions) answers too coarsely.
 *
 *   git worktree add /tmp/before <commit> && (cd /tmp/before && mkdir -p packages/locks/node_modules/@zk \
 *     && ln -s ../../../protocol packages/locks/node_modules/@zk/protocol && ln -s "$PWD/../main/node_modules" node_modules \
 *     && npx tsc -b packages/locks)
 *   node bench/scripts/ab-acquire.mjs /tmp/before . [--rounds 2000] [--warmup 300] [--options '{"timeout":30000}'] [--connect 127.0.0.1:2181]
 *
 * Each argument is a checkout whose packages/protocol/dist and packages/locks/dist are built.
 * Prints per build the median (µs) of each op after the warm-up rounds, the acquire and the pair
 * as multiples of the create, the client CPU per acquire+release (mean, user + system of the
 * whole process, so the other build's replies landing meanwhile count too), and the engine's
 * share by marks on the client's methods: from `acquire()` to the create being sent, and from
 * the listing's reply to the acquire returning. Passing the same checkout twice shows the noise.
 */
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : dflt;
};
const [rootA, rootB] = args.filter((a, i) => !a.startsWith('--') && !args[i - 1]?.startsWith('--'));
if (!rootA || !rootB) {
  console.error('usage: ab-acquire.mjs <checkoutA> <checkoutB> [--rounds n] [--warmup n] [--options json] [--connect hosts]');
  process.exit(2);
}
const rounds = Number(opt('--rounds', 2000));
const warmup = Number(opt('--warmup', 300));
const options = JSON.parse(opt('--options', '{}'));
const connect = opt('--connect', process.env.ZK_CONNECT ?? '127.0.0.1:2181');

const load = async (root, pkg) => import(pathToFileURL(resolve(root, 'packages', pkg, 'dist/index.js')).href);
const base = `/ab-acquire-${process.pid}`;
const builds = {};
for (const [k, root] of [['A', rootA], ['B', rootB]]) {
  const { ZooKeeper } = await load(root, 'protocol');
  const { Mutex } = await load(root, 'locks');
  const zk = await ZooKeeper.connect(connect, { sessionTimeout: 30_000 });
  builds[k] = { zk, mutex: new Mutex(zk, `${base}/${k}`), root, r: { create: [], pair: [], acquire: [], release: [], cpu: [], toSend: [], listedToReturn: [] } };
}
await builds.A.zk.create(base);

// Marks: when a build's acquire sends its create, and when its listing's reply resolves.
let marks;
for (const b of Object.values(builds)) {
  const { zk } = b;
  const createWithStat = zk.createWithStat.bind(zk);
  const getChildren = zk.getChildren.bind(zk);
  zk.createWithStat = (...a) => {
    if (marks?.zk === zk) marks.send ??= performance.now();
    return createWithStat(...a);
  };
  zk.getChildren = (...a) => {
    const p = getChildren(...a);
    if (marks?.zk === zk) {
      const m = marks;
      p.then(() => (m.listed ??= performance.now()), () => undefined);
    }
    return p;
  };
}

async function round(k, record) {
  const { zk, mutex, r } = builds[k];
  let t = performance.now();
  const plain = await zk.create(`${base}/c${k}-`, null, { mode: 3 });
  const create = performance.now() - t;
  await zk.delete(plain);
  t = performance.now();
  const [created] = await Promise.all([zk.createWithStat(`${base}/p${k}-`, null, { mode: 3 }), zk.getChildren(base)]);
  const pair = performance.now() - t;
  await zk.delete(created.path);
  const cpu0 = process.cpuUsage();
  const m = (marks = { zk });
  t = performance.now();
  const lease = await mutex.acquire(options);
  const done = performance.now();
  marks = undefined;
  const acquire = done - t;
  t = performance.now();
  await lease.release();
  const release = performance.now() - t;
  const cpu = process.cpuUsage(cpu0);
  if (!record) return;
  r.create.push(create);
  r.pair.push(pair);
  r.acquire.push(acquire);
  r.release.push(release);
  r.cpu.push((cpu.user + cpu.system) / 1000);
  r.toSend.push(m.send - (done - acquire));
  r.listedToReturn.push(done - m.listed);
}

for (let i = 0; i < warmup + rounds; i++) {
  const order = i % 2 ? ['A', 'B'] : ['B', 'A'];
  for (const k of order) await round(k, i >= warmup);
}

const median = (a) => [...a].sort((x, y) => x - y)[a.length >> 1] * 1000;
const mean = (a) => (a.reduce((x, y) => x + y, 0) / a.length) * 1000;
for (const [k, b] of Object.entries(builds)) {
  const { r } = b;
  const c = median(r.create);
  console.log(
    `${k} ${b.root}: create ${c.toFixed(0)} µs, pair ${median(r.pair).toFixed(0)} (${(median(r.pair) / c).toFixed(3)}x), ` +
      `acquire ${median(r.acquire).toFixed(0)} (${(median(r.acquire) / c).toFixed(3)}x), release ${median(r.release).toFixed(0)}; ` +
      `CPU per acquire+release ${mean(r.cpu).toFixed(0)} µs; acquire() to the create sent ${median(r.toSend).toFixed(0)} µs, the listing's reply to the caller ${median(r.listedToReturn).toFixed(0)} µs`,
  );
}
await builds.A.zk.deleteRecursive(base).catch(() => undefined);
for (const b of Object.values(builds)) await b.zk.close();

#!/usr/bin/env node
/**
 * Two builds of @zk/protocol side by side, interleaved in one process on one server: getData at
 * 1 outstanding (sequential) and at 64 outstanding, round after round, A then B then B then A...
 * so drift and other load fall on both alike. For "did this change cost anything" questions
 * (the bench compares us with peers; this compares us with ourselves).
 *
 *   git worktree add /tmp/before <commit> && (cd /tmp/before/packages/protocol && npx tsc -p .)
 *   node bench/scripts/ab-builds.mjs /tmp/before/packages/protocol/dist packages/protocol/dist [--rounds 20] [--connect 127.0.0.1:2181]
 *
 * Prints per build and workload: median ops/s over rounds, and the median of the rounds' p50 and
 * p99 latencies (µs) at 1 outstanding; then B/A ratios.
 */
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : dflt;
};
const [distA, distB] = args.filter((a, i) => !a.startsWith('--') && !args[i - 1]?.startsWith('--'));
if (!distA || !distB) {
  console.error('usage: ab-builds.mjs <distA> <distB> [--rounds n] [--connect hosts] [--ops n]');
  process.exit(2);
}
const rounds = Number(opt('--rounds', 20));
const ops = Number(opt('--ops', 4000));
const connect = opt('--connect', process.env.ZK_CONNECT ?? '127.0.0.1:2181');

const load = async (dist) => (await import(pathToFileURL(resolve(dist, 'index.js')).href)).ZooKeeper;
const builds = { A: await load(distA), B: await load(distB) };
const clients = {};
for (const [k, ZK] of Object.entries(builds)) clients[k] = await ZK.connect(connect);
const path = `/ab-builds-${process.pid}`;
await clients.A.create(path, Buffer.alloc(100)).catch(() => undefined);

async function sequential(zk) {
  const lat = new Float64Array(ops);
  const t0 = performance.now();
  for (let i = 0; i < ops; i++) {
    const s = performance.now();
    await zk.getData(path);
    lat[i] = performance.now() - s;
  }
  const ms = performance.now() - t0;
  lat.sort();
  return { rate: (ops / ms) * 1000, p50: lat[Math.floor(ops / 2)] * 1000, p99: lat[Math.floor(ops * 0.99)] * 1000 };
}

async function outstanding(zk, n) {
  const total = ops * 4;
  let started = 0;
  const t0 = performance.now();
  const worker = async () => {
    while (started < total) {
      started++;
      await zk.getData(path);
    }
  };
  await Promise.all(Array.from({ length: n }, worker));
  return { rate: (total / (performance.now() - t0)) * 1000 };
}

const results = { A: { seq: [], out: [] }, B: { seq: [], out: [] } };
// warm-up
for (const k of ['A', 'B']) {
  await sequential(clients[k]);
  await outstanding(clients[k], 64);
}
for (let r = 0; r < rounds; r++) {
  const order = r % 2 === 0 ? ['A', 'B'] : ['B', 'A'];
  for (const k of order) results[k].seq.push(await sequential(clients[k]));
  for (const k of order) results[k].out.push(await outstanding(clients[k], 64));
}
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
};
const row = (k) => ({
  seqRate: median(results[k].seq.map((x) => x.rate)),
  p50: median(results[k].seq.map((x) => x.p50)),
  p99: median(results[k].seq.map((x) => x.p99)),
  outRate: median(results[k].out.map((x) => x.rate)),
});
const a = row('A');
const b = row('B');
console.log(`getData, ${rounds} interleaved rounds of ${ops} sequential and ${ops * 4} at 64 outstanding, ${connect}`);
console.log(`A ${distA}\nB ${distB}`);
console.log('| | A | B | B/A |\n|---|---|---|---|');
console.log(`| 1 outstanding, ops/s | ${a.seqRate.toFixed(0)} | ${b.seqRate.toFixed(0)} | ${(b.seqRate / a.seqRate).toFixed(3)} |`);
console.log(`| 1 outstanding, p50 µs | ${a.p50.toFixed(1)} | ${b.p50.toFixed(1)} | ${(b.p50 / a.p50).toFixed(3)} |`);
console.log(`| 1 outstanding, p99 µs | ${a.p99.toFixed(1)} | ${b.p99.toFixed(1)} | ${(b.p99 / a.p99).toFixed(3)} |`);
console.log(`| 64 outstanding, ops/s | ${a.outRate.toFixed(0)} | ${b.outRate.toFixed(0)} | ${(b.outRate / a.outRate).toFixed(3)} |`);
await clients.A.delete(path).catch(() => undefined);
for (const zk of Object.values(clients)) await zk.close();

#!/usr/bin/env node
/**
 * Two builds of @zk/protocol side by side, interleaved in one process on one server: getData at
 * 1 outstanding (sequential) and at 64 outstanding, round after round, A then B then B then A...
 * so drift and other load fall on both alike. For "did this change cost anything" questions
 * (the bench compares us with peers; this compares us with ourselves).
 *
 *   git worktree add /tmp/before <commit> && (cd /tmp/before/packages/protocol && npx tsc -p .)
 *   node bench/scripts/ab-builds.mjs /tmp/before/packages/protocol/dist packages/protocol/dist [--rounds 20] [--connect 127.0.0.1:2181] [--floor]
 *
 * Prints per build and workload: median ops/s over rounds, the median of the rounds' p50 and
 * p99 latencies (µs) at 1 outstanding, and the median client CPU per op (µs, user + system of the
 * whole process); then B/A ratios. On a shared machine latency medians swing by tens of percent
 * from run to run; CPU per op is steadier. `--floor` adds, in every round, the same sequential
 * loop on a bare socket (fixed getData frames, replies counted by their length prefix, no
 * client): what the kernel, loopback and server cost, so each build's distance from it is taken
 * in the same rounds. `--turnaround` also times, at 1 outstanding, each client's part of the
 * round trip: from a reply's 'data' event on its socket to the next request's socket.write
 * (median of the rounds' p50, µs), and the rest of it: from that write (its return) to the
 * reply's 'data' event: kernel, loopback, server and wake-up. Passing the same dist twice shows the noise (an A/A run).
 */
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { bareSocket, medianUs, timeSockets } from './bare-socket.mjs';

const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : dflt;
};
const flags = new Set(['--floor', '--turnaround']); // options without a value
const [distA, distB] = args.filter((a, i) => !a.startsWith('--') && !(args[i - 1]?.startsWith('--') && !flags.has(args[i - 1])));
if (!distA || !distB) {
  console.error('usage: ab-builds.mjs <distA> <distB> [--rounds n] [--connect hosts] [--ops n] [--floor] [--turnaround]');
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
const floor = args.includes('--floor') ? await bareSocket(connect, path) : undefined;

// --turnaround: every socket's reads and writes timed (bare-socket.mjs).
const timing = args.includes('--turnaround') ? timeSockets() : undefined;

async function sequential(zk) {
  const lat = new Float64Array(ops);
  timing?.start();
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  for (let i = 0; i < ops; i++) {
    const s = performance.now();
    await zk.getData(path);
    lat[i] = performance.now() - s;
  }
  const ms = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  lat.sort();
  const t = timing?.stop();
  return { rate: (ops / ms) * 1000, p50: lat[Math.floor(ops / 2)] * 1000, p99: lat[Math.floor(ops * 0.99)] * 1000, cpu: (cpu.user + cpu.system) / ops, turn: t ? medianUs(t.turnaround) : NaN, away: t ? medianUs(t.away) : NaN };
}


async function outstanding(zk, n) {
  const total = ops * 4;
  let started = 0;
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const worker = async () => {
    while (started < total) {
      started++;
      await zk.getData(path);
    }
  };
  await Promise.all(Array.from({ length: n }, worker));
  const cpu = process.cpuUsage(cpu0);
  return { rate: (total / (performance.now() - t0)) * 1000, cpu: (cpu.user + cpu.system) / total };
}

const results = { A: { seq: [], out: [] }, B: { seq: [], out: [] }, floor: { seq: [] } };
// warm-up
for (const k of ['A', 'B']) {
  await sequential(clients[k]);
  await outstanding(clients[k], 64);
}
if (floor) await sequential(floor);
for (let r = 0; r < rounds; r++) {
  const order = r % 2 === 0 ? ['A', 'B'] : ['B', 'A'];
  if (floor && r % 2 === 1) results.floor.seq.push(await sequential(floor));
  for (const k of order) results[k].seq.push(await sequential(clients[k]));
  if (floor && r % 2 === 0) results.floor.seq.push(await sequential(floor));
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
  cpu: median(results[k].seq.map((x) => x.cpu)),
  turn: median(results[k].seq.map((x) => x.turn)),
  away: median(results[k].seq.map((x) => x.away)),
  outRate: k === 'floor' ? NaN : median(results[k].out.map((x) => x.rate)),
  outCpu: k === 'floor' ? NaN : median(results[k].out.map((x) => x.cpu)),
});
const a = row('A');
const b = row('B');
console.log(`getData, ${rounds} interleaved rounds of ${ops} sequential and ${ops * 4} at 64 outstanding, ${connect}`);
console.log(`A ${distA}\nB ${distB}`);
console.log('| | A | B | B/A |\n|---|---|---|---|');
console.log(`| 1 outstanding, ops/s | ${a.seqRate.toFixed(0)} | ${b.seqRate.toFixed(0)} | ${(b.seqRate / a.seqRate).toFixed(3)} |`);
console.log(`| 1 outstanding, p50 µs | ${a.p50.toFixed(1)} | ${b.p50.toFixed(1)} | ${(b.p50 / a.p50).toFixed(3)} |`);
console.log(`| 1 outstanding, p99 µs | ${a.p99.toFixed(1)} | ${b.p99.toFixed(1)} | ${(b.p99 / a.p99).toFixed(3)} |`);
console.log(`| 1 outstanding, CPU µs/op | ${a.cpu.toFixed(1)} | ${b.cpu.toFixed(1)} | ${(b.cpu / a.cpu).toFixed(3)} |`);
if (!Number.isNaN(a.turn)) {
  console.log(`| 1 outstanding, turnaround p50 µs | ${a.turn.toFixed(1)} | ${b.turn.toFixed(1)} | ${(b.turn / a.turn).toFixed(3)} |`);
  console.log(`| 1 outstanding, write to reply p50 µs | ${a.away.toFixed(1)} | ${b.away.toFixed(1)} | ${(b.away / a.away).toFixed(3)} |`);
}
console.log(`| 64 outstanding, ops/s | ${a.outRate.toFixed(0)} | ${b.outRate.toFixed(0)} | ${(b.outRate / a.outRate).toFixed(3)} |`);
console.log(`| 64 outstanding, CPU µs/op | ${a.outCpu.toFixed(2)} | ${b.outCpu.toFixed(2)} | ${(b.outCpu / a.outCpu).toFixed(3)} |`);
if (floor) {
  const f = row('floor');
  const ft = Number.isNaN(f.turn) ? '' : `, turnaround p50 ${f.turn.toFixed(1)} µs, write to reply p50 ${f.away.toFixed(1)} µs`;
  console.log(`\nbare socket (floor), same rounds: ${f.seqRate.toFixed(0)} ops/s, p50 ${f.p50.toFixed(1)} µs, p99 ${f.p99.toFixed(1)} µs, CPU ${f.cpu.toFixed(1)} µs/op${ft}`);
  console.log(`over the floor: A p50 +${(a.p50 - f.p50).toFixed(1)} µs, CPU +${(a.cpu - f.cpu).toFixed(1)} µs/op; B p50 +${(b.p50 - f.p50).toFixed(1)} µs, CPU +${(b.cpu - f.cpu).toFixed(1)} µs/op`);
  await floor.close();
}
await clients.A.delete(path).catch(() => undefined);
for (const zk of Object.values(clients)) await zk.close();

#!/usr/bin/env node
/**
 * Where one request at a time goes (issue 26, getData at 1 outstanding): a loop of
 * `await getData(path)` (100 bytes) by one client in a process of its own, for profilers and
 * counters run from outside (`strace -c -f`, `node --cpu-prof`), with counts taken inside.
 *
 *   node bench/scripts/one-outstanding.mjs ours|nzc|floor [--dist packages/protocol/dist] [--ops 20000] [--hooks] [--connect 127.0.0.1:2181]
 *
 * Prints one JSON line: ops, p50/p99 latency (µs), client CPU per op (µs, user+system), GCs per
 * 1000 ops; with `--turnaround` the client's turnaround (µs, p50 and p90): from a reply's 'data'
 * event on the socket to the next request's socket.write, the part of the round trip that is the
 * client's, and the p50 of the rest (write to reply); with `--hooks` the async resources created per op by type (Timeout, TickObject,
 * PROMISE, ...: every timer, nextTick and promise a request costs; async_hooks slows the run, so
 * take the latency and CPU from a run without it). `--ops 0` does the connect and close only: run
 * it under strace too and subtract, for syscalls per request. `floor`: a net.Socket writing fixed
 * getData frames and counting reply frames by their length (no client at all), as the bench's
 * `bare socket (floor)` row.
 */
import { createHook } from 'node:async_hooks';
import { createRequire } from 'node:module';
import { PerformanceObserver } from 'node:perf_hooks';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { bareSocket, timeSockets } from './bare-socket.mjs';

const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : dflt;
};
const client = args[0];
const ops = Number(opt('--ops', 20_000));
const connect = opt('--connect', process.env.ZK_CONNECT ?? '127.0.0.1:2181');
const dist = opt('--dist', new URL('../../packages/protocol/dist', import.meta.url).pathname);
const path = `/one-outstanding-${process.pid}`;

/** ours, nzc and floor behind one shape: `get()` resolves with the reply; `close()`. */
async function open(kind) {
  const { ZooKeeper } = await import(pathToFileURL(resolve(dist, 'index.js')).href);
  const admin = await ZooKeeper.connect(connect, { sessionTimeout: 10_000 });
  await admin.create(path, Buffer.alloc(100, 7)).catch(() => undefined);
  const cleanup = async () => {
    await admin.delete(path).catch(() => undefined);
    await admin.close();
  };
  if (kind === 'ours') {
    const zk = await ZooKeeper.connect(connect, { sessionTimeout: 10_000 });
    return { get: () => zk.getData(path), close: async () => (await zk.close(), await cleanup()) };
  }
  if (kind === 'nzc') {
    const require = createRequire(new URL('../package.json', import.meta.url));
    const nzc = require('node-zookeeper-client');
    const c = nzc.createClient(connect, { sessionTimeout: 10_000 });
    await new Promise((res) => (c.once('connected', res), c.connect()));
    return {
      get: () => new Promise((res, rej) => c.getData(path, (err, data) => (err ? rej(err) : res(data)))),
      close: async () => (await new Promise((res) => (c.once('disconnected', res), c.close())), await cleanup()),
    };
  }
  if (kind === 'floor') {
    const bare = await bareSocket(connect, path);
    return { get: () => bare.getData(), close: async () => (await bare.close(), await cleanup()) };
  }
  throw new Error(`unknown client ${kind} (ours, nzc or floor)`);
}

// --turnaround: every socket's reads and writes timed (bare-socket.mjs).
const timing = args.includes('--turnaround') ? timeSockets() : undefined;

const c = await open(client);
for (let i = 0; i < Math.min(ops, 2000); i++) await c.get(); // warm-up

const counts = new Map();
const hook = args.includes('--hooks') ? createHook({ init: (_id, type) => counts.set(type, (counts.get(type) ?? 0) + 1) }) : undefined;
let gcs = 0;
const gcObserver = new PerformanceObserver((list) => (gcs += list.getEntries().length));
gcObserver.observe({ entryTypes: ['gc'] });

const lat = new Float64Array(ops);
timing?.start();
hook?.enable();
const cpu0 = process.cpuUsage();
const t0 = performance.now();
for (let i = 0; i < ops; i++) {
  const s = performance.now();
  await c.get();
  lat[i] = performance.now() - s;
}
const ms = performance.now() - t0;
const cpu = process.cpuUsage(cpu0);
hook?.disable();
const times = timing?.stop();
await new Promise((res) => setImmediate(res)); // let the GC observer report
gcObserver.disconnect();
await c.close();

lat.sort();
const p = (t, q) => +(t[Math.floor(t.length * q)] * 1000).toFixed(1);
const turnaround = ({ turnaround: t, away: a }) => ({ n: t.length, p50: p(t, 0.5), p90: p(t, 0.9), writeToReplyP50: p(a, 0.5) });
const perOp = Object.fromEntries([...counts].sort((a, b) => b[1] - a[1]).map(([k, v]) => [k, +(v / ops).toFixed(3)]));
const out = {
  client,
  ops,
  opsPerSec: ops ? Math.round((ops / ms) * 1000) : 0,
  p50Us: ops ? +(lat[Math.floor(ops / 2)] * 1000).toFixed(1) : 0,
  p99Us: ops ? +(lat[Math.floor(ops * 0.99)] * 1000).toFixed(1) : 0,
  cpuUsPerOp: ops ? +((cpu.user + cpu.system) / ops).toFixed(1) : 0,
  gcPer1000: ops ? +((gcs / ops) * 1000).toFixed(2) : 0,
  ...(times?.turnaround.length ? { turnaroundUs: turnaround(times) } : {}),
  ...(hook ? { asyncPerOp: perOp } : {}),
};
console.log(JSON.stringify(out));

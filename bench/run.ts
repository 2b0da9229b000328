/**
 * The bench (first part): raw client workloads, ours and node-zookeeper-client's side by side on
 * the same server in the same run, plus the uncontended lock acquire. Medians of several
 * repetitions with their spread; nothing here passes or fails.
 *
 *   node bench/dist/run.js [--connect host:port] [--reps 5] [--quick]
 *
 * Without --connect (or ZK_CONNECT) it starts a local standalone server.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { CreateMode, ZooKeeper } from '@zk/protocol';
import { ExclusiveLock, Mutex, ReadWriteLock } from '@zk/locks';
import { startZooKeeper } from '@zk/test/harness';
import { measure, summarize, type Sample } from './lib/stats.js';
import { connectNzc } from './peers/nzc.js';

const args = process.argv.slice(2);
const opt = (name: string) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : undefined;
};
const quick = args.includes('--quick');
const reps = Number(opt('reps') ?? (quick ? 2 : 5));
const scale = quick ? 0.2 : 1;
const connectArg = opt('connect') ?? process.env.ZK_CONNECT;

interface Row {
  workload: string;
  client: string;
  summary: ReturnType<typeof summarize>;
}
const rows: Row[] = [];

const ensemble = connectArg ? undefined : await startZooKeeper({ servers: 1, own: true });
const connect = connectArg ?? (ensemble as NonNullable<typeof ensemble>).connectString;
const base = `/bench-${process.pid}`;

async function run(workload: string, client: string, count: number, outstanding: number, op: () => Promise<unknown>): Promise<void> {
  await compare(workload, count, outstanding, [[client, op]]);
}

/**
 * Runs each client's repetitions interleaved (A B A B ...), so a server that warms up (JIT) or
 * drifts over the run favours no client; one warm-up each, not reported.
 */
async function compare(workload: string, count: number, outstanding: number, clients: ReadonlyArray<readonly [string, () => Promise<unknown>]>): Promise<void> {
  for (const [, op] of clients) await measure(Math.max(100, Math.round(count / 5)), outstanding, op);
  const samples = clients.map((): Sample[] => []);
  for (let r = 0; r < reps; r++) {
    const order = r % 2 === 0 ? clients.map((_, i) => i) : clients.map((_, i) => clients.length - 1 - i);
    for (const i of order) samples[i]!.push(await measure(count, outstanding, clients[i]![1]));
  }
  clients.forEach(([client], i) => {
    rows.push({ workload, client, summary: summarize(samples[i]!) });
    process.stderr.write(`  ${workload} / ${client}: ${Math.round(rows.at(-1)!.summary.opsPerSec.median)} ops/s\n`);
  });
}

try {
  process.stderr.write(`bench against ${connect} (${reps} repetitions${quick ? ', quick' : ''})\n`);
  const zk = await ZooKeeper.connect(connect, { sessionTimeout: 10_000 });
  const nzc = await connectNzc(connect);
  await zk.create(base);
  await zk.create(`${base}/node`, Buffer.alloc(100, 7));
  const n1 = Math.round(3000 * scale);
  const n64 = Math.round(40_000 * scale);

  await compare('getData 100 B, 1 outstanding', n1, 1, [
    ['ours', () => zk.getData(`${base}/node`)],
    ['node-zookeeper-client', () => nzc.getData(`${base}/node`)],
  ]);
  await compare('getData 100 B, 64 outstanding', n64, 64, [
    ['ours', () => zk.getData(`${base}/node`)],
    ['node-zookeeper-client', () => nzc.getData(`${base}/node`)],
  ]);
  const payload = Buffer.alloc(100, 1);
  await compare('setData 100 B, 64 outstanding', n64 / 2, 64, [
    ['ours', () => zk.setData(`${base}/node`, payload)],
    ['node-zookeeper-client', () => nzc.setData(`${base}/node`, payload)],
  ]);
  await compare('exists (missing), 1 outstanding', n1, 1, [
    ['ours', () => zk.exists(`${base}/missing`)],
    ['node-zookeeper-client', () => nzc.exists(`${base}/missing`)],
  ]);
  await compare('create+delete ephemeral, 1 outstanding', n1 / 2, 1, [
    ['ours', async () => zk.delete(await zk.create(`${base}/e`, null, { mode: CreateMode.EPHEMERAL }))],
    ['node-zookeeper-client', async () => nzc.remove(await nzc.createEphemeral(`${base}/e`))],
  ]);

  const mutex = new Mutex(zk, `${base}/locks/mutex`);
  const exclusive = new ExclusiveLock(zk, `${base}/locks/exclusive/lock`);
  const write = new ReadWriteLock(zk, `${base}/locks/rw`).writeLock();
  for (const [name, lock] of [['Mutex', mutex], ['ExclusiveLock', exclusive], ['write lock', write]] as const) {
    await run(`uncontended acquire+release: ${name}`, 'ours', n1 / 2, 1, async () => (await lock.acquire()).release());
  }
  nzc.close();
  await zk.close();
} finally {
  await ensemble?.close();
}

const fmt = (n: number | undefined, digits = 0) => (n === undefined || Number.isNaN(n) ? '-' : n.toFixed(digits));
const lines = [
  '| workload | client | ops/s (median, min-max) | p50 µs | p99 µs | p999 µs | client CPU µs/op |',
  '| --- | --- | --- | --- | --- | --- | --- |',
  ...rows.map(({ workload, client, summary: s }) =>
    `| ${workload} | ${client} | ${fmt(s.opsPerSec.median)} (${fmt(s.opsPerSec.min)}-${fmt(s.opsPerSec.max)}) | ${fmt(s.p50?.median)} | ${fmt(s.p99?.median)} | ${fmt(s.p999?.median)} | ${fmt(s.cpuPerOp.median, 1)} |`,
  ),
];
const ratios = [...new Set(rows.map((r) => r.workload))].flatMap((w) => {
  const ours = rows.find((r) => r.workload === w && r.client === 'ours');
  const peer = rows.find((r) => r.workload === w && r.client !== 'ours');
  if (!ours || !peer) return [];
  return [`| ${w} | ${(ours.summary.opsPerSec.median / peer.summary.opsPerSec.median).toFixed(2)}x | ${(ours.summary.cpuPerOp.median / peer.summary.cpuPerOp.median).toFixed(2)}x |`];
});
process.stdout.write(`${lines.join('\n')}\n\n| workload | throughput ours / node-zookeeper-client | CPU per op ours / node-zookeeper-client |\n| --- | --- | --- |\n${ratios.join('\n')}\n`);
const dir = fileURLToPath(new URL('../results/', import.meta.url));
mkdirSync(dir, { recursive: true });
const file = `${dir}raw-${new Date().toISOString().replace(/[:.]/g, '-')}.json`;
writeFileSync(file, JSON.stringify({ connect: connectArg ? 'external' : 'local standalone', reps, quick, node: process.version, rows }, null, 2));
process.stderr.write(`results: ${file}\n`);

/**
 * What @zk/otel costs (issue 25 part 3, issue 37 item 12): getData 100 B at 1 and 64 outstanding,
 * in one process on one client, with the instrumentation disabled (no channel subscriber: the
 * uninstrumented client), enabled with nothing sampled (a sampler that drops every span: what
 * most requests of a sampled production service pay) and enabled with every span sampled (a span
 * per request through a BatchSpanProcessor into an exporter that drops them); the metrics are
 * recorded into a MeterProvider nobody reads in both enabled modes. Repetitions are interleaved
 * (off unsampled sampled, sampled unsampled off, ...) so the server's warm-up favours none.
 *
 * Beside it, in the same process, the peer the target is set against: ioredis GET of 100 B at 64
 * outstanding, uninstrumented and with @opentelemetry/instrumentation-ioredis (every span sampled,
 * the same span pipeline), against a local redis-server (`apt-get install redis-server`; the
 * rows are left out, with a note, when there is none).
 *
 *   npm run build && node bench/dist/otel-cost.js [--connect hosts] [--redis host:port] [--reps N] [--quick]
 *
 * Reads are sent one request each (`coalesceReads: false`), as ioredis sends its commands.
 *
 * Without --connect (or ZK_CONNECT) it starts a local standalone server (1 GiB heap, default JIT,
 * as the bench's). Prints a markdown table: ops/s, p50 latency (1 outstanding) and the client
 * process's CPU per request, medians with their min-max over the repetitions, the ratios, and the
 * CPU each instrumentation adds per request.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { parseArgs } from 'node:util';
import { AlwaysOffSampler, BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { MeterProvider } from '@opentelemetry/sdk-metrics';
import { DroppingExporter, IdleReader } from './lib/otel-sinks.js';
import { IORedisInstrumentation } from '@opentelemetry/instrumentation-ioredis';
import type { Redis as RedisClient } from 'ioredis';
import { ZooKeeper } from '@zk/protocol';
import { ZooKeeperInstrumentation } from '@zk/otel';
import { startZooKeeper, type ZooKeeperEnsemble } from '@zk/test/harness';
import { measure, summarize, type Sample, type Spread, type Summary } from './lib/stats.js';

const { values } = parseArgs({ options: { connect: { type: 'string' }, redis: { type: 'string' }, reps: { type: 'string' }, quick: { type: 'boolean' } } });
const quick = values.quick === true;
const reps = Number(values.reps ?? (quick ? 3 : 7));
const scale = quick ? 0.2 : 1;


/** A free loopback port, from bind(0). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

/** A throwaway redis-server (no persistence) when one is installed and --redis was not given. */
async function startRedis(): Promise<{ hostPort: string; child?: ChildProcess } | undefined> {
  if (values.redis !== undefined) return { hostPort: values.redis };
  if (spawnSync('redis-server', ['--version']).status !== 0) return undefined;
  const port = await freePort();
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
  return { hostPort: `127.0.0.1:${port}`, child };
}

const exporter = new DroppingExporter();
const batch = () => new BatchSpanProcessor(exporter, { maxQueueSize: 65_536, maxExportBatchSize: 4096, scheduledDelayMillis: 200 });
const tracerProvider = new BasicTracerProvider({ spanProcessors: [batch()] });
const unsampledProvider = new BasicTracerProvider({ sampler: new AlwaysOffSampler(), spanProcessors: [batch()] });
const meterProvider = new MeterProvider({ readers: [new IdleReader()] });
const sampled = new ZooKeeperInstrumentation({ tracerProvider, meterProvider, enabled: false });
const unsampled = new ZooKeeperInstrumentation({ tracerProvider: unsampledProvider, meterProvider, enabled: false });
// Patches ioredis when it is required (a CommonJS module, so through require: the hook sees it).
const redisInstrumentation = new IORedisInstrumentation({ requireParentSpan: false });
redisInstrumentation.setTracerProvider(tracerProvider);
const Redis = (createRequire(import.meta.url)('ioredis') as { Redis: new (url: string, options: object) => RedisClient }).Redis;
redisInstrumentation.disable();

type Mode = 'off' | 'unsampled' | 'sampled';
const fmt = (s: Spread, digits = 0) => `${s.median.toFixed(digits)} (${s.min.toFixed(digits)}-${s.max.toFixed(digits)})`;
const latency = (s: Summary) => (s.p50 ? fmt(s.p50) : '');
const added = (on: Summary, off: Summary) => on.cpuPerOp.median - off.cpuPerOp.median;

let server: ZooKeeperEnsemble | undefined;
const connect = values.connect ?? process.env.ZK_CONNECT ?? (server = await startZooKeeper({ servers: 1, own: true, jvmOptions: ['-Xmx1g'], config: { clientPortListenBacklog: 1024 } })).connectString;
const redisServer = await startRedis();
// Reads not coalesced into multiRead batches: batching makes the uninstrumented client's CPU per
// request depend on how many requests wait together, which the instrumentation's own CPU changes.
const zk = await ZooKeeper.connect(connect, { sessionTimeout: 30_000, coalesceReads: false });
const node = `/otel-cost-${process.pid}`;
const rows: string[] = [];
const addedAt64: Record<string, number> = {};
try {
  await zk.create(node, Buffer.alloc(100, 7));
  for (const [outstanding, count] of [
    [1, Math.round(3000 * scale)],
    [64, Math.round(40_000 * scale)],
  ] as const) {
    const samples: Record<Mode, Sample[]> = { off: [], unsampled: [], sampled: [] };
    const run = async (mode: Mode, warm = false) => {
      sampled.disable();
      unsampled.disable();
      if (mode === 'sampled') sampled.enable();
      if (mode === 'unsampled') unsampled.enable();
      const sample = await measure(warm ? Math.max(100, Math.round(count / 5)) : count, outstanding, () => zk.getData(node));
      if (!warm) samples[mode].push(sample);
    };
    const order: Mode[] = ['off', 'unsampled', 'sampled'];
    for (const mode of order) await run(mode, true);
    for (let r = 0; r < reps; r++) for (const mode of r % 2 === 0 ? order : [...order].reverse()) await run(mode);
    sampled.disable();
    unsampled.disable();
    const off = summarize(samples.off);
    const workload = `getData 100 B, ${outstanding} outstanding`;
    rows.push(`| ${workload} | uninstrumented | ${fmt(off.opsPerSec)} | ${latency(off)} | ${fmt(off.cpuPerOp, 1)} | |`);
    for (const mode of ['unsampled', 'sampled'] as const) {
      const on = summarize(samples[mode]);
      const label = mode === 'sampled' ? '@zk/otel, every span sampled' : '@zk/otel, nothing sampled';
      rows.push(`| ${workload} | ${label} | ${fmt(on.opsPerSec)} | ${latency(on)} | ${fmt(on.cpuPerOp, 1)} | +${added(on, off).toFixed(1)} |`);
      if (outstanding === 64) addedAt64[mode] = added(on, off);
    }
  }
  await zk.delete(node);

  if (redisServer !== undefined) {
    const [host, port] = redisServer.hostPort.split(':');
    const redis = new Redis(`redis://${host}:${port}`, { lazyConnect: false, maxRetriesPerRequest: null, retryStrategy: (n: number) => Math.min(n * 50, 500) });
    try {
      const key = `otel-cost-${process.pid}`;
      await redis.set(key, Buffer.alloc(100, 7));
      const count = Math.round(40_000 * scale);
      const samples: Record<'off' | 'on', Sample[]> = { off: [], on: [] };
      const run = async (mode: 'off' | 'on', warm = false) => {
        if (mode === 'on') redisInstrumentation.enable();
        else redisInstrumentation.disable();
        const sample = await measure(warm ? Math.round(count / 5) : count, 64, () => redis.getBuffer(key));
        if (!warm) samples[mode].push(sample);
      };
      await run('off', true);
      await run('on', true);
      for (let r = 0; r < reps; r++) for (const mode of r % 2 === 0 ? (['off', 'on'] as const) : (['on', 'off'] as const)) await run(mode);
      redisInstrumentation.disable();
      await redis.del(key);
      const off = summarize(samples.off);
      const on = summarize(samples.on);
      addedAt64.ioredis = added(on, off);
      rows.push(`| ioredis GET 100 B, 64 outstanding | uninstrumented | ${fmt(off.opsPerSec)} | | ${fmt(off.cpuPerOp, 1)} | |`);
      rows.push(`| ioredis GET 100 B, 64 outstanding | instrumentation-ioredis, every span sampled | ${fmt(on.opsPerSec)} | | ${fmt(on.cpuPerOp, 1)} | +${added(on, off).toFixed(1)} |`);
    } finally {
      redis.disconnect();
    }
  }
} finally {
  await zk.close();
  for (const p of [tracerProvider, unsampledProvider]) {
    await p.forceFlush();
    await p.shutdown();
  }
  await meterProvider.shutdown();
  await server?.close();
  redisServer?.child?.kill();
}

const ratio = (a: number | undefined, b: number | undefined) => (a !== undefined && b !== undefined && b > 0 ? `${(a / b).toFixed(2)}` : 'n/a');
process.stdout.write(
  [
    `@zk/otel cost, ${reps} repetitions${quick ? ' (--quick)' : ''}, node ${process.version}, ${server ? 'local standalone ZooKeeper' : connect}; ${redisServer ? `redis ${redisServer.child ? 'local redis-server' : redisServer.hostPort}` : 'no redis-server: the ioredis rows are left out'}; spans exported (dropped): ${exporter.exported}`,
    '',
    '| workload | client | ops/s | p50 µs | client CPU µs/op | CPU µs/op added |',
    '| --- | --- | --- | --- | --- | --- |',
    ...rows,
    '',
    `At 64 outstanding, CPU added per request: nothing sampled / every span sampled = ${ratio(addedAt64.unsampled, addedAt64.sampled)} (target at most 0.33); @zk/otel sampled / instrumentation-ioredis = ${ratio(addedAt64.sampled, addedAt64.ioredis)} (target at most 1).`,
    '',
  ].join('\n'),
);

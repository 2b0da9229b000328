/**
 * What @zk/otel costs (issue 25 part 3, issue 37 item 12): getData 100 B at 1 and 64 outstanding,
 * in one process on one client, with the instrumentation disabled (no channel subscriber: the
 * uninstrumented client), enabled with nothing sampled (a sampler that drops every span: what
 * most requests of a sampled production service pay) and enabled with every span sampled (a span
 * per request through a BatchSpanProcessor into an exporter that drops them); the metrics are
 * recorded into a MeterProvider nobody reads in both enabled modes.
 *
 * Beside it, in the same process and the same repetitions, the peer the target is set against:
 * ioredis GET of 100 B at 64 outstanding, uninstrumented and with
 * @opentelemetry/instrumentation-ioredis (every span sampled, the same span pipeline), against a
 * redis-server (`--redis host:port`, else one it starts when `redis-server` is installed; the
 * rows are left out, with a note, when there is none).
 *
 *   npm run build && node bench/dist/otel-cost.js [--connect hosts] [--redis host:port] [--reps N] [--quick] [--split] [--baseline path] [--fake]
 *
 * `--split` adds modes that say where an enabled request's CPU goes: `zk:request` subscribed
 * with handlers that do nothing (what @zk/protocol's publication costs), and both enabled modes
 * with the metrics on the no-op meter (what is left is the spans' share). `--baseline` names
 * another build of @zk/otel (its `index.js`, e.g. the previous commit's `packages/otel/src`
 * compiled elsewhere) whose two enabled modes run in the same repetitions: before and after a
 * change, in one run. `--fake` puts both clients against in-process servers that answer at once
 * (lib/fake-peers.ts) instead of a real ZooKeeper and redis-server: the client's own CPU without
 * the servers' scheduling in it (see below).
 *
 * Reads are sent one request each (`coalesceReads: false`), as ioredis sends its commands.
 *
 * How it is counted: each repetition runs every mode once, back to back (the order reversed every
 * other repetition, so the server's warm-up and the neighbours' load favour none), and what a
 * mode adds is its user CPU per request minus the uninstrumented one of the same repetition
 * (medians with their min-max over the repetitions; the ratios are of those medians). User CPU,
 * not user + system: the instrumentation makes no system call, while the system CPU per request
 * swings with how many replies one socket read brings, which the neighbours' load decides (on the
 * shared 2-core machine it was more than half the process's CPU, and varied 2x between
 * repetitions of one mode). Both are printed.
 *
 * Without --connect (or ZK_CONNECT) it starts a local standalone server (1 GiB heap, default JIT,
 * as the bench's). Prints a markdown table: ops/s, p50 latency (1 outstanding), the client
 * process's CPU per request and its user part, the user CPU each mode adds per request, and the
 * two target ratios.
 */
import * as dc from 'node:diagnostics_channel';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { AlwaysOffSampler, BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { MeterProvider } from '@opentelemetry/sdk-metrics';
import { startFakeRedis, startFakeZooKeeper, type FakePeer } from './lib/fake-peers.js';
import { DroppingExporter, IdleReader } from './lib/otel-sinks.js';
import { IORedisInstrumentation } from '@opentelemetry/instrumentation-ioredis';
import type { Redis as RedisClient } from 'ioredis';
import { ZooKeeper } from '@zk/protocol';
import { ZooKeeperInstrumentation } from '@zk/otel';
import { startZooKeeper, type ZooKeeperEnsemble } from '@zk/test/harness';
import { measure, spread, summarize, type Sample, type Spread, type Summary } from './lib/stats.js';

const { values } = parseArgs({
  options: {
    connect: { type: 'string' },
    redis: { type: 'string' },
    reps: { type: 'string' },
    quick: { type: 'boolean' },
    split: { type: 'boolean' },
    baseline: { type: 'string' },
    fake: { type: 'boolean' },
  },
});
const quick = values.quick === true;
const split = values.split === true;
const fake = values.fake === true;
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
async function startRedis(): Promise<{ hostPort: string; child?: ChildProcess; fake?: FakePeer } | undefined> {
  if (fake) {
    const peer = await startFakeRedis(Buffer.alloc(100, 7));
    return { hostPort: peer.hostPort, fake: peer };
  }
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
// Without a meterProvider (and none registered globally) the metrics go to the no-op meter.
const instrumentations = {
  unsampled: new ZooKeeperInstrumentation({ tracerProvider: unsampledProvider, meterProvider, enabled: false }),
  sampled: new ZooKeeperInstrumentation({ tracerProvider, meterProvider, enabled: false }),
  'unsampled, no metrics': new ZooKeeperInstrumentation({ tracerProvider: unsampledProvider, enabled: false }),
  'sampled, no metrics': new ZooKeeperInstrumentation({ tracerProvider, enabled: false }),
};
/** The --baseline build's instrumentations, when given. */
const Baseline = values.baseline === undefined ? undefined : ((await import(pathToFileURL(resolve(values.baseline)).href)) as typeof import('@zk/otel')).ZooKeeperInstrumentation;
const baselines = Baseline && {
  'unsampled, baseline': new Baseline({ tracerProvider: unsampledProvider, meterProvider, enabled: false }),
  'sampled, baseline': new Baseline({ tracerProvider, meterProvider, enabled: false }),
};
/**
 * `zk:request` subscribed with handlers that do nothing, on the events @zk/otel subscribes
 * (start, end, asyncEnd): the publication's own cost.
 */
const nothing = () => {};
// (Node's types want all five; a handler left out is not subscribed.)
const emptyHandlers = { start: nothing, end: nothing, asyncEnd: nothing } as unknown as dc.TracingChannelSubscribers<object>;
const requestChannel = dc.tracingChannel('zk:request');
// Patches ioredis when it is required (a CommonJS module, so through require: the hook sees it).
const redisInstrumentation = new IORedisInstrumentation({ requireParentSpan: false });
redisInstrumentation.setTracerProvider(tracerProvider);
const Redis = (createRequire(import.meta.url)('ioredis') as { Redis: new (url: string, options: object) => RedisClient }).Redis;
redisInstrumentation.disable();

type ZkMode = 'off' | 'channel' | keyof typeof instrumentations | 'unsampled, baseline' | 'sampled, baseline';
type Mode = ZkMode | 'ioredis off' | 'ioredis on';
const LABELS: Record<Mode, string> = {
  off: 'uninstrumented',
  channel: 'zk:request subscribed, handlers empty',
  unsampled: '@zk/otel, nothing sampled',
  sampled: '@zk/otel, every span sampled',
  'unsampled, no metrics': '@zk/otel, nothing sampled, no-op meter',
  'sampled, no metrics': '@zk/otel, every span sampled, no-op meter',
  'unsampled, baseline': '--baseline @zk/otel, nothing sampled',
  'sampled, baseline': '--baseline @zk/otel, every span sampled',
  'ioredis off': 'uninstrumented',
  'ioredis on': 'instrumentation-ioredis, every span sampled',
};
const fmt = (s: Spread, digits = 0) => `${s.median.toFixed(digits)} (${s.min.toFixed(digits)}-${s.max.toFixed(digits)})`;
const signed = (s: Spread) => `${s.median >= 0 ? '+' : ''}${s.median.toFixed(1)} (${s.min.toFixed(1)} to ${s.max.toFixed(1)})`;
const latency = (s: Summary) => (s.p50 ? fmt(s.p50) : '');

/** Switches to `mode`: at most one subscriber on `zk:request`, the ioredis patch only for 'ioredis on'. */
function select(mode: Mode): void {
  const all: Record<string, { enable(): void; disable(): void }> = { ...instrumentations, ...baselines };
  for (const i of Object.values(all)) i.disable();
  if (requestChannel.start.hasSubscribers) requestChannel.unsubscribe(emptyHandlers);
  if (mode === 'ioredis on') redisInstrumentation.enable();
  else redisInstrumentation.disable();
  if (mode === 'channel') requestChannel.subscribe(emptyHandlers);
  else all[mode]?.enable();
}

let server: ZooKeeperEnsemble | undefined;
const fakeZooKeeper = fake ? await startFakeZooKeeper(Buffer.alloc(100, 7)) : undefined;
const connect =
  fakeZooKeeper?.hostPort ??
  values.connect ??
  process.env.ZK_CONNECT ??
  (server = await startZooKeeper({ servers: 1, own: true, jvmOptions: ['-Xmx1g'], config: { clientPortListenBacklog: 1024 } })).connectString;
const redisServer = await startRedis();
// Reads not coalesced into multiRead batches: batching makes the uninstrumented client's CPU per
// request depend on how many requests wait together, which the instrumentation's own CPU changes.
const zk = await ZooKeeper.connect(connect, { sessionTimeout: 30_000, coalesceReads: false });
let redis: RedisClient | undefined;
const node = `/otel-cost-${process.pid}`;
const key = `otel-cost-${process.pid}`;
const rows: string[] = [];
const notes: string[] = [];
try {
  if (!fake) await zk.create(node, Buffer.alloc(100, 7));
  if (redisServer !== undefined) {
    const [host, port] = redisServer.hostPort.split(':');
    redis = new Redis(`redis://${host}:${port}`, { lazyConnect: false, maxRetriesPerRequest: null, retryStrategy: (n: number) => Math.min(n * 50, 500) });
    await redis.set(key, Buffer.alloc(100, 7));
  }
  const zkModes: ZkMode[] = [
    'off',
    ...(split ? (['channel'] as const) : []),
    'unsampled',
    'sampled',
    ...(split ? (['unsampled, no metrics', 'sampled, no metrics'] as const) : []),
    ...(baselines ? (['unsampled, baseline', 'sampled, baseline'] as const) : []),
  ];
  for (const [outstanding, count] of [
    [1, Math.round(3000 * scale)],
    [64, Math.round(40_000 * scale)],
  ] as const) {
    // At 1 outstanding a request's CPU is mostly the event loop waking up for its reply: the
    // three main modes only, for the latency. At 64 every mode, and ioredis in the same repetitions.
    const modes: Mode[] = outstanding === 1 ? ['off', 'unsampled', 'sampled'] : redis !== undefined ? [...zkModes, 'ioredis off', 'ioredis on'] : zkModes;
    const samples = new Map<Mode, { sample: Sample; userUs: number }[]>(modes.map((m) => [m, []]));
    const run = async (mode: Mode, warm = false) => {
      select(mode);
      const op = mode.startsWith('ioredis') ? () => redis!.getBuffer(key) : () => zk.getData(node);
      const user = process.cpuUsage().user;
      const sample = await measure(warm ? Math.max(100, Math.round(count / 5)) : count, outstanding, op);
      if (!warm) samples.get(mode)!.push({ sample, userUs: process.cpuUsage().user - user });
    };
    for (const mode of modes) await run(mode, true);
    for (let r = 0; r < reps; r++) for (const mode of r % 2 === 0 ? modes : [...modes].reverse()) await run(mode);
    select('off');

    const userPerOp = (mode: Mode) => samples.get(mode)!.map((s) => s.userUs / s.sample.ops);
    /** What `mode` adds over its baseline, user CPU µs per request: the median of the repetitions' differences. */
    const added = (mode: Mode): Spread => {
      const base = userPerOp(mode.startsWith('ioredis') ? 'ioredis off' : 'off');
      return spread(userPerOp(mode).map((v, r) => v - base[r]!));
    };
    const ratio = (a: Mode, b: Mode) => (added(a).median / added(b).median).toFixed(2);
    const workload = `getData 100 B, ${outstanding} outstanding`;
    for (const mode of modes) {
      const s = summarize(samples.get(mode)!.map((x) => x.sample));
      const name = mode.startsWith('ioredis') ? `ioredis GET 100 B, ${outstanding} outstanding` : workload;
      const base = mode === 'off' || mode === 'ioredis off';
      rows.push(`| ${name} | ${LABELS[mode]} | ${fmt(s.opsPerSec)} | ${latency(s)} | ${fmt(s.cpuPerOp, 1)} | ${fmt(spread(userPerOp(mode)), 1)} | ${base ? '' : signed(added(mode))} |`);
    }
    if (outstanding === 1) continue;
    const at = `At ${outstanding} outstanding, user CPU added (medians of the repetitions' differences)`;
    notes.push(`${at}: nothing sampled / every span sampled = ${ratio('unsampled', 'sampled')} (target at most 0.33).`);
    if (split) notes.push(`${at}: the same with the no-op meter = ${ratio('unsampled, no metrics', 'sampled, no metrics')}.`);
    if (baselines) notes.push(`${at}: the same for the --baseline build = ${ratio('unsampled, baseline', 'sampled, baseline')}.`);
    if (modes.includes('ioredis on')) {
      notes.push(`${at}: @zk/otel every span sampled / instrumentation-ioredis = ${ratio('sampled', 'ioredis on')} (target at most 1).`);
      if (split) notes.push(`${at}: the same with the no-op meter (spans only, as instrumentation-ioredis records no metric) = ${ratio('sampled, no metrics', 'ioredis on')}.`);
      if (baselines) notes.push(`${at}: the same for the --baseline build = ${ratio('sampled, baseline', 'ioredis on')}.`);
    }
  }
  if (!fake) {
    await zk.delete(node);
    await redis?.del(key);
  }
} finally {
  select('off');
  redis?.disconnect();
  await zk.close();
  for (const p of [tracerProvider, unsampledProvider]) {
    await p.forceFlush();
    await p.shutdown();
  }
  await meterProvider.shutdown();
  await server?.close();
  redisServer?.child?.kill();
  await redisServer?.fake?.close();
  await fakeZooKeeper?.close();
}

process.stdout.write(
  [
    `@zk/otel cost, ${reps} repetitions${quick ? ' (--quick)' : ''}${split ? ' (--split)' : ''}${values.baseline ? ` (--baseline ${values.baseline})` : ''}, node ${process.version}, ${fake ? 'in-process fake ZooKeeper and Redis (--fake)' : `${server ? 'local standalone ZooKeeper' : connect}; ${redisServer ? `redis ${redisServer.child ? 'local redis-server' : redisServer.hostPort}` : 'no redis-server: the ioredis rows are left out'}`}; spans exported (dropped): ${exporter.exported}`,
    '',
    '| workload | client | ops/s | p50 µs | client CPU µs/op | of which user | user µs/op added |',
    '| --- | --- | --- | --- | --- | --- | --- |',
    ...rows,
    '',
    ...notes,
    '',
  ].join('\n'),
);

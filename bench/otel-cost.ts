/**
 * What @zk/otel costs (issue 25 part 3): getData 100 B at 1 and 64 outstanding, in one process
 * on one client, with the instrumentation disabled (no channel subscriber: the uninstrumented
 * client) and enabled (a span per request through a BatchSpanProcessor into an exporter that
 * drops them, and the metrics recorded into a MeterProvider nobody reads), repetitions
 * interleaved (off on, on off, ...) so the server's warm-up favours neither.
 *
 *   npm run build && node bench/dist/otel-cost.js [--connect hosts] [--reps N] [--quick]
 *
 * Without --connect (or ZK_CONNECT) it starts a local standalone server (1 GiB heap, default JIT,
 * as the bench's). Prints a markdown table: ops/s, p50 latency (1 outstanding) and the client
 * process's CPU per request, medians with their min-max over the repetitions, and the ratios.
 */
import { parseArgs } from 'node:util';
import { BasicTracerProvider, BatchSpanProcessor, type ReadableSpan, type SpanExporter } from '@opentelemetry/sdk-trace-base';
import { AggregationTemporality, MeterProvider, MetricReader } from '@opentelemetry/sdk-metrics';
import { ZooKeeper } from '@zk/protocol';
import { ZooKeeperInstrumentation } from '@zk/otel';
import { startZooKeeper, type ZooKeeperEnsemble } from '@zk/test/harness';
import { measure, summarize, type Sample, type Spread } from './lib/stats.js';

const { values } = parseArgs({ options: { connect: { type: 'string' }, reps: { type: 'string' }, quick: { type: 'boolean' } } });
const quick = values.quick === true;
const reps = Number(values.reps ?? (quick ? 3 : 7));
const scale = quick ? 0.2 : 1;

/** Drops every span (what a collector that is not there would cost, minus the network). */
class DroppingExporter implements SpanExporter {
  exported = 0;
  export(spans: ReadableSpan[], done: (result: { code: 0 }) => void): void {
    this.exported += spans.length;
    done({ code: 0 });
  }
  async shutdown(): Promise<void> {}
}

/** A reader that is never collected: recordings are aggregated in memory, as between exports. */
class IdleReader extends MetricReader {
  constructor() {
    super({ aggregationTemporalitySelector: () => AggregationTemporality.CUMULATIVE });
  }
  protected override async onShutdown(): Promise<void> {}
  protected override async onForceFlush(): Promise<void> {}
}

let server: ZooKeeperEnsemble | undefined;
const connect = values.connect ?? process.env.ZK_CONNECT ?? (server = await startZooKeeper({ servers: 1, own: true, jvmOptions: ['-Xmx1g'], config: { clientPortListenBacklog: 1024 } })).connectString;
const exporter = new DroppingExporter();
const tracerProvider = new BasicTracerProvider({ spanProcessors: [new BatchSpanProcessor(exporter, { maxQueueSize: 65_536, maxExportBatchSize: 4096, scheduledDelayMillis: 200 })] });
const meterProvider = new MeterProvider({ readers: [new IdleReader()] });
const instrumentation = new ZooKeeperInstrumentation({ tracerProvider, meterProvider, enabled: false });

const zk = await ZooKeeper.connect(connect, { sessionTimeout: 30_000 });
const node = `/otel-cost-${process.pid}`;
const rows: string[] = [];
try {
  await zk.create(node, Buffer.alloc(100, 7));
  for (const [outstanding, count] of [
    [1, Math.round(3000 * scale)],
    [64, Math.round(40_000 * scale)],
  ] as const) {
    const samples: Record<'off' | 'on', Sample[]> = { off: [], on: [] };
    const run = async (mode: 'off' | 'on', warm = false) => {
      if (mode === 'on') instrumentation.enable();
      else instrumentation.disable();
      const sample = await measure(warm ? Math.max(100, Math.round(count / 5)) : count, outstanding, () => zk.getData(node));
      if (!warm) samples[mode].push(sample);
    };
    await run('off', true);
    await run('on', true);
    for (let r = 0; r < reps; r++) for (const mode of r % 2 === 0 ? (['off', 'on'] as const) : (['on', 'off'] as const)) await run(mode);
    instrumentation.disable();
    const off = summarize(samples.off);
    const on = summarize(samples.on);
    const fmt = (s: Spread, digits = 0) => `${s.median.toFixed(digits)} (${s.min.toFixed(digits)}-${s.max.toFixed(digits)})`;
    const latency = (s: typeof off) => (s.p50 ? fmt(s.p50) : '');
    rows.push(`| getData 100 B, ${outstanding} outstanding | uninstrumented | ${fmt(off.opsPerSec)} | ${latency(off)} | ${fmt(off.cpuPerOp, 1)} |`);
    rows.push(`| getData 100 B, ${outstanding} outstanding | @zk/otel enabled | ${fmt(on.opsPerSec)} | ${latency(on)} | ${fmt(on.cpuPerOp, 1)} |`);
    rows.push(
      `| | enabled / uninstrumented | ${(on.opsPerSec.median / off.opsPerSec.median).toFixed(2)}x | ${on.p50 && off.p50 ? `${(on.p50.median / off.p50.median).toFixed(2)}x` : ''} | ${(on.cpuPerOp.median / off.cpuPerOp.median).toFixed(2)}x |`,
    );
  }
  await zk.delete(node);
} finally {
  await zk.close();
  await tracerProvider.forceFlush();
  await tracerProvider.shutdown();
  await meterProvider.shutdown();
  await server?.close();
}

process.stdout.write(
  [
    `@zk/otel cost, ${reps} repetitions${quick ? ' (--quick)' : ''}, node ${process.version}, ${server ? 'local standalone ZooKeeper' : connect}; spans exported (dropped): ${exporter.exported}`,
    '',
    '| workload | client | ops/s | p50 µs | client CPU µs/op |',
    '| --- | --- | --- | --- | --- |',
    ...rows,
    '',
  ].join('\n'),
);

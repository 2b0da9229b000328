/**
 * @zk/otel's own CPU per request, without a server (issue 37 item 12): `zk:request` contexts
 * published as @zk/protocol publishes them (start with its stores, end, asyncStart, asyncEnd;
 * the reply already there), 64 at a time, with the instrumentation absent, enabled with nothing
 * sampled (AlwaysOffSampler) and with every span sampled (BatchSpanProcessor into an exporter
 * that drops them), the metrics recorded into a MeterProvider nobody reads, and each also with the
 * metrics on the no-op meter (the spans' share). On a shared machine the server-backed
 * bench/otel-cost.ts varies with the server's and the neighbours' load; this isolates the part
 * the instrumentation controls. One process per mode (`--mode`), repetitions in it.
 *
 *   npm run build && for m in off unsampled sampled; do node bench/dist/otel-handlers.js --mode $m; done
 */
import * as dc from 'node:diagnostics_channel';
import { parseArgs } from 'node:util';
import { AlwaysOffSampler, BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { MeterProvider } from '@opentelemetry/sdk-metrics';
import { DroppingExporter, IdleReader } from './lib/otel-sinks.js';
import { ZooKeeperInstrumentation, type RequestContext } from '@zk/otel';

const { values } = parseArgs({ options: { mode: { type: 'string', default: 'sampled' }, metrics: { type: 'string', default: 'on' }, count: { type: 'string', default: '200000' }, reps: { type: 'string', default: '5' } } });
const mode = values.mode as 'off' | 'unsampled' | 'sampled';
const count = Number(values.count);


const tracerProvider = new BasicTracerProvider({
  ...(mode === 'unsampled' ? { sampler: new AlwaysOffSampler() } : {}),
  spanProcessors: [new BatchSpanProcessor(new DroppingExporter(), { maxQueueSize: 65_536, maxExportBatchSize: 4096, scheduledDelayMillis: 200 })],
});
const meterProvider = new MeterProvider({ readers: [new IdleReader()] });
const instrumentation = mode === 'off' ? undefined : new ZooKeeperInstrumentation({ tracerProvider, ...(values.metrics === 'on' ? { meterProvider } : {}) });

type Ctx = RequestContext & Record<string, unknown>;
const channel = dc.tracingChannel<unknown, Ctx>('zk:request');
const reply = { zxid: 1n, err: 0, body: null };

/** One request as client/requests.ts publishes it, its reply already in. */
function request(xid: number): Promise<unknown> {
  if (!channel.hasSubscribers) return Promise.resolve(reply);
  const ctx = { operation: 'getData', op: 4, path: '/otel-cost-1', chroot: '', sessionId: 0x1000a2b3c4d0001n, serverAddress: '127.0.0.1', serverPort: 2181, batchSize: undefined } as Ctx;
  return channel.start.runStores(ctx, () => {
    let sent: Promise<typeof reply>;
    try {
      Object.assign(ctx, { xid, requestBytes: 40 });
      sent = Promise.resolve(reply);
    } finally {
      channel.end.publish(ctx);
    }
    return sent.then((r) => {
      Object.assign(ctx, { result: r, errorCode: 0, replyBytes: 130 });
      channel.asyncStart.publish(ctx);
      channel.asyncEnd.publish(ctx);
      return r;
    });
  });
}

const results: number[] = [];
for (let r = 0; r < Number(values.reps) + 1; r++) {
  const cpu0 = process.cpuUsage();
  for (let i = 0; i < count; i += 64) await Promise.all(Array.from({ length: 64 }, (_, k) => request(i + k)));
  const cpu = process.cpuUsage(cpu0);
  if (r > 0) results.push((cpu.user + cpu.system) / count); // the first is warm-up
}
instrumentation?.disable();
await tracerProvider.shutdown();
await meterProvider.shutdown();
results.sort((a, b) => a - b);
const median = results[Math.floor(results.length / 2)]!;
process.stdout.write(`${mode}${values.metrics === 'on' ? '' : ' (no metrics)'}: ${median.toFixed(2)} µs CPU/request (median of ${results.length}; ${results[0]!.toFixed(2)}-${results.at(-1)!.toFixed(2)})\n`);

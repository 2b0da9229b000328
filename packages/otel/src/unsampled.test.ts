/**
 * A request nobody samples (issue 37 item 12, cost): its span is dropped at the start, so none of
 * the span's work is done (no hooks, no attributes); the duration is still recorded, with the
 * attributes of the server and namespace it went to, also when they change between requests.
 */
import * as dc from 'node:diagnostics_channel';
import { AlwaysOffSampler, BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { AggregationTemporality, InMemoryMetricExporter, MeterProvider, PeriodicExportingMetricReader, type HistogramMetricData } from '@opentelemetry/sdk-metrics';
import { afterEach, describe, expect, it } from 'vitest';
import type { RequestContext } from './channels.js';
import { ZooKeeperInstrumentation } from './instrumentation.js';

const exporter = new InMemorySpanExporter();
const unsampled = new BasicTracerProvider({ sampler: new AlwaysOffSampler(), spanProcessors: [new SimpleSpanProcessor(exporter)] });
let instrumentation: ZooKeeperInstrumentation | undefined;
afterEach(() => instrumentation?.disable());

const requests = dc.tracingChannel<unknown, RequestContext & Record<string, unknown>>('zk:request');
type Ctx = RequestContext & Record<string, unknown>;

describe('nothing sampled', () => {
  it('the hooks are not called for a dropped span; the duration is recorded per server and namespace', async () => {
    const reader = new PeriodicExportingMetricReader({ exporter: new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE), exportIntervalMillis: 3_600_000 });
    const meterProvider = new MeterProvider({ readers: [reader] });
    const hooked: string[] = [];
    instrumentation = new ZooKeeperInstrumentation({
      tracerProvider: unsampled,
      meterProvider,
      requestHook: () => hooked.push('request'),
      responseHook: () => hooked.push('response'),
    });
    const at = (serverPort: number, chroot: string) => ({ operation: 'getData', op: 4, path: '/a', chroot, sessionId: 1n, serverAddress: '127.0.0.1', serverPort }) as Ctx;
    for (const ctx of [at(2181, ''), at(2181, ''), at(2182, ''), at(2182, '/app')]) await requests.tracePromise(async () => ({ err: 0 }), ctx);
    const missing = at(2181, '');
    await requests.tracePromise(async () => {
      Object.assign(missing, { errorCode: -101 }); // as @zk/protocol sets it at asyncStart
      return { err: -101 };
    }, missing);
    expect(hooked).toEqual([]);
    expect(exporter.getFinishedSpans()).toHaveLength(0);
    const { resourceMetrics } = await reader.collect();
    const metric = resourceMetrics.scopeMetrics.flatMap((s) => s.metrics).find((m) => m.descriptor.name === 'db.client.operation.duration') as HistogramMetricData;
    const series = metric.dataPoints.map((p) => [p.attributes['server.port'], p.attributes['db.namespace'] ?? '', p.attributes['error.type'] ?? '', p.value.count]);
    expect(series).toEqual(
      expect.arrayContaining([
        [2181, '', '', 2],
        [2182, '', '', 1],
        [2182, '/app', '', 1],
        [2181, '', 'NONODE', 1],
      ]),
    );
    expect(series).toHaveLength(4);
    await meterProvider.shutdown();
  });
});

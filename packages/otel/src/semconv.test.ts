/**
 * The database semantic conventions (stable: docs/db/database-spans.md and database-metrics.md of
 * open-telemetry/semantic-conventions), against synthetic `zk:request` traffic: the span is named
 * by its `db.query.summary`, `{operation} {target}`; `db.namespace` is the chroot; what a sampler
 * may read (server, namespace, summary) is there when the span starts; the duration histogram has
 * the advised buckets.
 */
import * as dc from 'node:diagnostics_channel';
import type { Attributes } from '@opentelemetry/api';
import { BasicTracerProvider, InMemorySpanExporter, SamplingDecision, SimpleSpanProcessor, type Sampler } from '@opentelemetry/sdk-trace-base';
import { AggregationTemporality, InMemoryMetricExporter, MeterProvider, PeriodicExportingMetricReader, type HistogramMetricData } from '@opentelemetry/sdk-metrics';
import { afterEach, describe, expect, it } from 'vitest';
import type { RequestContext } from './channels.js';
import { ZooKeeperInstrumentation } from './instrumentation.js';

const exporter = new InMemorySpanExporter();
const seenBySampler: Array<{ name: string; attributes: Attributes }> = [];
const recordingSampler: Sampler = {
  shouldSample: (_ctx, _trace, name, _kind, attributes) => {
    seenBySampler.push({ name, attributes: { ...attributes } });
    return { decision: SamplingDecision.RECORD_AND_SAMPLED };
  },
  toString: () => 'recording',
};
const tracerProvider = new BasicTracerProvider({ sampler: recordingSampler, spanProcessors: [new SimpleSpanProcessor(exporter)] });
let instrumentation: ZooKeeperInstrumentation | undefined;
afterEach(() => {
  instrumentation?.disable();
  exporter.reset();
  seenBySampler.length = 0;
});

const requests = dc.tracingChannel<unknown, RequestContext & Record<string, unknown>>('zk:request');
type Ctx = RequestContext & Record<string, unknown>;

describe('semantic conventions (database client)', () => {
  it('db.query.summary is `{operation} {target}` and the span name; without a path, the operation', async () => {
    instrumentation = new ZooKeeperInstrumentation({ tracerProvider });
    await requests.tracePromise(async () => ({ err: 0 }), { operation: 'getData', op: 4, path: '/jobs/42/state', chroot: '', sessionId: 1n } as Ctx);
    await requests.tracePromise(async () => ({ err: 0 }), { operation: 'getEphemerals', op: 103, path: undefined, chroot: '', sessionId: 1n } as Ctx);
    const spans = exporter.getFinishedSpans();
    expect(spans.map((s) => [s.name, s.attributes['db.query.summary']])).toEqual([
      ['getData /jobs/*/state', 'getData /jobs/*/state'],
      ['getEphemerals', 'getEphemerals'],
    ]);
  });

  it('a sequential create renamed at its end keeps name and summary equal', async () => {
    instrumentation = new ZooKeeperInstrumentation({ tracerProvider });
    await requests.tracePromise(async () => ({ err: 0, body: '/q/item-0000000042' }), { operation: 'create', op: 1, path: '/q/item-', chroot: '', sessionId: 1n } as Ctx);
    const [span] = exporter.getFinishedSpans();
    expect([span!.name, span!.attributes['db.query.summary']]).toEqual(['create /q/item-*', 'create /q/item-*']);
  });

  it('the sampler sees server.address, server.port, db.namespace and db.query.summary at the start', async () => {
    instrumentation = new ZooKeeperInstrumentation({ tracerProvider });
    const ctx = { operation: 'exists', op: 3, path: '/config', chroot: '/app', sessionId: 1n, serverAddress: '10.0.0.7', serverPort: 2281 } as Ctx;
    await requests.tracePromise(async () => ({ err: 0 }), ctx);
    expect(seenBySampler).toEqual([
      {
        name: 'exists /config',
        attributes: expect.objectContaining({ 'server.address': '10.0.0.7', 'server.port': 2281, 'db.namespace': '/app', 'db.query.summary': 'exists /config' }),
      },
    ]);
    expect(exporter.getFinishedSpans()[0]!.attributes['db.namespace']).toBe('/app');
  });

  it('a request held while disconnected: no server at the start, the one it was sent to at the end', async () => {
    instrumentation = new ZooKeeperInstrumentation({ tracerProvider });
    const ctx = { operation: 'getData', op: 4, path: '/held', chroot: '', sessionId: 1n } as Ctx;
    await requests.tracePromise(async () => {
      Object.assign(ctx, { serverAddress: '10.0.0.8', serverPort: 2182, errorCode: 0 });
      return { err: 0 };
    }, ctx);
    expect(seenBySampler[0]!.attributes).not.toHaveProperty('server.address');
    expect(exporter.getFinishedSpans()[0]!.attributes).toMatchObject({ 'server.address': '10.0.0.8', 'server.port': 2182, 'db.operation.name': 'getData' });
  });

  it('no db.namespace without a chroot', async () => {
    instrumentation = new ZooKeeperInstrumentation({ tracerProvider });
    await requests.tracePromise(async () => ({ err: 0 }), { operation: 'exists', op: 3, path: '/c', chroot: '', sessionId: 1n } as Ctx);
    expect(exporter.getFinishedSpans()[0]!.attributes).not.toHaveProperty('db.namespace');
  });

  it('db.client.operation.duration: the advised buckets, and db.namespace among its attributes', async () => {
    const reader = new PeriodicExportingMetricReader({ exporter: new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE), exportIntervalMillis: 3_600_000 });
    const meterProvider = new MeterProvider({ readers: [reader] });
    instrumentation = new ZooKeeperInstrumentation({ tracerProvider, meterProvider });
    await requests.tracePromise(async () => ({ err: 0 }), { operation: 'exists', op: 3, path: '/c', chroot: '/app', sessionId: 1n } as Ctx);
    const { resourceMetrics } = await reader.collect();
    const metric = resourceMetrics.scopeMetrics.flatMap((s) => s.metrics).find((m) => m.descriptor.name === 'db.client.operation.duration') as HistogramMetricData;
    const point = metric.dataPoints[0]!;
    expect(point.value.buckets.boundaries).toEqual([0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10]);
    expect(point.attributes['db.namespace']).toBe('/app');
    await meterProvider.shutdown();
  });
});

/**
 * ZooKeeperInstrumentation against synthetic channel traffic (no server): the request context
 * published as @zk/protocol does, a call that throws before its promise exists (error, then end,
 * nothing async), and a hold's start, loss and end on the plain channels.
 */
import * as dc from 'node:diagnostics_channel';
import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { AggregationTemporality, InMemoryMetricExporter, MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';
import { afterEach, describe, expect, it } from 'vitest';
import type { HoldMessage, LostMessage, RequestContext } from './channels.js';
import { ZooKeeperInstrumentation } from './instrumentation.js';

const exporter = new InMemorySpanExporter();
const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
let instrumentation: ZooKeeperInstrumentation | undefined;
afterEach(() => {
  instrumentation?.disable();
  exporter.reset();
});

const requests = dc.tracingChannel<unknown, RequestContext & Record<string, unknown>>('zk:request');

describe('ZooKeeperInstrumentation (synthetic channel traffic)', () => {
  it('a request context filled in as it goes becomes one CLIENT span; a sequential create is renamed with *', async () => {
    instrumentation = new ZooKeeperInstrumentation({ tracerProvider });
    const ctx: Record<string, unknown> = { operation: 'create', op: 1, path: '/q/item-', sessionId: 0x10n };
    await requests.tracePromise(async () => {
      Object.assign(ctx, { serverAddress: '127.0.0.1', serverPort: 2181, xid: 7, requestBytes: 40, replyBytes: 30 });
      ctx.errorCode = 0;
      return { err: 0, body: '/q/item-0000000042' };
    }, ctx as RequestContext & Record<string, unknown>);
    const [span] = exporter.getFinishedSpans();
    expect(span!.name).toBe('create /q/item-*');
    expect(span!.kind).toBe(SpanKind.CLIENT);
    expect(span!.attributes).toMatchObject({ 'db.query.summary': 'create /q/item-*', 'zookeeper.xid': 7, 'zookeeper.session.id': '0x10', 'server.port': 2181 });
  });

  it('the outstanding-requests gauge is read at collection: the requests started and not answered, none after they settle or after disable()', async () => {
    const metricExporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
    const reader = new PeriodicExportingMetricReader({ exporter: metricExporter, exportIntervalMillis: 3_600_000 });
    const meterProvider = new MeterProvider({ readers: [reader] });
    instrumentation = new ZooKeeperInstrumentation({ tracerProvider, meterProvider });
    const outstanding = async (): Promise<number | undefined> => {
      const { resourceMetrics } = await reader.collect();
      const metric = resourceMetrics.scopeMetrics.flatMap((s) => s.metrics).find((m) => m.descriptor.name === 'zookeeper.client.requests.outstanding');
      return metric?.dataPoints[0]?.value as number | undefined;
    };
    const contexts = [1, 2, 3].map((xid) => ({ operation: 'getData', op: 4, path: `/o/${xid}`, sessionId: 1n }) as RequestContext & Record<string, unknown>);
    const settle: Array<() => void> = [];
    const inFlight = contexts.map((ctx) => requests.tracePromise(() => new Promise<{ err: number }>((resolve) => settle.push(() => resolve({ err: 0 }))), ctx));
    expect(await outstanding()).toBe(3);
    settle[0]!();
    await inFlight[0];
    expect(await outstanding()).toBe(2);
    for (const s of settle) s();
    await Promise.all(inFlight);
    expect(await outstanding()).toBe(0);
    requests.tracePromise(() => new Promise(() => undefined), { operation: 'exists', op: 3, path: '/p', sessionId: 1n } as RequestContext & Record<string, unknown>).catch(() => undefined);
    expect(await outstanding()).toBe(1);
    instrumentation.disable();
    expect(await outstanding()).toBe(0);
    instrumentation.enable();
    const again = requests.tracePromise(async () => ({ err: 0 }), { operation: 'exists', op: 3, path: '/q', sessionId: 1n } as RequestContext & Record<string, unknown>);
    await again;
    expect(await outstanding()).toBe(0);
    await meterProvider.shutdown();
  });

  it('a call that throws before its promise exists (error, then end) ends its span with the error', () => {
    instrumentation = new ZooKeeperInstrumentation({ tracerProvider });
    const ctx = { operation: 'getData', op: 4, path: '/x', sessionId: 0n } as RequestContext & Record<string, unknown>;
    class InvalidArgumentError extends Error {
      override name = 'InvalidArgumentError';
    }
    expect(() =>
      requests.traceSync(() => {
        throw new InvalidArgumentError('bad');
      }, ctx),
    ).toThrow('bad');
    const [span] = exporter.getFinishedSpans();
    expect(span!.status).toEqual({ code: SpanStatusCode.ERROR, message: 'bad' });
    expect(span!.attributes['error.type']).toBe('InvalidArgumentError');
  });

  it('a hold: its span from start to end, the loss as an event with ERROR status; nothing after disable()', () => {
    instrumentation = new ZooKeeperInstrumentation({ tracerProvider });
    const hold = { kind: 'mutex', path: '/l', node: '_c_x-lock-0000000001', fencingToken: 12n, sessionId: 5n };
    dc.channel('zk:lock:hold').publish({ event: 'start', ...hold } satisfies HoldMessage);
    dc.channel('zk:lock:lost').publish({ ...hold, reason: new Error('expired'), heldMs: 30 } satisfies LostMessage);
    dc.channel('zk:lock:hold').publish({ event: 'end', ...hold, heldMs: 31, lost: true } satisfies HoldMessage);
    const [span] = exporter.getFinishedSpans();
    expect(span!.name).toBe('lock.hold mutex /l');
    expect(span!.events.map((e) => e.name)).toEqual(['zookeeper.lock.lost']);
    expect(span!.status.code).toBe(SpanStatusCode.ERROR);
    expect(span!.attributes).toMatchObject({ 'zookeeper.lock.fencing_token': '12', 'zookeeper.lock.lost': true, 'zookeeper.lock.held_ms': 31 });
    instrumentation.disable();
    dc.channel('zk:lock:hold').publish({ event: 'start', ...hold } satisfies HoldMessage);
    dc.channel('zk:lock:hold').publish({ event: 'end', ...hold, heldMs: 1, lost: false } satisfies HoldMessage);
    expect(exporter.getFinishedSpans()).toHaveLength(1);
  });

  it('bad benignCodes names are refused at construction', () => {
    expect(() => new ZooKeeperInstrumentation({ tracerProvider, benignCodes: { get: ['NOPE'] } })).toThrow(/unknown ZooKeeper code name "NOPE"/);
  });
});

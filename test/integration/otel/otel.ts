/**
 * The OpenTelemetry SDK wired for the @zk/otel tests: spans to an InMemorySpanExporter (a simple
 * processor: a span is there as soon as it ends), metrics to a reader the test collects when it
 * wants, the async-hooks context manager (so `startActiveSpan` parents what runs inside it).
 */
import { context, type Attributes, type AttributeValue } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { AggregationTemporality, MeterProvider, MetricReader, type DataPoint, type Histogram } from '@opentelemetry/sdk-metrics';
import { ZooKeeperInstrumentation, type ZooKeeperInstrumentationConfig } from '@zk/otel';

context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());

/** A reader collected on demand (cumulative). */
class CollectingReader extends MetricReader {
  constructor() {
    super({ aggregationTemporalitySelector: () => AggregationTemporality.CUMULATIVE });
  }
  protected override async onShutdown(): Promise<void> {}
  protected override async onForceFlush(): Promise<void> {}
}

/** One data point of a metric: its attributes and value (a number, or a histogram's count and sum). */
export interface Point {
  attributes: Attributes;
  value: number;
  count?: number;
  sum?: number;
}

/** An instrumentation with its own providers, and ways to read what it recorded. */
export function instrumented(config: ZooKeeperInstrumentationConfig = {}) {
  const exporter = new InMemorySpanExporter();
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const reader = new CollectingReader();
  const meterProvider = new MeterProvider({ readers: [reader] });
  const instrumentation = new ZooKeeperInstrumentation({ tracerProvider, meterProvider, ...config });
  return {
    instrumentation,
    tracer: tracerProvider.getTracer('test'),
    /** The spans ended so far. */
    spans: (): ReadableSpan[] => exporter.getFinishedSpans(),
    /** Ended spans whose name starts with `prefix`. */
    named: (prefix: string): ReadableSpan[] => exporter.getFinishedSpans().filter((s) => s.name.startsWith(prefix)),
    reset: () => exporter.reset(),
    /** The data points of metric `name` now. */
    async points(name: string): Promise<Point[]> {
      const { resourceMetrics } = await reader.collect();
      const metric = resourceMetrics.scopeMetrics.flatMap((s) => s.metrics).find((m) => m.descriptor.name === name);
      if (metric === undefined) return [];
      return (metric.dataPoints as DataPoint<number | Histogram>[]).map((p) =>
        typeof p.value === 'number' ? { attributes: p.attributes, value: p.value } : { attributes: p.attributes, value: p.value.count, count: p.value.count, sum: p.value.sum ?? 0 },
      );
    },
    async close() {
      instrumentation.disable();
      await tracerProvider.shutdown();
      await meterProvider.shutdown();
    },
  };
}

/** The sum of the points whose attributes include `match`. */
export function total(points: Point[], match: Record<string, AttributeValue> = {}): number {
  return points.filter((p) => Object.entries(match).every(([k, v]) => p.attributes[k] === v)).reduce((n, p) => n + p.value, 0);
}

/**
 * The OpenTelemetry sinks of the cost benches (otel-cost.ts, otel-handlers.ts): an exporter that
 * drops what it is given (counting it) and a metric reader that is never collected, so recordings
 * are aggregated in memory as between exports and nothing is written anywhere.
 */
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace-base';
import { AggregationTemporality, MetricReader } from '@opentelemetry/sdk-metrics';

/** Drops every span, counting them in {@link exported}. */
export class DroppingExporter implements SpanExporter {
  exported = 0;
  export(spans: ReadableSpan[], done: (result: { code: 0 }) => void): void {
    this.exported += spans.length;
    done({ code: 0 });
  }
  async shutdown(): Promise<void> {}
}

/** A reader that is never collected: recordings are aggregated in memory, as between exports. */
export class IdleReader extends MetricReader {
  constructor() {
    super({ aggregationTemporalitySelector: () => AggregationTemporality.CUMULATIVE });
  }
  protected override async onShutdown(): Promise<void> {}
  protected override async onForceFlush(): Promise<void> {}
}

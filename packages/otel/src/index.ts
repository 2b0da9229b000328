/**
 * `@zk/otel`: OpenTelemetry spans and metrics for `@zk/protocol` and `@zk/locks`, built only on
 * the `diagnostics_channel`s they publish. `@opentelemetry/api` is its one (peer) dependency.
 *
 * ```ts
 * import { ZooKeeperInstrumentation } from '@zk/otel';
 * new ZooKeeperInstrumentation(); // after registering the SDK's tracer and meter providers
 * ```
 */
export { ZooKeeperInstrumentation } from './instrumentation.js';
export type { ZooKeeperInstrumentationConfig, RequestInfo } from './options.js';
export type { ConnectContext, RequestContext } from './channels.js';
export { ZooKeeperAttributes, ZooKeeperMetrics } from './attributes.js';
export { summarizePath } from './summary.js';

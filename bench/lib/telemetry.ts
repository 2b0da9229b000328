/**
 * OpenTelemetry for the bench, as zk-lock has it (packages/locks/src/cli/telemetry.ts, loaded from
 * its build so the two cannot drift apart): with an `OTEL_*` exporter setting and `@zk/otel` and
 * `@opentelemetry/sdk-node` installed, every request, wait and hold of our client in the run is
 * traced and measured, and the report says so: its figures then include that cost.
 */
import type * as TelemetryModule from '../../packages/locks/dist/cli/telemetry.js';

/** zk-lock's telemetry starter. */
export const { startTelemetry } = (await import(new URL('../../../packages/locks/dist/cli/telemetry.js', import.meta.url).href)) as typeof TelemetryModule;

/**
 * OpenTelemetry for zk-lock, when the environment asks for it and the packages are there:
 * with an `OTEL_*` exporter setting (`OTEL_TRACES_EXPORTER`, `OTEL_METRICS_EXPORTER`,
 * `OTEL_EXPORTER_OTLP_ENDPOINT`, ...) and `@zk/otel` and `@opentelemetry/sdk-node` installed
 * beside `@zk/locks`, zk-lock starts the SDK (which reads the rest of `OTEL_*`) and the
 * instrumentation, and flushes them before it exits. Both are loaded with a dynamic import, so
 * `@zk/locks` depends on neither; without them (or without the settings) nothing changes.
 */

/** The settings that turn it on (any one of them, unless `OTEL_SDK_DISABLED=true`). */
const TRIGGERS = ['OTEL_TRACES_EXPORTER', 'OTEL_METRICS_EXPORTER', 'OTEL_EXPORTER_OTLP_ENDPOINT', 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', 'OTEL_EXPORTER_OTLP_METRICS_ENDPOINT'];

/** What the loaded modules offer (the parts used here). */
interface SdkModule {
  NodeSDK: new (config: { serviceName?: string }) => { start(): unknown; shutdown(): Promise<unknown> };
}
interface OtelModule {
  ZooKeeperInstrumentation: new () => { disable(): void };
}
interface ApiModule {
  trace: { getTracer(name: string): { startActiveSpan<T>(name: string, fn: (span: { end(): void }) => T): T } };
}

/**
 * @internal The outcome: telemetry on (`span` runs a function under one span, the parent of the
 * wait, the hold and the requests; `stop` flushes), or off and why.
 */
export type Telemetry = { on: true; span<T>(name: string, fn: () => Promise<T>): Promise<T>; stop: () => Promise<void> } | { on: false; why: string };

/**
 * @internal Starts the SDK and the instrumentation when `env` asks for it; `load` imports a module
 * by name (a parameter for the tests).
 */
export async function startTelemetry(env: NodeJS.ProcessEnv = process.env, load: (name: string) => Promise<unknown> = (name) => import(name)): Promise<Telemetry> {
  if (env.OTEL_SDK_DISABLED === 'true') return { on: false, why: 'OTEL_SDK_DISABLED=true' };
  const trigger = TRIGGERS.find((name) => env[name]);
  if (trigger === undefined) return { on: false, why: 'no OTEL_* exporter setting' };
  let sdk: SdkModule;
  let otel: OtelModule;
  let api: ApiModule;
  try {
    [sdk, otel, api] = (await Promise.all([load('@opentelemetry/sdk-node'), load('@zk/otel'), load('@opentelemetry/api')])) as [SdkModule, OtelModule, ApiModule];
  } catch (err) {
    return { on: false, why: `${trigger} is set, but @zk/otel and @opentelemetry/sdk-node are not both installed (${(err as Error).message})` };
  }
  const node = new sdk.NodeSDK(env.OTEL_SERVICE_NAME ? {} : { serviceName: 'zk-lock' });
  node.start();
  const instrumentation = new otel.ZooKeeperInstrumentation();
  return {
    on: true,
    span: (name, fn) =>
      api.trace.getTracer('zk-lock').startActiveSpan(name, async (span) => {
        try {
          return await fn();
        } finally {
          span.end();
        }
      }),
    stop: async () => {
      instrumentation.disable();
      await node.shutdown().catch(() => undefined);
    },
  };
}

import { describe, expect, it } from 'vitest';
import { startTelemetry } from './telemetry.js';

/** Fake modules recording what zk-lock does with them. */
function fakes() {
  const calls: string[] = [];
  const modules: Record<string, unknown> = {
    '@opentelemetry/sdk-node': {
      NodeSDK: class {
        constructor(config: { serviceName?: string }) {
          calls.push(`sdk(${config.serviceName ?? ''})`);
        }
        start() {
          calls.push('start');
        }
        async shutdown() {
          calls.push('shutdown');
        }
      },
    },
    '@opentelemetry/api': {
      trace: {
        getTracer: (name: string) => ({
          startActiveSpan: <T>(span: string, fn: (s: { end(): void }) => T): T => {
            calls.push(`${name}: ${span}`);
            return fn({ end: () => calls.push(`end ${span}`) });
          },
        }),
      },
    },
    '@zk/otel': {
      ZooKeeperInstrumentation: class {
        constructor() {
          calls.push('instrument');
        }
        disable() {
          calls.push('disable');
        }
      },
    },
  };
  const load = async (name: string) => {
    if (!(name in modules)) throw new Error(`Cannot find package '${name}'`);
    return modules[name];
  };
  return { calls, modules, load };
}

describe('zk-lock telemetry', () => {
  it('starts the SDK and the instrumentation when an OTEL_* exporter is set, and flushes at the end', async () => {
    const { calls, load } = fakes();
    const t = await startTelemetry({ OTEL_TRACES_EXPORTER: 'console' }, load);
    expect(t.on).toBe(true);
    if (t.on) {
      expect(await t.span('zk-lock /locks/x', async () => 7)).toBe(7);
      await t.stop();
    }
    expect(calls).toEqual(['sdk(zk-lock)', 'start', 'instrument', 'zk-lock: zk-lock /locks/x', 'end zk-lock /locks/x', 'disable', 'shutdown']);
    const named = fakes();
    await startTelemetry({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318', OTEL_SERVICE_NAME: 'nightly' }, named.load);
    expect(named.calls[0]).toBe('sdk()'); // the SDK reads OTEL_SERVICE_NAME itself
  });

  it('stays off without a setting, when disabled, or when a package is missing', async () => {
    const { calls, modules, load } = fakes();
    expect(await startTelemetry({ OTEL_SERVICE_NAME: 'x' }, load)).toEqual({ on: false, why: 'no OTEL_* exporter setting' });
    expect(await startTelemetry({ OTEL_TRACES_EXPORTER: 'otlp', OTEL_SDK_DISABLED: 'true' }, load)).toMatchObject({ on: false });
    delete modules['@opentelemetry/sdk-node'];
    const missing = await startTelemetry({ OTEL_TRACES_EXPORTER: 'otlp' }, load);
    expect(missing).toMatchObject({ on: false });
    expect(!missing.on && missing.why).toMatch(/OTEL_TRACES_EXPORTER is set, but @zk\/otel and @opentelemetry\/sdk-node are not both installed/);
    expect(calls).toEqual([]);
  });

  it('in this workspace (no @opentelemetry/sdk-node installed) the real import leaves it off', async () => {
    const t = await startTelemetry({ OTEL_TRACES_EXPORTER: 'console' });
    expect(t.on).toBe(false);
  });
});

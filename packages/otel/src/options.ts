/**
 * The instrumentation's options, and what its channel handlers share (the tracer, the
 * instruments, the options resolved, the scope of a traced wait).
 */
import type { AsyncLocalStorage } from 'node:async_hooks';
import { context as otelContext, trace, type Context, type MeterProvider, type Span, type Tracer, type TracerProvider } from '@opentelemetry/api';
import type { ConnectContext, RequestContext } from './channels.js';
import { codeOf } from './codes.js';
import type { Instruments } from './metrics.js';

/** A request as `ignoreOperations` and the hooks see it (the `zk:request` context). */
export type RequestInfo = RequestContext;

/** Options of {@link ZooKeeperInstrumentation}, all optional. */
export interface ZooKeeperInstrumentationConfig {
  /** Subscribe at once (default `true`); `enable()` and `disable()` switch it at run time. */
  enabled?: boolean;
  /** The tracer provider to use (default: the global one, `trace.getTracerProvider()`). */
  tracerProvider?: TracerProvider;
  /**
   * The meter provider to use (default: the global one when the instrumentation is enabled;
   * register the SDK's first, or call `setMeterProvider` later).
   */
  meterProvider?: MeterProvider;
  /**
   * Make request, connect, lock-wait and hold spans only under a parent span (default `false`):
   * a request made outside any trace (a background watch re-read, a heartbeat-like poll) is then
   * left out. Metrics are recorded either way.
   */
  requireParentSpan?: boolean;
  /**
   * Requests to leave out of tracing (metrics still count them): operation names
   * (`['exists', 'getData']`), or a predicate on the request (`(r) => r.path?.startsWith('/config')`).
   */
  ignoreOperations?: readonly string[] | ((request: RequestInfo) => boolean);
  /**
   * Reply codes that are answers, not failures, per operation: no ERROR status and no `error.type`
   * (`db.response.status_code` is still set). Codes by number (`-101`) or Java name (`'NONODE'`).
   * Added to the default `{ exists: ['NONODE'] }`; an operation given here replaces its default
   * entry (`{ exists: [] }` makes a missing node an error again).
   */
  benignCodes?: Readonly<Record<string, readonly (number | string)[]>>;
  /**
   * Called when a request's span starts, to add attributes; not for a span the sampler dropped.
   * Exceptions are caught and ignored.
   */
  requestHook?: (span: Span, request: RequestInfo) => void;
  /**
   * Called before a request's span ends, with the reply's fields filled in; not for a span the
   * sampler dropped. Exceptions are caught and ignored.
   */
  responseHook?: (span: Span, request: RequestInfo) => void;
  /** Called when a connect span starts. Exceptions are caught and ignored. */
  connectHook?: (span: Span, connect: ConnectContext) => void;
  /**
   * Add `db.query.summary` to `db.client.operation.duration` (default `false`: the path summary is
   * low-cardinality for lock and queue nodes, but an application with many distinct paths would
   * make one time series per path).
   */
  metricQuerySummary?: boolean;
}

/** @internal What a traced wait (lock, connect) puts in scope for the requests made inside it. */
export interface Scope {
  /** The context with the wait's span: the parent of the requests made while it waits. */
  readonly inner: Context;
  /** The context the wait started in: the parent of the hold that follows it. */
  readonly outer: Context;
  /** The wait's span. */
  readonly span: Span;
}

/** @internal What the handlers share. */
export interface Runtime {
  readonly tracer: Tracer;
  readonly instruments: Instruments;
  readonly config: ZooKeeperInstrumentationConfig;
  readonly benign: ReadonlyMap<string, ReadonlySet<number>>;
  readonly scope: AsyncLocalStorage<Scope | undefined>;
}

/** @internal The context a new span starts under: a traced wait's, else the active one. */
export function parentContext(rt: Runtime): Context {
  return rt.scope.getStore()?.inner ?? otelContext.active();
}

/** @internal Whether `requireParentSpan` lets a span start under `parent`. */
export function mayStart(rt: Runtime, parent: Context): boolean {
  return rt.config.requireParentSpan !== true || trace.getSpan(parent) !== undefined;
}

/** @internal Runs a user hook, ignoring what it throws (instrumentation must not break the app). */
export function safely(fn: () => void): void {
  try {
    fn();
  } catch {
    // a hook's failure is the hook's
  }
}

/** @internal The benign codes per operation: the defaults with the caller's entries over them. */
export function benignCodes(given: ZooKeeperInstrumentationConfig['benignCodes']): Map<string, Set<number>> {
  const merged: Record<string, readonly (number | string)[]> = { exists: ['NONODE'], ...given };
  const out = new Map<string, Set<number>>();
  for (const [op, codes] of Object.entries(merged)) {
    const set = new Set<number>();
    for (const c of codes) {
      const n = typeof c === 'number' ? c : codeOf(c);
      if (n === undefined) throw new TypeError(`benignCodes.${op}: unknown ZooKeeper code name ${JSON.stringify(c)}`);
      set.add(n);
    }
    out.set(op, set);
  }
  return out;
}

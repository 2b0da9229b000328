/**
 * Spans and metrics for `zk:request` (one CLIENT span per request, named by its
 * `db.query.summary`, `{operation} {path summary}`, and `db.client.operation.duration`) and for
 * `zk:connect`.
 */
import { SpanKind, SpanStatusCode, trace, type Attributes, type Span } from '@opentelemetry/api';
import { ZooKeeperAttributes as A } from './attributes.js';
import { errorMessage, errorName, sessionHex, type ConnectContext, type RequestContext } from './channels.js';
import { codeName } from './codes.js';
import { defined } from './metrics.js';
import { mayStart, parentContext, safely, type Runtime, type Scope } from './options.js';
import { isSequentialCreate, requestSummary } from './summary.js';

/** The operations whose context carries `batchSize`. */
const BATCHES = new Set(['multi', 'multiRead']);

/**
 * Where a request's own state is kept on its context while it is in flight: a property, not a
 * WeakMap entry (four WeakMap operations per request cost more than the rest of an unsampled
 * request's handling).
 */
const IN_FLIGHT = Symbol('@zk/otel request');

/** A `zk:request` context as this instrumentation marks it. */
type Marked = RequestContext & { [IN_FLIGHT]?: InFlight | undefined };

/** One request in flight. */
interface InFlight {
  readonly started: number;
  readonly span: Span | undefined;
  readonly summary: string;
  /** The server the span started with. */
  readonly serverAddress: string | undefined;
  readonly serverPort: number | undefined;
}

/** A session id in hex, the last one remembered (a client's requests share one session). */
let lastSession: { id: bigint; hex: string } = { id: 0n, hex: '0x0' };
function sessionHexOf(id: bigint): string {
  if (lastSession.id !== id) lastSession = { id, hex: sessionHex(id) };
  return lastSession.hex;
}

/**
 * The handlers of a tracing channel this package subscribes: `start`, `error` and `asyncEnd`. The
 * other two, `end` (published for every operation once its synchronous part returned) and
 * `asyncStart`, have nothing to do, and a handler not given is not subscribed: the channel calls
 * nothing for them.
 */
export interface TracingHandlers<T> {
  start(ctx: T): void;
  error(ctx: T): void;
  asyncEnd(ctx: T): void;
}

function ignored(rt: Runtime, ctx: RequestContext): boolean {
  const rule = rt.config.ignoreOperations;
  if (rule === undefined) return false;
  if (typeof rule === 'function') {
    let out = false;
    safely(() => {
      out = rule(ctx);
    });
    return out;
  }
  return rule.includes(ctx.operation);
}

/** The `zk:request` handlers, and how many requests they saw start and not finish. */
export function requestHandlers(rt: Runtime): { handlers: TracingHandlers<RequestContext>; pending(): number } {
  const metricAttributes = new SuccessAttributes();
  let pending = 0;

  const finish = (ctx: Marked): void => {
    const req = ctx[IN_FLIGHT];
    if (req === undefined) return;
    ctx[IN_FLIGHT] = undefined;
    pending--;
    const elapsed = (performance.now() - req.started) / 1000;
    const code = ctx.errorCode ?? 0;
    const created = ctx.operation.startsWith('create') ? createdPath(ctx.result) : undefined;
    const summary = created !== undefined && isSequentialCreate(ctx.path, created) ? requestSummary(ctx.operation, ctx.path, true) : req.summary;
    const span = req.span;
    const failed = ctx.error !== undefined || (code !== 0 && rt.benign.get(ctx.operation)?.has(code) !== true);
    const errorType = ctx.error !== undefined ? errorName(ctx.error) : failed ? codeName(code) : undefined;
    // A success's attributes are the same object as for the last success of the operation on
    // that server; an answer with a code or an error has its own.
    const common =
      code === 0 && ctx.error === undefined
        ? metricAttributes.of(ctx)
        : defined({
            [A.DB_SYSTEM_NAME]: 'zookeeper',
            [A.DB_OPERATION_NAME]: ctx.operation,
            [A.DB_NAMESPACE]: ctx.chroot || undefined,
            [A.SERVER_ADDRESS]: ctx.serverAddress,
            [A.SERVER_PORT]: ctx.serverPort,
            [A.DB_RESPONSE_STATUS_CODE]: code !== 0 ? String(code) : undefined,
            [A.ERROR_TYPE]: errorType,
          });
    rt.instruments.duration.record(elapsed, rt.config.metricQuerySummary === true ? { ...common, [A.DB_QUERY_SUMMARY]: summary } : common);
    if (span === undefined) return;
    if (summary !== req.summary) {
      span.updateName(summary);
      span.setAttribute(A.DB_QUERY_SUMMARY, summary);
    }
    // What the span did not start with: the system, operation and namespace it has; the server
    // only when the request went to another one than the session had at its start. Set one by
    // one, in this order (no object to build and walk).
    if (ctx.serverAddress !== req.serverAddress || ctx.serverPort !== req.serverPort) {
      if (ctx.serverAddress !== undefined) span.setAttribute(A.SERVER_ADDRESS, ctx.serverAddress);
      if (ctx.serverPort !== undefined) span.setAttribute(A.SERVER_PORT, ctx.serverPort);
    }
    if (code !== 0) span.setAttribute(A.DB_RESPONSE_STATUS_CODE, String(code));
    if (errorType !== undefined) span.setAttribute(A.ERROR_TYPE, errorType);
    if (ctx.sessionId !== 0n) span.setAttribute(A.SESSION_ID, sessionHexOf(ctx.sessionId));
    if (ctx.xid !== undefined) span.setAttribute(A.XID, ctx.xid);
    if (ctx.requestBytes !== undefined) span.setAttribute(A.REQUEST_BYTES, ctx.requestBytes);
    if (ctx.replyBytes !== undefined) span.setAttribute(A.REPLY_BYTES, ctx.replyBytes);
    if (ctx.batched !== undefined) span.setAttribute(A.BATCHED, ctx.batched);
    if (ctx.error !== undefined) {
      failSpan(span, ctx.error);
    } else if (failed) {
      span.setStatus({ code: SpanStatusCode.ERROR, message: `${codeName(code)} (${code})` });
    }
    const hook = rt.config.responseHook;
    if (hook !== undefined) safely(() => hook(span, ctx));
    span.end();
  };

  const open = (ctx: Marked): void => {
    if (ctx[IN_FLIGHT] !== undefined) return;
    pending++;
    const summary = requestSummary(ctx.operation, ctx.path);
    let span: Span | undefined;
    const parent = parentContext(rt);
    if (!ignored(rt, ctx) && mayStart(rt, parent)) {
      // What a sampler may read is there at the start (the conventions' "SHOULD be provided at
      // span creation time"): the summary, the namespace and the server.
      const attributes: Attributes = { [A.DB_SYSTEM_NAME]: 'zookeeper', [A.DB_OPERATION_NAME]: ctx.operation, [A.DB_QUERY_SUMMARY]: summary };
      if (ctx.chroot) attributes[A.DB_NAMESPACE] = ctx.chroot;
      if (ctx.serverAddress !== undefined) attributes[A.SERVER_ADDRESS] = ctx.serverAddress;
      if (ctx.serverPort !== undefined) attributes[A.SERVER_PORT] = ctx.serverPort;
      if (ctx.batchSize !== undefined && BATCHES.has(ctx.operation)) attributes[A.DB_OPERATION_BATCH_SIZE] = ctx.batchSize;
      span = rt.tracer.startSpan(summary, { kind: SpanKind.CLIENT, attributes }, parent);
      // A span the sampler dropped records nothing: it is not kept, and neither hook sees it.
      if (!span.isRecording()) span = undefined;
      else {
        const hook = rt.config.requestHook;
        if (hook !== undefined) safely(() => hook(span!, ctx));
      }
    }
    ctx[IN_FLIGHT] = { started: performance.now(), span, summary, serverAddress: ctx.serverAddress, serverPort: ctx.serverPort };
  };
  return { handlers: spanHandlers(open, finish), pending: () => pending };
}

/**
 * The duration's attributes for a success, one object per operation, made again only when the
 * operation's namespace or server changes (the SDK hashes them at each recording; building them
 * anew each time would add to that).
 */
class SuccessAttributes {
  readonly #byOperation = new Map<string, { chroot: string | undefined; address: string | undefined; port: number | undefined; attributes: Attributes }>();

  of(ctx: RequestContext): Attributes {
    const known = this.#byOperation.get(ctx.operation);
    if (known !== undefined && known.chroot === ctx.chroot && known.address === ctx.serverAddress && known.port === ctx.serverPort) return known.attributes;
    const attributes = defined({
      [A.DB_SYSTEM_NAME]: 'zookeeper',
      [A.DB_OPERATION_NAME]: ctx.operation,
      [A.DB_NAMESPACE]: ctx.chroot || undefined,
      [A.SERVER_ADDRESS]: ctx.serverAddress,
      [A.SERVER_PORT]: ctx.serverPort,
    });
    this.#byOperation.set(ctx.operation, { chroot: ctx.chroot, address: ctx.serverAddress, port: ctx.serverPort, attributes });
    return attributes;
  }
}

/** The path a create answered with: a string (create) or `{ path }` (create2, createTtl). */
function createdPath(result: unknown): string | undefined {
  const body = (result as { body?: unknown } | undefined)?.body;
  if (typeof body === 'string') return body;
  const path = (body as { path?: unknown } | undefined)?.path;
  return typeof path === 'string' ? path : undefined;
}

/**
 * The `zk:connect` handlers. Unlike a lock wait's, the connect's span is not put in scope for what
 * runs inside it: the session's socket is made there, and everything its events start later
 * (watch callbacks, a recipe's background requests) would become the connect's children, one trace
 * as long as the session.
 */
export function connectHandlers(rt: Runtime): TracingHandlers<ConnectContext> {
  const spans = new WeakMap<object, Span | null>();
  const open = (ctx: ConnectContext): Span | undefined => {
    const known = spans.get(ctx);
    if (known !== undefined) return known ?? undefined;
    const parent = parentContext(rt);
    if (!mayStart(rt, parent)) {
      spans.set(ctx, null);
      return undefined;
    }
    const span = rt.tracer.startSpan(
      'connect',
      {
        kind: SpanKind.CLIENT,
        attributes: defined({ [A.DB_SYSTEM_NAME]: 'zookeeper', [A.DB_OPERATION_NAME]: 'connect', [A.HOSTS]: ctx.hosts, [A.CHROOT]: ctx.chroot || undefined }),
      },
      parent,
    );
    spans.set(ctx, span);
    const hook = rt.config.connectHook;
    if (hook !== undefined) safely(() => hook(span, ctx));
    return span;
  };
  const finish = (ctx: ConnectContext): void => {
    const span = spans.get(ctx);
    spans.delete(ctx);
    if (span === undefined || span === null) return;
    span.setAttributes(
      defined({
        [A.SERVER_ADDRESS]: ctx.serverAddress,
        [A.SERVER_PORT]: ctx.serverPort,
        [A.SESSION_ID]: ctx.sessionId !== undefined && ctx.sessionId !== 0n ? sessionHex(ctx.sessionId) : undefined,
        [A.SESSION_TIMEOUT]: ctx.negotiatedTimeout,
        [A.ERROR_TYPE]: ctx.error !== undefined ? errorName(ctx.error) : undefined,
      }),
    );
    if (ctx.error !== undefined) failSpan(span, ctx.error);
    span.end();
  };
  return spanHandlers(open, finish);
}

/**
 * @internal The scope a traced operation puts in place while it runs (its span is the parent of
 * what it does), or the current one when it has no span.
 */
export function scopeOf(rt: Runtime, span: Span | undefined): Scope | undefined {
  if (span === undefined) return rt.scope.getStore();
  const outer = parentContext(rt);
  return { inner: trace.setSpan(outer, span), outer, span };
}

/**
 * @internal The handlers of a tracing channel whose operation `open`s at `start` and `finish`es
 * at `error` or else at `asyncEnd` (`finish` does its work once). A failure publishes `error` with
 * the context complete: either the call threw before a promise existed (then `end` follows, and no
 * `asyncEnd`), or its promise rejected (then `asyncStart` and `asyncEnd` follow, adding nothing).
 * So a success costs two handler calls, not three.
 */
export function spanHandlers<T>(open: (ctx: T) => unknown, finish: (ctx: T) => void): TracingHandlers<T> {
  // The channel ignores what a handler returns: `open` itself, not a wrapper around it.
  return { start: open, error: finish, asyncEnd: finish };
}

/** @internal Marks `span` failed by `error`: ERROR status with its message, and the exception recorded. */
export function failSpan(span: Span, error: unknown): void {
  if (error instanceof Error) span.recordException(error);
  span.setStatus({ code: SpanStatusCode.ERROR, message: errorMessage(error) });
}

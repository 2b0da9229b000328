/**
 * Sending one request for the client: deadline and signal, `whileDisconnected: 'wait'`, and the
 * request diagnostics channels and `NODE_DEBUG=zk` lines (built only when someone listens: with
 * neither, a request pays two boolean tests).
 */
import { OpCode } from '../constants.js';
import { ErrorCode, errorCodeName, RequestTimeoutError, ZooKeeperError } from '../errors.js';
import type { JuteReader } from '../jute/reader.js';
import type { JuteWriter } from '../jute/writer.js';
import { debug, debugEnabled, requestChannel, requestFinishChannel, requestStartChannel, traced, type RequestTrace } from '../diagnostics.js';
import type { Reply } from '../connection/connection.js';
import type { Session, SessionState } from '../session/session.js';
import { raceAbort, validateTimeout } from '../util/abort.js';
import { setLongTimeout } from '../util/timer.js';
import type { ResolvedOptions } from './options.js';
import { hex64 } from '../util/hex.js';

/** What every call accepts (see ZooKeeper's CallOptions). */
interface SendOptions {
  signal?: AbortSignal | undefined;
  timeout?: number | undefined;
}

/** States in which `whileDisconnected: 'wait'` holds a request instead of failing it. */
const waitable = new Set<SessionState>(['connecting', 'suspended', 'lost']);

const COALESCE = { coalesce: true } as const;

/**
 * @internal Sends one request; resolves with the raw reply (the error code is not thrown).
 * `coalesce` marks a watch-less getData or getChildren that may share a multiRead (coalesceReads);
 * `batchSize`, the number of operations of a multi or multiRead (for its trace).
 */
export function sendRequest<T>(
  session: Session,
  settings: Pick<ResolvedOptions, 'requestTimeout' | 'whileDisconnected' | 'chroot'>,
  op: number,
  opName: string,
  path: string | undefined,
  write: ((w: JuteWriter) => void) | undefined,
  read: ((r: JuteReader) => T) | undefined,
  options: SendOptions,
  coalesce = false,
  batchSize?: number,
): Promise<Reply<T>> {
  const timeout = options.timeout ?? settings.requestTimeout;
  validateTimeout(timeout);
  options.signal?.throwIfAborted();
  const context = { op: opName, ...(path ? { path } : {}) };
  const logged = debugEnabled || requestStartChannel.hasSubscribers || requestFinishChannel.hasSubscribers;
  const trace: RequestTrace | undefined = traced(requestChannel) ? startTrace(session, settings.chroot, opName, op, path, batchSize) : undefined;
  const req: Outgoing<T> = { session, op, path, write, read, signal: options.signal, context, coalesce, trace };
  if (trace === undefined) return send(req, settings.whileDisconnected, timeout, logged);
  return traceRequest(trace, () => send(req, settings.whileDisconnected, timeout, logged));
}

/**
 * A request's trace as `start` publishes it: the server it will go to is the session's now (a
 * sampler decides at the span's start and may read it); a request held while disconnected gets
 * it when sent.
 */
function startTrace(session: Session, chroot: string, operation: string, op: number, path: string | undefined, batchSize: number | undefined): RequestTrace {
  const server = session.host;
  return { operation, op, path, chroot, sessionId: session.sessionId, serverAddress: server?.address, serverPort: server?.port, batchSize };
}

/** Sends now, or once connected (`whileDisconnected: 'wait'`); with the log line when `logged`. */
function send<T>(req: Outgoing<T>, whileDisconnected: ResolvedOptions['whileDisconnected'], timeout: number | undefined, logged: boolean): Promise<Reply<T>> {
  if (whileDisconnected === 'wait' && waitable.has(req.session.state)) return sendWhenConnected(req, timeout, logged);
  const reply = sendNow(req, timeout);
  return logged ? log(req.session, req.op, req.context.op, req.path, reply) : reply;
}

/**
 * Publishes a request on the `zk:request` tracing channel, as `tracePromise` does (start with
 * its stores, end, then asyncStart and asyncEnd, or error first), adding the reply's error code.
 */
function traceRequest<T>(trace: RequestTrace, send: () => Promise<Reply<T>>): Promise<Reply<T>> {
  const ch = requestChannel!;
  const run = (): Promise<Reply<T>> => {
    let reply: Promise<Reply<T>>;
    try {
      reply = send();
    } catch (err) {
      trace.error = err;
      ch.error.publish(trace);
      throw err;
    } finally {
      ch.end.publish(trace);
    }
    return reply.then(
      (r) => {
        trace.result = r;
        trace.errorCode = r.err === 0 && trace.op === OpCode.multi ? failedOpCode(r.body) : r.err;
        ch.asyncStart.publish(trace);
        ch.asyncEnd.publish(trace);
        return r;
      },
      (err: unknown) => {
        trace.error = err;
        ch.error.publish(trace);
        ch.asyncStart.publish(trace);
        ch.asyncEnd.publish(trace);
        throw err;
      },
    );
  };
  // runStores publishes `start` after entering the stores bound to it (AsyncLocalStorage).
  if (typeof ch.start.runStores === 'function') return ch.start.runStores(trace, run);
  ch.start.publish(trace);
  return run();
}

/** The error code of a multi's failed operation (its reply header says 0), or 0. */
function failedOpCode(results: unknown): number {
  if (!Array.isArray(results)) return 0;
  for (const r of results as { type: number; err?: number }[]) if (r.type === OpCode.error && r.err) return r.err;
  return 0;
}

/** One request as the client sends it. */
interface Outgoing<T> {
  session: Session;
  op: number;
  path: string | undefined;
  write: ((w: JuteWriter) => void) | undefined;
  read: ((r: JuteReader) => T) | undefined;
  signal: AbortSignal | undefined;
  context: { op: string; path?: string };
  /** A watch-less getData or getChildren that may share a multiRead (coalesceReads). */
  coalesce: boolean;
  /** Its `zk:request` trace, when traced. */
  trace: RequestTrace | undefined;
}

/**
 * Sends `req` on the live connection, within `timeout` and its signal. A request the connection
 * held and never sent (it closed first: a server that refused the multiRead probe, see
 * Connection.request) is sent again once the session is back, within the same deadline and
 * signal: it cannot have been applied. Any other failure stands.
 */
function sendNow<T>(req: Outgoing<T>, timeout: number | undefined): Promise<Reply<T>> {
  const mayHold = req.session.mayHold(req.coalesce);
  const trace = req.trace;
  let options: { coalesce?: boolean; trace?: RequestTrace } | undefined = req.coalesce ? COALESCE : undefined;
  if (trace !== undefined) {
    const server = req.session.host;
    trace.sessionId = req.session.sessionId;
    trace.serverAddress = server?.address;
    trace.serverPort = server?.port;
    options = { coalesce: req.coalesce, trace };
  }
  const once = req.session.request(req.op, req.write, req.read, options);
  if (!mayHold) return raceAbort(once, req.signal, timeout, req.context);
  const deadline = timeout === undefined ? undefined : performance.now() + timeout;
  const resent = once.catch((err: unknown) => {
    const left = deadline === undefined ? undefined : deadline - performance.now();
    if (!(err instanceof ZooKeeperError && err.notSent) || req.signal?.aborted || (left !== undefined && left <= 0)) throw err;
    return sendWhenConnected(req, left, false);
  });
  return raceAbort(resent, req.signal, timeout, req.context);
}

/**
 * `whileDisconnected: 'wait'` (and a request sent again, see {@link sendNow}): holds the request
 * until the session is connected again, within `timeout` and the signal, then sends it. A
 * request whose caller gave up is never sent.
 */
async function sendWhenConnected<T>(req: Outgoing<T>, timeout: number | undefined, logged: boolean): Promise<Reply<T>> {
  const { session, signal, context } = req;
  const deadline = timeout === undefined ? undefined : performance.now() + timeout;
  const ac = new AbortController();
  const timer = timeout === undefined ? undefined : setLongTimeout(() => ac.abort(new RequestTimeoutError(`${context.op}${context.path ? ` ${context.path}` : ''} timed out after ${timeout} ms while disconnected`, context)), timeout);
  const onAbort = () => ac.abort(signal?.reason);
  signal?.addEventListener('abort', onAbort, { once: true });
  try {
    await session.waitConnected(ac.signal);
  } finally {
    timer?.clear();
    signal?.removeEventListener('abort', onAbort);
  }
  const left = deadline === undefined ? undefined : Math.max(0, deadline - performance.now());
  const sent = sendNow(req, left);
  return logged ? log(req.session, req.op, context.op, req.path, sent) : sent;
}

/** The deprecated `zk:request:start`/`finish` channels and the `NODE_DEBUG=zk` line. */
async function log<T extends { err: number }>(session: Session, op: number, opName: string, path: string | undefined, reply: Promise<T>): Promise<T> {
  const start = performance.now();
  if (requestStartChannel.hasSubscribers) requestStartChannel.publish({ op, path });
  let err: number = ErrorCode.CONNECTIONLOSS;
  let thrown: unknown;
  try {
    const r = await reply;
    err = r.err;
    return r;
  } catch (e) {
    thrown = e;
    throw e;
  } finally {
    const durationMs = performance.now() - start;
    if (requestFinishChannel.hasSubscribers) requestFinishChannel.publish({ op, path, err, durationMs });
    // `session 0x1a2b: getData /app/config 0.8 ms ok`, `... NONODE`, or the error that ended the wait.
    if (debugEnabled) debug('session 0x%s: %s %s %s ms %s', hex64(session.sessionId), opName, path ?? '-', durationMs.toFixed(1), thrown === undefined ? (err === 0 ? 'ok' : errorCodeName(err)) : describe(thrown));
  }
}

function describe(err: unknown): string {
  return err instanceof Error ? `${err.name}: ${err.message}` : String(err);
}

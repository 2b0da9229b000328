/**
 * `retry`: calls a function again after errors that leave no doubt that repeating it is safe,
 * with exponential back-off and full jitter, a limit on attempts and on elapsed time, and the
 * caller's signal. Curator's RetryLoop and Kazoo's KazooRetry do the same job; unlike them, this
 * one never repeats a write whose outcome is unknown unless the caller says it is idempotent.
 */
import { ErrorCode, InvalidArgumentError, RequestTimeoutError, ZooKeeperError } from '../errors.js';
import { abortReason, validateTimeout } from '../util/abort.js';
import { setLongTimeout, type LongTimeout } from '../util/timer.js';

/** Options of {@link retry}. */
export interface RetryOptions {
  /** Attempts in all, the first one included (default 5); an integer >= 1, or Infinity (then `maxElapsed` or the signal ends it). */
  maxAttempts?: number;
  /**
   * Milliseconds from the first attempt after which no new attempt starts and the attempt under
   * way is aborted through its signal (default: none). A finite number >= 0.
   */
  maxElapsed?: number;
  /** Cap of the first back-off in ms (default 100); the cap doubles with each retry. */
  baseDelay?: number;
  /** Largest back-off in ms (default 10 000). */
  maxDelay?: number;
  /** Stops retrying: a wait ends at once with the signal's reason, and `fn` gets it too. */
  signal?: AbortSignal;
  /**
   * Say that `fn` may be repeated even when a write it made has an unknown outcome
   * (ConnectionLoss after sending): every write it makes is conditional, so a repeat cannot
   * apply it twice (`setData`/`delete`/`setACL` with an explicit `version`), or it is idempotent
   * by design (`ensurePath`, `deleteRecursive`). Default false.
   */
  idempotent?: boolean;
  /** Called before each back-off with the error, the attempt that failed (from 1) and the delay. */
  onRetry?: (error: ZooKeeperError, attempt: number, delayMs: number) => void;
  /** Source of randomness in [0, 1) for the jitter (default Math.random). */
  random?: () => number;
}

/** What {@link retry} passes to each attempt. */
export interface RetryAttempt {
  /** From 1. */
  readonly attempt: number;
  /** Aborts with the caller's signal, or when `maxElapsed` has passed: pass it to every call. */
  readonly signal: AbortSignal;
}

/** Operations that only read: repeating them changes nothing. */
const READS = new Set(['exists', 'getData', 'getChildren', 'getACL', 'getAllChildrenNumber', 'getEphemerals', 'getConfig', 'sync', 'whoAmI', 'multiRead', 'checkWatches']);

/** Codes after which a request may or may not have been applied. */
const UNKNOWN_OUTCOME = new Set<number>([ErrorCode.CONNECTIONLOSS, ErrorCode.OPERATIONTIMEOUT, ErrorCode.REQUESTTIMEOUT, ErrorCode.SESSIONMOVED]);

/**
 * True when the request that failed with `error` may be sent again without applying anything
 * twice, as {@link retry} decides:
 *
 * - the request was never sent (`error.notSent`, a ConnectionLoss while disconnected), or the
 *   server refused it unexecuted (ThrottledOp): any operation;
 * - ConnectionLoss, OperationTimeout, RequestTimeout (the call's deadline) or SessionMoved after
 *   sending, when the outcome is unknown: reads always (`error.op` is one of exists, getData,
 *   getChildren, getACL, getAllChildrenNumber, getEphemerals, sync, whoAmI, multiRead,
 *   checkWatches); writes (create, setData, delete, setACL, multi, ...) only when `idempotent`;
 * - any other error is an answer (NoNode, NodeExists, BadVersion, NoAuth, SessionExpired, ...)
 *   or a failure a retry cannot mend (this client does not start a new session after expiry).
 */
export function isSafeToRetry(error: unknown, options: { idempotent?: boolean } = {}): boolean {
  if (!(error instanceof ZooKeeperError)) return false;
  if (error.code === ErrorCode.THROTTLEDOP) return true;
  if (!UNKNOWN_OUTCOME.has(error.code)) return false;
  if (error.notSent) return true;
  return options.idempotent === true || (error.op !== undefined && READS.has(error.op));
}

/**
 * Calls `fn` until it resolves, or fails with an error that {@link isSafeToRetry} refuses, or
 * `maxAttempts` or `maxElapsed` is reached (then the last error is thrown as it is). Between
 * attempts it waits a random time in [0, min(maxDelay, baseDelay * 2^(attempt-1))) ("full
 * jitter": clients that failed together do not come back together).
 *
 * @example
 * ```ts
 * // A read: repeated after ConnectionLoss.
 * const { data } = await retry(({ signal }) => zk.getData('/config', { signal }), { maxElapsed: 30_000 });
 * // A conditional write: a repeat after an unknown outcome fails with BadVersion instead of applying twice.
 * await retry(({ signal }) => zk.setData('/config', 'v2', { version: stat.version, signal }), { idempotent: true });
 * ```
 */
export async function retry<T>(fn: (attempt: RetryAttempt) => Promise<T>, options: RetryOptions = {}): Promise<T> {
  const { maxAttempts = 5, baseDelay = 100, maxDelay = 10_000, random = Math.random } = options;
  if (!(Number.isInteger(maxAttempts) || maxAttempts === Infinity) || maxAttempts < 1) throw new InvalidArgumentError('maxAttempts', `must be an integer >= 1 or Infinity, got ${String(maxAttempts)}`);
  validateTimeout(options.maxElapsed, 'maxElapsed');
  validateTimeout(baseDelay, 'baseDelay');
  validateTimeout(maxDelay, 'maxDelay');
  if (typeof fn !== 'function') throw new InvalidArgumentError('fn', 'must be a function');
  options.signal?.throwIfAborted();

  const ac = new AbortController();
  const onAbort = () => ac.abort(abortReason(options.signal as AbortSignal));
  options.signal?.addEventListener('abort', onAbort, { once: true });
  const start = performance.now();
  let deadline: LongTimeout | undefined;
  if (options.maxElapsed !== undefined) {
    const ms = options.maxElapsed;
    deadline = setLongTimeout(() => ac.abort(new RequestTimeoutError(`gave up retrying after ${ms} ms`, { op: 'retry' })), ms);
  }
  try {
    for (let attempt = 1; ; attempt++) {
      try {
        return await fn({ attempt, signal: ac.signal });
      } catch (err) {
        if (ac.signal.aborted || attempt >= maxAttempts || !isSafeToRetry(err, options)) throw err;
        const delay = backoffDelay(attempt, { baseDelay, maxDelay, random });
        if (options.maxElapsed !== undefined && performance.now() - start + delay >= options.maxElapsed) throw err;
        options.onRetry?.(err as ZooKeeperError, attempt, delay);
        await sleep(delay, ac.signal);
      }
    }
  } finally {
    deadline?.clear();
    options.signal?.removeEventListener('abort', onAbort);
  }
}

/**
 * @internal The back-off before retry number `attempt` (from 1): "full jitter", a random time in
 * [0, min(maxDelay, baseDelay * 2^(attempt-1))).
 */
export function backoffDelay(attempt: number, options: Pick<RetryOptions, 'baseDelay' | 'maxDelay' | 'random'>): number {
  const { baseDelay = 100, maxDelay = 10_000, random = Math.random } = options;
  return random() * Math.min(maxDelay, baseDelay * 2 ** (attempt - 1));
}

/** @internal Waits `ms`; rejects with the signal's reason as soon as it aborts. */
export function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      timer.clear();
      reject(abortReason(signal as AbortSignal));
    };
    const timer = setLongTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    if (signal?.aborted) return onAbort();
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

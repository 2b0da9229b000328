/**
 * Abort and deadline helpers shared by everything that waits.
 */
import { InvalidArgumentError, RequestTimeoutError } from '../errors.js';
import { setLongTimeout, type LongTimeout } from './timer.js';

/**
 * Throws {@link InvalidArgumentError} unless `ms` is a finite, non-negative number (or undefined,
 * no deadline). Any finite length is honoured: timers longer than 2^31-1 ms are chained.
 */
export function validateTimeout(ms: number | undefined, argument = 'timeout'): void {
  if (ms === undefined) return;
  if (typeof ms !== 'number' || !Number.isFinite(ms) || ms < 0) {
    throw new InvalidArgumentError(argument, `must be a finite number of milliseconds >= 0, got ${String(ms)}`);
  }
}

/** The reason of an aborted signal, as an Error (a signal may carry any value). */
export function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException('This operation was aborted', 'AbortError');
}

/**
 * Races `promise` against `signal` and an optional timeout: rejects with the signal's reason,
 * or with a {@link RequestTimeoutError} naming `op` and `path` after `timeout` ms. The work behind
 * `promise` is not cancelled (a request already sent gets its reply; it is ignored).
 */
export function raceAbort<T>(
  promise: Promise<T>,
  signal: AbortSignal | undefined,
  timeout: number | undefined,
  context: { op?: string; path?: string } = {},
): Promise<T> {
  if (!signal && timeout === undefined) return promise;
  return new Promise<T>((resolve, reject) => {
    let timer: LongTimeout | undefined;
    const onAbort = () => {
      cleanup();
      reject(abortReason(signal as AbortSignal));
    };
    const cleanup = () => {
      timer?.clear();
      signal?.removeEventListener('abort', onAbort);
    };
    if (signal) {
      if (signal.aborted) return onAbort();
      signal.addEventListener('abort', onAbort, { once: true });
    }
    if (timeout !== undefined) {
      timer = setLongTimeout(() => {
        cleanup();
        reject(new RequestTimeoutError(`${context.op ?? 'request'}${context.path ? ` ${context.path}` : ''} timed out after ${timeout} ms`, context));
      }, timeout);
    }
    promise.then(
      (v) => {
        cleanup();
        resolve(v);
      },
      (e: unknown) => {
        cleanup();
        reject(e);
      },
    );
  });
}

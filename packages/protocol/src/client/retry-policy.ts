/**
 * The client-wide retry policy (`ZooKeeper.connect(..., { retry })`, Curator's `RetryPolicy` on
 * the framework): every call repeats its request after the errors {@link isSafeToRetry} accepts
 * (reads after an unknown outcome; any request that was never sent or that the server refused
 * unexecuted), with {@link retry}'s back-off, within the call's deadline and signal. A write whose
 * outcome is unknown is never repeated: that is for the caller to decide, with `retry()` and
 * `idempotent`.
 */
import { InvalidArgumentError, type ZooKeeperError } from '../errors.js';
import { validateTimeout } from '../util/abort.js';
import { backoffDelay, isSafeToRetry, sleep, type RetryOptions } from './retry.js';

/**
 * The client's retry policy: {@link RetryOptions} without what belongs to one call (its signal,
 * and `idempotent`, which the client never assumes).
 */
export type ClientRetryOptions = Pick<RetryOptions, 'maxAttempts' | 'maxElapsed' | 'baseDelay' | 'maxDelay' | 'onRetry' | 'random'>;

/** What one attempt gets: the call's signal, and the time left of the call's deadline. */
interface AttemptOptions {
  signal?: AbortSignal | undefined;
  timeout?: number | undefined;
}

/** @internal The `retry` client option, checked at connect: undefined for none (`false`, or absent). */
export function resolveRetryPolicy(value: unknown): ClientRetryOptions | undefined {
  if (value === undefined || value === false) return undefined;
  if (value === true) return {};
  if (typeof value !== 'object' || value === null) throw new InvalidArgumentError('retry', `must be false, true or the retry options, got ${String(value)}`);
  const policy = value as ClientRetryOptions;
  const { maxAttempts } = policy;
  if (maxAttempts !== undefined && (!(Number.isInteger(maxAttempts) || maxAttempts === Infinity) || maxAttempts < 1)) throw new InvalidArgumentError('retry.maxAttempts', `must be an integer >= 1 or Infinity, got ${String(maxAttempts)}`);
  validateTimeout(policy.maxElapsed, 'retry.maxElapsed');
  validateTimeout(policy.baseDelay, 'retry.baseDelay');
  validateTimeout(policy.maxDelay, 'retry.maxDelay');
  for (const key of ['onRetry', 'random'] as const) {
    if (policy[key] !== undefined && typeof policy[key] !== 'function') throw new InvalidArgumentError(`retry.${key}`, `must be a function, got ${typeof policy[key]}`);
  }
  return { ...policy };
}

/**
 * @internal Runs `once` with the call's options; after an error that is safe to repeat, waits
 * {@link backoffDelay} and runs it again, each attempt with the call's signal and what is left of
 * its bounds: the call's `timeout` (else the client's `requestTimeout`) bounds the whole call,
 * retries included, and so does `maxElapsed`. The last error is thrown as it is (a retry that
 * would start past a bound is not made); an abort during a back-off throws the signal's reason.
 */
export function withRetryPolicy<T>(policy: ClientRetryOptions, options: AttemptOptions, requestTimeout: number | undefined, once: (options: AttemptOptions) => Promise<T>): Promise<T> {
  const start = performance.now();
  const bounds = [options.timeout ?? requestTimeout, policy.maxElapsed].filter((b): b is number => b !== undefined);
  const bound = bounds.length === 0 ? undefined : Math.min(...bounds);
  const maxAttempts = policy.maxAttempts ?? 5;
  return once(options).catch(async (first: unknown) => {
    let error = first;
    for (let attempt = 1; ; attempt++) {
      if (attempt >= maxAttempts || !isSafeToRetry(error)) throw error;
      const delay = backoffDelay(attempt, policy);
      if (bound !== undefined && performance.now() - start + delay >= bound) throw error;
      policy.onRetry?.(error as ZooKeeperError, attempt, delay);
      await sleep(delay, options.signal);
      try {
        return await once({ signal: options.signal, timeout: bound === undefined ? undefined : Math.max(0, start + bound - performance.now()) });
      } catch (err) {
        error = err;
      }
    }
  });
}

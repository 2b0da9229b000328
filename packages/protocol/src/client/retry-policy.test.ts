import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ConnectionLossError, InvalidArgumentError, NoNodeError, RequestTimeoutError } from '../errors.js';
import { resolveRetryPolicy, withRetryPolicy } from './retry-policy.js';

const lost = (op: string, notSent = false) => new ConnectionLossError(undefined, { op, path: '/a', notSent });

describe('retry policy - the option', () => {
  it('is off unless asked for; true takes the defaults', () => {
    expect(resolveRetryPolicy(undefined)).toBeUndefined();
    expect(resolveRetryPolicy(false)).toBeUndefined();
    expect(resolveRetryPolicy(true)).toEqual({});
    expect(resolveRetryPolicy({ maxAttempts: 3, baseDelay: 10 })).toEqual({ maxAttempts: 3, baseDelay: 10 });
    expect(resolveRetryPolicy({ maxAttempts: Infinity, maxElapsed: 60_000 })).toEqual({ maxAttempts: Infinity, maxElapsed: 60_000 });
  });

  it.each([
    ['a number', 3, 'retry'],
    ['maxAttempts 0', { maxAttempts: 0 }, 'retry.maxAttempts'],
    ['maxAttempts 1.5', { maxAttempts: 1.5 }, 'retry.maxAttempts'],
    ['a negative baseDelay', { baseDelay: -1 }, 'retry.baseDelay'],
    ['an infinite maxElapsed', { maxElapsed: Infinity }, 'retry.maxElapsed'],
    ['onRetry not a function', { onRetry: 'log' }, 'retry.onRetry'],
  ])('refuses %s, naming the field', (_name, value, argument) => {
    const err = (() => {
      try {
        resolveRetryPolicy(value);
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(InvalidArgumentError);
    expect((err as Error).message).toContain(argument);
  });
});

describe('retry policy - the loop around one call', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('repeats a read until it succeeds, each attempt with the time left of the call', async () => {
    const timeouts: (number | undefined)[] = [];
    const once = vi.fn(async (o: { timeout?: number | undefined }) => {
      timeouts.push(o.timeout);
      if (timeouts.length < 3) throw lost('getData');
      return 'data';
    });
    const result = withRetryPolicy({ baseDelay: 100, random: () => 1 }, { timeout: 1000 }, undefined, once);
    await vi.runAllTimersAsync();
    await expect(result).resolves.toBe('data');
    // first attempt: the call's own options; then 1000 - 100 and 1000 - 100 - 200
    expect(timeouts).toEqual([1000, 900, 700]);
  });

  it('throws an error that is not safe to repeat at once: a write sent and lost, an answer', async () => {
    for (const error of [lost('create'), new NoNodeError(undefined, { op: 'getData', path: '/a' })]) {
      const once = vi.fn(async () => {
        throw error;
      });
      await expect(withRetryPolicy({}, {}, undefined, once)).rejects.toBe(error);
      expect(once).toHaveBeenCalledTimes(1);
    }
  });

  it('repeats a write that was never sent', async () => {
    let n = 0;
    const result = withRetryPolicy({ random: () => 0 }, {}, undefined, async () => {
      if (n++ === 0) throw lost('create', true);
      return '/a';
    });
    await vi.runAllTimersAsync();
    await expect(result).resolves.toBe('/a');
    expect(n).toBe(2);
  });

  it('stops at maxAttempts with the last error', async () => {
    const errors = [lost('getData'), lost('getData'), lost('getData')];
    let n = 0;
    const result = withRetryPolicy({ maxAttempts: 3, random: () => 0 }, {}, undefined, async () => {
      throw errors[n++];
    });
    result.catch(() => undefined);
    await vi.runAllTimersAsync();
    await expect(result).rejects.toBe(errors[2]);
    expect(n).toBe(3);
  });

  it('starts no retry past the call deadline (requestTimeout when the call names none): the last error stands', async () => {
    const seen: number[] = [];
    const result = withRetryPolicy({ maxAttempts: 1000, baseDelay: 100, maxDelay: 100, random: () => 1 }, {}, 350, async () => {
      seen.push(performance.now());
      throw new RequestTimeoutError(undefined, { op: 'getData', path: '/a' });
    });
    result.catch(() => undefined);
    await vi.runAllTimersAsync();
    await expect(result).rejects.toBeInstanceOf(RequestTimeoutError);
    // at 0, 100, 200, 300; the next would start at 400 > 350
    expect(seen.length).toBe(4);
  });

  it('maxElapsed bounds the call too', async () => {
    let n = 0;
    const result = withRetryPolicy({ maxAttempts: 1000, maxElapsed: 250, baseDelay: 100, maxDelay: 100, random: () => 1 }, {}, undefined, async () => {
      n++;
      throw lost('getData');
    });
    result.catch(() => undefined);
    await vi.runAllTimersAsync();
    await expect(result).rejects.toBeInstanceOf(ConnectionLossError);
    expect(n).toBe(3);
  });

  it('an abort during the back-off ends the call with the signal reason, and no further attempt', async () => {
    const ac = new AbortController();
    let n = 0;
    const result = withRetryPolicy({ baseDelay: 10_000, random: () => 1 }, { signal: ac.signal }, undefined, async () => {
      n++;
      throw lost('getData');
    });
    result.catch(() => undefined);
    await vi.advanceTimersByTimeAsync(100);
    const reason = new Error('stop');
    ac.abort(reason);
    await expect(result).rejects.toBe(reason);
    await vi.runAllTimersAsync();
    expect(n).toBe(1);
  });
});

import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ConnectionLossError, InvalidArgumentError, NodeExistsError, NoNodeError, RequestTimeoutError, SessionExpiredError, ThrottledOpError, ZooKeeperError } from '../errors.js';
import { isSafeToRetry, retry } from './retry.js';

const lost = (op: string, notSent = false) => new ConnectionLossError(undefined, { op, path: '/a', notSent });

describe('retry - which errors are safe to repeat', () => {
  it.each([
    ['a read after ConnectionLoss', lost('getData'), {}, true],
    ['exists after a call deadline', new RequestTimeoutError(undefined, { op: 'exists' }), {}, true],
    ['multiRead after ConnectionLoss', lost('multiRead'), {}, true],
    ['getConfig after ConnectionLoss (a read of /zookeeper/config)', lost('getConfig'), {}, true],
    ['reconfig after ConnectionLoss (its outcome unknown: read the config)', lost('reconfig'), {}, false],
    ['create after ConnectionLoss (outcome unknown)', lost('create'), {}, false],
    ['setData after ConnectionLoss', lost('setData'), {}, false],
    ['delete after ConnectionLoss', lost('delete'), {}, false],
    ['multi after ConnectionLoss', lost('multi'), {}, false],
    ['a write after a call deadline', new RequestTimeoutError(undefined, { op: 'setData' }), {}, false],
    ['an error without an operation', new ConnectionLossError(), {}, false],
    ['a declared idempotent write after ConnectionLoss', lost('setData'), { idempotent: true }, true],
    ['create never sent (disconnected)', lost('create', true), {}, true],
    ['a throttled create (not executed)', new ThrottledOpError(undefined, { op: 'create' }), {}, true],
    ['NoNode (an answer)', new NoNodeError(undefined, { op: 'getData' }), { idempotent: true }, false],
    ['NodeExists (an answer)', new NodeExistsError(undefined, { op: 'create' }), { idempotent: true }, false],
    ['SessionExpired', new SessionExpiredError(undefined, { op: 'getData' }), { idempotent: true }, false],
    ['not a ZooKeeper error', new Error('boom'), { idempotent: true }, false],
  ] as const)('%s: %s', (_name, err, options, expected) => {
    expect(isSafeToRetry(err, options)).toBe(expected);
  });
});

describe('retry - the loop', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('repeats a read until it succeeds, with full-jitter back-off under a doubling cap', async () => {
    const delays: number[] = [];
    const fn = vi.fn(async ({ attempt }: { attempt: number }) => {
      if (attempt < 4) throw lost('getData');
      return 'data';
    });
    const result = retry(fn, { baseDelay: 100, maxDelay: 250, random: () => 0.5, onRetry: (_e, _a, d) => delays.push(d) });
    await vi.runAllTimersAsync();
    await expect(result).resolves.toBe('data');
    expect(fn).toHaveBeenCalledTimes(4);
    // caps 100, 200, 400 -> 250; half of each
    expect(delays).toEqual([50, 100, 125]);
  });

  it('never repeats a create whose outcome is unknown; repeats it when declared idempotent (control)', async () => {
    const create = vi.fn(async () => {
      throw lost('create');
    });
    const once = retry(create, { random: () => 0 });
    await expect(once).rejects.toBeInstanceOf(ConnectionLossError);
    expect(create).toHaveBeenCalledTimes(1);

    const again = retry(create, { random: () => 0, idempotent: true, maxAttempts: 3 });
    const settled = again.catch((e: unknown) => e);
    await vi.runAllTimersAsync();
    expect(await settled).toBeInstanceOf(ConnectionLossError);
    expect(create).toHaveBeenCalledTimes(1 + 3);
  });

  it('gives up after maxAttempts with the last error as it is', async () => {
    let n = 0;
    const errors: Error[] = [];
    const result = retry(
      async () => {
        const e = lost('getData');
        errors.push(e);
        n++;
        throw e;
      },
      { maxAttempts: 3, random: () => 0.1 },
    ).catch((e: unknown) => e);
    await vi.runAllTimersAsync();
    expect(await result).toBe(errors[2]);
    expect(n).toBe(3);
  });

  it('starts no attempt past maxElapsed, and aborts the one under way through its signal', async () => {
    let calls = 0;
    const slow = retry(
      ({ signal }) =>
        new Promise<never>((_resolve, reject) => {
          calls++;
          signal.addEventListener('abort', () => reject(signal.reason));
        }),
      { maxElapsed: 1000 },
    ).catch((e: unknown) => e);
    await vi.advanceTimersByTimeAsync(1000);
    const err = await slow;
    expect(err).toBeInstanceOf(RequestTimeoutError);
    expect((err as Error).message).toMatch(/gave up retrying after 1000 ms/);
    expect(calls).toBe(1);

    // a back-off that would end past the deadline is not waited: the error comes at once
    const start = Date.now();
    const quick = retry(
      async () => {
        throw lost('getData');
      },
      { maxElapsed: 500, baseDelay: 10_000, random: () => 0.9 },
    );
    await expect(quick).rejects.toBeInstanceOf(ConnectionLossError);
    expect(Date.now() - start).toBe(0);
  });

  it("ends a back-off at once when the caller's signal aborts", async () => {
    const ac = new AbortController();
    const result = retry(
      async () => {
        throw lost('getData');
      },
      { signal: ac.signal, baseDelay: 60_000, random: () => 0.99 },
    ).catch((e: unknown) => e);
    await vi.advanceTimersByTimeAsync(10);
    ac.abort(new Error('stop'));
    expect(((await result) as Error).message).toBe('stop');
  });

  it('checks its options before calling anything', async () => {
    const fn = vi.fn(async () => 1);
    await expect(retry(fn, { maxAttempts: 0 })).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(retry(fn, { maxElapsed: -1 })).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(retry(fn, { baseDelay: Number.NaN })).rejects.toBeInstanceOf(InvalidArgumentError);
    expect(fn).not.toHaveBeenCalled();
  });

  it('passes an error that is not a ZooKeeperError through untouched', async () => {
    const boom = new TypeError('bug');
    await expect(retry(async () => Promise.reject(boom), { idempotent: true })).rejects.toBe(boom);
    expect(boom).not.toBeInstanceOf(ZooKeeperError);
  });
});

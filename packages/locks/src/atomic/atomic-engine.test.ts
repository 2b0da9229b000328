import { describe, expect, it } from 'vitest';
import { backoffDelay, type AtomicRetry } from './atomic-engine.js';

type Delay = (retry: Required<AtomicRetry>, tried: number, random: () => number) => number;

/** The largest random number below 1 (Math.random never returns 1). */
const BELOW_ONE = 1 - Number.EPSILON;

/** Draws from `delay` with fixed and random inputs; returns each draw beside its expected cap. */
function draws(delay: Delay, retry: Required<AtomicRetry>, tries: number): Array<{ tried: number; cap: number; ms: number }> {
  const out = [];
  for (let tried = 1; tried < tries; tried++) {
    const cap = Math.min(retry.maxDelay, retry.baseDelay * 2 ** (tried - 1));
    for (const r of [0, 0.5, BELOW_ONE]) out.push({ tried, cap, ms: delay(retry, tried, () => r) });
    for (let i = 0; i < 500; i++) out.push({ tried, cap, ms: delay(retry, tried, Math.random) });
  }
  return out;
}

/** Every draw within [3/4 cap, cap]; the first draw outside, or undefined. */
const outside = (all: ReturnType<typeof draws>) => all.find(({ cap, ms }) => !(ms >= cap * 0.75 && ms <= cap));

describe('atomic engine - back-off between tries', () => {
  it("stays within [3/4 cap, cap]: the bench's and Curator's RetryNTimes(10, 10) counterpart waits 7.5 to 10 ms", () => {
    const retry = { maxTries: 11, baseDelay: 10, maxDelay: 10 };
    const all = draws(backoffDelay, retry, retry.maxTries);
    expect(outside(all)).toBeUndefined();
    expect(Math.min(...all.map((d) => d.ms))).toBe(7.5);
    expect(Math.max(...all.map((d) => d.ms))).toBeLessThanOrEqual(10);
    expect(Math.max(...all.map((d) => d.ms))).toBeGreaterThan(9.99);
  });

  it('doubles the cap after each try from baseDelay up to maxDelay (the defaults: 5, 10, 20 ... 200 ms)', () => {
    const retry = { maxTries: 10, baseDelay: 5, maxDelay: 200 };
    expect(outside(draws(backoffDelay, retry, retry.maxTries))).toBeUndefined();
    const top = Array.from({ length: 9 }, (_, i) => backoffDelay(retry, i + 1, () => BELOW_ONE));
    expect(top.map(Math.round)).toEqual([5, 10, 20, 40, 80, 160, 200, 200, 200]);
    const floor = Array.from({ length: 9 }, (_, i) => backoffDelay(retry, i + 1, () => 0));
    expect(floor).toEqual([3.75, 7.5, 15, 30, 60, 120, 150, 150, 150]);
    // maxDelay below baseDelay caps from the first back-off on; zero delays are zero.
    expect(backoffDelay({ maxTries: 3, baseDelay: 50, maxDelay: 8 }, 1, () => BELOW_ONE)).toBeLessThanOrEqual(8);
    expect(backoffDelay({ maxTries: 3, baseDelay: 0, maxDelay: 0 }, 2, Math.random)).toBe(0);
    // A very long run of tries does not overflow into NaN or Infinity.
    expect(backoffDelay({ maxTries: 5000, baseDelay: 5, maxDelay: 200 }, 4000, () => 0)).toBe(150);
  });

  it('negative control: full jitter (0 to the cap, the old back-off) fails the same bounds check', () => {
    const fullJitter: Delay = (retry, tried, random) => random() * Math.min(retry.maxDelay, retry.baseDelay * 2 ** (tried - 1));
    const bad = outside(draws(fullJitter, { maxTries: 11, baseDelay: 10, maxDelay: 10 }, 11));
    expect(bad).toBeDefined();
    expect(bad!.ms).toBeLessThan(7.5);
  });
});

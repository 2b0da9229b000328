import { describe, expect, it } from 'vitest';
import { Backoff } from './backoff.js';

describe('backoff - delays', () => {
  it('starts at zero, grows exponentially, and stays within [bound/2, bound]', () => {
    const low = new Backoff({ initial: 100, max: 1000, random: () => 0 });
    const high = new Backoff({ initial: 100, max: 1000, random: () => 0.999999 });
    const lows = Array.from({ length: 7 }, () => low.next());
    const highs = Array.from({ length: 7 }, () => high.next());
    expect(lows).toEqual([0, 50, 100, 200, 400, 500, 500]);
    expect(highs).toEqual([0, 100, 200, 400, 800, 1000, 1000]);
  });

  it('resets', () => {
    const b = new Backoff({ random: () => 0.5 });
    b.next();
    b.next();
    expect(b.attempt).toBe(2);
    b.reset();
    expect(b.next()).toBe(0);
  });

  it('spreads clients apart with jitter', () => {
    const delays = new Set(Array.from({ length: 50 }, () => { const b = new Backoff({ initial: 1000, max: 1000 }); b.next(); return b.next(); }));
    expect(delays.size).toBeGreaterThan(10);
  });
});

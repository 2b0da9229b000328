import { afterEach, describe, expect, it, vi } from 'vitest';
import { MAX_TIMER_DELAY, setLongTimeout } from './timer.js';

afterEach(() => {
  vi.useRealTimers();
});

describe('timer - setLongTimeout', () => {
  it('timer - a delay within one Node timer fires once, on time', () => {
    vi.useFakeTimers();
    const fn = vi.fn();
    setLongTimeout(fn, 500);
    vi.advanceTimersByTime(499);
    expect(fn).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    expect(fn).toHaveBeenCalledTimes(1);
    vi.advanceTimersByTime(10_000);
    expect(fn).toHaveBeenCalledTimes(1);
  });

  it('timer - a delay above 2^31-1 ms waits the whole delay (a plain setTimeout fires after 1 ms)', () => {
    vi.useFakeTimers();
    const fn = vi.fn();
    const ms = 3 * MAX_TIMER_DELAY + 1234;
    setLongTimeout(fn, ms);
    vi.advanceTimersByTime(1);
    expect(fn).not.toHaveBeenCalled();
    vi.advanceTimersByTime(ms - 2);
    expect(fn).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    expect(fn).toHaveBeenCalledTimes(1);
  });

  it('timer - clear cancels it before, between and after the chained steps', () => {
    vi.useFakeTimers();
    const fn = vi.fn();
    setLongTimeout(fn, 10).clear();
    const t = setLongTimeout(fn, 2 * MAX_TIMER_DELAY + 5);
    vi.advanceTimersByTime(MAX_TIMER_DELAY + 1);
    t.clear();
    vi.advanceTimersByTime(3 * MAX_TIMER_DELAY);
    expect(fn).not.toHaveBeenCalled();
    const u = setLongTimeout(fn, 1);
    vi.advanceTimersByTime(1);
    u.clear();
    expect(fn).toHaveBeenCalledTimes(1);
  });

  it('timer - no TimeoutOverflowWarning for a long delay', () => {
    const warn = vi.spyOn(process, 'emitWarning');
    try {
      setLongTimeout(() => {}, 1e10).clear();
      expect(warn).not.toHaveBeenCalled();
    } finally {
      warn.mockRestore();
    }
  });
});

/**
 * Timers for user-supplied durations. Node's `setTimeout` takes at most 2^31-1 ms (about 24.8
 * days): a longer delay fires after 1 ms with a `TimeoutOverflowWarning`. A deadline the caller
 * asked for must mean "wait that long", so a longer one is reached in steps.
 */

/** The longest delay one Node timer can take, in ms (2^31-1; larger ones fire at once). */
export const MAX_TIMER_DELAY = 0x7fffffff;

/** A pending {@link setLongTimeout}. */
export interface LongTimeout {
  /** Cancels it; idempotent, and harmless after it fired. */
  clear(): void;
}

/**
 * Calls `fn` once after `ms` milliseconds, however long: a delay above {@link MAX_TIMER_DELAY}
 * is chained through several timers. Like `setTimeout`, a negative or NaN delay fires on the
 * next turn (callers validate durations first; see `validateTimeout`).
 *
 * @example
 * ```ts
 * const t = setLongTimeout(() => controller.abort(), 40 * 24 * 3600_000); // 40 days
 * t.clear();
 * ```
 */
export function setLongTimeout(fn: () => void, ms: number): LongTimeout {
  let timer: NodeJS.Timeout | undefined;
  let left = ms > 0 ? ms : 0;
  const arm = (): void => {
    const step = Math.min(left, MAX_TIMER_DELAY);
    left -= step;
    timer = setTimeout(left > 0 ? arm : fire, step);
  };
  const fire = (): void => {
    timer = undefined;
    fn();
  };
  arm();
  return {
    clear() {
      if (timer !== undefined) clearTimeout(timer);
      timer = undefined;
    },
  };
}

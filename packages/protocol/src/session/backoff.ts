/**
 * Reconnect back-off: exponential with full jitter and a cap. Pure; the random source is
 * injectable for tests.
 */

/** Settings of {@link Backoff}. */
export interface BackoffOptions {
  /** First delay bound in ms (default 50). */
  initial?: number;
  /** Largest delay bound in ms (default 2000). */
  max?: number;
  /** Growth factor per attempt (default 2). */
  factor?: number;
  /** Random source in [0, 1) (default Math.random). */
  random?: () => number;
}

/**
 * Delays between reconnect attempts. A full round over the host list costs nothing extra for the
 * first host (the Java client also tries the next host at once), then the bound grows: attempt n
 * waits a random time in [bound/2, bound] with bound = min(max, initial * factor^n), so many
 * clients cut off together do not reconnect in lockstep.
 */
export class Backoff {
  readonly #initial: number;
  readonly #max: number;
  readonly #factor: number;
  readonly #random: () => number;
  #attempt = 0;

  constructor(options: BackoffOptions = {}) {
    this.#initial = options.initial ?? 50;
    this.#max = options.max ?? 2000;
    this.#factor = options.factor ?? 2;
    this.#random = options.random ?? Math.random;
  }

  /** The attempts made since the last reset. */
  get attempt(): number {
    return this.#attempt;
  }

  /** The delay before the next attempt, in ms; the first is 0. */
  next(): number {
    const n = this.#attempt++;
    if (n === 0) return 0;
    const bound = Math.min(this.#max, this.#initial * this.#factor ** (n - 1));
    return Math.round(bound / 2 + (this.#random() * bound) / 2);
  }

  /** Starts over (after a successful connection). */
  reset(): void {
    this.#attempt = 0;
  }
}

/**
 * What a connection's server had answered by a given moment: the send time of the newest request
 * answered at or before that moment. The quorum proof asks it (session/quorum-proof.ts): a
 * write or sync sent at `w` confirms only answers that came at least `confirmAfter` before `w`,
 * and the freshest such answer is what it proves.
 *
 * Replies are kept in buckets of `grain` ms of arrival time: within a bucket a newer reply
 * replaces the one before it, so a lookup may return an answer up to one bucket older than the
 * best (never a newer one: that would prove too much), and the log holds at most `span / grain`
 * entries. Entries older than `span` are dropped; both are set from the session timeout.
 */
export class HeardLog {
  /** Arrival times (performance.now()), increasing. */
  #at: number[] = [];
  /** Send times of the answered requests, increasing with {@link #at}. */
  #sentAt: number[] = [];
  #head = 0;
  #grain: number;
  #span: number;

  constructor(span: number) {
    this.#span = span;
    this.#grain = Math.max(5, span / 256);
  }

  /** A reply to a request sent at `sentAt` arrived at `at` (called in arrival order). */
  note(sentAt: number, at: number): void {
    const n = this.#at.length;
    if (n > this.#head) {
      if (sentAt <= this.#sentAt[n - 1]!) return;
      // Same bucket as the newest entry: the newer reply replaces it (see the file comment).
      if (Math.floor(at / this.#grain) === Math.floor(this.#at[n - 1]! / this.#grain)) {
        this.#at[n - 1] = at;
        this.#sentAt[n - 1] = sentAt;
        return;
      }
    }
    this.#at.push(at);
    this.#sentAt.push(sentAt);
    this.#trim(at);
  }

  /** The send time of the newest request answered at or before `t`; -Infinity when none (within the span). */
  newestBy(t: number): number {
    // Binary search for the last entry with at <= t.
    let lo = this.#head;
    let hi = this.#at.length - 1;
    let found = -Infinity;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      if (this.#at[mid]! <= t) {
        found = this.#sentAt[mid]!;
        lo = mid + 1;
      } else hi = mid - 1;
    }
    return found;
  }

  /**
   * When the oldest kept reply to a request sent after `sentAfter` arrived; Infinity when none.
   * Within a bucket the newer reply replaced the older: the time may be up to a bucket later than
   * the first such reply, never earlier, so `newestBy` of it is always newer than `sentAfter`.
   */
  firstAnsweredAfter(sentAfter: number): number {
    // Binary search for the first entry with sentAt > sentAfter (send times increase).
    let lo = this.#head;
    let hi = this.#sentAt.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.#sentAt[mid]! > sentAfter) hi = mid;
      else lo = mid + 1;
    }
    return lo < this.#at.length ? this.#at[lo]! : Infinity;
  }

  #trim(now: number): void {
    const horizon = now - this.#span;
    // Keep the newest entry before the horizon: it is still the answer "by" any later moment.
    while (this.#head + 1 < this.#at.length && this.#at[this.#head + 1]! < horizon) this.#head++;
    if (this.#head > 64 && this.#head * 2 > this.#at.length) {
      this.#at = this.#at.slice(this.#head);
      this.#sentAt = this.#sentAt.slice(this.#head);
      this.#head = 0;
    }
  }
}

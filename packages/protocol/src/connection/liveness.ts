/**
 * Liveness of one connection, from the negotiated session timeout T:
 * - ping when nothing was sent for min(T/3, 10 s), so the server hears from us well within T;
 * - declare the connection dead when no reply to a request or ping has arrived for 2T/3, leaving
 *   the last third of the session's life to reconnect to another server before the ensemble
 *   expires it. Only replies count, not bytes: a server that sends bytes but answers nothing (a
 *   stream of garbage, notifications only) does not keep a connection alive. A reply counts when
 *   it arrives, even to a request sent long ago: a server working through a deep backlog of this
 *   session's requests (thousands of queued listings) is serving the connection, and dropping it
 *   would fail every one of them and queue them all again on the next. What a reply proves about
 *   the session's expiry is dated by its request's send time, by the session
 *   (`Session.expiryDeadline`), and holders of leases act on that, connected or not.
 *   (Until issue 16, death too was dated by send time; 10,000 waiters queued at once over 10
 *   sessions then dropped every connection behind the server's backlog.)
 *
 * The Java client (`ClientCnxn.SendThread.run`, 3.8) has a read timeout of 2T/3 (dead when
 * nothing was heard for that long) and pings when `readTimeout / 2 - idleSend`, less one second
 * once idleSend passes 1 s, reaches zero, or when nothing was sent for `MAX_SEND_PING_INTERVAL`
 * (10 s); any byte received resets its read timeout. Its second is slack for its polling loop (it re-checks only when its selector wakes);
 * this module arms a timer for the exact deadline instead, so it pings at T/3 and keeps the
 * 10 s ceiling. One timer, re-armed for the nearest deadline; the hot path only stores timestamps.
 */

/** Longest send-idleness before a ping whatever the timeout (Java `ClientCnxn.MAX_SEND_PING_INTERVAL`). */
export const MAX_PING_INTERVAL = 10_000;

/** What the liveness check needs from its connection. */
export interface LivenessHost {
  sendPing(): void;
  onDead(idleMs: number): void;
}

/** A clock, injectable for tests. */
export interface Clock {
  now(): number;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

const systemClock: Clock = {
  now: () => performance.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (h) => clearTimeout(h as NodeJS.Timeout),
};

/** Ping and dead-connection timers for one connection. */
export class Liveness {
  readonly #host: LivenessHost;
  readonly #clock: Clock;
  readonly #pingAfter: number;
  readonly #deadAfter: number;
  #lastSent: number;
  /** When the newest reply arrived (construction time until the first reply). */
  #lastReply: number;
  #timer: unknown;
  #stopped = false;

  constructor(host: LivenessHost, sessionTimeout: number, clock: Clock = systemClock) {
    this.#host = host;
    this.#clock = clock;
    this.#pingAfter = Math.max(1, Math.min(MAX_PING_INTERVAL, Math.floor(sessionTimeout / 3)));
    this.#deadAfter = Math.max(1, Math.floor((sessionTimeout * 2) / 3));
    this.#lastSent = this.#lastReply = clock.now();
    this.#arm();
  }

  /** Call when a request was written; returns the time, to date its reply with. */
  sent(): number {
    return (this.#lastSent = this.#clock.now());
  }

  /** Call when a reply to a request or ping arrived. */
  received(): void {
    this.#lastReply = this.#clock.now();
  }

  /** Stops the timers for good. */
  stop(): void {
    this.#stopped = true;
    if (this.#timer !== undefined) this.#clock.clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  #arm(): void {
    if (this.#stopped) return;
    const now = this.#clock.now();
    const next = Math.min(this.#lastSent + this.#pingAfter, this.#lastReply + this.#deadAfter);
    this.#timer = this.#clock.setTimeout(() => this.#check(), Math.max(1, Math.ceil(next - now)));
  }

  #check(): void {
    this.#timer = undefined;
    if (this.#stopped) return;
    const now = this.#clock.now();
    const idle = now - this.#lastReply;
    if (idle >= this.#deadAfter) {
      this.stop();
      this.#host.onDead(idle);
      return;
    }
    if (now - this.#lastSent >= this.#pingAfter) {
      this.#host.sendPing();
      this.#lastSent = now;
    }
    this.#arm();
  }
}

/**
 * Liveness of one connection, from the negotiated session timeout T:
 * - ping when nothing was sent for min(T/3, 10 s), so the server hears from us well within T;
 * - declare the connection dead when no reply has shown for 2T/3 that the server heard us, leaving
 *   the last third of the session's life to reconnect to another server before the ensemble
 *   expires it. "Heard" is dated by the *send* time of the newest answered request or ping (the
 *   server received it no earlier), not by the arrival of bytes: a server that sends bytes but
 *   answers nothing (a stream of garbage, notifications only) does not keep a connection alive.
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
  /** Send time of the newest answered request (construction time until the first reply). */
  #lastHeard: number;
  #timer: unknown;
  #stopped = false;

  constructor(host: LivenessHost, sessionTimeout: number, clock: Clock = systemClock) {
    this.#host = host;
    this.#clock = clock;
    this.#pingAfter = Math.max(1, Math.min(MAX_PING_INTERVAL, Math.floor(sessionTimeout / 3)));
    this.#deadAfter = Math.max(1, Math.floor((sessionTimeout * 2) / 3));
    this.#lastSent = this.#lastHeard = clock.now();
    this.#arm();
  }

  /** Call when a request was written; returns the time, to date its reply with. */
  sent(): number {
    return (this.#lastSent = this.#clock.now());
  }

  /** Call when a reply arrived to a request written at `sentAt` (default: now): the server heard us then. */
  received(sentAt: number = this.#clock.now()): void {
    if (sentAt > this.#lastHeard) this.#lastHeard = sentAt;
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
    const next = Math.min(this.#lastSent + this.#pingAfter, this.#lastHeard + this.#deadAfter);
    this.#timer = this.#clock.setTimeout(() => this.#check(), Math.max(1, Math.ceil(next - now)));
  }

  #check(): void {
    this.#timer = undefined;
    if (this.#stopped) return;
    const now = this.#clock.now();
    const idle = now - this.#lastHeard;
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

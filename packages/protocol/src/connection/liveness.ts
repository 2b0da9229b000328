/**
 * Liveness of one connection, from the negotiated session timeout T:
 * - ping when nothing was sent for T/3, so the server hears from us well within T;
 * - declare the connection dead when nothing was received for 2T/3, leaving the last third of
 *   the session's life to reconnect to another server before the ensemble expires it.
 * (The Java client's `ClientCnxn` uses a read timeout of 2T/3 and pings after half of it without
 * sending, i.e. also T/3.) One timer, re-armed for the nearest deadline; the hot path only stores
 * timestamps.
 */

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
  #lastReceived: number;
  #timer: unknown;
  #stopped = false;

  constructor(host: LivenessHost, sessionTimeout: number, clock: Clock = systemClock) {
    this.#host = host;
    this.#clock = clock;
    this.#pingAfter = Math.max(1, Math.floor(sessionTimeout / 3));
    this.#deadAfter = Math.max(1, Math.floor((sessionTimeout * 2) / 3));
    this.#lastSent = this.#lastReceived = clock.now();
    this.#arm();
  }

  /** Call when bytes were written. */
  sent(): void {
    this.#lastSent = this.#clock.now();
  }

  /** Call when bytes arrived. */
  received(): void {
    this.#lastReceived = this.#clock.now();
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
    const next = Math.min(this.#lastSent + this.#pingAfter, this.#lastReceived + this.#deadAfter);
    this.#timer = this.#clock.setTimeout(() => this.#check(), Math.max(1, Math.ceil(next - now)));
  }

  #check(): void {
    this.#timer = undefined;
    if (this.#stopped) return;
    const now = this.#clock.now();
    const idle = now - this.#lastReceived;
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

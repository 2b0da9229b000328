/**
 * The session's public state: the one place it changes (listeners, the diagnostics channel, and
 * the watches told when the session expires), waiting for it, the error a request gets in it, and
 * the loss timer that moves `suspended` to `lost`. The legal changes are state.ts's table.
 */
import { publishState } from '../diagnostics.js';
import { AuthFailedError, ClientClosedError, fromCode, ZooKeeperError } from '../errors.js';
import { reportListenerError } from '../util/listener-errors.js';
import { deliver } from './event-delivery.js';
import { notConnected, sessionExpired, sessionLost } from './session-end.js';
import { assertTransition, isConnected, isTerminal, type SessionState } from './state.js';
import type { WatchRegistry } from './watches.js';

/** Most that `lost` is reported ahead of {@link Session.expiryDeadline} (also at most T/50), against timer lateness. */
export const LOSS_TIMER_ALLOWANCE_MS = 50;

/**
 * Listener of state changes. A throw does not stop the other listeners or undo the change; it is
 * re-thrown on the next tick, as the process's `'uncaughtException'` (as Node's EventTarget does).
 */
export type StateListener = (state: SessionState, previous: SessionState) => void;

/** One session's state and who hears of its changes. */
export class StateKeeper {
  #state: SessionState = 'connecting';
  readonly #listeners = new Set<StateListener>();
  readonly #watches: WatchRegistry;
  readonly #sessionId: () => bigint;
  readonly #debug: (format: string, ...args: unknown[]) => void;
  #lossTimer: NodeJS.Timeout | undefined;
  /** How the client learnt that the session expired (session-end.ts), for {@link unavailable}. */
  #expiredBy: unknown;
  /** Why the session ended in `authFailed` (an AuthFailedError or SessionClosedRequireSaslAuthError), for {@link unavailable}. */
  #authFailedBy: unknown;
  /**
   * The latest failed reconnect attempt while not connected, named by {@link unavailable}
   * (cleared on connecting).
   */
  lastFailure: unknown;

  /** `debug`: the session's `NODE_DEBUG=zk` lines. */
  constructor(watches: WatchRegistry, sessionId: () => bigint, debug: (format: string, ...args: unknown[]) => void) {
    this.#watches = watches;
    this.#sessionId = sessionId;
    this.#debug = debug;
  }

  /** The current state. */
  get state(): SessionState {
    return this.#state;
  }

  /** Adds a state listener; returns a function that removes it. */
  onState(listener: StateListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /**
   * Moves to `next` (nothing when already there; throws on a change state.ts does not allow) and
   * tells everyone. `cause`, for `expired`: how the client learnt it (the server's answer, or a
   * ServerBehind of session-end.ts), which the calls' SessionExpiredError names; for
   * `authFailed`: the failure, whose class and message the calls' errors repeat.
   */
  transition(next: SessionState, cause?: unknown): void {
    const prev = this.#state;
    if (prev === next) return;
    assertTransition(prev, next);
    this.#state = next;
    if (next === 'expired') this.#expiredBy = cause;
    if (next === 'authFailed') this.#authFailedBy = cause;
    if (isConnected(next)) this.lastFailure = undefined;
    publishState(this.#sessionId(), prev, next);
    for (const l of [...this.#listeners]) {
      try {
        l(next, prev);
      } catch (err) {
        // The others still hear of it and the state stays changed; the error is the process's
        // uncaught exception on the next tick, as with Node's EventTarget (util/listener-errors.ts).
        this.#debug('state listener threw: %s', (err as Error)?.message);
        reportListenerError(err);
      }
    }
    // The session's watches died with it: every listener is told once (Java delivers a None
    // event with state Expired to every watcher), then the table is empty.
    if (next === 'expired') {
      for (const [listener, path] of this.#watches.clear()) deliver(listener, { type: 'SessionExpired', path });
    }
  }

  /** Resolves when the session is connected again, or rejects when it cannot be (or on abort). */
  waitConnected(signal?: AbortSignal): Promise<void> {
    if (isConnected(this.#state)) return Promise.resolve();
    if (isTerminal(this.#state)) return Promise.reject(this.unavailable());
    return new Promise<void>((resolve, reject) => {
      const onAbort = () => done(signal?.reason);
      const off = this.onState((state) => {
        if (isConnected(state)) done();
        else if (isTerminal(state)) done(this.unavailable());
      });
      const done = (err?: unknown) => {
        off();
        signal?.removeEventListener('abort', onAbort);
        if (err === undefined) resolve();
        else reject(err);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      if (signal?.aborted) onAbort();
    });
  }

  /**
   * The error of a request that cannot be sent in this state, saying why and what to do
   * (session-end.ts): ConnectionLoss while the session may still be alive (`lost` says the
   * ensemble has probably expired it), SessionExpired naming how the client learnt it.
   */
  unavailable(): Error {
    switch (this.#state) {
      case 'closed':
        return new ClientClosedError();
      case 'expired':
        return sessionExpired(this.#sessionId(), this.#expiredBy);
      case 'authFailed': {
        // The same class and message as the failure that ended the session, for every later call.
        const by = this.#authFailedBy;
        return by instanceof ZooKeeperError ? fromCode(by.code, { cause: by }, by.message) : new AuthFailedError();
      }
      case 'lost':
        return sessionLost(this.#sessionId(), this.lastFailure);
      default:
        return notConnected(this.#state, this.lastFailure);
    }
  }

  /**
   * Client-side loss inference: the session is reported `lost` at `deadline`, the earliest moment
   * the ensemble may expire it (one negotiated timeout after the send time of the newest request
   * a server answered), less a small allowance for a timer that fires late. So no other client
   * can have taken over its ephemeral nodes before the application hears of it. Only a
   * connection that a server answered clears it (see rearm.ts); the real verdict comes on
   * reconnect: `expired`, or `connected` if the session survived after all.
   */
  startLossTimer(deadline: number, timeout: number): void {
    this.clearLossTimer();
    const fire = () => {
      this.#lossTimer = undefined;
      if (this.#state === 'suspended') this.transition('lost');
    };
    // Timers fire late under load; a server rounds expiry up to its next tick, which may be only
    // a millisecond away. A small allowance keeps `lost` ahead of it.
    const left = deadline - Math.min(LOSS_TIMER_ALLOWANCE_MS, timeout / 50) - performance.now();
    if (left <= 0) fire();
    else this.#lossTimer = setTimeout(fire, Math.ceil(left));
  }

  clearLossTimer(): void {
    if (this.#lossTimer) clearTimeout(this.#lossTimer);
    this.#lossTimer = undefined;
  }
}

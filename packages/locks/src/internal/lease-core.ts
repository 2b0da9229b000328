/**
 * What every handle of one hold shares (the core a Lease wraps), and the bookkeeping of
 * its signal: made lazily, aborted once, with the first reason. The floor of the lease: it
 * imports nothing but the errors.
 */
import { LeaseReleasedError, type LeaseLostError } from '../errors.js';
import type { ZooKeeper } from '@zk/protocol';

/** @internal What every handle of one hold shares. */
export interface LeaseCore {
  readonly zk: ZooKeeper;
  readonly lockPath: string;
  readonly nodePath: string;
  readonly fencingToken: bigint;
  /** The session that holds the node (its id when the hold began). */
  readonly sessionId: bigint;
  /**
   * Made when the signal is first asked for ({@link signalOf}), aborted with {@link reason} once
   * the hold is at risk or released: an AbortController and its signal cost about 0.7 KiB of
   * heap and a few µs, and most holds are released without anyone asking for theirs. Abort
   * through {@link abortCore}.
   */
  controller: AbortController | undefined;
  /** Whether the hold is at risk or released (what the signal says once handed out). */
  aborted: boolean;
  /**
   * Why (a {@link LeaseLostError}), once {@link aborted}; {@link RELEASED} for a plain release,
   * whose {@link LeaseReleasedError} is made only when someone reads it ({@link reasonOf}).
   */
  reason: unknown;
  /**
   * Aborted when another process asks for the lock (only when acquired with `revocable`). Made
   * when first needed ({@link revocationOf}): most holds never ask.
   */
  revocation: AbortController | undefined;
  /** Whether revocation requests reach `revocation`. */
  readonly revocable: boolean;
  /** Handles not yet released (reentrant acquires add one each). */
  refs: number;
  released: boolean;
  /** Stops the guard and deletes the node; called when the last handle is released. */
  end(): Promise<void>;
  /**
   * Reads the clock: when the hold's deadline has passed but no timer has said so yet (the
   * process was paused, or its event loop blocked), aborts it now, with the reason the timer would
   * have given. Synchronous; nothing when already aborted or released.
   */
  check(): void;
}

/** @internal The signal of a hold (see {@link LeaseCore.controller}), aborted already if the hold is. */
export function signalOf(core: LeaseCore): AbortSignal {
  if (core.controller === undefined) {
    core.controller = new AbortController();
    if (core.aborted) core.controller.abort(reasonOf(core));
  }
  return core.controller.signal;
}

/**
 * @internal The reason a hold ended with a plain release: made into its LeaseReleasedError (a
 * stack trace is tens of µs) only when read, by {@link reasonOf}; most releases are never asked why.
 */
export const RELEASED: unique symbol = Symbol('released');

/** @internal Why the hold is at risk or released (undefined while it is not). */
export function reasonOf(core: LeaseCore): unknown {
  if (core.reason === RELEASED) core.reason = new LeaseReleasedError(core.lockPath);
  return core.reason;
}

/** @internal Marks a hold at risk or released (once; the first reason stays), aborting its signal if handed out. */
export function abortCore(core: LeaseCore, reason: unknown): void {
  if (core.aborted) return;
  core.aborted = true;
  core.reason = reason;
  if (core.controller !== undefined) core.controller.abort(reasonOf(core));
}

/** @internal A hold's revocation controller, made on first use. */
export function revocationOf(core: LeaseCore): AbortController {
  return (core.revocation ??= new AbortController());
}

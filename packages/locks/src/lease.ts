/**
 * A held lock: its fencing token, a signal that aborts when the hold is at risk, and release.
 * The core every handle of a hold shares is in internal/lease-core.ts, its guard in
 * internal/guarded-hold.ts (re-exported here for the recipes).
 */
import type { Transaction } from '@zk/protocol';
import { LeaseLostError, NotHeldError, type LeaseEndCode, type LeaseEndedError, type LeaseReleasedError, type LeaseRevokedError } from './errors.js';
import { reasonOf, revocationOf, signalOf, type LeaseCore } from './internal/lease-core.js';

export { abortCore, reasonOf, RELEASED, revocationOf, signalOf } from './internal/lease-core.js';
export type { LeaseCore } from './internal/lease-core.js';
export { guard } from './internal/guarded-hold.js';
export type { GuardOptions } from './internal/guarded-hold.js';

/**
 * What `JSON.stringify(lease)` writes ({@link Lease.toJSON}): the bigints as strings, nothing
 * secret.
 */
export interface LeaseJSON {
  /** The lock path. */
  readonly path: string;
  /** The path of the node that holds the lock for us. */
  readonly node: string;
  /** {@link Lease.fencingToken} in decimal (`BigInt(json.fencingToken)` gives it back; in SQL a `bigint`). */
  readonly fencingToken: string;
  /**
   * The id of the session that holds the node, in decimal, signed as Java's `long` (as `zk.sessionId`
   * and a Stat's `ephemeralOwner` in its JSON: the lock node's owner); `BigInt(json.sessionId)` gives
   * it back. ZooKeeper's logs print the unsigned form in hex: `BigInt.asUintN(64, id).toString(16)`.
   */
  readonly sessionId: string;
  /** {@link Lease.held} when serialised (the clock read then). */
  readonly held: boolean;
  /** How the hold ended ({@link LeaseEndedError.code}), once it has; absent while held. */
  readonly ended?: LeaseEndCode;
}

/**
 * One acquire's hold on a lock. `await using lease = await lock.acquire()` releases it at the
 * end of the scope.
 *
 * What it can and cannot promise: while `signal` is not aborted, the lock node exists and this
 * session was alive at the last word from the server. A process paused longer than the session
 * timeout (a GC pause, an event-loop stall, a SIGSTOP) can wake up still believing it holds the
 * lock after another client took it; no client-side check can exclude that. Guard the resource
 * itself: pass `fencingToken` to it (reject writes with a token lower than the highest seen), or
 * write ZooKeeper data with {@link Lease.fenced} so the write commits only while the lock node exists.
 */
export class Lease implements AsyncDisposable {
  readonly #core: LeaseCore;
  #released = false;

  /** @internal */
  constructor(core: LeaseCore) {
    this.#core = core;
  }

  /** The lock path. */
  get path(): string {
    return this.#core.lockPath;
  }
  /** The path of the node that holds the lock for us. */
  get node(): string {
    return this.#core.nodePath;
  }
  /**
   * A number that grows with every new holder of this lock path: the creation zxid of the lock
   * node, a global ZooKeeper counter (not the sequence suffix, which restarts when an empty
   * container is reaped). Reentrant acquires share their first acquire's token.
   */
  get fencingToken(): bigint {
    return this.#core.fencingToken;
  }
  /**
   * Aborts as soon as the hold is at risk or over. `signal.reason` says which, by class and by
   * `code` (see {@link LeaseEndedError}):
   * - {@link LeaseReleasedError}, `code: 'released'`: released through `release()` (or `await using`);
   * - {@link LeaseRevokedError} (a {@link LeaseLostError}), `code: 'revoked'`: the lock node was
   *   deleted by someone else while the session lived on;
   * - {@link LeaseLostError}, `code: 'lost'`: the session suspended longer than the lock's
   *   `suspendedGrace`, reported lost or expired, the client closed, or the lease's deadline
   *   passed (found by a timer, or by {@link Lease.held} / {@link Lease.assertHeld} reading the clock).
   *
   * Alert on a loss, not on `abort`, which a release fires too:
   * `if (lease.signal.reason instanceof LeaseLostError) alert(lease.signal.reason)`.
   * A revocation request does not abort it (see {@link Lease.revocationRequested}).
   */
  get signal(): AbortSignal {
    return signalOf(this.#core);
  }
  /**
   * Aborts when another process asks this holder to give the lock up (a Curator
   * `Revoker.attemptRevoke`, or {@link revoke} / {@link revokeHolders}), if the lock was acquired
   * with `revocable: true`; never aborts otherwise. `reason` is a {@link RevocationRequestedError}.
   * It is only a request: the lock stays held until you call `release()`. A request made while
   * the acquire was still queued is delivered as soon as the lock is held (Curator delivers it
   * to the waiter). Reentrant acquires share their first acquire's setting.
   *
   * @example
   * ```ts
   * const lease = await mutex.acquire({ revocable: true });
   * lease.revocationRequested.addEventListener('abort', () => void finishSoon().then(() => lease.release()));
   * ```
   */
  get revocationRequested(): AbortSignal {
    return revocationOf(this.#core).signal;
  }
  /** Whether this hold listens for revocation requests (acquired with `revocable: true`). */
  get revocable(): boolean {
    return this.#core.revocable;
  }
  /**
   * True until this handle is released or the hold is lost. Reads the clock: when the lease's
   * deadline has passed (the process was paused, say, longer than the session timeout) it aborts
   * the lease at once and returns false, even if no timer has run yet to say so. A resumed
   * process runs its pending continuations before its timers, so `signal.aborted` alone can still
   * be false there.
   */
  get held(): boolean {
    if (this.#released) return false;
    this.#core.check();
    return !this.#core.aborted;
  }

  /**
   * Throws if the hold is at risk or over: the signal's reason (a {@link LeaseLostError}) when it
   * was lost, a {@link NotHeldError} when this handle was released. Reads the clock as
   * {@link Lease.held} does, so "assertHeld(), then write" stops a holder whose deadline passed
   * while it was paused, before the write. It cannot stop a pause that falls between the check and
   * the write reaching the resource: for that, fence the resource with {@link Lease.fencingToken}.
   */
  assertHeld(): void {
    if (this.#released) throw new NotHeldError(this.path, `lease on ${this.path} was released`);
    this.#core.check();
    if (this.#core.aborted) throw reasonOf(this.#core);
  }

  /**
   * What `JSON.stringify(lease)` writes: path, node, `fencingToken` and `sessionId` as decimal
   * strings (the forms of a Stat's JSON: `czxid`, `ephemeralOwner`), `held` (reading the clock, as {@link Lease.held}) and, once the
   * hold has ended, `ended` (`'released'`, `'revoked'` or `'lost'`). Nothing secret: no session
   * password, no node data.
   *
   * @example
   * ```ts
   * JSON.stringify(lease); // {"path":"/locks/a","node":"/locks/a/_c_...-lock-0000000003","fencingToken":"4294967311","sessionId":"72057922035253250","held":true}
   * ```
   */
  toJSON(): LeaseJSON {
    const core = this.#core;
    const held = this.held;
    const json: LeaseJSON = { path: core.lockPath, node: core.nodePath, fencingToken: core.fencingToken.toString(), sessionId: core.sessionId.toString(), held };
    if (held) return json;
    const reason = core.aborted ? reasonOf(core) : undefined;
    const ended: LeaseEndCode = reason instanceof LeaseLostError ? reason.code : 'released';
    return { ...json, ended };
  }

  /**
   * A transaction that commits only while this lock node exists: it starts with a `check` of the
   * node, so a holder that lost the lock (its node deleted with its session) cannot write.
   *
   * @example
   * ```ts
   * await lease.fenced().setData('/jobs/state', 'done').commit();
   * ```
   */
  fenced(): Transaction {
    return this.#core.zk.transaction().check(this.#core.nodePath, -1);
  }

  /**
   * Releases this handle (idempotent). The last handle of a hold deletes the lock node, retrying
   * across reconnects until the node or the session is gone. When the hold was already lost
   * (`signal` aborted), it returns at once and the delete continues in the background.
   */
  async release(): Promise<void> {
    if (this.#released) return;
    this.#released = true;
    const core = this.#core;
    if (--core.refs > 0) return;
    await core.end();
  }

  /** `await using lease = await lock.acquire()`: {@link Lease.release} at the end of the scope. */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.release();
  }
}

/**
 * A held lock: its fencing token, a signal that aborts when the hold is at risk, and release.
 */
import { NoNodeError, ZooKeeperError, type SessionState, type Transaction, type WatchedEvent, type ZooKeeper } from '@zk/protocol';
import { LeaseLostError, LeaseReleasedError, LeaseRevokedError, NotHeldError, RevocationRequestedError, type LeaseEndCode, type LeaseEndedError } from './errors.js';
import { connected, deleteGuaranteed } from './internal/engine.js';
import { leaseDeadline, watchProof } from './internal/proof.js';
import { SessionMembers } from './internal/session-members.js';
import { isRevokeMessage } from './internal/revoke-message.js';
import { holdChannel, lostChannel, revokeChannel, type LockKind } from './diagnostics.js';

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

/**
 * What `JSON.stringify(lease)` writes ({@link Lease.toJSON}): the bigints as strings, nothing
 * secret.
 */
export interface LeaseJSON {
  /** The lock path. */
  readonly path: string;
  /** The path of the node that holds the lock for us. */
  readonly node: string;
  /** {@link Lease.fencingToken} in decimal (`BigInt(json.fencingToken)` gives it back; in SQL a `numeric(20)`). */
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

/** How the guard decides that a hold is at risk. */
export interface GuardOptions {
  /**
   * How long the session may stay `suspended` before the lease is considered at risk, ms.
   * Default: a sixth of the negotiated session timeout. 0 aborts at the first disconnect.
   * Whatever the grace, and connected or not, the lease is given up no later than a sixth of the
   * timeout before the earliest moment the ensemble may expire the session (`zk.expiryDeadline`:
   * one timeout after the send time of the newest request a server answered), so the signal
   * aborts before any other client can take the lock. Only a reconnect that a server answered ends the grace period; a
   * handshake alone does not (see the protocol README's state section).
   */
  suspendedGrace?: number | undefined;
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

/**
 * @internal Starts guarding a hold: returns its core. `revocable`: deliver revocation requests
 * (the node's data set to Curator's `__REVOKE__`) to `core.revocation`. `kind` names the recipe
 * on the diagnostics channels.
 */
export function guard(zk: ZooKeeper, lockPath: string, nodePath: string, fencingToken: bigint, options: GuardOptions, onEnd: () => void, revocable = false, kind: LockKind = 'mutex'): LeaseCore {
  return new GuardedHold(zk, lockPath, nodePath, fencingToken, options, onEnd, revocable, kind);
}

/** The guarded holds of each client, told of its state changes by one listener (internal/session-members.ts). */
const guarded = new SessionMembers<GuardedHold>((hold, state) => hold.onState(state));

/**
 * One hold's guard, and its core. A class rather than closures: a process may hold a hundred
 * thousand locks, and each closure and its context is heap per hold (bench: "locks held").
 */
class GuardedHold implements LeaseCore {
  readonly zk: ZooKeeper;
  readonly lockPath: string;
  readonly nodePath: string;
  readonly fencingToken: bigint;
  readonly sessionId: bigint;
  controller: AbortController | undefined = undefined;
  aborted = false;
  reason: unknown = undefined;
  revocation: AbortController | undefined = undefined;
  readonly revocable: boolean;
  readonly kind: LockKind;
  /** When the hold began (performance.now()), for the channels' hold times. */
  readonly #since = performance.now();
  refs = 1;
  released = false;
  readonly #grace: number;
  readonly #onEnd: () => void;
  /** While suspended: the grace timer, when it is due (performance.now()) and what it will say. */
  #timer: NodeJS.Timeout | undefined = undefined;
  #timerDue = Infinity;
  #timerWhy = '';
  readonly #offProof: () => void;
  readonly #lose = (why: string, cause?: unknown): void => {
    if (this.aborted) return;
    this.#ended(new LeaseLostError(this.lockPath, `lease on ${this.lockPath} lost: ${why}`, { cause }));
  };
  /** The node deleted by someone else while the session lives on. */
  readonly #revoked = (why: string): void => {
    if (this.aborted) return;
    this.#ended(new LeaseRevokedError(this.lockPath, `lease on ${this.lockPath} revoked: ${why} (not by this lease's release; the session lives on)`, { cause: new NoNodeError(undefined, { path: this.nodePath }) }));
  };
  readonly #onOwnNode = (e: WatchedEvent): void => {
    if (this.released) return;
    if (e.type === 'NodeDeleted') this.#revoked('the lock node was deleted');
    else if (e.type === 'NodeDataChanged') this.#watchOwnNode();
  };

  constructor(zk: ZooKeeper, lockPath: string, nodePath: string, fencingToken: bigint, options: GuardOptions, onEnd: () => void, revocable: boolean, kind: LockKind) {
    this.zk = zk;
    this.lockPath = lockPath;
    this.nodePath = nodePath;
    this.fencingToken = fencingToken;
    this.sessionId = zk.sessionId;
    this.revocable = revocable;
    this.kind = kind;
    if (holdChannel.hasSubscribers) holdChannel.publish({ event: 'start', ...this.#about() });
    this.#onEnd = onEnd;
    this.#grace = options.suspendedGrace ?? Math.floor(zk.sessionTimeout / 6);
    // Connected, but the newest answered request is old (a server answering a deep backlog): the
    // same deadline as while suspended (see internal/proof.ts).
    this.#offProof = watchProof(zk, this.#lose);
    guarded.add(zk, this);
    // After the acquire has returned (a getData is a few µs of the acquire's path), and not at
    // all for a hold released within the same run of promise jobs (a nextTick runs once those are
    // done; a setImmediate would cost the acquire its scheduling, ~10 µs measured cold).
    process.nextTick(GuardedHold.#watchLater, this);
  }

  // A static function, not a closure per hold (see the class comment).
  static #watchLater(hold: GuardedHold): void {
    hold.#watchOwnNode();
  }

  /** What the channels' messages say of this hold. */
  #about(): { kind: LockKind; path: string; node: string; fencingToken: bigint; sessionId: bigint } {
    return { kind: this.kind, path: this.lockPath, node: this.nodePath, fencingToken: this.fencingToken, sessionId: this.zk.sessionId };
  }

  #ended(reason: LeaseLostError): void {
    abortCore(this, reason);
    if (lostChannel.hasSubscribers) lostChannel.publish({ ...this.#about(), reason, heldMs: performance.now() - this.#since });
  }

  /**
   * The timers' verdict, read from the clock (see {@link LeaseCore.check}): the grace timer's
   * when it is due, else the proof monitor's (internal/proof.ts): at risk from a sixth of the
   * timeout before the earliest moment the ensemble may expire the session. The same condition
   * the timers test when they fire; only the order differs: a process resumed from a pause runs
   * its pending continuations (a resolved promise, an I/O callback, a due timer queued before
   * ours) before any of our timers, and it is there that a holder checks before it writes. Even a
   * reply read after the pause cannot make the deadline later: it is dated by its request's send
   * time, from before the pause.
   */
  check(): void {
    if (this.aborted || this.released) return;
    const now = performance.now();
    if (now >= this.#timerDue) return this.#lose(this.#timerWhy);
    const zk = this.zk;
    const deadline = leaseDeadline(zk);
    const late = now - (deadline - Math.floor(zk.sessionTimeout / 6));
    if (late < 0) return;
    const left = Math.max(0, Math.round(deadline - now));
    this.#lose(`the lease's deadline passed ${Math.round(late)} ms ago, found by reading the clock before any timer said so (the process was paused, or its event loop blocked): ${left === 0 ? 'the ensemble may have expired the session' : `the ensemble may expire the session in ${left} ms`}`);
  }

  /** The session's state changed (called for every hold of the session by one listener). */
  onState(state: SessionState): void {
    const zk = this.zk;
    if (state === 'suspended') {
      const grace = this.#grace;
      if (grace <= 0) return this.#lose('connection lost');
      // A sixth of the timeout before the ensemble may expire the session, at the latest.
      const latest = leaseDeadline(zk) - Math.floor(zk.sessionTimeout / 6) - performance.now();
      const wait = Math.min(grace, latest);
      const why = wait < grace ? `no reply from the ensemble; it may expire the session in ${Math.round(latest + zk.sessionTimeout / 6)} ms` : `suspended for more than ${grace} ms`;
      if (wait <= 0) this.#lose(why);
      else if (this.#timer === undefined) {
        this.#timer = setTimeout(() => this.#lose(why), Math.ceil(wait));
        this.#timerDue = performance.now() + wait;
        this.#timerWhy = why;
      }
    } else if (state === 'connected' || state === 'connectedReadOnly') {
      this.#stopTimer();
    } else {
      this.#lose(`session ${state}`);
    }
  }

  #stopTimer(): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#timerDue = Infinity;
  }

  // A ZooKeeper watch fires once. A data change (which is how a Curator Revoker asks for the lock)
  // uses it up, so the watch is set again at once; a deletion in between makes that getData fail
  // with NoNode. getData rather than exists: on a missing node it leaves no watch behind.
  #watchOwnNode(): void {
    if (this.released || this.aborted) return;
    this.zk.getData(this.nodePath, { watch: this.#onOwnNode }).then(
      ({ data }) => {
        if (this.revocable && isRevokeMessage(data) && !revocationOf(this).signal.aborted) {
          revocationOf(this).abort(new RevocationRequestedError(this.lockPath, this.nodePath));
          if (revokeChannel.hasSubscribers) revokeChannel.publish(this.#about());
        }
      },
      (err: unknown) => {
        if (this.released) return;
        if (err instanceof NoNodeError) return this.#revoked('the lock node is gone');
        // Cut off: set the watch again once connected (the state listener covers a session that ends).
        if (err instanceof ZooKeeperError && err.isRetryable) connected(this.zk).then(() => this.#watchOwnNode(), () => undefined);
      },
    );
  }

  async end(): Promise<void> {
    this.released = true;
    guarded.delete(this.zk, this);
    this.#offProof();
    this.#stopTimer();
    this.#onEnd();
    const lost = this.aborted;
    if (holdChannel.hasSubscribers) holdChannel.publish({ event: 'end', ...this.#about(), heldMs: performance.now() - this.#since, lost });
    const deletion = deleteGuaranteed(this.zk, this.nodePath);
    try {
      // A hold already lost does not make release() wait for the network: the delete goes on
      // in the background until the session reconnects (then it deletes) or ends (the node
      // goes with it).
      if (lost) deletion.catch(() => undefined);
      else await deletion;
    } finally {
      this.zk.removeLocalWatch('data', this.nodePath, this.#onOwnNode);
      abortCore(this, RELEASED);
    }
  }
}

/**
 * The guard of a hold: the session states, the proof monitor and a watch on its own node, turned
 * into the hold's signal (lost, or revoked), and the clock check of `held` / `assertHeld()`.
 */
import { NoNodeError, ZooKeeperError, type SessionState, type WatchedEvent, type ZooKeeper } from '@zk/protocol';
import { LeaseLostError, LeaseRevokedError, RevocationRequestedError } from '../errors.js';
import { holdChannel, lostChannel, revokeChannel, type LockKind } from '../diagnostics.js';
import { connected, deleteGuaranteed } from './engine.js';
import { abortCore, RELEASED, revocationOf, type LeaseCore } from './lease-core.js';
import { leaseDeadline, watchProof } from './proof.js';
import { isRevokeMessage } from './revoke-message.js';
import { SessionMembers } from './session-members.js';

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

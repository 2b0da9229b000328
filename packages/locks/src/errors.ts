/**
 * Errors of `@zk/locks`. ZooKeeper errors from the client pass through unchanged (typed, with
 * code and path); these cover the lock's own outcomes and misuse.
 *
 * `instanceof` works across copies of this package in one process: each class is branded under
 * `Symbol.for('@zk/locks:error')` (see internal/brand.ts), so `err instanceof LockTimeoutError`
 * holds for a timeout of any copy, and an unrelated error of the same name is not taken for one.
 */
import type { ACL } from '@zk/protocol';
import { brandClass } from './internal/brand.js';

const ERROR_BRAND = Symbol.for('@zk/locks:error');

function brandError(cls: abstract new (...args: never[]) => Error, name: string): void {
  brandClass(ERROR_BRAND, cls, name);
}

/** Base class of the lock errors. */
export class LockError extends Error {
  static {
    brandError(this, 'LockError');
  }
  override name = 'LockError';
  /** The lock path. */
  readonly path: string;
  constructor(path: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.path = path;
  }
}

/** The lock was not acquired within the timeout (`timeout: 0`: it was held by someone else). Our queue node was removed. */
export class LockTimeoutError extends LockError {
  static {
    brandError(this, 'LockTimeoutError');
  }
  override name = 'LockTimeoutError';
  /** The timeout that passed, ms. */
  readonly timeout: number;
  /** `message`: what timed out, when it is not a lock (leadership, say); default `lock <path> is held` or `... not acquired within <timeout> ms`. */
  constructor(path: string, timeout: number, message?: string) {
    super(path, message ?? (timeout === 0 ? `lock ${path} is held` : `lock ${path} not acquired within ${timeout} ms`));
    this.timeout = timeout;
  }
}

/** The acquire was aborted through its signal (`cause`: the signal's reason). Our queue node was removed. */
export class LockAbortedError extends LockError {
  static {
    brandError(this, 'LockAbortedError');
  }
  override name = 'LockAbortedError';
  /** `message`: what was aborted, when it is not a lock's acquire; default `acquiring lock <path> was aborted`. */
  constructor(path: string, reason: unknown, message?: string) {
    super(path, message ?? `acquiring lock ${path} was aborted`, { cause: reason });
  }
}

/** Taking the write lock while holding only the read lock: refused, because it could never succeed. */
export class LockUpgradeError extends LockError {
  static {
    brandError(this, 'LockUpgradeError');
  }
  override name = 'LockUpgradeError';
  constructor(path: string) {
    super(path, `cannot take the write lock of ${path} while holding its read lock (it would wait for itself); release the read lock first`);
  }
}

/** Releasing a lease of another owner, or acting on a lock this owner does not hold. */
export class NotHeldError extends LockError {
  static {
    brandError(this, 'NotHeldError');
  }
  override name = 'NotHeldError';
}

/**
 * How a lease ended, as `code` of the reason its `signal` aborts with: `'released'` (this process
 * released it: nothing went wrong), `'revoked'` (someone else deleted its lock node while our
 * session lived on), `'lost'` (the session ended, or may have: expired, lost, closed, suspended too
 * long, or the lease's deadline passed).
 */
export type LeaseEndCode = 'released' | 'revoked' | 'lost';

/**
 * Why a lease ended: the reason of an aborted `lease.signal`. A {@link LeaseReleasedError} for a
 * release, a {@link LeaseLostError} (or its {@link LeaseRevokedError}) when the hold was taken
 * away. Tell them apart by class or by `code`; alert on `instanceof LeaseLostError` (or
 * `code !== 'released'`), not on `abort` alone, which a release fires too.
 *
 * @example
 * ```ts
 * lease.signal.addEventListener('abort', () => {
 *   const why = lease.signal.reason as LeaseEndedError;
 *   if (why.code !== 'released') alert(`lock ${why.path} ${why.code}: ${why.message}`);
 * });
 * ```
 */
export abstract class LeaseEndedError extends LockError {
  static {
    brandError(this, 'LeaseEndedError');
  }
  /** How the lease ended. */
  abstract readonly code: LeaseEndCode;
}

/**
 * The reason of a lease's signal once this process ended the hold: `release()` (or `await using`),
 * or for a {@link Leadership} of a `LeaderSelector`, `interruptLeadership()`, `close()` or the
 * run's own signal (`cause`: that signal's reason). Not a failure: nothing was taken away.
 */
export class LeaseReleasedError extends LeaseEndedError {
  static {
    brandError(this, 'LeaseReleasedError');
  }
  override name = 'LeaseReleasedError';
  readonly code = 'released' as const;
  constructor(path: string, message = `lease on ${path} released`, options?: { cause?: unknown }) {
    super(path, message, options);
  }
}

/**
 * The lease is no longer valid (session lost or expired, client closed, the lease's deadline
 * passed, or the lock node deleted); `cause` says why, when there is an error behind it. Also what
 * an acquire or another wait rejects with when its session ends or is lost.
 */
export class LeaseLostError extends LeaseEndedError {
  static {
    brandError(this, 'LeaseLostError');
  }
  override name = 'LeaseLostError';
  readonly code: 'lost' | 'revoked' = 'lost';
}

/**
 * A lease whose lock node was deleted by someone else (an operator, a reaper, a Curator process
 * deleting it) while our session lived on: lost, but not through the session. A
 * {@link LeaseLostError}, with `code` `'revoked'`.
 */
export class LeaseRevokedError extends LeaseLostError {
  static {
    brandError(this, 'LeaseRevokedError');
  }
  override name = 'LeaseRevokedError';
  override readonly code = 'revoked' as const;
}

/**
 * A recipe used out of order: started twice, used after `close()`, or `run()` entered again
 * while it runs.
 */
export class LockStateError extends LockError {
  static {
    brandError(this, 'LockStateError');
  }
  override name = 'LockStateError';
}

/**
 * The reason of an aborted `lease.revocationRequested`: another process asked the holder of
 * `node` to give the lock up (a request, not a loss: the lock is held until released).
 */
export class RevocationRequestedError extends LockError {
  static {
    brandError(this, 'RevocationRequestedError');
  }
  override name = 'RevocationRequestedError';
  /** The lock node the request was written to. */
  readonly node: string;
  constructor(path: string, node: string) {
    super(path, `revocation of lock ${path} requested (node ${node})`);
    this.node = node;
  }
}

/** A shared count node that does not hold a count (fewer than the 4 bytes of Curator's `SharedCount`). */
export class SharedCountError extends LockError {
  static {
    brandError(this, 'SharedCountError');
  }
  override name = 'SharedCountError';
}

/** What a barrier was doing when its wait ended: `Barrier.wait`, `DoubleBarrier.enter` or `DoubleBarrier.leave`. */
export type BarrierOperation = 'wait' | 'enter' | 'leave';

/**
 * A barrier wait did not end within its timeout (`timeout: 0`: it could not end at once). A
 * {@link LockTimeoutError}, so one `catch` covers every timeout of this package. A double
 * barrier's member node was removed before it rejected, and no watch was left behind.
 */
export class BarrierTimeoutError extends LockTimeoutError {
  static {
    brandError(this, 'BarrierTimeoutError');
  }
  override name = 'BarrierTimeoutError';
  /** The wait that timed out. */
  readonly operation: BarrierOperation;
  constructor(path: string, timeout: number, operation: BarrierOperation) {
    super(path, timeout);
    this.message = timeout === 0 ? `barrier ${path}: ${operation} cannot complete at once` : `barrier ${path}: ${operation} not completed within ${timeout} ms`;
    this.operation = operation;
  }
}

/**
 * A barrier wait was aborted through its signal (`cause`: the signal's reason). A
 * {@link LockAbortedError}; as after a timeout, the member node and the watch are gone.
 */
export class BarrierAbortedError extends LockAbortedError {
  static {
    brandError(this, 'BarrierAbortedError');
  }
  override name = 'BarrierAbortedError';
  /** The wait that was aborted. */
  readonly operation: BarrierOperation;
  constructor(path: string, reason: unknown, operation: BarrierOperation) {
    super(path, reason);
    this.message = `barrier ${path}: ${operation} was aborted`;
    this.operation = operation;
  }
}

/**
 * An atomic counter could not tell what happened to its value: `kind` `'corrupted'` when the
 * node holds 1 to 7 bytes (not an 8-byte long; Curator throws "Corrupted data" there), or
 * `'outcome-unknown'` when the write's reply was lost (`cause`: the connection loss) and the
 * node changed since it was read, so the change may or may not have been applied. Curator
 * retries such a write blindly, which can apply an increment twice; this error leaves the
 * decision (read again, or count it as done) to the caller, with `preValue` and `attempted`.
 */
export class AtomicValueError extends LockError {
  static {
    brandError(this, 'AtomicValueError');
  }
  override name = 'AtomicValueError';
  /** What went wrong. */
  readonly kind: 'corrupted' | 'outcome-unknown';
  /** The value read before the write (outcome-unknown): a bigint (AtomicLong), number (AtomicInteger), or bytes or null (AtomicValue). */
  readonly preValue: bigint | number | Buffer | null | undefined;
  /** The value the write tried to store (outcome-unknown), of the same type. */
  readonly attempted: bigint | number | Buffer | null | undefined;
  constructor(path: string, kind: 'corrupted' | 'outcome-unknown', message: string, details: { cause?: unknown; preValue?: bigint | number | Buffer | null; attempted?: bigint | number | Buffer | null } = {}) {
    super(path, message, { cause: details.cause });
    this.kind = kind;
    this.preValue = details.preValue;
    this.attempted = details.attempted;
  }
}

/**
 * `PersistentNode.waitForInitialCreate` (or the same wait of a `PersistentTtlNode` or
 * `GroupMember`) did not see the node created within its timeout. The node is not given up: it
 * is still being created in the background until closed.
 */
export class PersistentNodeTimeoutError extends LockTimeoutError {
  static {
    brandError(this, 'PersistentNodeTimeoutError');
  }
  override name = 'PersistentNodeTimeoutError';
  constructor(path: string, timeout: number) {
    super(path, timeout);
    this.message = `node ${path} not created within ${timeout} ms`;
  }
}

/** `waitForInitialCreate` was aborted through its signal (`cause`: the signal's reason); the node goes on being created. */
export class PersistentNodeAbortedError extends LockAbortedError {
  static {
    brandError(this, 'PersistentNodeAbortedError');
  }
  override name = 'PersistentNodeAbortedError';
  constructor(path: string, reason: unknown) {
    super(path, reason);
    this.message = `waiting for node ${path} to be created was aborted`;
  }
}

/**
 * A queue wait (a `take`, the next item of `items()`, a `put`) did not end within its timeout
 * (`timeout: 0`: no item could be taken at once). A {@link LockTimeoutError}, so one `catch`
 * covers every timeout of this package. No lock node was left behind and no item was taken.
 */
export class QueueTimeoutError extends LockTimeoutError {
  static {
    brandError(this, 'QueueTimeoutError');
  }
  override name = 'QueueTimeoutError';
  /** What timed out: taking an item, or putting one (waiting for room under `maxItems`, or the create). */
  readonly operation: 'take' | 'put';
  constructor(path: string, timeout: number, operation: 'take' | 'put' = 'take') {
    super(path, timeout);
    const what = operation === 'take' ? 'no item' : 'the item not put';
    this.message = timeout === 0 ? `queue ${path}: ${operation === 'take' ? 'no item can be taken' : 'the item cannot be put'} at once` : `queue ${path}: ${what} within ${timeout} ms`;
    this.operation = operation;
  }
}

/** A queue wait was aborted through its signal (`cause`: the signal's reason). A {@link LockAbortedError}; no node left behind. */
export class QueueAbortedError extends LockAbortedError {
  static {
    brandError(this, 'QueueAbortedError');
  }
  override name = 'QueueAbortedError';
  /** What was aborted: taking an item, or putting one. */
  readonly operation: 'take' | 'put';
  constructor(path: string, reason: unknown, operation: 'take' | 'put' = 'take') {
    super(path, reason);
    this.message = `queue ${path}: ${operation} was aborted`;
    this.operation = operation;
  }
}

/**
 * A queue node that does not hold Curator's item framing (version 0x00010001, item opcodes,
 * lengths, the end opcode), or whose payload the serializer refused (`cause`). As Curator's
 * consumer does, the node was removed from the queue; its raw bytes are kept in `data` so nothing
 * is lost silently.
 */
export class QueueItemError extends LockError {
  static {
    brandError(this, 'QueueItemError');
  }
  override name = 'QueueItemError';
  /** The node's full path. */
  readonly node: string;
  /** The node's data as read. */
  readonly data: Uint8Array;
  constructor(path: string, node: string, data: Uint8Array, message: string, options?: { cause?: unknown }) {
    super(path, `queue ${path}: item ${node} is unreadable: ${message}`, options);
    this.node = node;
    this.data = data;
  }
}

// Service discovery

/**
 * A service discovery outcome that is not a ZooKeeper error: `kind` `'not-an-instance'` when a
 * node's data is not a service instance as Curator's JsonInstanceSerializer writes it (not JSON,
 * a field of the wrong type, an unknown service type; `path` is the node), `'not-registered'` when
 * `update` names an instance this discovery did not register (Curator: "Service has been
 * unregistered"), `'closed'` when the discovery, cache or provider was closed.
 */
export class DiscoveryError extends LockError {
  static {
    brandError(this, 'DiscoveryError');
  }
  override name = 'DiscoveryError';
  /** What went wrong. */
  readonly kind: 'not-an-instance' | 'not-registered' | 'closed';
  constructor(path: string, kind: 'not-an-instance' | 'not-registered' | 'closed', message: string, options?: { cause?: unknown }) {
    super(path, message, options);
    this.kind = kind;
  }
}

/** A service cache wait (`ServiceCache.waitFor`) did not see what it waited for within its timeout. A {@link LockTimeoutError}. */
export class DiscoveryTimeoutError extends LockTimeoutError {
  static {
    brandError(this, 'DiscoveryTimeoutError');
  }
  override name = 'DiscoveryTimeoutError';
  constructor(path: string, timeout: number) {
    super(path, timeout);
    this.message = `service ${path}: not seen within ${timeout} ms`;
  }
}

/** A service cache wait was aborted by its signal (`cause`: the signal's reason). A {@link LockAbortedError}. */
export class DiscoveryAbortedError extends LockAbortedError {
  static {
    brandError(this, 'DiscoveryAbortedError');
  }
  override name = 'DiscoveryAbortedError';
  constructor(path: string, reason: unknown) {
    super(path, reason);
    this.message = `service ${path}: the wait was aborted`;
  }
}

/**
 * A recipe whose nodes shut other sessions out (its `acl`, or the client's `acl` option) was given
 * a lock path that lets them in: the path's own ACL grants create, delete or admin to an identity
 * the recipe's nodes do not. ZooKeeper checks a delete against the parent's ACL, so such a session
 * could delete the holder's node (and hand the lock to the next waiter), whatever the node's ACL.
 * Nothing was left behind: the node made for the attempt was removed.
 *
 * Create the path with the recipe's ACL before first use, or let the recipe create it (delete a
 * path someone else made, if it is empty): `zk.ensurePath('/locks/nightly', { acl })`, or
 * `zk.setACL(path, acl)` on an existing one by its owner.
 *
 * @example
 * ```ts
 * try {
 *   await using lease = await new Mutex(zk, '/locks/nightly', { acl: CREATOR_ALL_ACL }).acquire();
 * } catch (err) {
 *   if (err instanceof UnsafeLockPathError) console.error(err.grants); // [ 'delete to world:anyone', ... ]
 *   throw err;
 * }
 * ```
 */
export class UnsafeLockPathError extends LockError {
  static {
    brandError(this, 'UnsafeLockPathError');
  }
  override name = 'UnsafeLockPathError';
  /** The lock path's ACL as the server has it. */
  readonly acl: readonly ACL[];
  /** The rights it grants that the recipe's nodes do not (`'delete to world:anyone'`; a digest id by its user name only). */
  readonly grants: readonly string[];
  constructor(path: string, acl: readonly ACL[], grants: readonly string[]) {
    super(path, `lock path ${path} lets others in that the lock's own ACL shuts out (${grants.join(', ')}): a session allowed to delete under it can remove the holder's node, whatever that node's ACL. Create the path with the lock's ACL first, or let the recipe create it (see UnsafeLockPathError)`);
    this.acl = acl;
    this.grants = grants;
  }
}

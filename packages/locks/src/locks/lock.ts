/**
 * What every lock shares: options, reentrancy by owner, `acquire` / `tryAcquire` / `run`.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { hostname } from 'node:os';
import { InvalidArgumentError, validatePath, type ACL, type ZooKeeper } from '@zk/protocol';
import { recipeACL } from '../internal/acl.js';
import { LockAbortedError, LockTimeoutError } from '../errors.js';
import type { HeldNode } from '../internal/engine.js';
import { guard, Lease, type GuardOptions, type LeaseCore } from '../lease.js';
import { traceAcquire, type AcquireTrace, type LockKind } from '../diagnostics.js';

/** Options of a lock. */
export interface LockOptions extends GuardOptions {
  /** Data stored in the lock node; default: `{"host","pid"}` JSON, which `inspect` shows. */
  data?: Uint8Array | string;
  /**
   * ACL of every node this lock creates, and of the container parents it makes when they are
   * missing (default: the client's `acl` connect option, else OPEN_ACL_UNSAFE). With
   * `CREATOR_ALL_ACL` on a client authenticated as, say, a digest user, only sessions of that
   * identity can queue on the path, delete or overwrite a holder's node, or remove the parents:
   * any other session gets NoAuthError. Checked when the lock is made (InvalidArgumentError).
   */
  acl?: readonly ACL[] | undefined;
}

/** Options of one acquire. */
export interface AcquireOptions {
  /** Give up after this many ms (the attempt's node is removed first). Default: wait as long as it takes. */
  timeout?: number;
  /** Abandon the attempt (its node is removed first). */
  signal?: AbortSignal;
  /**
   * The owner for reentrancy: an acquire by an owner that already holds this lock succeeds at
   * once and needs its own release. Default: the owner of the enclosing {@link LockBase.run}
   * call, if any; otherwise every acquire is a new contender.
   */
  owner?: unknown;
  /**
   * Listen for revocation requests while holding (Curator's `makeRevocable`): another process
   * may then ask for the lock with {@link revoke} or Curator's `Revoker.attemptRevoke`, and
   * `lease.revocationRequested` aborts. The holder decides whether to release. Default: false.
   */
  revocable?: boolean;
}

const owners = new AsyncLocalStorage<unknown>();

/**
 * @internal Marks the locks of every copy of this package (two installed versions, or a bundle
 * next to tsc's modules), so that a {@link MultiLock} given a lock of another copy can say so
 * rather than call it "not a lock". Such a lock is refused: its reentrancy context (the owner of
 * an enclosing `run`) is its own copy's, so re-acquiring it inside `run` would wait for itself.
 */
export const LOCK_BRAND = Symbol.for('@zk/locks:lock');

/** @internal The owner in effect for an acquire. */
export function ownerOf(options: AcquireOptions): unknown {
  return options.owner ?? owners.getStore();
}

/** @internal Runs `fn` as `owner`: acquires inside it (and what it awaits) are reentrant for that owner. */
export function runAsOwner<T>(owner: unknown, fn: () => T): T {
  return owners.run(owner, fn);
}

/** @internal Refuses bad acquire options before anything is sent. */
export function checkAcquireOptions(options: AcquireOptions): void {
  const { timeout, revocable } = options;
  if (timeout !== undefined && (typeof timeout !== 'number' || !Number.isFinite(timeout) || timeout < 0)) {
    throw new InvalidArgumentError('timeout', `must be a number of ms >= 0, got ${String(timeout)}`);
  }
  if (revocable !== undefined && typeof revocable !== 'boolean') throw new InvalidArgumentError('revocable', `must be a boolean, got ${String(revocable)}`);
}

let sharedData: Buffer | undefined;

/**
 * A lock node's data when the options give none: this process's host and pid, as JSON. One
 * Buffer for every lock of the process (it is only ever read), made at the first lock.
 */
function defaultData(): Buffer {
  return (sharedData ??= Buffer.from(JSON.stringify({ host: hostname(), pid: process.pid })));
}

/** What a hold tells its acquire's trace. */
const heldBy = (core: LeaseCore) => ({ node: core.nodePath, fencingToken: core.fencingToken });

/** Base of the locks: reentrancy and the acquire variants over one `acquireNode`. */
export abstract class LockBase {
  static {
    Object.defineProperty(this.prototype, LOCK_BRAND, { value: true });
  }
  /** The client the lock uses. */
  readonly zk: ZooKeeper;
  /** The lock path. */
  readonly path: string;
  /** @internal */
  protected readonly options: LockOptions;
  /** @internal */
  protected readonly data: Buffer;
  /** @internal The `acl` option, checked and frozen (undefined: the client's choice). */
  protected readonly acl: readonly ACL[] | undefined;
  /** Holds by owner, for reentrancy: made at the first hold with an owner (most locks never have one). */
  #holds: Map<unknown, LeaseCore> | undefined;

  constructor(zk: ZooKeeper, path: string, options: LockOptions = {}) {
    validatePath(path);
    if (options.suspendedGrace !== undefined && (!Number.isFinite(options.suspendedGrace) || options.suspendedGrace < 0)) {
      throw new InvalidArgumentError('suspendedGrace', `must be a number of ms >= 0, got ${String(options.suspendedGrace)}`);
    }
    this.zk = zk;
    this.path = path;
    this.options = options;
    this.data = options.data === undefined ? defaultData() : Buffer.from(options.data);
    this.acl = recipeACL(options.acl);
  }

  /** @internal The hold `owner` has through this object, if any (released or lost ones included). */
  protected holdOf(owner: unknown): LeaseCore | undefined {
    return owner === undefined ? undefined : this.#holds?.get(owner);
  }

  /** @internal Creates and waits for this lock's node (`trace`: the wait's trace, when traced). */
  protected abstract acquireNode(options: AcquireOptions, owner: unknown, trace?: AcquireTrace): Promise<HeldNode>;

  /** @internal Which lock this is, for the diagnostics channels. */
  protected abstract get kind(): LockKind;

  /**
   * @internal Takes the lock for one new hold: its node through {@link LockBase.acquireNode}, then
   * the guard. `onEnd` runs when the hold ends.
   */
  protected async acquireCore(options: AcquireOptions, onEnd: () => void, trace?: AcquireTrace): Promise<LeaseCore> {
    const node = await this.acquireNode(options, ownerOf(options), trace);
    return guard(this.zk, this.path, node.nodePath, node.czxid, this.options, onEnd, options.revocable === true, this.kind);
  }

  /**
   * Acquires the lock. Resolves with a {@link Lease} once held; rejects with
   * {@link LockTimeoutError} or {@link LockAbortedError} (after removing its queue node), or with
   * the client's error.
   */
  async acquire(options: AcquireOptions = {}): Promise<Lease> {
    checkAcquireOptions(options);
    if (options.signal?.aborted) throw new LockAbortedError(this.path, options.signal.reason);
    const owner = ownerOf(options);
    const existing = this.holdOf(owner);
    existing?.check(); // a hold past its deadline is not entered again (the clock, as lease.held reads it)
    if (existing && !existing.released && !existing.aborted) {
      existing.refs++;
      return new Lease(existing);
    }
    const onEnd = () => {
      if (owner !== undefined && this.#holds?.get(owner) === core) this.#holds.delete(owner);
    };
    const core: LeaseCore = await traceAcquire(this.kind, this.zk, this.path, options.timeout, (trace) => this.acquireCore(options, onEnd, trace), heldBy);
    if (owner !== undefined) (this.#holds ??= new Map()).set(owner, core);
    return new Lease(core);
  }

  /** Acquires only if free right now; never waits. Resolves `undefined` when held by someone else. */
  async tryAcquire(options: Omit<AcquireOptions, 'timeout'> = {}): Promise<Lease | undefined> {
    try {
      return await this.acquire({ ...options, timeout: 0 });
    } catch (err) {
      if (err instanceof LockTimeoutError) return undefined;
      throw err;
    }
  }

  /**
   * Runs `fn` while holding the lock and releases it afterwards. Inside `fn` (and everything it
   * awaits), acquiring this lock again is reentrant. `fn` gets the lease: watch `lease.signal`
   * and pass `lease.fencingToken` to the resource you guard.
   *
   * @example
   * ```ts
   * await mutex.run(async (lease) => { await job({ signal: lease.signal, token: lease.fencingToken }); });
   * ```
   */
  async run<T>(fn: (lease: Lease) => Promise<T> | T, options: AcquireOptions = {}): Promise<T> {
    const owner = ownerOf(options) ?? Symbol('lock owner');
    const lease = await this.acquire({ ...options, owner });
    try {
      return await runAsOwner(owner, () => fn(lease));
    } finally {
      await lease.release();
    }
  }

  /** True when `owner` (default: the enclosing `run`) holds this lock through this object. */
  isHeldBy(owner: unknown = owners.getStore()): boolean {
    const core = this.holdOf(owner);
    core?.check(); // reads the clock, as lease.held does
    return core !== undefined && !core.released && !core.aborted;
  }
}

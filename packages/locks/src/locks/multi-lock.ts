/**
 * MultiLock: several locks held as one (Curator's `InterProcessMultiLock`), taken in one global
 * order so that overlapping MultiLocks cannot deadlock, all or nothing.
 */
import { InvalidArgumentError, type Transaction } from '@zk/protocol';
import { LockError, LockTimeoutError, NotHeldError } from '../errors.js';
import type { Lease } from '../lease.js';
import { checkAcquireOptions, LOCK_BRAND, LockBase, ownerOf, runAsOwner, type AcquireOptions } from './lock.js';
import { traceAcquire } from '../diagnostics.js';

/** What a MultiLock acquire tells its trace: its last part's node and token. */
const lastPart = (lease: MultiLease) => ({ node: lease.nodes.at(-1), fencingToken: lease.leases.at(-1)?.fencingToken });

/** The global order: by path, compared by UTF-16 code units (JavaScript's `<`, Java's `String.compareTo`). */
function byPath(a: LockBase, b: LockBase): number {
  return a.path < b.path ? -1 : a.path > b.path ? 1 : 0;
}

/**
 * Several locks taken together: any mix of {@link Mutex}, {@link ExclusiveLock},
 * {@link ReadLock}, {@link WriteLock} (anything extending {@link LockBase}), on distinct paths.
 *
 * - **One global order.** The parts are acquired sorted by path (UTF-16 code-unit order, as
 *   JavaScript's `<` and Java's `String.compareTo` compare), whatever order they were given in,
 *   and released in reverse. Two MultiLocks over overlapping sets therefore never wait for each
 *   other in a cycle. Curator's `InterProcessMultiLock` takes its locks in the order of its list:
 *   give it the paths sorted the same way to share locks with it without deadlock.
 * - **All or nothing.** `timeout` and `signal` bound the whole acquire, not each part. When a
 *   part fails (timeout, abort, session loss, any error), every part already taken is released,
 *   in reverse order, before the acquire rejects, and the failing part removes its own queue
 *   node, so no node is left behind. (Curator keeps acquiring the remaining locks after an
 *   exception and gives each part the full timeout; this stops at the first failure.)
 * - **One handle.** The {@link MultiLease}'s `signal` aborts when any part is lost.
 *
 * It cannot order locks you already hold: taking a MultiLock while holding one of its later
 * parts outside it can still deadlock.
 *
 * @example
 * ```ts
 * const both = new MultiLock([new Mutex(zk, '/locks/accounts/17'), new Mutex(zk, '/locks/accounts/4')]);
 * await both.run(async (lease) => transfer({ signal: lease.signal, tokens: lease.fencingTokens }));
 * ```
 */
export class MultiLock {
  readonly #locks: readonly LockBase[];

  /** `locks`: at least one, on distinct paths; refused with {@link InvalidArgumentError} otherwise. */
  constructor(locks: Iterable<LockBase>) {
    if (locks === null || typeof locks !== 'object' || typeof (locks as Partial<Iterable<LockBase>>)[Symbol.iterator] !== 'function') {
      throw new InvalidArgumentError('locks', 'must be an array (or iterable) of locks');
    }
    const list = [...locks];
    if (list.length === 0) throw new InvalidArgumentError('locks', 'a MultiLock needs at least one lock');
    const seen = new Map<string, number>();
    list.forEach((lock, i) => {
      if (!(lock instanceof LockBase)) {
        if (typeof lock === 'object' && lock !== null && LOCK_BRAND in lock) {
          throw new InvalidArgumentError('locks', `element ${i} is a lock of another copy of @zk/locks (see \`npm ls @zk/locks\`): a MultiLock takes locks of its own copy only`);
        }
        throw new InvalidArgumentError('locks', `element ${i} is not a lock (a Mutex, ExclusiveLock, ReadLock, WriteLock, ...)`);
      }
      const first = seen.get(lock.path);
      if (first !== undefined) {
        throw new InvalidArgumentError('locks', `elements ${first} and ${i} are both on ${lock.path}: a MultiLock takes each path once (it would wait for itself)`);
      }
      seen.set(lock.path, i);
    });
    this.#locks = list.sort(byPath);
  }

  /** The parts, in the order they are acquired (sorted by path). */
  get locks(): readonly LockBase[] {
    return this.#locks;
  }

  /** The parts' paths, in acquisition order. */
  get paths(): string[] {
    return this.#locks.map((l) => l.path);
  }

  /**
   * Acquires every part, in order. Resolves with a {@link MultiLease} once all are held; rejects
   * with the failing part's error ({@link LockTimeoutError} naming the part that was not free in
   * time and the whole `timeout`, {@link LockAbortedError}, {@link LeaseLostError}, ...) after
   * releasing the parts already taken. `revocable` and `owner` apply to every part.
   */
  async acquire(options: AcquireOptions = {}): Promise<MultiLease> {
    checkAcquireOptions(options);
    return traceAcquire('multi', this.#locks[0]!.zk, this.#locks.map((l) => l.path).join(','), options.timeout, () => this.#acquire(options), lastPart);
  }

  async #acquire(options: AcquireOptions): Promise<MultiLease> {
    const { timeout, signal } = options;
    const owner = ownerOf(options);
    const deadline = timeout === undefined ? undefined : performance.now() + timeout;
    const leases: Lease[] = [];
    try {
      for (const lock of this.#locks) {
        let left: number | undefined;
        if (deadline !== undefined && timeout !== 0) {
          left = Math.ceil(deadline - performance.now());
          if (left <= 0) throw new LockTimeoutError(lock.path, timeout ?? 0);
        } else {
          left = timeout; // 0: one try per part; undefined: no deadline
        }
        try {
          leases.push(await lock.acquire({ timeout: left, signal, owner, revocable: options.revocable }));
        } catch (err) {
          // The part's error carries what was left of the deadline; report the whole timeout.
          if (err instanceof LockTimeoutError && timeout !== undefined && err.timeout !== timeout) throw relabel(err, timeout);
          throw err;
        }
      }
    } catch (err) {
      await releaseInReverse(leases).catch((cleanup: unknown) => attachCleanupError(err, cleanup));
      throw err;
    }
    return new MultiLease(leases, this.#locks);
  }

  /** Acquires every part only if all are free right now; never waits. Resolves `undefined` when one is held elsewhere (nothing is left taken). */
  async tryAcquire(options: Omit<AcquireOptions, 'timeout'> = {}): Promise<MultiLease | undefined> {
    try {
      return await this.acquire({ ...options, timeout: 0 });
    } catch (err) {
      if (err instanceof LockTimeoutError) return undefined;
      throw err;
    }
  }

  /**
   * Runs `fn` while holding every part and releases them afterwards. Inside `fn`, acquiring this
   * MultiLock or any of its parts again is reentrant.
   *
   * @example
   * ```ts
   * await multi.run(async (lease) => { await copy({ signal: lease.signal, token: lease.fencingToken }); });
   * ```
   */
  async run<T>(fn: (lease: MultiLease) => Promise<T> | T, options: AcquireOptions = {}): Promise<T> {
    const owner = ownerOf(options) ?? Symbol('multi-lock owner');
    const lease = await this.acquire({ ...options, owner });
    try {
      return await runAsOwner(owner, () => fn(lease));
    } finally {
      await lease.release();
    }
  }
}

/**
 * The hold of a {@link MultiLock}: one {@link Lease} per part, in acquisition order.
 * `await using lease = await multi.acquire()` releases every part at the end of the scope.
 * What each part can and cannot promise is {@link Lease}'s.
 */
export class MultiLease implements AsyncDisposable {
  readonly #leases: readonly Lease[];
  readonly #locks: readonly LockBase[];
  readonly #signal: AbortSignal;
  readonly #revocation: AbortSignal;
  #release: Promise<void> | undefined;

  /** @internal */
  constructor(leases: readonly Lease[], locks: readonly LockBase[]) {
    this.#leases = leases;
    this.#locks = locks;
    this.#signal = AbortSignal.any(leases.map((l) => l.signal));
    this.#revocation = AbortSignal.any(leases.map((l) => l.revocationRequested));
  }

  /** The parts' leases, in acquisition order (sorted by path). */
  get leases(): readonly Lease[] {
    return this.#leases;
  }
  /** The parts' lock paths, in acquisition order. */
  get paths(): string[] {
    return this.#leases.map((l) => l.path);
  }
  /** The nodes that hold the parts for us, in acquisition order. */
  get nodes(): string[] {
    return this.#leases.map((l) => l.node);
  }
  /** Each part's fencing token (see {@link Lease.fencingToken}), by lock path. */
  get fencingTokens(): ReadonlyMap<string, bigint> {
    return new Map(this.#leases.map((l) => [l.path, l.fencingToken]));
  }
  /**
   * The largest part token. For holders of the same set of locks (at least one part exclusive,
   * none held beforehand by the same owner) it grows with every holder: each part is created
   * only after the parts before it are held, so the last one is newer than anything the
   * previous holder had. A resource guarded by one part only should take that part's token.
   */
  get fencingToken(): bigint {
    return this.#leases.reduce((max, l) => (l.fencingToken > max ? l.fencingToken : max), 0n);
  }
  /** Aborts as soon as any part is at risk or released; `reason` is that part's {@link LeaseLostError}. */
  get signal(): AbortSignal {
    return this.#signal;
  }
  /** Aborts when a revocation of any part is requested (acquired with `revocable: true`; see {@link Lease.revocationRequested}). */
  get revocationRequested(): AbortSignal {
    return this.#revocation;
  }
  /** True until released or until any part is lost. Reads the clock, as {@link Lease.held} does for each part. */
  get held(): boolean {
    return this.#release === undefined && this.#leases.every((l) => l.held) && !this.#signal.aborted;
  }

  /** Throws if released, or the first lost part's reason. Reads the clock, as {@link Lease.assertHeld} does. */
  assertHeld(): void {
    if (this.#release) throw new NotHeldError(this.#leases[0]!.path, `multi-lease on ${this.paths.join(', ')} was released`);
    for (const l of this.#leases) void l.held; // a part past its deadline is aborted here, and with it the signal
    if (this.#signal.aborted) throw this.#signal.reason;
  }

  /**
   * A transaction that commits only while every part's node exists: it starts with a `check` of
   * each. The parts must use one client (a transaction runs on one session).
   *
   * @example
   * ```ts
   * await lease.fenced().setData('/accounts/17', a).setData('/accounts/4', b).commit();
   * ```
   */
  fenced(): Transaction {
    const zk = this.#locks[0]!.zk;
    if (this.#locks.some((l) => l.zk !== zk)) throw new LockError(this.#leases[0]!.path, 'fenced() needs every part of the MultiLock on one client: a transaction runs on one session');
    const [first, ...rest] = this.#leases;
    const tx = first!.fenced();
    for (const l of rest) tx.check(l.node, -1);
    return tx;
  }

  /**
   * Releases every part in reverse order (idempotent: later calls return the first call's
   * promise). A part whose release fails does not stop the others; the failure is thrown after
   * all were tried (an AggregateError when several failed).
   */
  release(): Promise<void> {
    this.#release ??= releaseInReverse(this.#leases);
    return this.#release;
  }

  /** `await using lease = await multi.acquire()`: {@link MultiLease.release} at the end of the scope. */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.release();
  }
}

/** Releases `leases` last first, every one even if some fail; rejects with the failure(s). */
async function releaseInReverse(leases: readonly Lease[]): Promise<void> {
  const errors: unknown[] = [];
  for (const lease of [...leases].reverse()) {
    try {
      await lease.release();
    } catch (err) {
      errors.push(err);
    }
  }
  if (errors.length === 1) throw errors[0];
  if (errors.length > 1) throw new AggregateError(errors, `releasing ${errors.length} parts of a multi-lease failed`);
}

function relabel(err: LockTimeoutError, timeout: number): LockTimeoutError {
  const out = new LockTimeoutError(err.path, timeout);
  const cleanup = (err as Error & { cleanupError?: unknown }).cleanupError;
  if (cleanup !== undefined) attachCleanupError(out, cleanup);
  return out;
}

/** Attaches a cleanup failure to the original error (never substituted for it), as the lock attempts do. */
function attachCleanupError(original: unknown, cleanup: unknown): void {
  if (original instanceof Error) (original as Error & { cleanupError?: unknown }).cleanupError = cleanup;
}

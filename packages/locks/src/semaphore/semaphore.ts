/**
 * Semaphore: Curator's InterProcessSemaphoreV2, wire-compatible with it.
 *
 * Layout (Curator 5.4, checked with javap): under the semaphore path, `locks/` holds an
 * InterProcessMutex and `leases/` the permits, one protected ephemeral-sequential node
 * `_c_<uuid>-lease-<seq>` each. An acquirer takes the mutex, creates its lease node, lists
 * `leases/` and holds once the children number at most `maxLeases` (its own node included);
 * otherwise it waits, still holding the mutex, for the children to change (or the count to
 * change), and lists again. The mutex is released once the permit is held. Since only the mutex
 * holder creates lease nodes, every other lease node is a holder (or, with our early release
 * below, a node about to be withdrawn): either way it will only go away. Node data plays no part:
 * Curator writes its default (the local IP address), we write `{"host","pid"}` JSON unless told.
 */
import { hostname } from 'node:os';
import { ConnectionLossError, CreateMode, InvalidArgumentError, NoNodeError, validatePath, type ACL, type Stat, type WatchedEvent, type ZooKeeper } from '@zk/protocol';
import { LeaseLostError, LockAbortedError, LockTimeoutError } from '../errors.js';
import { Attempt, createdThenGone, deleteGuaranteed, removeNode, sweepAttempt } from '../internal/attempt.js';
import { recipeACL } from '../internal/acl.js';
import { mutexDriver } from '../internal/drivers.js';
import { acquireNode, ensureContainers, type HeldNode } from '../internal/engine.js';
import { attemptIdOf, newAttemptId, protectedName } from '../internal/names.js';
import { guard, Lease } from '../lease.js';
import type { LockOptions } from '../locks/lock.js';
import type { SharedCountReader } from '../shared/shared-count.js';
import { traceAcquire } from '../diagnostics.js';

/** What a semaphore acquire tells its trace: its first lease's node and token. */
const firstLease = (leases: Lease[]) => ({ node: leases[0]?.node, fencingToken: leases[0]?.fencingToken });

/** Curator's `InterProcessSemaphoreV2` child names. */
const LOCK_PARENT = 'locks';
const LEASE_PARENT = 'leases';
const LEASE_NAME = 'lease-';
/** Java's int: Curator's maxLeases and qty. */
const INT_MAX = 2 ** 31 - 1;
/** How many times a lease create may find `leases/` missing (a container reaped under us). */
const MAX_PARENT_RETRIES = 5;

/** Options of a {@link Semaphore}. */
export interface SemaphoreOptions extends LockOptions {
  /**
   * How many permits may be held at once: a fixed integer >= 1, or a {@link SharedCountReader}
   * (usually a started {@link SharedCount}) whose changes take effect at once, as with Curator's
   * `InterProcessSemaphoreV2(client, path, SharedCountReader)`. With a shared count, asking for
   * more permits than the current count is no error: the acquire waits for the count to rise (or
   * for its timeout); lowering the count evicts nobody, it only holds back new acquirers.
   */
  maxLeases: number | SharedCountReader;
}

/** Options of one semaphore acquire. */
export interface SemaphoreAcquireOptions {
  /** Give up after this many ms (every node of the attempt is removed first). Default: wait as long as it takes. */
  timeout?: number;
  /** Abandon the attempt (every node of the attempt is removed first). */
  signal?: AbortSignal;
}

/** The leases of one `acquire(qty)`: an array of {@link Lease}, releasable together. */
export interface Leases extends ReadonlyArray<Lease>, AsyncDisposable {
  /** Releases every lease (each one idempotently). */
  release(): Promise<void>;
}

/**
 * A counting semaphore across processes: at most `maxLeases` permits held at once. Node layout
 * and rules are Curator 5's `InterProcessSemaphoreV2`, so Node processes and Java processes on
 * the same path share the permits (and a {@link SharedCount} can set the limit for both).
 *
 * - `acquire()` resolves with one {@link Lease}; `acquire(qty)` with {@link Leases} (an array,
 *   like Curator's `acquire(int)` returns a collection). Each lease is one permit with its own
 *   `signal`, `fencingToken` (its lease node's creation zxid) and `release()`.
 * - `acquire(qty)` is all or nothing within one deadline, and holds the internal lock until all
 *   `qty` permits are held (Curator takes it once per permit, so two of its `acquire(2)` on
 *   2 permits can each end up with one and wait for each other until they time out).
 * - Not reentrant: a second acquire needs another permit, whoever asks. Not fair beyond what the
 *   internal lock gives: acquirers queue FIFO for the internal lock, and the one holding it takes
 *   the next free permit.
 * - A timed-out or aborted acquire removes its lease nodes and its internal lock node before it
 *   rejects (in the background when disconnected, as every lock here does).
 * - Uncontended, an acquire takes two round trips. When this object's last acquire found a permit
 *   free at once, the next one lets the internal lock go in the same round trip as its lease
 *   create rather than after its listing (a shorter hand-off chain under contention); should the
 *   permits be taken after all, it withdraws its node and queues again, keeping the internal lock
 *   while it waits, as Curator does.
 *
 * It does not protect against a holder paused longer than the session timeout: see
 * {@link Lease} (`signal`, `fencingToken`, `fenced()`).
 *
 * @example
 * ```ts
 * const semaphore = new Semaphore(zk, '/semaphores/encoders', { maxLeases: 4 });
 * await using lease = await semaphore.acquire({ timeout: 10_000 });
 * await encode({ signal: lease.signal });
 * ```
 */
export class Semaphore {
  /** The client. */
  readonly zk: ZooKeeper;
  /** The semaphore path (its `locks/` and `leases/` children are Curator's). */
  readonly path: string;
  readonly #maxLeases: number | SharedCountReader;
  readonly #options: LockOptions;
  readonly #data: Buffer;
  readonly #acl: readonly ACL[] | undefined;
  readonly #leasesPath: string;
  readonly #locksPath: string;
  /**
   * Whether our last listing of `leases/` had room at once. Then the next acquire lets the
   * internal lock go in the same round trip as its lease creates instead of after the listing
   * (one round trip less in the lock's hand-off chain); if the permits turn out to be taken, it
   * withdraws its nodes and queues again, keeping the lock while it waits. Safety does not rest
   * on the lock: a permit is held only by a node whose own listing, which contains every holder's
   * node, numbered at most `maxLeases`. The lock only keeps more than one acquirer from waiting
   * with a node in place (which could leave them all waiting for each other).
   */
  #freeLastTime = false;

  /** Bad input (path, maxLeases, suspendedGrace, data, acl) throws InvalidArgumentError; nothing is sent. */
  constructor(zk: ZooKeeper, path: string, options: SemaphoreOptions) {
    validatePath(path);
    const max = options?.maxLeases;
    if (typeof max === 'number') {
      if (!Number.isInteger(max) || max < 1 || max > INT_MAX) throw new InvalidArgumentError('maxLeases', `must be an integer in 1..2^31-1, got ${String(max)}`);
    } else if (typeof max !== 'object' || max === null || typeof max.onChange !== 'function') {
      throw new InvalidArgumentError('maxLeases', `must be a number of permits or a SharedCountReader, got ${String(max)}`);
    }
    if (options.suspendedGrace !== undefined && (!Number.isFinite(options.suspendedGrace) || options.suspendedGrace < 0)) {
      throw new InvalidArgumentError('suspendedGrace', `must be a number of ms >= 0, got ${String(options.suspendedGrace)}`);
    }
    if (options.data !== undefined && typeof options.data !== 'string' && !(options.data instanceof Uint8Array)) {
      throw new InvalidArgumentError('data', `must be a string or bytes, got ${typeof options.data}`);
    }
    this.zk = zk;
    this.path = path;
    this.#maxLeases = max;
    this.#options = options;
    this.#acl = recipeACL(options.acl);
    this.#data = options.data === undefined ? Buffer.from(JSON.stringify({ host: hostname(), pid: process.pid })) : Buffer.from(options.data);
    const base = path === '/' ? '' : path;
    this.#leasesPath = `${base}/${LEASE_PARENT}`;
    this.#locksPath = `${base}/${LOCK_PARENT}`;
  }

  /** The current limit: the fixed `maxLeases`, or the shared count's current value. */
  get maxLeases(): number {
    return typeof this.#maxLeases === 'number' ? this.#maxLeases : this.#maxLeases.count;
  }

  /**
   * Acquires one permit. Resolves with its {@link Lease}; rejects with {@link LockTimeoutError}
   * or {@link LockAbortedError} (after removing its nodes), {@link LeaseLostError} when the
   * session ends meanwhile (the client's `ClientClosedError` when it was closed) or one of its lease nodes is deleted by someone else while it waits
   * (Curator retries there), or the client's error.
   */
  acquire(options?: SemaphoreAcquireOptions): Promise<Lease>;
  /** Acquires `qty` permits, all or none, and resolves with their {@link Leases}. */
  acquire(qty: number, options?: SemaphoreAcquireOptions): Promise<Leases>;
  async acquire(qtyOrOptions?: number | SemaphoreAcquireOptions, options?: SemaphoreAcquireOptions): Promise<Lease | Leases> {
    if (typeof qtyOrOptions === 'number') return group(await this.#acquire(qtyOrOptions, options ?? {}));
    if (qtyOrOptions !== undefined && (typeof qtyOrOptions !== 'object' || qtyOrOptions === null)) {
      throw new InvalidArgumentError('qty', `must be a number of permits, got ${String(qtyOrOptions)}`);
    }
    const [lease] = await this.#acquire(1, qtyOrOptions ?? {});
    return lease as Lease;
  }

  /**
   * Acquires one permit only if one is free right now; never waits. Resolves `undefined`
   * otherwise, also when another acquirer holds the internal lock at that moment (as Curator's
   * `acquire` with a zero wait does).
   */
  tryAcquire(options?: Omit<SemaphoreAcquireOptions, 'timeout'>): Promise<Lease | undefined>;
  /** Acquires `qty` permits only if they are free right now; never waits. Resolves `undefined` otherwise. */
  tryAcquire(qty: number, options?: Omit<SemaphoreAcquireOptions, 'timeout'>): Promise<Leases | undefined>;
  async tryAcquire(qtyOrOptions?: number | Omit<SemaphoreAcquireOptions, 'timeout'>, options?: Omit<SemaphoreAcquireOptions, 'timeout'>): Promise<Lease | Leases | undefined> {
    try {
      if (typeof qtyOrOptions === 'number') return await this.acquire(qtyOrOptions, { ...options, timeout: 0 });
      return await this.acquire({ ...qtyOrOptions, timeout: 0 });
    } catch (err) {
      if (err instanceof LockTimeoutError) return undefined;
      throw err;
    }
  }

  /**
   * Runs `fn` while holding one permit and releases it afterwards. `fn` gets the lease: watch
   * `lease.signal` and pass `lease.fencingToken` to the resource you guard.
   *
   * @example
   * ```ts
   * await semaphore.run(async (lease) => encode({ signal: lease.signal }), { timeout: 10_000 });
   * ```
   */
  async run<T>(fn: (lease: Lease) => Promise<T> | T, options: SemaphoreAcquireOptions = {}): Promise<T> {
    const lease = await this.acquire(options);
    try {
      return await fn(lease);
    } finally {
      await lease.release();
    }
  }

  /** The names of the lease nodes under `leases/` (holders, and at most one acquirer's nodes not yet holding), unordered. */
  async participantNodes(): Promise<string[]> {
    return this.zk.getChildren(this.#leasesPath).catch((e: unknown) => (e instanceof NoNodeError ? [] : Promise.reject(e)));
  }

  #acquire(qty: number, options: SemaphoreAcquireOptions): Promise<Lease[]> {
    return traceAcquire('semaphore', this.zk, this.path, options.timeout, () => this.#take(qty, options), firstLease);
  }

  async #take(qty: number, options: SemaphoreAcquireOptions): Promise<Lease[]> {
    if (!Number.isInteger(qty) || qty < 1 || qty > INT_MAX) throw new InvalidArgumentError('qty', `must be an integer >= 1, got ${String(qty)}`);
    if (typeof this.#maxLeases === 'number' && qty > this.#maxLeases) {
      throw new InvalidArgumentError('qty', `${qty} permits can never be held at once: the semaphore has ${this.#maxLeases}`);
    }
    const { timeout, signal } = options;
    if (timeout !== undefined && (!Number.isFinite(timeout) || timeout < 0)) throw new InvalidArgumentError('timeout', `must be a number of ms >= 0, got ${String(timeout)}`);
    if (signal?.aborted) throw new LockAbortedError(this.path, signal.reason);
    const attempt = new Attempt(this.zk, this.path, timeout, signal);
    try {
      for (let early = this.#freeLastTime; ; early = false) {
        const lock = await this.#lockInternal(attempt, timeout === 0);
        let released = false;
        // Lets the next acquirer in. Not awaited: this session's later requests (a release, the
        // next acquire) reach the server after this delete anyway.
        const release = () => {
          if (released) return;
          released = true;
          deleteGuaranteed(this.zk, lock.nodePath).catch(() => undefined);
        };
        let nodes: HeldNode[] | undefined;
        try {
          nodes = await this.#takeLeases(attempt, qty, early ? release : undefined);
        } catch (err) {
          if (!released) await removeNode(this.zk, lock.nodePath, err);
          throw err;
        }
        release();
        if (nodes) return nodes.map((n) => new Lease(guard(this.zk, this.path, n.nodePath, n.czxid, this.#options, () => undefined, false, 'semaphore')));
        // Let go early, and the permits were taken after all: our nodes are gone; queue again,
        // this time keeping the internal lock while we wait.
        if (attempt.expired) throw attempt.timeoutError();
      }
    } finally {
      attempt.end();
    }
  }

  /** Takes the internal InterProcessMutex at `locks/` with the shared engine, bounded by `attempt`. */
  async #lockInternal(attempt: Attempt, once: boolean): Promise<HeldNode> {
    try {
      return await acquireNode({ zk: this.zk, path: this.#locksPath, driver: mutexDriver, data: this.#data, acl: this.#acl, timeout: once ? 0 : undefined, signal: attempt.signal });
    } catch (err) {
      // The engine reports the end of our attempt as an abort (cause: our reason): say it as ours.
      if (attempt.signal.aborted) throw attempt.signal.reason;
      if (err instanceof LockTimeoutError) throw attempt.timeoutError();
      throw err;
    }
  }

  /**
   * Creates `qty` lease nodes (while we hold the internal lock) and waits until they fit under
   * the limit. With `releaseEarly`, the internal lock is let go in the same round trip as the
   * creates (see `#freeLastTime`); then there is no waiting: if the nodes do not fit
   * at once, they are removed and the result is `undefined`. On any failure every node of ours is
   * removed, or swept when its create's outcome is unknown.
   */
  async #takeLeases(attempt: Attempt, qty: number, releaseEarly?: () => void): Promise<HeldNode[] | undefined> {
    const slots: Slot[] = Array.from({ length: qty }, () => ({ attemptId: newAttemptId(), inFlight: undefined, unknown: false, node: undefined }));
    try {
      // Every create, then the listing, back to back: the server handles one session's requests
      // in order, so the listing already holds our nodes (one round trip when uncontended).
      const sent = slots.map((slot) => this.#send(slot));
      const listed = this.zk.getChildren(this.#leasesPath);
      listed.catch(() => undefined); // a failure here is the creates' failure, handled below
      // Sent after our creates, so every lease node made while the next acquirer holds the lock
      // is still that acquirer's: the rule the V2 protocol relies on to let only one wait.
      releaseEarly?.();
      let firstTry = true;
      for (const [i, slot] of slots.entries()) {
        try {
          settle(slot, await attempt.race(sent[i] as Promise<{ path: string; stat: Stat }>), this.#leasesPath);
        } catch (err) {
          if (attempt.signal.aborted && err === attempt.signal.reason) throw err; // creates still in flight are swept
          slot.inFlight = undefined;
          firstTry = false;
          await this.#createAgain(attempt, slot, err);
        }
      }
      const nodes = slots.map((s) => s.node as HeldNode);
      let children: string[] | undefined;
      if (firstTry) children = await attempt.race(listed).catch((e: unknown) => (e instanceof ConnectionLossError ? undefined : Promise.reject(e)));
      if (releaseEarly && !(await this.#fits(attempt, nodes, children))) {
        for (const node of nodes) await removeNode(this.zk, node.nodePath, undefined);
        return undefined;
      }
      await this.#waitForRoom(attempt, nodes, children);
      return nodes;
    } catch (err) {
      for (const slot of slots) {
        if (slot.node) await removeNode(this.zk, slot.node.nodePath, err);
        else if (slot.inFlight || slot.unknown) sweepAttempt(this.zk, this.#leasesPath, slot.attemptId, slot.inFlight, err);
      }
      throw err;
    }
  }

  #send(slot: Slot): Promise<{ path: string; stat: Stat }> {
    const created = this.zk.createWithStat(`${this.#leasesPath}/${protectedName(slot.attemptId, LEASE_NAME)}`, this.#data, { mode: CreateMode.EPHEMERAL_SEQUENTIAL, acl: this.#acl });
    created.catch(() => undefined); // awaited through attempt.race, or swept
    slot.inFlight = created;
    return created;
  }

  /** After a failed create: make the parents (NoNode) or find our node (ConnectionLoss), and create again until it is made. */
  async #createAgain(attempt: Attempt, slot: Slot, failure: unknown): Promise<void> {
    for (let parentRetries = 0; ; ) {
      const gone = createdThenGone(failure, `${this.#leasesPath}/${protectedName(slot.attemptId, LEASE_NAME)}`, this.path);
      if (gone !== undefined) throw gone;
      if (failure instanceof NoNodeError && parentRetries++ < MAX_PARENT_RETRIES) {
        await ensureContainers(this.zk, this.#leasesPath, attempt, this.#acl).catch((e: unknown) => (e instanceof ConnectionLossError ? attempt.connected(e) : Promise.reject(e)));
      } else if (failure instanceof ConnectionLossError) {
        slot.unknown = true; // the create may have happened
        slot.node = await this.#recover(attempt, slot.attemptId, failure);
        if (slot.node) return;
      } else {
        throw failure;
      }
      attempt.check();
      const created = this.#send(slot);
      try {
        return settle(slot, await attempt.race(created), this.#leasesPath);
      } catch (err) {
        if (attempt.signal.aborted && err === attempt.signal.reason) throw err;
        slot.inFlight = undefined;
        failure = err;
      }
    }
  }

  /** Finds our lease node after a create whose reply was lost; adopts it only if this session owns it (CURATOR-498). */
  async #recover(attempt: Attempt, attemptId: string, cause: unknown): Promise<HeldNode | undefined> {
    for (;;) {
      await attempt.connected(cause);
      try {
        const children = await attempt.race(this.participantNodes());
        const name = children.find((c) => attemptIdOf(c) === attemptId);
        if (!name) return undefined;
        const nodePath = `${this.#leasesPath}/${name}`;
        const stat = await attempt.race(this.zk.exists(nodePath));
        if (!stat) return undefined;
        if (stat.ephemeralOwner === this.zk.sessionId) return { nodePath, name, czxid: stat.czxid };
        await removeNode(this.zk, nodePath, undefined);
        return undefined;
      } catch (err) {
        if (!(err instanceof ConnectionLossError)) throw err;
        cause = err;
      }
    }
  }

  /** Whether `nodes` fit under the limit in `children` (listed now if undefined), without waiting. */
  async #fits(attempt: Attempt, nodes: readonly HeldNode[], children: string[] | undefined): Promise<boolean> {
    for (;;) {
      try {
        return this.#room(nodes, children ?? (await attempt.race(this.zk.getChildren(this.#leasesPath))));
      } catch (err) {
        if (!(err instanceof ConnectionLossError)) throw err;
        await attempt.connected(err);
        children = undefined;
      }
    }
  }

  /**
   * The decision on one listing of `leases/`: true when the children (ours included) number at
   * most the limit. Throws LeaseLostError when one of our nodes is missing. Records whether the
   * permits were free, for the next acquire's choice.
   */
  #room(nodes: readonly HeldNode[], children: readonly string[]): boolean {
    const listing = new Set(children);
    const gone = nodes.find((n) => !listing.has(n.name));
    if (gone) throw new LeaseLostError(this.path, `our lease node ${gone.nodePath} is gone (session expired, or deleted by someone else)`, { cause: new NoNodeError(undefined, { path: gone.nodePath }) });
    return (this.#freeLastTime = listing.size <= this.maxLeases);
  }

  /**
   * Lists `leases/` until the children (ours included) number at most the limit. The first
   * listing after a wake-up sets no watch: when it shows room, there is no watch to remove; only a
   * listing that says "wait" is followed by one that sets a watch. A shared count's change wakes
   * us too.
   */
  async #waitForRoom(attempt: Attempt, nodes: readonly HeldNode[], first: string[] | undefined): Promise<void> {
    const dir = this.#leasesPath;
    let wake = () => {};
    let fires = 0;
    let armed = false; // our child watch is registered and has not fired
    const onChildren = (e: WatchedEvent) => {
      if (e.type === 'ChildWatchRemoved') return;
      armed = false;
      fires++;
      wake();
    };
    const offCount = typeof this.#maxLeases === 'number' ? undefined : this.#maxLeases.onChange(() => wake());
    let children = first;
    let arm = false;
    let waited = false;
    try {
      for (;;) {
        const woken = new Promise<void>((resolve) => (wake = resolve));
        try {
          if (!children) {
            const withWatch = arm && !armed;
            const before = fires;
            const listing = this.zk.getChildren(dir, withWatch ? { watch: onChildren } : {});
            children = await attempt.race(listing).catch((err: unknown) => {
              // Stopped before the reply: drop the watch whenever the reply registers it.
              if (withWatch && err === attempt.signal.reason) listing.then(() => unwatchChildren(this.zk, dir, onChildren), () => undefined);
              throw err;
            });
            if (withWatch) armed = fires === before;
          }
        } catch (err) {
          if (!(err instanceof ConnectionLossError)) throw err;
          await attempt.connected(err);
          continue;
        }
        const room = this.#room(nodes, children);
        children = undefined;
        if (room) {
          if (waited) this.#freeLastTime = false; // the permits were taken: the next acquire waits holding the lock
          return;
        }
        waited = true;
        if (attempt.expired) throw attempt.timeoutError();
        if (!armed) {
          arm = true; // list again, this time with a watch
          continue;
        }
        await attempt.race(woken);
        arm = false;
      }
    } finally {
      offCount?.();
      if (armed) await unwatchChildren(this.zk, dir, onChildren);
    }
  }
}

/** One lease node of an acquire: its create in flight, one that may have happened, or the node. */
interface Slot {
  readonly attemptId: string;
  inFlight: Promise<{ path: string; stat: Stat }> | undefined;
  unknown: boolean;
  node: HeldNode | undefined;
}

function settle(slot: Slot, created: { path: string; stat: Stat }, dir: string): void {
  slot.inFlight = undefined;
  slot.node = { nodePath: created.path, name: created.path.slice(dir.length + 1), czxid: created.stat.czxid };
}

function group(leases: Lease[]): Leases {
  const release = async () => {
    await Promise.all(leases.map((l) => l.release()));
  };
  return Object.assign(leases, { release, [Symbol.asyncDispose]: release });
}

/** Removes our child watch on `dir`: on the server when connected, else locally only. */
async function unwatchChildren(zk: ZooKeeper, dir: string, listener: (e: WatchedEvent) => void): Promise<void> {
  if (zk.state === 'connected') {
    try {
      return await zk.removeWatches(dir, { kind: 'child', listener });
    } catch {
      // it fired meanwhile, or we were cut off: drop the local registration
    }
  }
  zk.removeLocalWatch('child', dir, listener);
}

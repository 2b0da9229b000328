/**
 * The engine of the atomic recipes (Curator's `DistributedAtomicValue`, which
 * `DistributedAtomicLong` and `DistributedAtomicInteger` wrap with an encoding): one PERSISTENT
 * node whose data is the value, created with parents as containers. A change reads the node (data
 * and version), computes the new value and writes it with `setData(version)`, or `create` when the
 * node was absent; BadVersion, NodeExists or NoNode mean another writer came first: back off
 * ({@link backoffDelay}) and read again, up to the retry policy. A try is those two requests, one
 * after the other (and an `exists` after a lost reply, below). When the optimistic tries run out
 * and a `PromotedToLock` is configured, it takes an `InterProcessMutex` on the lock path (our
 * {@link Mutex}) and tries again under it.
 *
 * A write whose reply is lost is not sent again blindly: when the node is still at the version
 * read, the try is repeated; when it moved, the change may have been applied, and the call rejects
 * with {@link AtomicValueError} (`outcome-unknown`) instead of risking applying it twice.
 */
import { BadVersionError, CreateMode, InvalidArgumentError, NodeExistsError, NoNodeError, validatePath, ZooKeeperError, type ACL, type ZooKeeper } from '@zk/protocol';
import { AtomicValueError, LockTimeoutError } from '../errors.js';
import { Mutex } from '../locks/mutex.js';
import { recipeACL } from '../internal/acl.js';
import { connected } from '../internal/attempt.js';
import { checkClient } from '../internal/client.js';

/**
 * How often to try, and how long a loser backs off before the next try. The back-off before try
 * `n + 1` has a cap of `min(maxDelay, baseDelay * 2^(n-1))` ms, and the delay is a random point in
 * the top quarter of it, between 3/4 of the cap and the cap: a loser always
 * steps aside long enough for the writer that beat it to go again, and losers that failed together
 * do not all come back together. `{ maxTries: 11, baseDelay: 10, maxDelay: 10 }` is the counterpart
 * of Curator's `RetryNTimes(10, 10)` (which sleeps exactly 10 ms): 11 tries, 7.5 to 10 ms apart.
 */
export interface AtomicRetry {
  /** Tries in all, the first included (default 10). */
  maxTries?: number;
  /** The back-off cap before the second try, ms; doubled before each further try (default 5). */
  baseDelay?: number;
  /** The largest back-off cap, ms: no delay is longer (default 200). */
  maxDelay?: number;
}

/** The share of the cap that a back-off always waits (the rest of the cap is random). */
const BACKOFF_FLOOR = 0.75;

/**
 * The back-off before the try after `tried` failed tries (`tried` >= 1), ms: a random point
 * between 3/4 of the cap and the cap, the cap being `baseDelay * 2^(tried-1)` up to `maxDelay`.
 * Full jitter (anywhere from 0 to the cap) lets a loser come straight back and collide again with
 * the writer that just won, which under contention costs more tries (and more failed writes, each a
 * logged transaction on the server) per change; a fixed delay keeps losers that failed together
 * in step. `random` returns a number in [0, 1) (default `Math.random`).
 */
export function backoffDelay(retry: Required<AtomicRetry>, tried: number, random: () => number = Math.random): number {
  const cap = Math.min(retry.maxDelay, retry.baseDelay * 2 ** (tried - 1));
  return cap * (BACKOFF_FLOOR + (1 - BACKOFF_FLOOR) * random());
}

/** Curator's `PromotedToLock`: a mutex taken when the optimistic tries run out. */
export interface PromotedToLock {
  /** The mutex's path (Curator's `lockPath`; every process on the counter must use the same one). */
  lockPath: string;
  /** Give up on the mutex after this many ms (the result is then not `succeeded`). Default: wait. */
  timeout?: number;
  /** Tries under the mutex (default: the same as the optimistic ones). */
  retry?: AtomicRetry;
}

/** Options of an atomic recipe ({@link AtomicLong}, {@link AtomicInteger}, {@link AtomicValue}). */
export interface AtomicOptions {
  /** The optimistic tries (Curator's `RetryPolicy` argument). */
  retry?: AtomicRetry;
  /** Promote to a mutex after the optimistic tries (Curator's `PromotedToLock`). Default: no. */
  promotedToLock?: PromotedToLock;
  /** ACL of the value's node, its container parents and the promoted mutex's nodes (default: the client's `acl` option). */
  acl?: readonly ACL[] | undefined;
}

/** What a change did (Curator's `AtomicValue`); `T` is the recipe's value type. */
export interface AtomicResult<T extends bigint | number | Buffer | null = bigint> {
  /** Whether the change was applied. When false, nothing was written. */
  readonly succeeded: boolean;
  /** The value before the change (the last value read when it did not succeed). */
  readonly preValue: T;
  /** The value after the change (equal to `preValue` when it did not succeed). */
  readonly postValue: T;
  /** How hard it was (Curator's `AtomicStats`). */
  readonly stats: AtomicStats;
}

/** Tries and time spent, optimistic and under the promoted mutex. */
export interface AtomicStats {
  optimisticTries: number;
  promotedTries: number;
  optimisticMs: number;
  promotedMs: number;
}

/** Options of one operation. */
export interface AtomicCallOptions {
  /** Abandons the operation between tries (a write already sent still lands). */
  signal?: AbortSignal;
}

/** @internal What the atomic recipes hold: a long, an int, or bytes (null: no node). */
export type AtomicValueType = bigint | number | Buffer | null;

/** @internal How a recipe's values are stored. */
export interface AtomicCodec<T extends AtomicValueType> {
  /** What an absent node (or, for numbers, empty data) reads as. */
  readonly absent: T;
  encode(value: T): Buffer;
  /** The value of a node's data; undefined when it cannot be one (Curator's "Corrupted data"). */
  decode(data: Buffer): T | undefined;
  equals(a: T, b: T): boolean;
  /** `the counter`, `the value`: how messages name the node. */
  readonly noun: string;
  /** `an 8-byte long`: for the corrupted-data message. */
  readonly describe: string;
}

function checkRetry(argument: string, retry: AtomicRetry | undefined): Required<AtomicRetry> {
  const { maxTries = 10, baseDelay = 5, maxDelay = 200 } = retry ?? {};
  if (!Number.isInteger(maxTries) || maxTries < 1) throw new InvalidArgumentError(`${argument}.maxTries`, `must be an integer >= 1, got ${String(maxTries)}`);
  for (const [name, v] of [['baseDelay', baseDelay], ['maxDelay', maxDelay]] as const) {
    if (typeof v !== 'number' || !Number.isFinite(v) || v < 0) throw new InvalidArgumentError(`${argument}.${name}`, `must be a number of ms >= 0, got ${String(v)}`);
  }
  return { maxTries, baseDelay, maxDelay };
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  if (signal?.aborted) return Promise.reject(signal.reason);
  return new Promise((resolve, reject) => {
    const onAbort = () => (clearTimeout(timer), reject(signal!.reason));
    const timer = setTimeout(() => (signal?.removeEventListener('abort', onAbort), resolve()), ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** One result being built. */
interface Working<T extends AtomicValueType> {
  succeeded: boolean;
  preValue: T;
  postValue: T;
  stats: AtomicStats;
}

interface Read<T extends AtomicValueType> {
  value: T;
  /** -1: the node is absent. */
  version: number;
}

/** @internal One value node and its settings; the recipes are typed faces of it. */
export class AtomicEngine<T extends AtomicValueType> {
  readonly zk: ZooKeeper;
  readonly path: string;
  readonly #codec: AtomicCodec<T>;
  readonly #retry: Required<AtomicRetry>;
  readonly #promoted: { mutex: Mutex; timeout: number | undefined; retry: Required<AtomicRetry> } | undefined;
  readonly #acl: readonly ACL[] | undefined;

  /** Bad input (a path, retry settings, a lock path or timeout, an `acl`) throws InvalidArgumentError; nothing is sent here. */
  constructor(zk: ZooKeeper, path: string, options: AtomicOptions, codec: AtomicCodec<T>) {
    validatePath(path);
    this.zk = zk;
    this.path = path;
    this.#codec = codec;
    this.#retry = checkRetry('retry', options.retry);
    this.#acl = recipeACL(options.acl);
    const promoted = options.promotedToLock;
    if (promoted !== undefined) {
      validatePath(promoted.lockPath);
      if (promoted.lockPath === path) throw new InvalidArgumentError('promotedToLock.lockPath', `must differ from ${codec.noun}'s path`);
      const { timeout } = promoted;
      if (timeout !== undefined && (typeof timeout !== 'number' || !Number.isFinite(timeout) || timeout < 0)) {
        throw new InvalidArgumentError('promotedToLock.timeout', `must be a number of ms >= 0, got ${String(timeout)}`);
      }
      const mutex = new Mutex(zk, promoted.lockPath, this.#acl === undefined ? {} : { acl: this.#acl });
      this.#promoted = { mutex, timeout, retry: promoted.retry === undefined ? this.#retry : checkRetry('promotedToLock.retry', promoted.retry) };
    }
  }

  async get(options: AtomicCallOptions): Promise<AtomicResult<T>> {
    checkClient(this.zk);
    const { value } = await this.#read(options.signal);
    return { succeeded: true, preValue: value, postValue: value, stats: newStats() };
  }

  /** Optimistic tries, then (when configured) tries under the promoted mutex (Curator's `trySet(MakeValue)`). */
  async change(make: (value: T) => T, options: AtomicCallOptions): Promise<AtomicResult<T>> {
    checkClient(this.zk);
    const { signal } = options;
    const result = this.#working();
    const t0 = performance.now();
    await this.#tries(make, result, this.#retry, 'optimisticTries', signal);
    result.stats.optimisticMs = Math.round(performance.now() - t0);
    if (result.succeeded || this.#promoted === undefined) return result;
    const t1 = performance.now();
    try {
      const { mutex, timeout, retry } = this.#promoted;
      let lease;
      try {
        lease = await mutex.acquire({ ...(timeout === undefined ? {} : { timeout }), ...(signal === undefined ? {} : { signal }) });
      } catch (err) {
        if (err instanceof LockTimeoutError) return result; // Curator: acquire(time) false, not succeeded
        throw err;
      }
      try {
        await this.#tries(make, result, retry, 'promotedTries', signal);
      } finally {
        await lease.release();
      }
      return result;
    } finally {
      result.stats.promotedMs = Math.round(performance.now() - t1);
    }
  }

  /** One try: `next` only if the value is `expected` (an absent node reads as the codec's `absent`, and is created). */
  async compareAndSet(expected: T, next: T, options: AtomicCallOptions): Promise<AtomicResult<T>> {
    checkClient(this.zk);
    const result = this.#working();
    const t0 = performance.now();
    result.stats.optimisticTries = 1;
    const read = await this.#read(options.signal);
    result.preValue = read.value;
    result.postValue = read.value;
    if (this.#codec.equals(read.value, expected)) await this.#write(read, next, result, options.signal);
    result.stats.optimisticMs = Math.round(performance.now() - t0);
    return result;
  }

  async initialize(value: T, options: AtomicCallOptions): Promise<boolean> {
    checkClient(this.zk);
    try {
      await this.zk.create(this.path, this.#codec.encode(value), this.#createOptions(options.signal));
      return true;
    } catch (err) {
      if (err instanceof NodeExistsError) return false;
      throw err;
    }
  }

  async forceSet(value: T, options: AtomicCallOptions): Promise<void> {
    const bytes = this.#codec.encode(value);
    checkClient(this.zk);
    for (;;) {
      try {
        await this.zk.setData(this.path, bytes, { signal: options.signal });
        return;
      } catch (err) {
        if (!(err instanceof NoNodeError)) throw err;
      }
      try {
        await this.zk.create(this.path, bytes, this.#createOptions(options.signal));
        return;
      } catch (err) {
        if (!(err instanceof NodeExistsError)) throw err;
      }
    }
  }

  #working(): Working<T> {
    return { succeeded: false, preValue: this.#codec.absent, postValue: this.#codec.absent, stats: newStats() };
  }

  #createOptions(signal: AbortSignal | undefined) {
    return { mode: CreateMode.PERSISTENT, parents: 'container' as const, acl: this.#acl, parentAcl: this.#acl, signal };
  }

  async #tries(make: (value: T) => T, result: Working<T>, retry: Required<AtomicRetry>, counter: 'optimisticTries' | 'promotedTries', signal: AbortSignal | undefined): Promise<void> {
    for (let i = 0; i < retry.maxTries; i++) {
      if (i > 0) await sleep(backoffDelay(retry, i), signal);
      signal?.throwIfAborted();
      result.stats[counter]++;
      const read = await this.#read(signal);
      result.preValue = read.value;
      result.postValue = read.value;
      if (await this.#write(read, make(read.value), result, signal)) return;
    }
  }

  /** The value and version (-1: absent), reads repeated across connection losses. */
  async #read(signal: AbortSignal | undefined): Promise<Read<T>> {
    for (;;) {
      try {
        const { data, stat } = await this.zk.getData(this.path, { signal });
        const value = this.#codec.decode(Buffer.from(data.buffer, data.byteOffset, data.byteLength));
        if (value === undefined) throw new AtomicValueError(this.path, 'corrupted', `${this.#codec.noun} ${this.path} holds ${data.length} bytes, not ${this.#codec.describe}`);
        return { value, version: stat.version };
      } catch (err) {
        if (err instanceof NoNodeError) return { value: this.#codec.absent, version: -1 };
        if (!(err instanceof ZooKeeperError) || !err.isRetryable) throw err;
        await connected(this.zk);
      }
    }
  }

  /**
   * One conditional write of `next` over what `read` saw. True when applied; false when another
   * writer came first (or, after a lost reply, when the node is provably unchanged).
   */
  async #write(read: Read<T>, next: T, result: Working<T>, signal: AbortSignal | undefined): Promise<boolean> {
    const bytes = this.#codec.encode(next);
    try {
      if (read.version < 0) await this.zk.create(this.path, bytes, this.#createOptions(signal));
      else await this.zk.setData(this.path, bytes, { version: read.version, signal });
    } catch (err) {
      if (err instanceof BadVersionError || err instanceof NodeExistsError || err instanceof NoNodeError) return false;
      if (!(err instanceof ZooKeeperError) || !err.isRetryable) throw err;
      if (err.notSent) return false; // never left the client: try again
      await connected(this.zk);
      const now = await this.#version();
      if (now === read.version) return false; // provably not applied
      throw new AtomicValueError(this.path, 'outcome-unknown', `the reply to the write of ${Buffer.isBuffer(next) ? `${next.length} bytes` : String(next)} to ${this.path} was lost and the node changed since: the change may or may not have been applied`, {
        cause: err,
        preValue: read.value,
        attempted: next,
      });
    }
    result.succeeded = true;
    result.postValue = next;
    return true;
  }

  async #version(): Promise<number> {
    for (;;) {
      try {
        return (await this.zk.exists(this.path))?.version ?? -1;
      } catch (err) {
        if (!(err instanceof ZooKeeperError) || !err.isRetryable) throw err;
        await connected(this.zk);
      }
    }
  }
}

function newStats(): AtomicStats {
  return { optimisticTries: 0, promotedTries: 0, optimisticMs: 0, promotedMs: 0 };
}

/**
 * AtomicLong: Curator's DistributedAtomicLong, wire-compatible with it.
 *
 * Layout (from the bytecode of curator-recipes 5.4, `DistributedAtomicValue` and
 * `DistributedAtomicLong`): one PERSISTENT node holding the value as 8 bytes, big-endian
 * (`ByteBuffer.putLong`), created with parents as containers; an absent node or empty data reads
 * as 0, 1 to 7 bytes are "corrupted". A change reads the node (data and version), computes the new
 * value and writes it with `setData(version)`, or `create` when the node was absent; BadVersion,
 * NodeExists or NoNode mean another writer came first: read again, up to the retry policy. When
 * the optimistic tries run out and a `PromotedToLock` is configured, it takes an
 * `InterProcessMutex` on the lock path (`_c_<uuid>-lock-<seq>` nodes, our {@link Mutex}) and tries
 * again under it, with its own retries. Java's long arithmetic wraps at 64 bits; so does ours.
 */
import { BadVersionError, CreateMode, InvalidArgumentError, NodeExistsError, NoNodeError, validatePath, ZooKeeperError, type ACL, type ZooKeeper } from '@zk/protocol';
import { AtomicValueError, LockTimeoutError } from './errors.js';
import { connected } from './internal/attempt.js';
import { checkClient } from './internal/client.js';
import { recipeACL } from './internal/acl.js';
import { Mutex } from './mutex.js';

/** How often to try, and how long to back off in between (full jitter: a random delay up to the cap). */
export interface AtomicRetry {
  /** Tries in all (default 10). */
  maxTries?: number;
  /** The first back-off cap, ms, doubled after each try (default 5). */
  baseDelay?: number;
  /** The largest back-off cap, ms (default 200). */
  maxDelay?: number;
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

/** Options of an {@link AtomicLong}. */
export interface AtomicLongOptions {
  /** The optimistic tries (Curator's `RetryPolicy` argument). */
  retry?: AtomicRetry;
  /** Promote to a mutex after the optimistic tries (Curator's `PromotedToLock`). Default: no. */
  promotedToLock?: PromotedToLock;
  /** ACL of the counter node, its container parents and the promoted mutex's nodes (default: the client's `acl` option). */
  acl?: readonly ACL[] | undefined;
}

/** What a change did (Curator's `AtomicValue`). */
export interface AtomicResult {
  /** Whether the change was applied. When false, nothing was written. */
  readonly succeeded: boolean;
  /** The value before the change (the last value read when it did not succeed). */
  readonly preValue: bigint;
  /** The value after the change (equal to `preValue` when it did not succeed). */
  readonly postValue: bigint;
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

const LONG_MIN = -(2n ** 63n);
const LONG_MAX = 2n ** 63n - 1n;

/** Encodes a value as Curator does: 8 bytes, big-endian (Java's `ByteBuffer.putLong`). */
export function encodeLong(value: bigint): Buffer {
  const bytes = Buffer.alloc(8);
  bytes.writeBigInt64BE(value);
  return bytes;
}

/**
 * Decodes a counter node's data as Curator does: empty (or no node) is 0, else the first 8 bytes,
 * big-endian, signed; `undefined` for 1 to 7 bytes (Curator's "Corrupted data").
 */
export function decodeLong(data: Uint8Array | null | undefined): bigint | undefined {
  if (!data || data.length === 0) return 0n;
  if (data.length < 8) return undefined;
  return Buffer.from(data.buffer, data.byteOffset, data.byteLength).readBigInt64BE(0);
}

function toLong(argument: string, value: unknown): bigint {
  if (typeof value === 'number' && Number.isSafeInteger(value)) return BigInt(value);
  if (typeof value === 'bigint' && value >= LONG_MIN && value <= LONG_MAX) return value;
  throw new InvalidArgumentError(argument, `must be a safe integer or a bigint in the range of a Java long, got ${String(value)}`);
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
interface Working {
  succeeded: boolean;
  preValue: bigint;
  postValue: bigint;
  stats: AtomicStats;
}

/**
 * A 64-bit counter in one ZooKeeper node: Curator's `DistributedAtomicLong` (same node, same
 * 8-byte big-endian encoding, same optimistic compare-and-set, same `PromotedToLock` mutex
 * layout), so Java and Node processes count on the same node without losing an increment.
 * Values are bigints (a Java long); inputs may be safe-integer numbers.
 *
 * Every change but `forceSet` reports a result rather than throwing when it loses: `succeeded`
 * false means nothing was written (the tries ran out, or the promoted mutex timed out), as in
 * Curator. Unlike Curator:
 * - a write whose reply is lost is not sent again blindly: when the node is still at the version
 *   read, the try is repeated; when it moved, the change may have been applied, and the call
 *   rejects with {@link AtomicValueError} (`outcome-unknown`, with `preValue` and `attempted`)
 *   instead of risking a double increment;
 * - `compareAndSet(0, x)` on an absent node (which reads as 0) creates it, where Curator's
 *   returns false although `get()` says 0;
 * - operations take a `signal`.
 *
 * @example
 * ```ts
 * const visits = new AtomicLong(zk, '/counters/visits', { promotedToLock: { lockPath: '/counters/visits-lock' } });
 * const { succeeded, postValue } = await visits.increment();
 * if (succeeded) console.log(`visit number ${postValue}`);
 * ```
 */
export class AtomicLong {
  /** The client. */
  readonly zk: ZooKeeper;
  /** The counter node's path. */
  readonly path: string;
  readonly #retry: Required<AtomicRetry>;
  readonly #promoted: { mutex: Mutex; timeout: number | undefined; retry: Required<AtomicRetry> } | undefined;
  readonly #acl: readonly ACL[] | undefined;

  /** Bad input (a path, retry settings, a lock path or timeout, an `acl`) throws InvalidArgumentError; nothing is sent here. */
  constructor(zk: ZooKeeper, path: string, options: AtomicLongOptions = {}) {
    validatePath(path);
    this.zk = zk;
    this.path = path;
    this.#retry = checkRetry('retry', options.retry);
    this.#acl = recipeACL(options.acl);
    const promoted = options.promotedToLock;
    if (promoted !== undefined) {
      validatePath(promoted.lockPath);
      if (promoted.lockPath === path) throw new InvalidArgumentError('promotedToLock.lockPath', 'must differ from the counter path');
      const { timeout } = promoted;
      if (timeout !== undefined && (typeof timeout !== 'number' || !Number.isFinite(timeout) || timeout < 0)) {
        throw new InvalidArgumentError('promotedToLock.timeout', `must be a number of ms >= 0, got ${String(timeout)}`);
      }
      const mutex = new Mutex(zk, promoted.lockPath, this.#acl === undefined ? {} : { acl: this.#acl });
      this.#promoted = { mutex, timeout, retry: promoted.retry === undefined ? this.#retry : checkRetry('promotedToLock.retry', promoted.retry) };
    }
  }

  /** The current value (0 when the node does not exist); `succeeded` is true. */
  async get(options: AtomicCallOptions = {}): Promise<AtomicResult> {
    checkClient(this.zk);
    const { value } = await this.#read(options.signal);
    return { succeeded: true, preValue: value, postValue: value, stats: newStats() };
  }

  /** Adds 1 (Curator's `increment`). */
  increment(options: AtomicCallOptions = {}): Promise<AtomicResult> {
    return this.add(1n, options);
  }

  /** Subtracts 1 (Curator's `decrement`). */
  decrement(options: AtomicCallOptions = {}): Promise<AtomicResult> {
    return this.add(-1n, options);
  }

  /** Adds `delta`, wrapping at 64 bits as Java does. */
  add(delta: bigint | number, options: AtomicCallOptions = {}): Promise<AtomicResult> {
    const d = toLong('delta', delta);
    return this.#change((v) => BigInt.asIntN(64, v + d), options);
  }

  /** Subtracts `delta`, wrapping at 64 bits as Java does. */
  subtract(delta: bigint | number, options: AtomicCallOptions = {}): Promise<AtomicResult> {
    const d = toLong('delta', delta);
    return this.#change((v) => BigInt.asIntN(64, v - d), options);
  }

  /** Sets `value` whatever the current one, through the same tries as `add` (Curator's `trySet`). */
  trySet(value: bigint | number, options: AtomicCallOptions = {}): Promise<AtomicResult> {
    const v = toLong('value', value);
    return this.#change(() => v, options);
  }

  /**
   * Sets `newValue` only if the value is `expected`, in one try (no retries, no promotion, as
   * Curator's `compareAndSet`). An absent node counts as 0.
   */
  async compareAndSet(expected: bigint | number, newValue: bigint | number, options: AtomicCallOptions = {}): Promise<AtomicResult> {
    const [e, n] = [toLong('expected', expected), toLong('newValue', newValue)];
    checkClient(this.zk);
    const result: Working = { succeeded: false, preValue: 0n, postValue: 0n, stats: newStats() };
    const t0 = performance.now();
    result.stats.optimisticTries = 1;
    const read = await this.#read(options.signal);
    result.preValue = read.value;
    result.postValue = read.value;
    if (read.value === e) await this.#write(read, n, result, options.signal);
    result.stats.optimisticMs = Math.round(performance.now() - t0);
    return result;
  }

  /** Creates the node with `value` unless it exists; true when it did (Curator's `initialize`). */
  async initialize(value: bigint | number, options: AtomicCallOptions = {}): Promise<boolean> {
    const v = toLong('value', value);
    checkClient(this.zk);
    try {
      await this.zk.create(this.path, encodeLong(v), this.#createOptions(options.signal));
      return true;
    } catch (err) {
      if (err instanceof NodeExistsError) return false;
      throw err;
    }
  }

  /** Sets `value` without any check (Curator's `forceSet`: a plain setData, or a create). */
  async forceSet(value: bigint | number, options: AtomicCallOptions = {}): Promise<void> {
    const bytes = encodeLong(toLong('value', value));
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

  #createOptions(signal: AbortSignal | undefined) {
    return { mode: CreateMode.PERSISTENT, parents: 'container' as const, acl: this.#acl, parentAcl: this.#acl, signal };
  }

  /** Optimistic tries, then (when configured) tries under the promoted mutex (Curator's `trySet(MakeValue)`). */
  async #change(make: (value: bigint) => bigint, options: AtomicCallOptions): Promise<AtomicResult> {
    checkClient(this.zk);
    const { signal } = options;
    const result: Working = { succeeded: false, preValue: 0n, postValue: 0n, stats: newStats() };
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

  async #tries(make: (value: bigint) => bigint, result: Working, retry: Required<AtomicRetry>, counter: 'optimisticTries' | 'promotedTries', signal: AbortSignal | undefined): Promise<void> {
    for (let i = 0; i < retry.maxTries; i++) {
      if (i > 0) await sleep(Math.random() * Math.min(retry.maxDelay, retry.baseDelay * 2 ** (i - 1)), signal);
      signal?.throwIfAborted();
      result.stats[counter]++;
      const read = await this.#read(signal);
      result.preValue = read.value;
      result.postValue = read.value;
      if (await this.#write(read, make(read.value), result, signal)) return;
    }
  }

  /** The value and version (-1: absent), reads repeated across connection losses. */
  async #read(signal: AbortSignal | undefined): Promise<{ value: bigint; version: number }> {
    for (;;) {
      try {
        const { data, stat } = await this.zk.getData(this.path, { signal });
        const value = decodeLong(data);
        if (value === undefined) throw new AtomicValueError(this.path, 'corrupted', `the counter ${this.path} holds ${data.length} bytes, not an 8-byte long`);
        return { value, version: stat.version };
      } catch (err) {
        if (err instanceof NoNodeError) return { value: 0n, version: -1 };
        if (!(err instanceof ZooKeeperError) || !err.isRetryable) throw err;
        await connected(this.zk);
      }
    }
  }

  /**
   * One conditional write of `next` over what `read` saw. True when applied; false when another
   * writer came first (or, after a lost reply, when the node is provably unchanged).
   */
  async #write(read: { value: bigint; version: number }, next: bigint, result: Working, signal: AbortSignal | undefined): Promise<boolean> {
    const bytes = encodeLong(next);
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
      throw new AtomicValueError(this.path, 'outcome-unknown', `the reply to the write of ${next} to ${this.path} was lost and the node changed since: the change may or may not have been applied`, {
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

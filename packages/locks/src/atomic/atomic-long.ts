/**
 * AtomicLong: Curator's DistributedAtomicLong, wire-compatible with it.
 *
 * Layout (from the bytecode of curator-recipes 5.4, `DistributedAtomicValue` and
 * `DistributedAtomicLong`): one PERSISTENT node holding the value as 8 bytes, big-endian
 * (`ByteBuffer.putLong`), created with parents as containers; an absent node or empty data reads
 * as 0, 1 to 7 bytes are "corrupted". The compare-and-set, the retries and the `PromotedToLock`
 * mutex are the atomic engine's (atomic-engine.ts). Java's long arithmetic wraps at 64
 * bits; so does ours.
 */
import { InvalidArgumentError, type ZooKeeper } from '@zk/protocol';
import { AtomicEngine, type AtomicCallOptions, type AtomicCodec, type AtomicOptions, type AtomicResult } from './atomic-engine.js';

export type { AtomicCallOptions, AtomicResult, AtomicRetry, AtomicStats, PromotedToLock } from './atomic-engine.js';

/** Options of an {@link AtomicLong}. */
export type AtomicLongOptions = AtomicOptions;

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

const LONG: AtomicCodec<bigint> = {
  absent: 0n,
  encode: encodeLong,
  decode: decodeLong,
  equals: (a, b) => a === b,
  noun: 'the counter',
  describe: 'an 8-byte long',
};

function toLong(argument: string, value: unknown): bigint {
  if (typeof value === 'number' && Number.isSafeInteger(value)) return BigInt(value);
  if (typeof value === 'bigint' && value >= LONG_MIN && value <= LONG_MAX) return value;
  throw new InvalidArgumentError(argument, `must be a safe integer or a bigint in the range of a Java long, got ${String(value)}`);
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
  readonly #engine: AtomicEngine<bigint>;

  /** Bad input (a path, retry settings, a lock path or timeout, an `acl`) throws InvalidArgumentError; nothing is sent here. */
  constructor(zk: ZooKeeper, path: string, options: AtomicLongOptions = {}) {
    this.#engine = new AtomicEngine(zk, path, options, LONG);
  }

  /** The client. */
  get zk(): ZooKeeper {
    return this.#engine.zk;
  }
  /** The counter node's path. */
  get path(): string {
    return this.#engine.path;
  }

  /** The current value (0 when the node does not exist); `succeeded` is true. */
  async get(options: AtomicCallOptions = {}): Promise<AtomicResult> {
    return this.#engine.get(options);
  }

  /** Adds 1 (Curator's `increment`). */
  async increment(options: AtomicCallOptions = {}): Promise<AtomicResult> {
    return this.add(1n, options);
  }

  /** Subtracts 1 (Curator's `decrement`). */
  async decrement(options: AtomicCallOptions = {}): Promise<AtomicResult> {
    return this.add(-1n, options);
  }

  /** Adds `delta`, wrapping at 64 bits as Java does. */
  async add(delta: bigint | number, options: AtomicCallOptions = {}): Promise<AtomicResult> {
    const d = toLong('delta', delta);
    return this.#engine.change((v) => BigInt.asIntN(64, v + d), options);
  }

  /** Subtracts `delta`, wrapping at 64 bits as Java does. */
  async subtract(delta: bigint | number, options: AtomicCallOptions = {}): Promise<AtomicResult> {
    const d = toLong('delta', delta);
    return this.#engine.change((v) => BigInt.asIntN(64, v - d), options);
  }

  /** Sets `value` whatever the current one, through the same tries as `add` (Curator's `trySet`). */
  async trySet(value: bigint | number, options: AtomicCallOptions = {}): Promise<AtomicResult> {
    const v = toLong('value', value);
    return this.#engine.change(() => v, options);
  }

  /**
   * Sets `newValue` only if the value is `expected`, in one try (no retries, no promotion, as
   * Curator's `compareAndSet`). An absent node counts as 0.
   */
  async compareAndSet(expected: bigint | number, newValue: bigint | number, options: AtomicCallOptions = {}): Promise<AtomicResult> {
    const [e, n] = [toLong('expected', expected), toLong('newValue', newValue)];
    return this.#engine.compareAndSet(e, n, options);
  }

  /** Creates the node with `value` unless it exists; true when it did (Curator's `initialize`). */
  async initialize(value: bigint | number, options: AtomicCallOptions = {}): Promise<boolean> {
    return this.#engine.initialize(toLong('value', value), options);
  }

  /** Sets `value` without any check (Curator's `forceSet`: a plain setData, or a create). */
  async forceSet(value: bigint | number, options: AtomicCallOptions = {}): Promise<void> {
    return this.#engine.forceSet(toLong('value', value), options);
  }
}

/**
 * AtomicInteger: Curator's DistributedAtomicInteger, wire-compatible with it: the same node and
 * engine as {@link AtomicLong}, the value as 4 bytes, big-endian (`ByteBuffer.putInt`); absent or
 * empty reads as 0, fewer than 4 bytes are "corrupted" (Curator reads the first 4 of longer data,
 * and so do we). Java's int arithmetic wraps at 32 bits; so does ours.
 */
import { InvalidArgumentError, type ZooKeeper } from '@zk/protocol';
import { AtomicEngine, type AtomicCallOptions, type AtomicCodec, type AtomicOptions, type AtomicResult } from './atomic-engine.js';

/** Options of an {@link AtomicInteger}. */
export type AtomicIntegerOptions = AtomicOptions;

/** Encodes a value as Curator does: 4 bytes, big-endian (Java's `ByteBuffer.putInt`). */
export function encodeInt(value: number): Buffer {
  const bytes = Buffer.alloc(4);
  bytes.writeInt32BE(value);
  return bytes;
}

/** Decodes as Curator does: empty is 0, else the first 4 bytes, big-endian, signed; `undefined` for 1 to 3 bytes. */
export function decodeInt(data: Uint8Array | null | undefined): number | undefined {
  if (!data || data.length === 0) return 0;
  if (data.length < 4) return undefined;
  return Buffer.from(data.buffer, data.byteOffset, data.byteLength).readInt32BE(0);
}

const INT: AtomicCodec<number> = {
  absent: 0,
  encode: encodeInt,
  decode: decodeInt,
  equals: (a, b) => a === b,
  noun: 'the counter',
  describe: 'a 4-byte int',
};

function toInt(argument: string, value: unknown): number {
  if (typeof value === 'number' && Number.isInteger(value) && value >= -(2 ** 31) && value <= 2 ** 31 - 1) return value;
  throw new InvalidArgumentError(argument, `must be an integer in the range of a Java int, got ${String(value)}`);
}

/**
 * A 32-bit counter in one ZooKeeper node: Curator's `DistributedAtomicInteger`, with the same
 * optimistic compare-and-set, `PromotedToLock` mutex, results and differences from Curator as
 * {@link AtomicLong} (which see). Values are numbers.
 *
 * @example
 * ```ts
 * const slots = new AtomicInteger(zk, '/counters/slots');
 * const { succeeded, preValue, postValue } = await slots.add(5);
 * ```
 */
export class AtomicInteger {
  readonly #engine: AtomicEngine<number>;

  /** Bad input (a path, retry settings, a lock path or timeout, an `acl`) throws InvalidArgumentError; nothing is sent here. */
  constructor(zk: ZooKeeper, path: string, options: AtomicIntegerOptions = {}) {
    this.#engine = new AtomicEngine(zk, path, options, INT);
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
  async get(options: AtomicCallOptions = {}): Promise<AtomicResult<number>> {
    return this.#engine.get(options);
  }

  /** Adds 1. */
  async increment(options: AtomicCallOptions = {}): Promise<AtomicResult<number>> {
    return this.add(1, options);
  }

  /** Subtracts 1. */
  async decrement(options: AtomicCallOptions = {}): Promise<AtomicResult<number>> {
    return this.add(-1, options);
  }

  /** Adds `delta`, wrapping at 32 bits as Java does. */
  async add(delta: number, options: AtomicCallOptions = {}): Promise<AtomicResult<number>> {
    const d = toInt('delta', delta);
    return this.#engine.change((v) => (v + d) | 0, options);
  }

  /** Subtracts `delta`, wrapping at 32 bits as Java does. */
  async subtract(delta: number, options: AtomicCallOptions = {}): Promise<AtomicResult<number>> {
    const d = toInt('delta', delta);
    return this.#engine.change((v) => (v - d) | 0, options);
  }

  /** Sets `value` whatever the current one, through the same tries as `add` (Curator's `trySet`). */
  async trySet(value: number, options: AtomicCallOptions = {}): Promise<AtomicResult<number>> {
    const v = toInt('value', value);
    return this.#engine.change(() => v, options);
  }

  /** Sets `newValue` only if the value is `expected`, in one try. An absent node counts as 0 (and is created). */
  async compareAndSet(expected: number, newValue: number, options: AtomicCallOptions = {}): Promise<AtomicResult<number>> {
    const [e, n] = [toInt('expected', expected), toInt('newValue', newValue)];
    return this.#engine.compareAndSet(e, n, options);
  }

  /** Creates the node with `value` unless it exists; true when it did. */
  async initialize(value: number, options: AtomicCallOptions = {}): Promise<boolean> {
    return this.#engine.initialize(toInt('value', value), options);
  }

  /** Sets `value` without any check (a plain setData, or a create). */
  async forceSet(value: number, options: AtomicCallOptions = {}): Promise<void> {
    return this.#engine.forceSet(toInt('value', value), options);
  }
}

/**
 * AtomicValue: Curator's DistributedAtomicValue, wire-compatible with it: the value is the node's
 * bytes as they are, changed by the same engine as {@link AtomicLong} (compare-and-set on the
 * node's version, retries, `PromotedToLock`). An absent node reads as `null`.
 */
import { InvalidArgumentError, type ZooKeeper } from '@zk/protocol';
import { AtomicEngine, type AtomicCallOptions, type AtomicCodec, type AtomicOptions, type AtomicResult } from './atomic-engine.js';

/** Options of an {@link AtomicValue}. */
export type AtomicValueOptions = AtomicOptions;

const BYTES: AtomicCodec<Buffer | null> = {
  absent: null,
  encode: (value) => value ?? Buffer.alloc(0),
  decode: (data) => Buffer.from(data), // a copy: the reply's buffer may be shared
  equals: (a, b) => (a === null || b === null ? a === b : a.equals(b)),
  noun: 'the value',
  describe: 'a value',
};

function toBytes(argument: string, value: unknown): Buffer {
  if (typeof value === 'string') return Buffer.from(value);
  if (value instanceof Uint8Array) return Buffer.from(value);
  throw new InvalidArgumentError(argument, `must be bytes (a Uint8Array or Buffer) or a string, got ${value === null ? 'null' : typeof value}`);
}

/**
 * Bytes in one ZooKeeper node, changed atomically: Curator's `DistributedAtomicValue`. Results
 * carry the bytes before and after (`null`: no node). Unlike Curator's, `compareAndSet(null, v)`
 * creates an absent node (Curator's fails there), and a write whose reply was lost is not sent
 * again blindly (see {@link AtomicLong}).
 *
 * @example
 * ```ts
 * const config = new AtomicValue(zk, '/app/config');
 * const now = await config.get();
 * const changed = await config.compareAndSet(now.preValue, JSON.stringify({ replicas: 3 }));
 * if (!changed.succeeded) console.log('someone else changed it first');
 * ```
 */
export class AtomicValue {
  readonly #engine: AtomicEngine<Buffer | null>;

  /** Bad input (a path, retry settings, a lock path or timeout, an `acl`) throws InvalidArgumentError; nothing is sent here. */
  constructor(zk: ZooKeeper, path: string, options: AtomicValueOptions = {}) {
    this.#engine = new AtomicEngine(zk, path, options, BYTES);
  }

  /** The client. */
  get zk(): ZooKeeper {
    return this.#engine.zk;
  }
  /** The value node's path. */
  get path(): string {
    return this.#engine.path;
  }

  /** The current bytes (`null` when the node does not exist); `succeeded` is true. */
  async get(options: AtomicCallOptions = {}): Promise<AtomicResult<Buffer | null>> {
    return this.#engine.get(options);
  }

  /** Sets `value` whatever the current one, through the retries (and promotion) (Curator's `trySet`). */
  async trySet(value: Uint8Array | string, options: AtomicCallOptions = {}): Promise<AtomicResult<Buffer | null>> {
    const v = toBytes('value', value);
    return this.#engine.change(() => v, options);
  }

  /**
   * Stores `newValue` from whatever is there, computed by `make` from the current bytes (`null`:
   * no node), through the retries and promotion: `make` may run several times.
   */
  async update(make: (current: Buffer | null) => Uint8Array | string, options: AtomicCallOptions = {}): Promise<AtomicResult<Buffer | null>> {
    if (typeof make !== 'function') throw new InvalidArgumentError('make', 'must be a function of the current bytes');
    return this.#engine.change((current) => toBytes('make()', make(current)), options);
  }

  /** Stores `newValue` only if the bytes are `expected` (`null`: no node, which is then created), in one try. */
  async compareAndSet(expected: Uint8Array | string | null, newValue: Uint8Array | string, options: AtomicCallOptions = {}): Promise<AtomicResult<Buffer | null>> {
    const e = expected === null ? null : toBytes('expected', expected);
    return this.#engine.compareAndSet(e, toBytes('newValue', newValue), options);
  }

  /** Creates the node with `value` unless it exists; true when it did. */
  async initialize(value: Uint8Array | string, options: AtomicCallOptions = {}): Promise<boolean> {
    return this.#engine.initialize(toBytes('value', value), options);
  }

  /** Stores `value` without any check (a plain setData, or a create). */
  async forceSet(value: Uint8Array | string, options: AtomicCallOptions = {}): Promise<void> {
    return this.#engine.forceSet(toBytes('value', value), options);
  }
}

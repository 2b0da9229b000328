/**
 * SharedCount: Curator's SharedCount (a SharedValue holding an int), wire-compatible with it.
 */
import { BadVersionError, ConnectionLossError, CreateMode, InvalidArgumentError, NodeExistsError, NoNodeError, parentPath, validatePath, type ACL, type CallOptions, type WatchedEvent, type ZooKeeper } from '@zk/protocol';
import { LockStateError, SharedCountError } from '../errors.js';
import { checkClient } from '../internal/client.js';
import { recipeACL } from '../internal/acl.js';
import { connected } from '../internal/attempt.js';
import { ensureContainers } from '../internal/engine.js';

/** Java's int range: the count is a 4-byte signed big-endian integer on the wire. */
const INT_MIN = -(2 ** 31);
const INT_MAX = 2 ** 31 - 1;

/**
 * What a {@link Semaphore} needs from a shared count: its current value and its changes. A
 * {@link SharedCount} is one; anything else that tracks a number may be too.
 */
export interface SharedCountReader {
  /** The current count. */
  readonly count: number;
  /** Calls `listener` with every new count (not with the current one); returns a function that stops it. */
  onChange(listener: (count: number) => void): () => void;
}

/** Encodes a count as Curator does: 4 bytes, big-endian (Java's `ByteBuffer.putInt`). */
export function encodeCount(count: number): Buffer {
  const bytes = Buffer.alloc(4);
  bytes.writeInt32BE(count);
  return bytes;
}

/**
 * Decodes a count node's data as Curator does (Java's `ByteBuffer.getInt`: the first 4 bytes,
 * big-endian, signed); `undefined` when there are fewer than 4 bytes (Curator throws there).
 */
export function decodeCount(data: Uint8Array): number | undefined {
  return data.length >= 4 ? Buffer.from(data.buffer, data.byteOffset, data.byteLength).readInt32BE(0) : undefined;
}

function validateCount(argument: string, n: unknown): asserts n is number {
  if (typeof n !== 'number' || !Number.isInteger(n) || n < INT_MIN || n > INT_MAX) {
    throw new InvalidArgumentError(argument, `must be an integer in -2^31..2^31-1 (a Java int), got ${String(n)}`);
  }
}

/** Options of a {@link SharedCount}. */
export interface SharedCountOptions {
  /**
   * ACL of the count node and of the container parents `start()` makes when they are missing
   * (default: the client's `acl` connect option, else OPEN_ACL_UNSAFE). With `CREATOR_ALL_ACL`
   * on an authenticated client, other identities can neither read nor change the count (a
   * read-only world entry, `[...CREATOR_ALL_ACL, ...READ_ACL_UNSAFE]`, lets them follow it).
   * Checked when the count is made (InvalidArgumentError).
   */
  acl?: readonly ACL[] | undefined;
}

/**
 * A number shared through one ZooKeeper node, kept current by a watch: Curator's `SharedCount`
 * (same node, same 4-byte big-endian encoding), so Java and Node processes read and change the
 * same count. A {@link Semaphore} can take its permit limit from one.
 *
 * `start()` creates the node with the seed if it does not exist (parents as containers) and reads
 * it; from then on `count` follows every change until `close()`. Changes made while disconnected
 * arrive when the session resumes; after the session expires the count stays at its last value
 * (a `ZooKeeper` client does not outlive its session). A later value of fewer than 4 bytes is
 * ignored (the last good count stays).
 *
 * @example
 * ```ts
 * await using permits = new SharedCount(zk, '/config/report-permits', 4);
 * await permits.start();
 * const semaphore = new Semaphore(zk, '/semaphores/report', { maxLeases: permits });
 * await permits.setCount(8); // every process's semaphore now admits 8
 * ```
 */
export class SharedCount implements SharedCountReader, AsyncDisposable {
  /** The client. */
  readonly zk: ZooKeeper;
  /** The count node's path. */
  readonly path: string;
  /** The value written when `start()` creates the node. */
  readonly seed: number;
  #state: 'latent' | 'starting' | 'started' | 'closed' = 'latent';
  #count: number;
  #version = -1;
  readonly #listeners = new Set<(count: number) => void>();
  /** A change arrived while `start()` was still running: followed once it is done. */
  #changedWhileStarting = false;
  readonly #acl: readonly ACL[] | undefined;
  readonly #onEvent = (e: WatchedEvent) => {
    if (e.type === 'DataWatchRemoved') return;
    if (this.#state === 'starting') this.#changedWhileStarting = true;
    else void this.#follow();
  };

  /** Bad input (a path, a seed outside Java's int range, an `acl`) throws InvalidArgumentError. Nothing is sent before `start()`. */
  constructor(zk: ZooKeeper, path: string, seed: number, options: SharedCountOptions = {}) {
    validatePath(path);
    validateCount('seed', seed);
    this.#acl = recipeACL(options.acl);
    this.zk = zk;
    this.path = path;
    this.seed = seed;
    this.#count = seed;
  }

  /** The current count (the seed before `start()` has read the node). */
  get count(): number {
    return this.#count;
  }

  /** The count node's data version the current count was read at (-1 before `start()`). */
  get version(): number {
    return this.#version;
  }

  /**
   * Creates the node with the seed unless it exists, reads it and starts following it. Rejects
   * with {@link SharedCountError} when the node holds fewer than 4 bytes, and with
   * {@link LockStateError} when started twice or after `close()`.
   */
  async start(options: CallOptions = {}): Promise<void> {
    if (this.#state !== 'latent') throw new LockStateError(this.path, `SharedCount ${this.path} was already ${this.#state === 'closed' ? 'closed' : 'started'}`);
    checkClient(this.zk);
    this.#state = 'starting';
    try {
      await this.#create(options);
      const { data, stat } = await this.zk.getData(this.path, { ...options, watch: this.#onEvent });
      const count = decodeCount(data);
      if (count === undefined || this.#closed()) {
        await this.#unwatch();
        if (count !== undefined) throw new LockStateError(this.path, `SharedCount ${this.path} was closed while starting`);
        throw new SharedCountError(this.path, `the shared count ${this.path} holds ${data.length} bytes, not a 4-byte count`);
      }
      this.#update(stat.version, count);
      this.#state = 'started';
      if (this.#changedWhileStarting) void this.#follow();
    } catch (err) {
      if (this.#state === 'starting') this.#state = 'latent';
      throw err;
    }
  }

  /** Sets the count, whatever it was (LockStateError unless started). */
  async setCount(count: number, options: CallOptions = {}): Promise<void> {
    validateCount('count', count);
    this.#assertStarted();
    const stat = await this.zk.setData(this.path, encodeCount(count), options);
    this.#update(stat.version, count);
  }

  /**
   * Sets the count only if the node is still at `expectedVersion` (default: the version of the
   * count this object holds). Resolves false when someone changed it first; `count` is then
   * refreshed.
   */
  async trySetCount(count: number, expectedVersion = this.#version, options: CallOptions = {}): Promise<boolean> {
    validateCount('count', count);
    this.#assertStarted();
    try {
      const stat = await this.zk.setData(this.path, encodeCount(count), { ...options, version: expectedVersion });
      this.#update(stat.version, count);
      return true;
    } catch (err) {
      if (!(err instanceof BadVersionError)) throw err;
      const { data, stat } = await this.zk.getData(this.path, options);
      const current = decodeCount(data);
      if (current !== undefined) this.#update(stat.version, current);
      return false;
    }
  }

  /** Calls `listener` with every new count; returns a function that stops it. */
  onChange(listener: (count: number) => void): () => void {
    this.#listeners.add(listener);
    return () => void this.#listeners.delete(listener);
  }

  /** Stops following the node (removes its watch) and drops the listeners. Idempotent. */
  async close(): Promise<void> {
    if (this.#state === 'closed') return;
    const wasStarted = this.#state !== 'latent';
    this.#state = 'closed';
    this.#listeners.clear();
    if (wasStarted) await this.#unwatch();
  }

  /** With `await using`, {@link SharedCount.close} at the end of the scope. */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  /** Read through a call: `close()` may run while `start()` awaits. */
  #closed(): boolean {
    return this.#state === 'closed';
  }

  #assertStarted(): void {
    if (this.#state !== 'started') throw new LockStateError(this.path, `SharedCount ${this.path} is ${this.#state === 'closed' ? 'closed' : 'not started'}`);
  }

  async #create(options: CallOptions): Promise<void> {
    for (let parents = 0; ; parents++) {
      try {
        await this.zk.create(this.path, encodeCount(this.seed), { ...options, mode: CreateMode.PERSISTENT, acl: this.#acl });
        return;
      } catch (err) {
        if (err instanceof NodeExistsError) return;
        if (!(err instanceof NoNodeError) || parents > 0) throw err;
        await ensureContainers(this.zk, parentPath(this.path) ?? '/', undefined, this.#acl);
      }
    }
  }

  /** After a watch event: read again with a new watch (or watch for the node's return once it is deleted). */
  async #follow(): Promise<void> {
    while (this.#state === 'started') {
      try {
        const { data, stat } = await this.zk.getData(this.path, { watch: this.#onEvent });
        if (this.#state !== 'started') return void (await this.#unwatch());
        const count = decodeCount(data);
        if (count !== undefined) this.#update(stat.version, count);
        return;
      } catch (err) {
        if (err instanceof NoNodeError) {
          // Deleted: an exists watch tells us when it comes back.
          const stat = await this.zk.exists(this.path, { watch: this.#onEvent }).catch(() => null);
          if (this.#state !== 'started') return void (await this.#unwatch());
          if (stat === null) return;
          continue;
        }
        if (!(err instanceof ConnectionLossError)) return;
        try {
          await connected(this.zk);
        } catch {
          return; // the session ended: the count stays at its last value
        }
      }
    }
  }

  #update(version: number, count: number): void {
    if (version <= this.#version) return; // an older read than the one we hold
    this.#version = version;
    if (count === this.#count) return;
    this.#count = count;
    for (const listener of [...this.#listeners]) listener(count);
  }

  async #unwatch(): Promise<void> {
    if (this.zk.state === 'connected') {
      try {
        return await this.zk.removeWatches(this.path, { kind: 'data', listener: this.#onEvent });
      } catch {
        // no watch left on the server (it fired), or cut off: drop the local registration
      }
    }
    this.zk.removeLocalWatch('data', this.path, this.#onEvent);
    this.zk.removeLocalWatch('exist', this.path, this.#onEvent);
  }
}

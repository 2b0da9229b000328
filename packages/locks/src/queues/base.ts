/**
 * What every queue shares: its options, Curator's `start()` (the queue path and the lock path
 * made persistent, parents as containers), the put of one node, and the consumer's take loop.
 *
 * The take loop lists the queue (no watch), tries the items in the layout's order, and only when
 * none could be taken lists again with a children watch and sleeps on it (and, in safe mode,
 * on a children watch of the lock path when an item was skipped because another consumer held
 * it: its lock vanishing, when that consumer's session ends, changes nothing in the queue path;
 * a lock already gone from the listing that set that watch means look again, not sleep).
 * A delay queue also sleeps until its next item is due. Nothing is polled.
 */
import { ConnectionLossError, CreateMode, InvalidArgumentError, NodeExistsError, NoNodeError, validatePath, type ACL, type ZooKeeper } from '@zk/protocol';
import { QueueAbortedError, QueueTimeoutError } from '../errors.js';
import { recipeACL } from '../internal/acl.js';
import { Attempt, type AttemptKind } from '../internal/attempt.js';
import { checkWaitOptions, isRetryable, NodeWatch, type BarrierWaitOptions } from '../internal/barrier-wait.js';
import { checkClient } from '../internal/client.js';
import { bytesSerializer, encodeItems, type QueueSerializer } from './item-codec.js';
import { removeItem, takeNormally, takeWithLock, type QueueContext, type QueueItem } from './item.js';
import { QueueIterator } from './iterator.js';
import { QUEUE_ITEM_NAME, type QueueLayout } from './names.js';

/** Options of a wait of a queue: `take`, `put`, `items`. */
export type QueueWaitOptions = BarrierWaitOptions;

/** Options of every queue. */
export interface QueueOptions<T> {
  /** Turns items into bytes and back (Curator's `QueueSerializer`). Default: {@link bytesSerializer} (items are Uint8Arrays). */
  serializer?: QueueSerializer<T>;
  /**
   * Safe mode (Curator's `QueueBuilder.lockPath`): a consumer locks an item under this path and
   * deletes it only once done, so an item whose consumer dies goes to another consumer. Every
   * consumer of the queue, Java's included, must use the same lock path. Default: none (an item
   * is deleted as it is taken; a consumer that dies loses it).
   */
  lockPath?: string;
  /**
   * Curator's `QueueBuilder.maxItems`: a put waits (within its timeout) while the queue holds this
   * many items or more. A soft bound, as Curator's: producers that look at the same moment may all
   * put. Default: no bound.
   */
  maxItems?: number;
  /**
   * ACL of every node the queue makes: items, locks, the queue and lock paths and their container
   * parents (default: the client's `acl` connect option, else OPEN_ACL_UNSAFE). Checked when the
   * queue is made (InvalidArgumentError).
   */
  acl?: readonly ACL[] | undefined;
}

function queueKind(doing: string, operation: 'take' | 'put'): AttemptKind {
  return { doing, timeout: (p, ms) => new QueueTimeoutError(p, ms, operation), aborted: (p, reason) => new QueueAbortedError(p, reason, operation) };
}
const TAKING = queueKind('taking from queue', 'take');
const PUTTING = queueKind('putting into queue', 'put');

/** The base of {@link Queue}, {@link PriorityQueue}, {@link DelayQueue} and {@link IdQueue}. */
export abstract class QueueBase<T> {
  /** The client. */
  readonly zk: ZooKeeper;
  /** The queue path: its items are the `queue-` children. */
  readonly path: string;
  /** The lock path of safe mode, if any. */
  readonly lockPath: string | undefined;
  readonly #serializer: QueueSerializer<T>;
  readonly #acl: readonly ACL[] | undefined;
  readonly #layout: QueueLayout;
  readonly #maxItems: number | undefined;
  #pathReady: Promise<void> | undefined;
  #lockPathReady: Promise<void> | undefined;
  readonly #ctx: QueueContext<T>;
  /** What is left of the last listing, for an append-only layout (see #takeLoop). */
  #rest: { names: readonly string[]; at: number } | undefined;

  /** @internal Bad input throws InvalidArgumentError; nothing is sent here. `layout`: the subclass's node names and order. */
  constructor(zk: ZooKeeper, path: string, options: QueueOptions<T>, layout: QueueLayout) {
    validatePath(path);
    if (typeof options !== 'object' || options === null) throw new InvalidArgumentError('options', 'must be an object');
    const { serializer = bytesSerializer as unknown as QueueSerializer<T>, lockPath } = options;
    if (typeof serializer !== 'object' || serializer === null || typeof serializer.serialize !== 'function' || typeof serializer.deserialize !== 'function') {
      throw new InvalidArgumentError('serializer', 'must have serialize(item) and deserialize(bytes) functions');
    }
    if (lockPath !== undefined) {
      validatePath(lockPath);
      if (lockPath === path || lockPath.startsWith(`${path}/`)) throw new InvalidArgumentError('lockPath', `must be outside the queue path ${path}`);
    }
    const { maxItems } = options;
    if (maxItems !== undefined && (typeof maxItems !== 'number' || !Number.isInteger(maxItems) || maxItems < 1 || maxItems > 2 ** 31 - 1)) {
      throw new InvalidArgumentError('maxItems', `must be an integer in 1..2^31-1, got ${String(maxItems)}`);
    }
    this.#maxItems = maxItems;
    this.zk = zk;
    this.path = path;
    this.lockPath = lockPath;
    this.#serializer = serializer;
    this.#acl = recipeACL(options.acl);
    this.#layout = layout;
    this.#ctx = { zk, path, lockPath, serializer, acl: this.#acl, ensureLockPath: (a) => ((this.#lockPathReady = undefined), this.#ensureLockPath(a)) };
  }

  /**
   * Takes the next item, waiting for one (Curator's consumer, one item at a time). Rejects with
   * {@link QueueTimeoutError} after `timeout` ms (`timeout: 0`: unless one can be taken at once),
   * {@link QueueAbortedError} on `signal`, {@link LeaseLostError} when the session ends (`ClientClosedError` when the client was closed), a
   * {@link QueueItemError} for an unreadable node (removed, as Curator does). A wait cut short
   * leaves no lock node and no watch behind, and takes no item. In safe mode, call
   * `item.complete()` when done (or `release()` to give it back).
   */
  async take(options: QueueWaitOptions = {}): Promise<QueueItem<T>> {
    checkWaitOptions(options);
    checkClient(this.zk);
    const attempt = new Attempt(this.zk, this.path, options.timeout, options.signal, TAKING);
    try {
      return await this.#takeLoop(attempt);
    } finally {
      attempt.end();
    }
  }

  /**
   * The items as an async iterable, pulled one at a time: nothing is taken until the loop asks
   * for the next item. In safe mode the item of one turn is completed (deleted) when the loop
   * asks for the next one, or by `item.complete()`; leaving the loop (`break`, a throw, the
   * signal, `[Symbol.asyncDispose]`) releases an item not completed, so it is delivered again to
   * some consumer. `signal` ends the wait for the next item with {@link QueueAbortedError}.
   *
   * @example
   * ```ts
   * for await (const item of queue.items({ signal })) await handle(item.value);
   * ```
   */
  items(options: Omit<QueueWaitOptions, 'timeout'> = {}): QueueIterator<T> {
    checkWaitOptions(options);
    checkClient(this.zk);
    return new QueueIterator((signal) => this.take({ signal }), options.signal);
  }

  /** Same as `items()`. */
  [Symbol.asyncIterator](): QueueIterator<T> {
    return this.items();
  }

  /** The item nodes' names in the order consumers take them (a delay queue's not yet due included). */
  async list(): Promise<string[]> {
    checkClient(this.zk);
    try {
      return this.#layout.order(await this.zk.getChildren(this.path), Date.now());
    } catch (err) {
      if (err instanceof NoNodeError) return [];
      throw err;
    }
  }

  /** Serializes `items` (refusing bad ones with InvalidArgumentError before any byte is sent) into a node's bytes. */
  protected encode(items: readonly T[], argument: string): Buffer {
    const payloads = items.map((item, i) => {
      try {
        return this.#serializer.serialize(item);
      } catch (err) {
        throw new InvalidArgumentError(items.length === 1 ? argument : `${argument}[${i}]`, err instanceof Error ? err.message : String(err));
      }
    });
    for (const [i, p] of payloads.entries()) if (!(p instanceof Uint8Array)) throw new InvalidArgumentError(`${argument}[${i}]`, 'the serializer must return a Uint8Array');
    return encodeItems(payloads);
  }

  /**
   * Creates the item node `<path>/<name><sequence>` holding `data`. A put cut short by its
   * timeout or signal while the create was in flight withdraws the node when its reply comes
   * (unless a consumer took it first). A connection loss is not retried: the node may or may not
   * exist, and a second create would make a second item (ConnectionLossError is thrown).
   */
  protected async putNode(name: string, data: Buffer, options: QueueWaitOptions): Promise<string> {
    checkWaitOptions(options);
    checkClient(this.zk);
    const attempt = new Attempt(this.zk, this.path, options.timeout, options.signal, PUTTING);
    try {
      for (let tries = 0; ; tries++) {
        attempt.check();
        await attempt.connected(new ConnectionLossError('not connected'));
        await this.#ensurePath(attempt);
        if (this.#maxItems !== undefined) await this.#untilRoom(attempt, this.#maxItems);
        const created = this.zk.create(`${this.path}/${name}`, data, { mode: CreateMode.PERSISTENT_SEQUENTIAL, acl: this.#acl });
        try {
          return await attempt.race(created);
        } catch (err) {
          if (err instanceof NoNodeError && tries < 2) {
            this.#pathReady = undefined; // the queue path was deleted: make it again
            continue;
          }
          if (err === attempt.reason) created.then((p) => this.zk.delete(p), () => undefined).catch(() => undefined);
          throw attempt.typed(err);
        }
      }
    } finally {
      attempt.end();
    }
  }

  /** Curator's `blockIfMaxed`: waits while the queue holds `maxItems` items or more, on a children watch. */
  async #untilRoom(attempt: Attempt, maxItems: number): Promise<void> {
    for (;;) {
      const watch = new NodeWatch(this.zk, this.path);
      try {
        const children = await attempt.race(watch.getChildren());
        if (children.filter((c) => c.startsWith(QUEUE_ITEM_NAME)).length < maxItems) return;
        await attempt.sleep(watch.fired);
      } catch (err) {
        if (!isRetryable(err)) throw err;
        await attempt.connected(err);
      } finally {
        await watch.remove();
      }
    }
  }

  /** Deletes the items whose names `match` accepts (in safe mode each after locking it); how many were deleted here. */
  protected async removeWhere(match: (name: string) => boolean, options: QueueWaitOptions): Promise<number> {
    checkWaitOptions(options);
    checkClient(this.zk);
    const attempt = new Attempt(this.zk, this.path, options.timeout, options.signal, TAKING);
    try {
      let removed = 0;
      for (const name of (await this.list()).filter(match)) if (await removeItem(this.#ctx, name, attempt)) removed++;
      return removed;
    } catch (err) {
      throw attempt.typed(err);
    } finally {
      attempt.end();
    }
  }

  async #takeLoop(attempt: Attempt): Promise<QueueItem<T>> {
    const take = this.lockPath === undefined ? takeNormally : takeWithLock;
    for (;;) {
      const watches: NodeWatch[] = [];
      try {
        attempt.check();
        // The rest of the last listing first (an append-only layout: nothing put since can come
        // before them): one round trip less per item while the queue is not empty. An item another
        // consumer took meanwhile is simply not there (take answers undefined).
        for (let name = this.#next(); name !== undefined; name = this.#next()) {
          const item = await take(this.#ctx, name, attempt);
          if (item) return item;
          attempt.check();
        }
        await this.#ensurePath(attempt);
        if (this.lockPath !== undefined) await this.#ensureLockPath(attempt);
        for (const watched of [false, true]) {
          const watch = watched ? new NodeWatch(this.zk, this.path) : undefined;
          if (watch) watches.push(watch);
          const children = await attempt.race(watch ? watch.getChildren() : this.zk.getChildren(this.path));
          const now = Date.now();
          let due = Infinity;
          const held: string[] = [];
          const ordered = this.#layout.order(children, now);
          for (let i = 0; i < ordered.length; i++) {
            const name = ordered[i]!;
            const wait = this.#layout.delay(name, now);
            if (wait > 0) {
              due = Math.min(due, wait);
              continue;
            }
            const item = await take(this.#ctx, name, attempt);
            if (item) {
              if (this.#layout.appendOnly) this.#rest = { names: ordered, at: i + 1 };
              return item;
            }
            held.push(name);
          }
          if (!watch) continue;
          let locksStand = true;
          if (held.length > 0 && this.lockPath !== undefined) {
            const locks = new NodeWatch(this.zk, this.lockPath);
            watches.push(locks);
            // A lock deleted after our create found it (NodeExists) and before this watch was set
            // fires nothing: its absence from the listing the watch came with is the only sign.
            const locked = new Set(await attempt.race(locks.getChildren()));
            locksStand = held.every((name) => locked.has(name));
          }
          if (locksStand) await this.#sleep(attempt, watches, due); // else: list again at once
        }
      } catch (err) {
        if (err instanceof NoNodeError) {
          // the queue path or the lock path was deleted: make them again
          this.#pathReady = this.#lockPathReady = undefined;
          continue;
        }
        if (!isRetryable(err)) throw attempt.typed(err);
        await attempt.connected(err);
      } finally {
        await Promise.all(watches.map((w) => w.remove()));
      }
    }
  }

  /** The next name left from the last listing (see #takeLoop), if any. */
  #next(): string | undefined {
    const rest = this.#rest;
    if (rest === undefined) return undefined;
    if (rest.at >= rest.names.length) {
      this.#rest = undefined;
      return undefined;
    }
    return rest.names[rest.at++];
  }

  /** Sleeps until a watch fires or the next delayed item is due (`due` ms from now). */
  async #sleep(attempt: Attempt, watches: readonly NodeWatch[], due: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const wake: Promise<void>[] = watches.map((w) => w.fired);
    if (Number.isFinite(due)) wake.push(new Promise((resolve) => (timer = setTimeout(resolve, Math.min(due + 1, 2 ** 31 - 1)))));
    try {
      await attempt.sleep(Promise.race(wake));
    } finally {
      clearTimeout(timer);
    }
  }

  /** Curator's `start()`: the queue path, PERSISTENT, parents as containers; once per queue object. */
  #ensurePath(attempt: Attempt): Promise<void> {
    this.#pathReady ??= this.#makePath(this.path).catch((err: unknown) => {
      this.#pathReady = undefined;
      throw err;
    });
    return attempt.race(this.#pathReady);
  }

  #ensureLockPath(attempt: Attempt): Promise<void> {
    this.#lockPathReady ??= this.#makePath(this.lockPath!).catch((err: unknown) => {
      this.#lockPathReady = undefined;
      throw err;
    });
    return attempt.race(this.#lockPathReady);
  }

  async #makePath(path: string): Promise<void> {
    try {
      await this.zk.create(path, null, { mode: CreateMode.PERSISTENT, parents: 'container', acl: this.#acl, parentAcl: this.#acl });
    } catch (err) {
      if (!(err instanceof NodeExistsError)) throw err;
    }
  }
}

/**
 * Taking one item node, and finishing with it: Curator 5.4's `processNormally` and
 * `processWithLockSafety` (from the bytecode), so our consumers and Curator's share a queue.
 *
 * Without a lock path (Curator's default): read the node (`getData`, with its version), delete it
 * at that version, then hand it over. A delete that fails with NoNode or BadVersion means another
 * consumer took it. The item is gone before it is processed: at most once.
 *
 * With a lock path (Curator's `QueueBuilder.lockPath`, "safe" mode): create the EPHEMERAL node
 * `<lockPath>/<item name>` (NodeExists: another consumer has it; skip), read the item (NoNode:
 * finished by someone else; drop the lock and skip), hand it over, and only once the consumer
 * has finished delete the item and then the lock. Curator deletes them one after the other; we
 * delete both in one multi, which other consumers cannot tell apart (they see the lock until the
 * item is gone) and which cannot delete an item whose lock we no longer hold. If the consumer's
 * session ends first, its lock goes with it and the item, still there, goes to another consumer.
 */
import { ClientClosedError, ConnectionLossError, CreateMode, NodeExistsError, NoNodeError, SessionExpiredError, TransactionError, ZooKeeperError, BadVersionError, type ACL, type ZooKeeper } from '@zk/protocol';
import { LeaseLostError, QueueItemError } from '../errors.js';
import { connected, deleteGuaranteed, removeNode, type Attempt } from '../internal/attempt.js';
import { decodeItems, type QueueSerializer } from './item-codec.js';

/** What taking an item needs to know of its queue. */
export interface QueueContext<T> {
  readonly zk: ZooKeeper;
  readonly path: string;
  readonly lockPath: string | undefined;
  readonly serializer: QueueSerializer<T>;
  readonly acl: readonly ACL[] | undefined;
  /** Creates the lock path when it is missing (Curator's `start()` does it up front). */
  ensureLockPath(attempt: Attempt): Promise<void>;
}

/**
 * One node taken from a queue: its values (one, or several for a node written by `putMulti`).
 *
 * In safe mode (a `lockPath`) the node stays in the queue, locked for this consumer, until
 * {@link QueueItem.complete} (or the iterator being asked for the next item) deletes it;
 * {@link QueueItem.release}, `[Symbol.asyncDispose]` without a complete, or the end of this
 * session leave it to another consumer. Without a lock path it was deleted before it was handed
 * over, and both calls do nothing.
 */
export class QueueItem<T> {
  /** The item (the first value of a node written by `putMulti`). */
  readonly value: T;
  /** Every value of the node, in the order they were put. */
  readonly values: readonly T[];
  /** The item node's path. */
  readonly node: string;
  readonly #zk: ZooKeeper;
  readonly #lockNode: string | undefined;
  #state: 'held' | 'completed' | 'released' = 'held';
  #settling: Promise<void> | undefined;

  /** @internal Made by the queue's consumers only. */
  constructor(zk: ZooKeeper, node: string, values: T[], lockNode: string | undefined) {
    this.#zk = zk;
    this.node = node;
    this.values = Object.freeze(values);
    this.value = values[0] as T;
    this.#lockNode = lockNode;
    if (lockNode === undefined) this.#state = 'completed';
  }

  /** Whether the item is still held (safe mode, neither completed nor released). */
  get held(): boolean {
    return this.#state === 'held';
  }

  /**
   * Done with the item: in safe mode, deletes it and its lock (one multi; retried after a
   * connection loss, which is safe because it deletes only while our lock is there). Rejects with
   * {@link LeaseLostError} when the lock was lost meanwhile (session ended or lock node deleted):
   * the item is then another consumer's and will be processed again. Idempotent.
   */
  complete(): Promise<void> {
    if (this.#state !== 'held') return this.#settling ?? Promise.resolve();
    this.#state = 'completed';
    this.#settling = completeNode(this.#zk, this.node, this.#lockNode!).then(() => undefined);
    return this.#settling;
  }

  /** Gives the item back (safe mode): deletes only the lock, so another consumer takes the item. Idempotent; never throws. */
  release(): Promise<void> {
    if (this.#state !== 'held') return this.#settling ?? Promise.resolve();
    this.#state = 'released';
    this.#settling = removeNode(this.#zk, this.#lockNode!, undefined);
    return this.#settling;
  }

  /** Releases the item unless it was completed. */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.release();
  }
}

/** Deletes the item and our lock in one multi; false when the item was gone already. */
async function completeNode(zk: ZooKeeper, node: string, lockNode: string): Promise<boolean> {
  for (let tries = 0; ; tries++) {
    try {
      await zk.transaction().delete(node).delete(lockNode).commit();
      return true;
    } catch (err) {
      if (err instanceof TransactionError && err.failedIndex === 0 && err.opError instanceof NoNodeError) {
        // The item is gone already: our earlier try went through (after a connection loss), or
        // someone deleted it by hand.
        await deleteGuaranteed(zk, lockNode);
        return tries > 0;
      }
      if (err instanceof TransactionError && err.failedIndex === 1 && err.opError instanceof NoNodeError) {
        throw new LeaseLostError(node, `the lock ${lockNode} of queue item ${node} is gone: another consumer may take the item again`, { cause: err });
      }
      if (err instanceof SessionExpiredError || err instanceof ClientClosedError) {
        throw new LeaseLostError(node, `session ended before queue item ${node} was completed: another consumer will take it again`, { cause: err });
      }
      if (!(err instanceof ConnectionLossError || (err instanceof ZooKeeperError && err.isRetryable))) throw err;
    }
    try {
      await connected(zk);
    } catch (err) {
      throw new LeaseLostError(node, `session ended before queue item ${node} was completed: another consumer will take it again`, { cause: err });
    }
  }
}

/** The values of a node's bytes, or a QueueItemError. */
function decode<T>(ctx: QueueContext<T>, node: string, data: Uint8Array): T[] | QueueItemError {
  try {
    return decodeItems(data).map((p) => ctx.serializer.deserialize(p));
  } catch (err) {
    return new QueueItemError(ctx.path, node, data, err instanceof Error ? err.message : String(err), { cause: err });
  }
}

/**
 * Takes the item `name` as Curator's `processNormally` does; undefined when another consumer got
 * it first. The delete is never cut short by the attempt (an item deleted but not handed over
 * would be lost): once it is sent, its answer is awaited.
 */
export async function takeNormally<T>(ctx: QueueContext<T>, name: string, attempt: Attempt): Promise<QueueItem<T> | undefined> {
  const node = `${ctx.path}/${name}`;
  let read;
  try {
    read = await attempt.race(ctx.zk.getData(node));
  } catch (err) {
    if (err instanceof NoNodeError) return undefined;
    throw err;
  }
  for (;;) {
    try {
      await ctx.zk.delete(node, { version: read.stat.version });
      break;
    } catch (err) {
      if (err instanceof NoNodeError || err instanceof BadVersionError) return undefined;
      if (!(err instanceof ConnectionLossError)) throw err;
      // Unknown outcome: still there at the version read means it did not happen. Gone means
      // ours or another consumer's delete; there is no telling (Curator cannot tell either).
      await connected(ctx.zk);
      const stat = await ctx.zk.exists(node);
      if (stat === null || stat.version !== read.stat.version) return undefined;
    }
  }
  const values = decode(ctx, node, read.data);
  if (values instanceof QueueItemError) throw values;
  return new QueueItem(ctx.zk, node, values, undefined);
}

/**
 * Takes the item `name` as Curator's `processWithLockSafety` does; undefined when another
 * consumer holds or finished it. Every exit that does not hand the item over removes our lock.
 */
export async function takeWithLock<T>(ctx: QueueContext<T>, name: string, attempt: Attempt): Promise<QueueItem<T> | undefined> {
  const node = `${ctx.path}/${name}`;
  const lockNode = `${ctx.lockPath!}/${name}`;
  if (!(await createLock(ctx, lockNode, attempt))) return undefined;
  let data: Uint8Array;
  try {
    data = (await attempt.race(ctx.zk.getData(node))).data;
  } catch (err) {
    await removeNode(ctx.zk, lockNode, err);
    if (err instanceof NoNodeError) return undefined;
    throw err;
  }
  const values = decode(ctx, node, data);
  if (values instanceof QueueItemError) {
    // As Curator: an unreadable item is logged and deleted (not requeued); ours is thrown with its bytes.
    await completeNode(ctx.zk, node, lockNode).catch(() => undefined);
    throw values;
  }
  return new QueueItem(ctx.zk, node, values, lockNode);
}

/** Creates our lock node; false when another consumer holds it. */
async function createLock<T>(ctx: QueueContext<T>, lockNode: string, attempt: Attempt): Promise<boolean> {
  for (;;) {
    const created = ctx.zk.create(lockNode, null, { mode: CreateMode.EPHEMERAL, acl: ctx.acl });
    try {
      await attempt.race(created);
      if (attempt.stopped) throw attempt.reason;
      return true;
    } catch (err) {
      if (err instanceof NodeExistsError) return false;
      if (err instanceof NoNodeError) {
        await ctx.ensureLockPath(attempt);
        continue;
      }
      if (err === attempt.reason) {
        // Cut short while the create was in flight: delete whatever it made, before rejecting
        // when connected (so no lock node is left when the wait ends), else in the background.
        if (ctx.zk.state !== 'connected') created.then((p) => deleteGuaranteed(ctx.zk, p), () => undefined).catch(() => undefined);
        else {
          const made = await created.catch(() => undefined);
          if (made !== undefined) await removeNode(ctx.zk, made, err);
        }
        throw err;
      }
      if (!(err instanceof ConnectionLossError)) throw err;
      // Unknown outcome: the lock is ours if it exists with our session as its owner.
      await attempt.connected(err);
      const stat = await attempt.race(ctx.zk.exists(lockNode));
      if (stat === null) continue;
      return stat.ephemeralOwner === ctx.zk.sessionId;
    }
  }
}

/**
 * Deletes the item `name` without reading it (Curator's `tryRemove`): in safe mode only after
 * locking it, so an item a consumer is processing is not removed under it. True when it was
 * deleted here.
 */
export async function removeItem<T>(ctx: QueueContext<T>, name: string, attempt: Attempt): Promise<boolean> {
  const node = `${ctx.path}/${name}`;
  if (ctx.lockPath === undefined) {
    try {
      await ctx.zk.delete(node);
      return true;
    } catch (err) {
      if (err instanceof NoNodeError) return false;
      throw err;
    }
  }
  const lockNode = `${ctx.lockPath}/${name}`;
  if (!(await createLock(ctx, lockNode, attempt))) return false;
  return completeNode(ctx.zk, node, lockNode);
}

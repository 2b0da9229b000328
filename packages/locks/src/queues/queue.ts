/**
 * Queue: Curator's DistributedQueue, wire-compatible with it.
 */
import { InvalidArgumentError, type ZooKeeper } from '@zk/protocol';
import { QueueBase, type QueueOptions, type QueueWaitOptions } from './base.js';
import { FIFO_LAYOUT, QUEUE_ITEM_NAME } from './names.js';

/**
 * A first-in first-out queue of items in ZooKeeper: Curator 5.4's `DistributedQueue` on the same
 * nodes and bytes, so Java and Node processes put into and take from one queue. (Named like the
 * other recipes of this package, after what it is rather than Curator's class: `Mutex` for
 * `InterProcessMutex`, `Barrier` for `DistributedBarrier`; the Curator name is in each JSDoc.)
 *
 * Each `put` makes one PERSISTENT_SEQUENTIAL node `<path>/queue-<sequence>` holding the item in
 * Curator's `ItemSerializer` framing around the serializer's bytes; consumers take the nodes in
 * name order. Consuming is pulling: {@link Queue.take} or `for await (... of queue.items())`,
 * one item at a time, woken by a children watch (no polling).
 *
 * What it does not promise: without `lockPath` an item is deleted as it is taken, so a consumer
 * that dies while processing loses it (at most once). With `lockPath` (safe mode, Curator's
 * `lockPath`) an item is deleted only once its consumer is done, and goes to another consumer if
 * that one's session ends first (at least once: a consumer that dies after its work but before
 * the delete has its item processed again). Order is put order for items taken one at a time;
 * several consumers process neighbouring items concurrently.
 *
 * Unlike Curator: a put whose reply is lost is not retried (a second create would be a second
 * item; ConnectionLossError tells the caller); a consumer's failure releases the item in place
 * (Curator's default `ErrorMode.REQUEUE` moves it to the back of the queue).
 *
 * @example
 * ```ts
 * const queue = new Queue(zk, '/jobs', { serializer: stringSerializer, lockPath: '/jobs-locks' });
 * await queue.put('job 1');
 * const item = await queue.take({ timeout: 5_000 });
 * await run(item.value);
 * await item.complete();
 * ```
 */
export class Queue<T = Uint8Array> extends QueueBase<T> {
  /** Bad input (paths, options, serializer, acl) throws InvalidArgumentError; nothing is sent here. */
  constructor(zk: ZooKeeper, path: string, options: QueueOptions<T> = {}) {
    super(zk, path, options, FIFO_LAYOUT);
  }

  /**
   * Adds `item` (Curator's `put`); resolves with the new node's path. With `maxItems`, waits for
   * room first; `timeout` and `signal` bound the whole put (QueueTimeoutError / QueueAbortedError,
   * `operation: 'put'`). An item the serializer refuses throws InvalidArgumentError before any
   * byte is sent.
   */
  async put(item: T, options: QueueWaitOptions = {}): Promise<string> {
    return this.putNode(QUEUE_ITEM_NAME, this.encode([item], 'item'), options);
  }

  /** Adds `items` as one node (Curator's `putMulti`): a consumer takes them together, as one {@link QueueItem}'s `values`. */
  async putMulti(items: readonly T[], options: QueueWaitOptions = {}): Promise<string> {
    if (!Array.isArray(items) || items.length === 0) throw new InvalidArgumentError('items', 'must be a non-empty array');
    return this.putNode(QUEUE_ITEM_NAME, this.encode(items, 'items'), options);
  }
}

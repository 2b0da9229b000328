/**
 * PriorityQueue: Curator's DistributedPriorityQueue, wire-compatible with it.
 */
import { InvalidArgumentError, type ZooKeeper } from '@zk/protocol';
import { QueueBase, type QueueOptions, type QueueWaitOptions } from './base.js';
import { PLAIN_LAYOUT, priorityToString, QUEUE_ITEM_NAME } from './names.js';

function checkPriority(priority: unknown): asserts priority is number {
  if (typeof priority !== 'number' || !Number.isInteger(priority) || priority < -(2 ** 31) || priority > 2 ** 31 - 1) {
    throw new InvalidArgumentError('priority', `must be an integer in -2^31..2^31-1 (a Java int), got ${String(priority)}`);
  }
}

/**
 * A queue whose consumers take the item of the lowest priority value first: Curator 5.4's
 * `DistributedPriorityQueue` on the same nodes (`queue-<sign><8 hex digits of the priority><sequence>`,
 * taken in name order, so equal priorities come out in put order) and bytes. Everything else,
 * safe mode included, is as in {@link Queue}.
 *
 * The order holds among the items present when a consumer looks: an item put while consumers are
 * busy is taken before lower-priority items only once a consumer lists the queue again (each take
 * lists it).
 *
 * @example
 * ```ts
 * const queue = new PriorityQueue(zk, '/tasks', { serializer: stringSerializer });
 * await queue.put('later', 10);
 * await queue.put('first', -5);
 * (await queue.take()).value; // 'first'
 * ```
 */
export class PriorityQueue<T = Uint8Array> extends QueueBase<T> {
  /** Bad input throws InvalidArgumentError; nothing is sent here. */
  constructor(zk: ZooKeeper, path: string, options: QueueOptions<T> = {}) {
    super(zk, path, options, PLAIN_LAYOUT);
  }

  /** Adds `item` with `priority` (a Java int; lower values are taken first). */
  async put(item: T, priority: number, options: QueueWaitOptions = {}): Promise<string> {
    checkPriority(priority);
    return this.putNode(QUEUE_ITEM_NAME + priorityToString(priority), this.encode([item], 'item'), options);
  }

  /** Adds `items` as one node with `priority` (Curator's `putMulti`). */
  async putMulti(items: readonly T[], priority: number, options: QueueWaitOptions = {}): Promise<string> {
    if (!Array.isArray(items) || items.length === 0) throw new InvalidArgumentError('items', 'must be a non-empty array');
    checkPriority(priority);
    return this.putNode(QUEUE_ITEM_NAME + priorityToString(priority), this.encode(items, 'items'), options);
  }
}

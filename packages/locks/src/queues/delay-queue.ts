/**
 * DelayQueue: Curator's DistributedDelayQueue, wire-compatible with it.
 */
import { InvalidArgumentError, type ZooKeeper } from '@zk/protocol';
import { QueueBase, type QueueOptions, type QueueWaitOptions } from './base.js';
import { DELAY_LAYOUT, epochToString, QUEUE_ITEM_NAME } from './names.js';

function epochOfArgument(delayUntil: unknown): number {
  const ms = delayUntil instanceof Date ? delayUntil.getTime() : delayUntil;
  if (typeof ms !== 'number' || !Number.isSafeInteger(ms) || ms <= 0) {
    throw new InvalidArgumentError('delayUntil', `must be a Date or a time in ms since the epoch (an integer > 0, as Curator requires), got ${String(delayUntil)}`);
  }
  return ms;
}

/**
 * A queue whose items are taken no earlier than a time given at put: Curator 5.4's
 * `DistributedDelayQueue` on the same nodes (`queue-|<due time in ms, hex>|<sequence>`, ordered
 * by that time) and bytes. Everything else, safe mode included, is as in {@link Queue}.
 *
 * The time is compared with each consumer's own clock (`Date.now()`, Curator's
 * `System.currentTimeMillis()`), so skew between machines moves it. A waiting consumer sleeps
 * until the earliest item is due or the queue changes, whichever comes first.
 *
 * @example
 * ```ts
 * const queue = new DelayQueue(zk, '/reminders', { serializer: stringSerializer });
 * await queue.put('in a minute', Date.now() + 60_000);
 * ```
 */
export class DelayQueue<T = Uint8Array> extends QueueBase<T> {
  /** Bad input throws InvalidArgumentError; nothing is sent here. */
  constructor(zk: ZooKeeper, path: string, options: QueueOptions<T> = {}) {
    super(zk, path, options, DELAY_LAYOUT);
  }

  /** Adds `item`, to be taken from `delayUntil` (a Date or ms since the epoch) on. */
  async put(item: T, delayUntil: number | Date, options: QueueWaitOptions = {}): Promise<string> {
    const epoch = epochOfArgument(delayUntil);
    return this.putNode(QUEUE_ITEM_NAME + epochToString(epoch), this.encode([item], 'item'), options);
  }

  /** Adds `items` as one node, due at `delayUntil` (Curator's `putMulti`). */
  async putMulti(items: readonly T[], delayUntil: number | Date, options: QueueWaitOptions = {}): Promise<string> {
    if (!Array.isArray(items) || items.length === 0) throw new InvalidArgumentError('items', 'must be a non-empty array');
    const epoch = epochOfArgument(delayUntil);
    return this.putNode(QUEUE_ITEM_NAME + epochToString(epoch), this.encode(items, 'items'), options);
  }
}

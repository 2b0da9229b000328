/**
 * IdQueue: Curator's DistributedIdQueue, wire-compatible with it.
 */
import { InvalidArgumentError, validatePath, type ZooKeeper } from '@zk/protocol';
import { QueueBase, type QueueOptions, type QueueWaitOptions } from './base.js';
import { fixId, ID_LAYOUT, parseId, QUEUE_ITEM_NAME, SEPARATOR } from './names.js';

/** The id as it appears in the node name, or InvalidArgumentError. */
function nodeId(id: unknown): string {
  if (typeof id !== 'string' || id.length === 0) throw new InvalidArgumentError('id', `must be a non-empty string, got ${typeof id === 'string' ? 'an empty string' : typeof id}`);
  const fixed = fixId(id);
  try {
    validatePath(`/${fixed}`);
  } catch {
    throw new InvalidArgumentError('id', 'must not hold characters ZooKeeper refuses in a node name');
  }
  return fixed;
}

/**
 * A queue whose items carry an id by which they can be removed before anyone takes them:
 * Curator 5.4's `DistributedIdQueue` on the same nodes (`queue-|<id>|<sequence>`, `/` and `|` in
 * the id written as `_`, taken in put order) and bytes. Everything else, safe mode included, is
 * as in {@link Queue}.
 *
 * @example
 * ```ts
 * const queue = new IdQueue(zk, '/orders', { serializer: jsonSerializer });
 * await queue.put({ sku: 42 }, 'order-17');
 * await queue.remove('order-17'); // 1
 * ```
 */
export class IdQueue<T = Uint8Array> extends QueueBase<T> {
  /** Bad input throws InvalidArgumentError; nothing is sent here. */
  constructor(zk: ZooKeeper, path: string, options: QueueOptions<T> = {}) {
    super(zk, path, options, ID_LAYOUT);
  }

  /** Adds `item` under `id` (a non-empty string; ids need not be unique). */
  async put(item: T, id: string, options: QueueWaitOptions = {}): Promise<string> {
    const fixed = nodeId(id);
    return this.putNode(QUEUE_ITEM_NAME + SEPARATOR + fixed + SEPARATOR, this.encode([item], 'item'), options);
  }

  /**
   * Removes every item put under `id` that no consumer holds (Curator's `remove`); resolves with
   * how many were removed. In safe mode each is locked first, as a consumer would, so an item
   * being processed is left to its consumer. (Curator compares the id as given with the one in
   * the name; here `/` and `|` are written as `_` on both sides, so an id with them is found.)
   */
  async remove(id: string, options: QueueWaitOptions = {}): Promise<number> {
    const fixed = nodeId(id);
    return this.removeWhere((name) => parseId(name).id === fixed, options);
  }

  /** Whether an item with `id` is in the queue (Curator's `debugIsQueued`). */
  async has(id: string): Promise<boolean> {
    const fixed = nodeId(id);
    return (await this.list()).some((name) => parseId(name).id === fixed);
  }
}

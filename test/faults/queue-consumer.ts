/**
 * The queue workload of the fault suite: consumer processes taking items of one queue (safe mode,
 * or plain for the negative control), and the checker of what they reported. A consumer prints
 * `took <item>` when it has an item, works on it, prints `completing <item>`, completes it and
 * prints `acked <item>`. The harness kills consumers between `took` and `acked`. A kill after
 * `completing` may land after the server applied the completion (one multi deleting the item and
 * its lock) and before `acked` is printed: that item is done, not lost, so the checker counts it
 * as completed by the killed consumer unless it is still queued. Pure apart from the consumer's
 * source.
 */

/**
 * The consumer, run as `node --input-type=module -e CONSUMER_SOURCE` from test/ (so `@zk/*`
 * resolve to the built packages), with the arguments connect, path, lockPath ('' for none), work ms
 * and session timeout ms.
 */
export const CONSUMER_SOURCE = `
import { ZooKeeper } from '@zk/protocol';
import { Queue, stringSerializer } from '@zk/locks';
const [connect, path, lockPath, workMs, sessionMs] = process.argv.slice(1);
const zk = await ZooKeeper.connect(connect, { sessionTimeout: Number(sessionMs) });
const queue = new Queue(zk, path, { serializer: stringSerializer, lockPath: lockPath || undefined });
console.log('READY');
for await (const item of queue.items()) {
  console.log('took ' + item.value);
  await new Promise((r) => setTimeout(r, Number(workMs)));
  console.log('completing ' + item.value);
  await item.complete();
  console.log('acked ' + item.value);
}
`;

/** What {@link checkQueue} found. */
export interface QueueVerdict {
  /** Items put that were neither acknowledged nor left in the queue. */
  readonly missing: string[];
  /** Items acknowledged more than once. */
  readonly duplicated: string[];
  /** Items left in the queue (not a loss: nobody took them yet). */
  readonly remaining: number;
}

/**
 * The queue's promise, checked: every item put is acknowledged by a consumer, or still queued;
 * none is acknowledged twice. A killed consumer's `took` without `completing` is no
 * acknowledgement; its `completing` without `acked` (`inCompletion`) counts as one when the item
 * is gone and nobody else acknowledged it (the completion was applied before the kill), and
 * never as a second one.
 */
export function checkQueue(put: readonly string[], acked: readonly string[], queued: readonly string[], inCompletion: readonly string[] = []): QueueVerdict {
  const seen = new Map<string, number>();
  for (const a of acked) seen.set(a, (seen.get(a) ?? 0) + 1);
  const left = new Set(queued);
  const completedByKilled = new Set(inCompletion);
  return {
    missing: put.filter((p) => !seen.has(p) && !left.has(p) && !completedByKilled.has(p)),
    duplicated: [...seen].filter(([, n]) => n > 1).map(([a]) => a),
    remaining: queued.length,
  };
}

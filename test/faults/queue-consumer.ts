/**
 * The queue workload of the fault suite: consumer processes taking items of one queue (safe mode,
 * or plain for the negative control), and the checker of what they reported. A consumer prints
 * `took <item>` when it has an item, works on it, then completes it and prints `acked <item>`. The
 * harness kills consumers between the two. Pure apart from the consumer's source.
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
 * none is acknowledged twice. (A killed consumer's `took` without `acked` is no acknowledgement.)
 */
export function checkQueue(put: readonly string[], acked: readonly string[], queued: readonly string[]): QueueVerdict {
  const seen = new Map<string, number>();
  for (const a of acked) seen.set(a, (seen.get(a) ?? 0) + 1);
  const left = new Set(queued);
  return {
    missing: put.filter((p) => !seen.has(p) && !left.has(p)),
    duplicated: [...seen].filter(([, n]) => n > 1).map(([a]) => a),
    remaining: queued.length,
  };
}

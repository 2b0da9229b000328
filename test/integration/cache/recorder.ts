/**
 * Records a cache's events (NodeCache, PathChildrenCache) for the cache contract tests: the list,
 * a one-line summary of each, and `until` to await an event without sleeping.
 */
import type { NodeCacheEvent, PathChildrenCacheEvent } from '@zk/protocol';

type AnyEvent = NodeCacheEvent | PathChildrenCacheEvent;

/** One line per event: its type, the child's name (the last path segment) and its data. */
export function brief(e: AnyEvent): string {
  const name = (p: string) => p.slice(p.lastIndexOf('/') + 1);
  switch (e.type) {
    case 'CHILD_ADDED':
    case 'CHILD_UPDATED':
    case 'CHILD_REMOVED':
      return `${e.type} ${name(e.path)} ${e.data.data?.toString() ?? '-'}`;
    case 'created':
    case 'changed':
      return `${e.type} ${e.data.data?.toString() ?? '-'}`;
    case 'deleted':
      return `deleted ${e.previous.data?.toString() ?? '-'}`;
    case 'INITIALIZED':
      return `INITIALIZED ${e.initialData.map((c) => name(c.path)).join(',')}`;
    default:
      return e.type;
  }
}

/** Subscribes to `cache`'s events; `until(match, from)` resolves with the index of the first matching event at or after `from`. */
export function record<E extends AnyEvent>(cache: { onEvent(l: (e: E) => void): () => void }) {
  const events: E[] = [];
  const waiters: Array<{ match: (e: E) => boolean; from: number; resolve: (i: number) => void }> = [];
  cache.onEvent((e) => {
    events.push(e);
    for (const w of [...waiters]) {
      if (events.length - 1 >= w.from && w.match(e)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(events.length - 1);
      }
    }
  });
  return {
    events,
    /** The events in brief, from index `from`. */
    lines(from = 0): string[] {
      return events.slice(from).map(brief);
    },
    until(match: (e: E) => boolean, from = 0): Promise<number> {
      const i = events.findIndex((e, j) => j >= from && match(e));
      if (i >= 0) return Promise.resolve(i);
      return new Promise((resolve) => waiters.push({ match, from, resolve }));
    },
    /** Resolves when the brief of an event at or after `from` equals `line`. */
    untilLine(line: string, from = 0): Promise<number> {
      return this.until((e) => brief(e) === line, from);
    },
  };
}

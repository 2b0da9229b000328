/**
 * The tree cache's public event and option types.
 */
import type { NodeChange } from './node-table.js';

/**
 * What a `TreeCache` reports: a node `created`, `changed` (new data) or `deleted`; the
 * initial load done (`initialized`, only to streams that asked for `replay`); a resynchronisation
 * after a reconnect done (`resynced`, after the differences it found); a node that exists but
 * could not be read (`unreadable`: no read permission, or data over the client's frame limit),
 * which the cache leaves out.
 */
export type TreeCacheEvent =
  | NodeChange
  | { readonly type: 'initialized'; readonly size: number }
  | { readonly type: 'resynced'; readonly size: number; readonly changes: number }
  | { readonly type: 'unreadable'; readonly path: string; readonly error: Error };

/** Called with each event, synchronously, after the cache has applied it; must not throw (a throw is ignored). */
export type TreeCacheListener = (event: TreeCacheEvent) => void;

/** Options of `TreeCache.open`. */
export interface TreeCacheOptions {
  /** Aborting it fails a pending `open` and closes an open cache. */
  signal?: AbortSignal;
  /** Deadline in ms for the initial load (registration and every read); default: none beyond each read's `requestTimeout`. */
  timeout?: number;
  /**
   * Cache only the nodes at most this many levels below the path (Curator's `setMaxDepth`): 0
   * the node alone (one non-recursive persistent watch), 1 the node and its children, and so on.
   * Events deeper down are ignored. Default: the whole subtree.
   */
  maxDepth?: number;
}

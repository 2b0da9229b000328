/**
 * `NodeCache`: one node's data and Stat, with its creation, changes and deletion as events
 * (Curator 5's `NodeCache`, whose listener is told only "the node changed"). A recipe on the
 * client's public API, built on a `TreeCache` of the node alone (`maxDepth` 0: one non-recursive
 * persistent watch; see level-cache.ts for why, and what it costs: ZooKeeper 3.6+).
 */
import { InvalidArgumentError } from '../errors.js';
import type { ZooKeeper } from '../client/zookeeper.js';
import type { NodeChange } from './node-table.js';
import type { SessionSource } from './sessions.js';
import { childData, LevelCache, validateCacheArgs, type CacheStartOptions, type ChildData, type ConnectionEvent } from './level-cache.js';

/**
 * What a `NodeCache` reports: the node `created`, `changed` (new data, by its mzxid) or `deleted`,
 * with its data as it is now (`data`) and as it was (`previous`); and the connection's changes
 * (the `CONNECTION_*` events of Curator's `PathChildrenCacheEvent.Type`).
 */
export type NodeCacheEvent =
  | { readonly type: 'created'; readonly path: string; readonly data: ChildData }
  | { readonly type: 'changed'; readonly path: string; readonly data: ChildData; readonly previous: ChildData }
  | { readonly type: 'deleted'; readonly path: string; readonly previous: ChildData }
  | ConnectionEvent;

/** Called with each event, synchronously, after the cache has applied it; must not throw (a throw is ignored). */
export type NodeCacheListener = (event: NodeCacheEvent) => void;

/** Options of `NodeCache.start`. */
export interface NodeCacheStartOptions extends CacheStartOptions {
  /**
   * Load the node silently (Curator's `start(true)`): it is in {@link NodeCache.currentData} when
   * `start` resolves, and no event says so. Default false: a node that exists is reported as
   * `created` (as Curator's listener hears of it once after `start()`).
   */
  buildInitial?: boolean;
}

/**
 * A cache of one node (its data and Stat), kept current by one persistent watch.
 *
 * - {@link NodeCache.currentData | currentData} is the node as last read, or `undefined` while it
 *   does not exist (it need not exist when the cache starts).
 * - Events: `created`, `changed`, `deleted` for every change after the load, coalesced (two quick
 *   writes may be one change to the newer data); a node deleted and created again between two
 *   reads is reported as `deleted` then `created` (its czxid tells).
 * - Outages: `CONNECTION_SUSPENDED`, `CONNECTION_LOST`, `CONNECTION_RECONNECTED`, then the change
 *   made while away, once. Session expiry ends a cache given a client ({@link NodeCache.done | done}
 *   and the streams fail with a SessionExpiredError); one given a {@link SessionSource}
 *   (`RenewingClient` of `@zk/locks`) reads the node in the next session and reports the change.
 *
 * Needs ZooKeeper 3.6+.
 *
 * @example
 * ```ts
 * await using cache = new NodeCache(zk, '/config/db');
 * cache.onEvent((e) => {
 *   if (e.type === 'changed') reconnectTo(e.data.data!.toString());
 * });
 * await cache.start({ buildInitial: true, timeout: 5000 });
 * console.log(cache.currentData()?.data?.toString());
 * ```
 */
export class NodeCache extends LevelCache<NodeCacheEvent> {
  #current: ChildData | undefined;
  #buildInitial = false;

  /** Makes the cache (nothing is sent until {@link NodeCache.start | start}); refuses bad input with an InvalidArgumentError. */
  constructor(zk: ZooKeeper | SessionSource, path: string) {
    validateCacheArgs(zk, path, undefined);
    super(zk, path, 0);
  }

  /**
   * Registers the watch and reads the node; resolves once it is loaded (and reported, without
   * `buildInitial`). A connection lost meanwhile is waited out; session expiry, `signal` or
   * `timeout` fail it (and close the cache). Aborting `signal` later closes the cache.
   */
  async start(options: NodeCacheStartOptions = {}): Promise<void> {
    if (options?.buildInitial !== undefined && typeof options.buildInitial !== 'boolean') throw new InvalidArgumentError('buildInitial', 'must be a boolean');
    this.#buildInitial = options?.buildInitial ?? false;
    await this.startCache(options, 'NodeCache');
  }

  /** Makes a cache and starts it: `await using cache = await NodeCache.open(zk, path, { buildInitial: true })`. */
  static async open(zk: ZooKeeper | SessionSource, path: string, options: NodeCacheStartOptions = {}): Promise<NodeCache> {
    const cache = new NodeCache(zk, path);
    await cache.start(options);
    return cache;
  }

  /** The node as last read (path, Stat, data), or `undefined` when it does not exist (Curator's `getCurrentData()`). */
  currentData(): ChildData | undefined {
    return this.#current;
  }

  /** Nothing more to report once loaded. */
  protected loaded(): undefined {
    return undefined;
  }

  /** A change of the node: applied, and reported (except the initial load with `buildInitial`). */
  protected changed(change: NodeChange, loading: boolean): NodeCacheEvent | undefined {
    if (change.path !== this.path) return undefined;
    const silent = loading && this.#buildInitial;
    switch (change.type) {
      case 'created':
        this.#current = childData(change.node, true);
        return silent ? undefined : { type: 'created', path: change.path, data: this.#current };
      case 'changed': {
        this.#current = childData(change.node, true);
        return { type: 'changed', path: change.path, data: this.#current, previous: childData(change.previous, true) };
      }
      case 'deleted':
        this.#current = undefined;
        return { type: 'deleted', path: change.path, previous: childData(change.previous, true) };
    }
  }
}

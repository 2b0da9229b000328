/**
 * `PathChildrenCache`: the children of one path (their data and Stat), with Curator 5's
 * `PathChildrenCache` events and start modes. A recipe on the client's public API, built on a
 * `TreeCache` limited to one level below the path (see level-cache.ts for why, and what it costs:
 * ZooKeeper 3.6+).
 */
import { InvalidArgumentError } from '../errors.js';
import type { ZooKeeper } from '../client/zookeeper.js';
import type { NodeChange } from './node-table.js';
import type { SessionSource } from './sessions.js';
import { childData, LevelCache, validateCacheArgs, type CacheStartOptions, type ChildData, type ConnectionEvent } from './level-cache.js';

export type { CacheStartOptions, ChildData, ConnectionEvent } from './level-cache.js';

/**
 * Curator's `PathChildrenCache.StartMode`: `NORMAL` reports the initial children as
 * `CHILD_ADDED`; `BUILD_INITIAL_CACHE` loads them silently (they are in the snapshot when `start`
 * resolves); `POST_INITIALIZED_EVENT` reports them as `CHILD_ADDED`, then `INITIALIZED` with the
 * whole initial set.
 */
export type StartMode = 'NORMAL' | 'BUILD_INITIAL_CACHE' | 'POST_INITIALIZED_EVENT';

/**
 * What a `PathChildrenCache` reports (Curator's `PathChildrenCacheEvent.Type`): a child added,
 * updated (new data or Stat, by its mzxid) or removed, with its data; the initial set
 * (`INITIALIZED`, in `POST_INITIALIZED_EVENT` mode); and the connection's changes.
 */
export type PathChildrenCacheEvent =
  | { readonly type: 'CHILD_ADDED' | 'CHILD_UPDATED' | 'CHILD_REMOVED'; readonly path: string; readonly data: ChildData }
  | { readonly type: 'INITIALIZED'; readonly initialData: readonly ChildData[] }
  | ConnectionEvent;

/** Called with each event, synchronously, after the cache has applied it; must not throw (a throw is ignored). */
export type PathChildrenCacheListener = (event: PathChildrenCacheEvent) => void;

/** Options of the `PathChildrenCache` constructor. */
export interface PathChildrenCacheOptions {
  /**
   * Report the children's data (default true); with false, `ChildData.data` is `undefined` in
   * events and snapshot (Curator's `cacheData`). The data is still read, and held by the tree
   * cache underneath: this saves no reads and little memory.
   */
  cacheData?: boolean;
}

/** Options of `PathChildrenCache.start`. */
export interface PathChildrenCacheStartOptions extends CacheStartOptions {
  /** How the initial children are reported; default `NORMAL`, as in Curator. */
  mode?: StartMode;
}

const MODES: readonly StartMode[] = ['NORMAL', 'BUILD_INITIAL_CACHE', 'POST_INITIALIZED_EVENT'];

/**
 * A cache of the children of one path, kept current by one persistent watch, with Curator's
 * `PathChildrenCache` events.
 *
 * - Start: add listeners ({@link PathChildrenCache.onEvent | onEvent}) or streams
 *   ({@link PathChildrenCache.events | events}), then {@link PathChildrenCache.start | start} with
 *   a {@link StartMode}. Unlike Curator's, `start` resolves once the initial set is loaded (and
 *   reported, in `NORMAL` and `POST_INITIALIZED_EVENT` modes), bounded by `signal` and `timeout`.
 *   The path need not exist: the cache fills when it is created, and empties (`CHILD_REMOVED`
 *   each) when it is deleted.
 * - Events: `CHILD_ADDED`, `CHILD_UPDATED`, `CHILD_REMOVED` for every change after the load,
 *   coalesced as Curator's are (two quick writes may be one update to the newer data; a child
 *   created and deleted between two reads is not seen). A child deleted and created again is
 *   reported as removed then added.
 * - Outages: `CONNECTION_SUSPENDED` when the connection drops, `CONNECTION_LOST` when the session
 *   is presumed lost, `CONNECTION_RECONNECTED` when it comes back, followed by exactly the
 *   changes made while away (each once: the level is read again and compared).
 * - Session expiry: given a client, the cache ends (after `CONNECTION_LOST`): streams and
 *   {@link PathChildrenCache.done | done} fail with a SessionExpiredError. Given a
 *   {@link SessionSource} (`RenewingClient` of `@zk/locks`), it carries on as Curator's does:
 *   `CONNECTION_LOST`, then in the next session `CONNECTION_RECONNECTED` and exactly what differs
 *   from what it held.
 *
 * Needs ZooKeeper 3.6+.
 *
 * @example
 * ```ts
 * await using cache = new PathChildrenCache(zk, '/workers');
 * cache.onEvent((e) => {
 *   if (e.type === 'CHILD_ADDED') console.log('joined', e.path);
 * });
 * await cache.start({ mode: 'POST_INITIALIZED_EVENT', timeout: 5000 });
 * console.log(cache.currentData().map((c) => c.path));
 * ```
 */
export class PathChildrenCache extends LevelCache<PathChildrenCacheEvent> {
  readonly #cacheData: boolean;
  readonly #children = new Map<string, ChildData>();
  #mode: StartMode = 'NORMAL';

  /** Makes the cache (nothing is sent until {@link PathChildrenCache.start | start}); refuses bad input with an InvalidArgumentError. */
  constructor(zk: ZooKeeper | SessionSource, path: string, options: PathChildrenCacheOptions = {}) {
    validateCacheArgs(zk, path, options);
    if (options.cacheData !== undefined && typeof options.cacheData !== 'boolean') throw new InvalidArgumentError('cacheData', 'must be a boolean');
    super(zk, path, 1);
    this.#cacheData = options.cacheData ?? true;
  }

  /**
   * Registers the watch and loads the children; resolves once they are loaded and reported as
   * `mode` says. A connection lost during the load is waited out; session expiry, `signal` or
   * `timeout` fail it (and close the cache). Aborting `signal` later closes the cache.
   */
  async start(options: PathChildrenCacheStartOptions = {}): Promise<void> {
    if (options?.mode !== undefined && !MODES.includes(options.mode)) throw new InvalidArgumentError('mode', `must be one of ${MODES.join(', ')}`);
    this.#mode = options?.mode ?? 'NORMAL';
    await this.startCache(options, 'PathChildrenCache');
  }

  /** Makes a cache and starts it: `await using cache = await PathChildrenCache.open(zk, path, { mode: 'BUILD_INITIAL_CACHE' })`. */
  static async open(zk: ZooKeeper | SessionSource, path: string, options: PathChildrenCacheOptions & PathChildrenCacheStartOptions = {}): Promise<PathChildrenCache> {
    const cache = new PathChildrenCache(zk, path, options);
    await cache.start(options);
    return cache;
  }

  /** The cached children, sorted by path (Curator's `getCurrentData()`). */
  currentData(): ChildData[] {
    return [...this.#children.values()].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  }

  /** The cached child at `fullPath`, or `undefined` (Curator's `getCurrentData(fullPath)`). */
  get(fullPath: string): ChildData | undefined {
    return this.#children.get(fullPath);
  }

  /** The initial set as `INITIALIZED`, in `POST_INITIALIZED_EVENT` mode. */
  protected loaded(): PathChildrenCacheEvent | undefined {
    return this.#mode === 'POST_INITIALIZED_EVENT' ? { type: 'INITIALIZED', initialData: this.currentData() } : undefined;
  }

  /** A change of the parent or a child: children's changes are applied and reported (except the initial set in `BUILD_INITIAL_CACHE` mode). */
  protected changed(change: NodeChange, loading: boolean): PathChildrenCacheEvent | undefined {
    if (change.path === this.path) return undefined; // the parent itself is not a child
    const silent = loading && this.#mode === 'BUILD_INITIAL_CACHE';
    switch (change.type) {
      case 'created': {
        const data = childData(change.node, this.#cacheData);
        this.#children.set(change.path, data);
        return silent ? undefined : { type: 'CHILD_ADDED', path: change.path, data };
      }
      case 'changed': {
        const data = childData(change.node, this.#cacheData);
        this.#children.set(change.path, data);
        return silent ? undefined : { type: 'CHILD_UPDATED', path: change.path, data };
      }
      case 'deleted':
        this.#children.delete(change.path);
        return silent ? undefined : { type: 'CHILD_REMOVED', path: change.path, data: childData(change.previous, this.#cacheData) };
    }
  }
}

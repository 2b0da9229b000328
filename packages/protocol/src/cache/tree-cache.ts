/**
 * `TreeCache`: a local copy of a subtree, kept current by one persistent recursive watch
 * (ZooKeeper 3.6+), with its changes as events. A recipe: it uses only the client's public API.
 *
 * How it stays exact. The watch is registered before anything is read, so every change after
 * that point produces an event; the initial load then reads the whole tree (data and children of
 * every node, in pipelined `multiRead` batches, level by level). Events carry no data (and, from a
 * 3.8 server, no zxid), so each event only says "look at this path again": the cache reads the
 * node and compares what it finds with what it holds, by czxid (the same node, or a new one at the
 * same path) and mzxid (newer data or not). Reads are applied in the order they were sent, which
 * is the order the server served them (see ordered-reads.ts), so the newest observation of a node
 * always wins and a stale read never undoes a newer one. Events that arrive while the tree is
 * being walked are held and their paths read once the walk is done.
 *
 * Persistent watches are re-registered after a reconnect, but the server does not replay what
 * changed while the client was away. So after every reconnect the cache walks the tree again and
 * reports exactly the differences from what it held (created, changed, deleted), then `resynced`.
 */
import { AuthFailedError, ClientClosedError, InvalidArgumentError, NoWatcherError, SessionExpiredError } from '../errors.js';
import { validatePath } from '../util/paths.js';
import type { SessionState } from '../session/session.js';
import type { WatchedEvent } from '../session/watches.js';
import type { ZooKeeper } from '../client/zookeeper.js';
import { raceAbort, validateTimeout } from '../util/abort.js';
import { childPath, NodeTable, type CachedNode, type NodeChange } from './node-table.js';
import { OrderedReads, type NodeRead } from './ordered-reads.js';
import { byDepth, deferred, isConnected, parentOf } from './helpers.js';
import { EventHub } from './event-hub.js';
import type { TreeCacheEvent, TreeCacheListener, TreeCacheOptions } from './events.js';

export type { CachedNode, NodeChange } from './node-table.js';
export type { TreeCacheEvent, TreeCacheListener, TreeCacheOptions } from './events.js';

/**
 * A cache of every node under a path, kept current by one persistent recursive watch.
 *
 * - Snapshot: {@link TreeCache.get | get}, {@link TreeCache.children | children}, {@link TreeCache.has | has}, {@link TreeCache.size | size} and {@link TreeCache.nodes | nodes} read the
 *   local copy synchronously; between two events it is one consistent state.
 * - Events: {@link TreeCache.onEvent | onEvent} listeners and {@link TreeCache.events | events} streams, for every change after the
 *   initial load. Changes are coalesced: two quick writes to a node may be seen as one change to
 *   the newer data, and a node created and deleted before the cache could read it is not
 *   reported. Nothing is reported twice.
 * - Reconnects: persistent watches do not replay changes made while the client was disconnected,
 *   so after each reconnect the cache re-reads the tree and reports exactly the differences
 *   (then a `resynced` event). While disconnected, the snapshot may be stale ({@link TreeCache.synced | synced} is false).
 * - Session expiry (or the client closed, or its credentials refused) ends the cache: streams and
 *   {@link TreeCache.done | done} fail with a SessionExpiredError (ClientClosedError, AuthFailedError).
 * - Stats: the data fields of a cached Stat are exact; its child fields (`cversion`,
 *   `numChildren`, `pzxid`) may lag (use {@link TreeCache.children | children}).
 *
 * Needs ZooKeeper 3.6+ (persistent watches, multiRead).
 *
 * @example
 * ```ts
 * await using cache = await TreeCache.open(zk, '/config');
 * console.log(cache.get('/config/db')?.data.toString());
 * for await (const event of cache.events({ signal })) {
 *   if (event.type === 'changed') reload(event.path, event.node.data);
 * }
 * ```
 */
export class TreeCache implements AsyncDisposable {
  readonly #zk: ZooKeeper;
  readonly #table: NodeTable;
  readonly #reads: OrderedReads;
  readonly #hub = new EventHub<TreeCacheEvent>();
  readonly #signal: AbortSignal | undefined;
  /** The deepest level cached, below the root (Infinity: the whole subtree). */
  readonly #maxDepth: number;
  #offState: (() => void) | undefined;
  #removeWatch: (() => Promise<void>) | undefined;
  /** The walk in progress (initial load or resynchronisation), if any. */
  #walk: { changes: number } | undefined;
  /** Paths of events that arrived during the walk, read once it is done. */
  readonly #held = new Set<string>();
  /** Paths of events waiting for this tick's batch. */
  #batch: string[] = [];
  /** Reads were lost (disconnected, timed out): the tree must be walked again. */
  #stale = false;
  #initialized = false;
  #ended = false;
  readonly #unreadable = new Map<string, Error>();
  #closing: Promise<void> | undefined;
  readonly #ready = deferred<void>();
  readonly #done = deferred<void>();

  private constructor(zk: ZooKeeper, root: string, options: TreeCacheOptions) {
    this.#zk = zk;
    this.#table = new NodeTable(root);
    this.#reads = new OrderedReads(zk);
    this.#signal = options.signal;
    this.#maxDepth = options.maxDepth ?? Infinity;
    this.#done.promise.catch(() => undefined); // a rejection nobody awaits is not an unhandled one
  }

  /**
   * Registers the watch on `path`, loads the subtree and resolves with the cache once it holds
   * the whole tree (an empty cache when `path` does not exist; it fills when the node is created).
   * A connection lost during the load is waited out; session expiry, the signal or `timeout`
   * fail it.
   */
  static async open(zk: ZooKeeper, path: string, options: TreeCacheOptions = {}): Promise<TreeCache> {
    validatePath(path);
    if (typeof zk?.addWatch !== 'function') throw new InvalidArgumentError('zk', 'must be a ZooKeeper client');
    validateTimeout(options.timeout);
    if (options.maxDepth !== undefined && !(Number.isSafeInteger(options.maxDepth) && options.maxDepth >= 0)) throw new InvalidArgumentError('maxDepth', 'must be a non-negative integer');
    options.signal?.throwIfAborted();
    const cache = new TreeCache(zk, path, options);
    try {
      await raceAbort(cache.#start(options), options.signal, options.timeout, { op: 'TreeCache.open', path });
    } catch (err) {
      await cache.close();
      throw err;
    }
    options.signal?.addEventListener('abort', cache.#onAbort, { once: true });
    return cache;
  }

  /** The root path of the cached subtree. */
  get path(): string {
    return this.#table.root;
  }

  /** The number of cached nodes (the root included, when it exists). */
  get size(): number {
    return this.#table.size;
  }

  /**
   * The nodes that exist but that the cache could not read, and why: no read permission
   * (NoAuthError), or a node whose data or child list is larger than the client's
   * `maxFrameSize` (PacketTooLargeError, whose message names the size that would do). They are
   * left out of the cache (with their subtrees) until a later read succeeds; after the initial
   * load each also comes as an `unreadable` event. Check it after `open` when the tree may hold
   * such nodes, e.g. a parent with more than about 50,000 children (1 MiB of names).
   */
  get unreadable(): ReadonlyMap<string, Error> {
    return this.#unreadable;
  }

  /** True when the cache is current: loaded, connected, and not resynchronising. */
  get synced(): boolean {
    return this.#initialized && !this.#stale && this.#walk === undefined && !this.#ended;
  }

  /** Settles when the cache ends: resolves after {@link TreeCache.close | close}, rejects with the error that ended it otherwise. */
  get done(): Promise<void> {
    return this.#done.promise;
  }

  /** The cached node at `path` (data and Stat), or `undefined`. */
  get(path: string): CachedNode | undefined {
    return this.#table.get(path);
  }

  /** True when `path` is cached. */
  has(path: string): boolean {
    return this.#table.get(path) !== undefined;
  }

  /** The names of the cached children of `path`, sorted; `undefined` when `path` is not cached. */
  children(path: string): string[] | undefined {
    return this.#table.children(path);
  }

  /** Every cached node, parents before children. */
  nodes(): IterableIterator<CachedNode> {
    return this.#table.nodes();
  }

  /** Adds a listener of every event from now on; returns a function that removes it. */
  onEvent(listener: TreeCacheListener): () => void {
    return this.#hub.listen(listener);
  }

  /**
   * The events from now on as an async iterable; with `replay`, first the current snapshot as
   * `created` events (parents first) and an `initialized` event. Ending the loop or aborting
   * `signal` unsubscribes. Ends when the cache is closed; fails with the error that ended it.
   * Events queue while the loop is busy.
   */
  events(options: { signal?: AbortSignal; replay?: boolean } = {}): AsyncIterableIterator<TreeCacheEvent> {
    const replay: TreeCacheEvent[] = [];
    if (options.replay) {
      for (const node of this.#table.nodes()) replay.push({ type: 'created', path: node.path, node });
      replay.push({ type: 'initialized', size: this.#table.size });
    }
    return this.#hub.stream(options.signal, replay);
  }

  /**
   * Stops: removes the watch (on the server too when connected), waits for reads in flight, and
   * ends the event streams. Idempotent.
   */
  close(): Promise<void> {
    this.#closing ??= this.#end(undefined);
    return this.#closing;
  }

  /** `await using cache = await TreeCache.open(...)` closes it at the end of the scope. */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  async #start(options: TreeCacheOptions): Promise<void> {
    this.#offState = this.#zk.onStateChange(this.#onState);
    this.#removeWatch = await this.#zk.addWatch(this.#table.root, this.#onWatch, { recursive: this.#maxDepth > 0, ...(options.signal ? { signal: options.signal } : {}), ...(options.timeout === undefined ? {} : { timeout: options.timeout }) });
    if (this.#ended) throw new ClientClosedError('the tree cache was closed');
    this.#startWalk();
    await this.#ready.promise;
  }

  readonly #onAbort = (): void => void this.close();

  readonly #onState = (state: SessionState): void => {
    if (this.#ended) return;
    switch (state) {
      case 'connected':
      case 'connectedReadOnly':
        if (this.#stale) this.#startWalk();
        break;
      case 'suspended':
      case 'lost':
        this.#stale = true;
        this.#walk = undefined;
        break;
      case 'expired':
        void this.#end(new SessionExpiredError('the session expired: the tree cache has ended', { op: 'TreeCache', path: this.#table.root }));
        break;
      case 'authFailed':
        void this.#end(new AuthFailedError('the server refused the credentials: the tree cache has ended', { op: 'TreeCache', path: this.#table.root }));
        break;
      case 'closed':
        void this.#end(new ClientClosedError('the client was closed: the tree cache has ended'));
        break;
      default:
        break;
    }
  };

  /** True when `path` is cached: under the root, and no deeper than `maxDepth`. */
  #inDepth(path: string): boolean {
    if (!this.#table.covers(path)) return false;
    if (this.#maxDepth === Infinity || path === this.#table.root) return true;
    const below = path.slice(this.#table.root === '/' ? 0 : this.#table.root.length);
    let depth = 0;
    for (let i = below.indexOf('/'); i >= 0 && depth <= this.#maxDepth; i = below.indexOf('/', i + 1)) depth++;
    return depth <= this.#maxDepth;
  }

  readonly #onWatch = (event: WatchedEvent): void => {
    if (this.#ended) return;
    switch (event.type) {
      case 'NodeCreated':
      case 'NodeDataChanged':
        if (this.#inDepth(event.path)) this.#changedAt(event.path);
        break;
      case 'NodeDeleted':
        if (!this.#inDepth(event.path)) break;
        // The parent too: when the read finds a node again, the parent may have been replaced as
        // well (a subtree deleted and created again), and reading it first reports that in order.
        if (event.path !== this.#table.root) this.#changedAt(parentOf(event.path));
        this.#changedAt(event.path);
        break;
      case 'SessionExpired':
        void this.#end(new SessionExpiredError('the session expired: the tree cache has ended', { op: 'TreeCache', path: this.#table.root }));
        break;
      case 'PersistentWatchRemoved':
        if (!this.#closing) void this.#end(new NoWatcherError(`the tree cache's watch on ${this.#table.root} was removed (removeWatches): the tree cache has ended`, { op: 'TreeCache', path: this.#table.root }));
        break;
      default:
        break;
    }
  };

  /** An event at `path`: read it again (in this tick's batch), or after the walk when one runs. */
  #changedAt(path: string): void {
    if (this.#walk) {
      this.#held.add(path);
      return;
    }
    if (this.#stale) return; // the next walk reads it
    this.#batch.push(path);
    if (this.#batch.length === 1) queueMicrotask(this.#flush);
  }

  readonly #flush = (): void => {
    const paths = this.#batch;
    this.#batch = [];
    if (this.#ended || paths.length === 0) return;
    if (this.#walk) {
      for (const p of paths) this.#held.add(p);
      return;
    }
    if (this.#stale) return;
    if (!isConnected(this.#zk.state)) {
      this.#stale = true;
      return;
    }
    this.#reads.read(byDepth(paths), false, { node: (r) => this.#apply(r), done: () => undefined, failed: this.#readsLost });
  };

  /** Reads the whole tree again, level by level; held events are read after it. */
  #startWalk(): void {
    if (this.#ended) return;
    if (!isConnected(this.#zk.state)) {
      this.#stale = true;
      return;
    }
    const walk = { changes: 0 };
    this.#walk = walk;
    this.#stale = false;
    this.#held.clear();
    let pending = 0;
    const visit = (paths: string[], depth: number) => {
      pending++;
      const next: string[] = [];
      // The last cached level is read without its children (maxDepth).
      this.#reads.read(paths, depth < this.#maxDepth, {
        node: (r) => {
          // A result is a valid observation even when its walk was abandoned: apply it anyway.
          walk.changes += this.#apply(r);
          if (r.kind === 'found' && r.children) for (const name of r.children) next.push(childPath(r.path, name));
        },
        done: () => {
          if (this.#walk !== walk) return;
          if (next.length > 0) visit(next, depth + 1);
          if (--pending === 0) this.#walked(walk);
        },
        failed: (err) => {
          if (this.#walk === walk) this.#walk = undefined;
          this.#readsLost(err);
        },
      });
    };
    visit([this.#table.root], 0);
  }

  /** The walk is done: read the paths of the events it held, then report the cache current. */
  #walked(walk: { changes: number }): void {
    this.#walk = undefined;
    const held = byDepth([...this.#held]);
    this.#held.clear();
    const finish = () => {
      if (this.#ended || this.#stale || this.#walk) return;
      if (!this.#initialized) {
        this.#initialized = true;
        this.#ready.resolve();
      } else {
        this.#emit({ type: 'resynced', size: this.#table.size, changes: walk.changes });
      }
    };
    if (held.length === 0) return finish();
    this.#reads.read(held, false, {
      node: (r) => {
        walk.changes += this.#apply(r);
      },
      done: finish,
      failed: this.#readsLost,
    });
  }

  /** Reads failed (connection lost, timed out): walk again once connected. */
  readonly #readsLost = (err: unknown): void => {
    if (this.#ended) return;
    if (err instanceof SessionExpiredError) return void this.#end(err);
    if (err instanceof ClientClosedError) return void this.#end(err);
    this.#stale = true;
    // Still connected (a request timed out): walk again now rather than at the next reconnect.
    if (isConnected(this.#zk.state) && !this.#walk) queueMicrotask(() => !this.#ended && this.#stale && !this.#walk && this.#startWalk());
  };

  /** Applies one read; reports its changes once the cache is loaded. Returns the number of changes. */
  #apply(read: NodeRead): number {
    if (this.#ended) return 0;
    let changes: NodeChange[];
    switch (read.kind) {
      case 'found':
        if (this.#unreadable.size > 0) this.#unreadable.delete(read.path);
        changes = this.#table.found(read.path, read.data, read.stat);
        if (read.children) changes.push(...this.#table.listed(read.path, read.children));
        break;
      case 'missing':
        if (this.#unreadable.size > 0) this.#unreadable.delete(read.path);
        changes = this.#table.missing(read.path);
        break;
      case 'unreadable':
        this.#unreadable.set(read.path, read.error);
        changes = this.#table.missing(read.path);
        if (this.#initialized) this.#emit({ type: 'unreadable', path: read.path, error: read.error });
        break;
    }
    if (this.#initialized) for (const change of changes) this.#emit(change);
    return changes.length;
  }

  #emit(event: TreeCacheEvent): void {
    this.#hub.emit(event);
  }

  /** Ends the cache: `error` undefined for close(). */
  async #end(error: Error | undefined): Promise<void> {
    if (this.#ended) return;
    this.#ended = true;
    this.#hub.ending(this.#done.promise);
    this.#walk = undefined;
    this.#batch = [];
    this.#held.clear();
    this.#offState?.();
    this.#signal?.removeEventListener('abort', this.#onAbort);
    if (error) this.#ready.reject(error);
    else this.#ready.reject(new ClientClosedError('the tree cache was closed'));
    this.#ready.promise.catch(() => undefined);
    const remove = this.#removeWatch;
    this.#removeWatch = undefined;
    if (remove) {
      try {
        await remove();
      } catch {
        // unreachable server, expired session: at least forget the watch locally
        await this.#zk.removeWatches(this.#table.root, { kind: this.#maxDepth > 0 ? 'persistentRecursive' : 'persistent', listener: this.#onWatch, local: true }).catch(() => undefined);
      }
    }
    await this.#reads.idle();
    this.#hub.finish(error);
    if (error) this.#done.reject(error);
    else this.#done.resolve();
  }
}

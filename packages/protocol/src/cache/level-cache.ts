/**
 * The engine shared by `NodeCache` and `PathChildrenCache`: a `TreeCache` limited to one or two
 * levels (`maxDepth` 0 or 1), its changes turned into Curator's events by a small per-recipe
 * policy, and the session's states turned into Curator's `CONNECTION_*` events.
 *
 * Why a TreeCache underneath rather than Curator's one-shot watches. The TreeCache already does
 * what these recipes need and is tested for it: the watch is registered before the first read;
 * every read is applied in server order, so the newest observation wins; a node replaced at the
 * same path is told apart by its czxid; and after a reconnect it reads the level again and reports
 * exactly the differences, once. Curator's one-shot watches are re-armed after a reconnect and the
 * server fires those whose nodes changed, so Curator also reports each outage change once; the
 * persistent watch here gives the same result with one watch per cache instead of one per child,
 * and close removes that one watch. The price: ZooKeeper 3.6+ (persistent watches), as for
 * TreeCache; on older servers the start fails with the server's error.
 *
 * The events of the tree cache are taken from its stream with `replay`, which snapshots the loaded
 * level and then delivers every later change, so nothing falls between the load and the
 * subscription.
 */
import { ClientClosedError, InvalidArgumentError, SessionExpiredError, validatePath, type SessionState, type Stat, type ZooKeeper } from '../index.js';
import { AsyncQueue } from '../util/queue.js';
import { raceAbort, validateTimeout } from '../util/abort.js';
import { TreeCache } from './tree-cache.js';
import type { CachedNode, NodeChange } from './node-table.js';
import { deferred } from './helpers.js';

/** A cached node as Curator's `ChildData` has it: its full path, Stat, and data (unless the cache keeps no data). */
export interface ChildData {
  /** The node's full path (relative to the client's chroot). */
  readonly path: string;
  /** The node's Stat as last read. */
  readonly stat: Stat;
  /** The node's data; `undefined` when the cache was made with `cacheData: false`. */
  readonly data: Buffer | undefined;
}

/**
 * The connection events of Curator's `PathChildrenCacheEvent.Type`: the connection dropped
 * (`CONNECTION_SUSPENDED`), came back to the same session (`CONNECTION_RECONNECTED`, before the
 * differences the re-read finds), or the session is presumed or known lost (`CONNECTION_LOST`).
 */
export type ConnectionEvent = { readonly type: 'CONNECTION_SUSPENDED' } | { readonly type: 'CONNECTION_RECONNECTED' } | { readonly type: 'CONNECTION_LOST' };

/** Options of a cache's `start`. */
export interface CacheStartOptions {
  /** Aborting it fails a pending `start` (and closes the cache); aborting later closes the cache. */
  signal?: AbortSignal;
  /** Deadline in ms for the initial load; default: none beyond each read's `requestTimeout`. */
  timeout?: number;
}

/** What a recipe does with the tree cache's changes. */
export interface LevelPolicy<E> {
  /** A change of a cached node; `loading` while it belongs to the initial set. Returns the event to report, if any. */
  change(change: NodeChange, loading: boolean): E | undefined;
  /** The initial set is loaded (its changes were all passed to `change`): an event to report, if any. */
  loaded(): E | undefined;
}

/** Converts a cached node into ChildData, without its data when `cacheData` is false. */
export function childData(node: CachedNode, cacheData: boolean): ChildData {
  return { path: node.path, stat: node.stat, data: cacheData ? node.data : undefined };
}

/** Validates a cache's constructor arguments (before anything is sent). */
export function validateCacheArgs(zk: ZooKeeper, path: string, options: object | undefined): void {
  if (typeof zk?.addWatch !== 'function') throw new InvalidArgumentError('zk', 'must be a ZooKeeper client');
  validatePath(path);
  if (options !== undefined && (typeof options !== 'object' || options === null)) throw new InvalidArgumentError('options', 'must be an object');
}

/** Validates `start` options (before anything is sent). */
export function validateStartOptions(options: CacheStartOptions): void {
  if (typeof options !== 'object' || options === null) throw new InvalidArgumentError('options', 'must be an object');
  validateTimeout(options.timeout);
  if (options.signal !== undefined && !(options.signal instanceof AbortSignal)) throw new InvalidArgumentError('signal', 'must be an AbortSignal');
}

/** One level (or one node) of the tree, with its events, listeners and streams. */
export class LevelCache<E> {
  readonly #zk: ZooKeeper;
  readonly #path: string;
  readonly #maxDepth: 0 | 1;
  readonly #policy: LevelPolicy<E | ConnectionEvent>;
  readonly #listeners = new Set<(event: E | ConnectionEvent) => void>();
  readonly #streams = new Set<AsyncQueue<E | ConnectionEvent>>();
  #tree: TreeCache | undefined;
  #offState: (() => void) | undefined;
  #signal: AbortSignal | undefined;
  #started = false;
  #ended = false;
  /** The last connection event reported, so each outage reports each state once. */
  #connection: ConnectionEvent['type'] | undefined;
  #closing: Promise<void> | undefined;
  readonly #done = deferred<void>();

  constructor(zk: ZooKeeper, path: string, maxDepth: 0 | 1, policy: LevelPolicy<E | ConnectionEvent>) {
    this.#zk = zk;
    this.#path = path;
    this.#maxDepth = maxDepth;
    this.#policy = policy;
    this.#done.promise.catch(() => undefined); // a rejection nobody awaits is not an unhandled one
  }

  get path(): string {
    return this.#path;
  }

  get done(): Promise<void> {
    return this.#done.promise;
  }

  /** True once started, while current: loaded, connected and not re-reading. */
  get synced(): boolean {
    return !this.#ended && this.#tree?.synced === true;
  }

  onEvent(listener: (event: E | ConnectionEvent) => void): () => void {
    if (typeof listener !== 'function') throw new InvalidArgumentError('listener', 'must be a function');
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  events(options: { signal?: AbortSignal } = {}): AsyncIterableIterator<E | ConnectionEvent> {
    const queue: AsyncQueue<E | ConnectionEvent> = new AsyncQueue<E | ConnectionEvent>({ signal: options.signal, onReturn: () => this.#streams.delete(queue) });
    if (this.#ended) {
      this.#done.promise.then(
        () => queue.end(),
        (err: unknown) => queue.fail(err),
      );
    } else {
      this.#streams.add(queue);
    }
    return queue;
  }

  /** Registers the watch, loads the level and reports it as the policy says; resolves once the initial set is reported. */
  async start(options: CacheStartOptions, op: string): Promise<void> {
    validateStartOptions(options);
    if (this.#started) throw new InvalidArgumentError('start', `${op} can be started only once`);
    if (this.#ended) throw new ClientClosedError(`${op}: the cache was closed`);
    options.signal?.throwIfAborted();
    this.#started = true;
    this.#offState = this.#zk.onStateChange(this.#onState);
    // The signal and the deadline bound the wait here, not the tree cache's requests: a request
    // given up on by the client may still reach the server, and an addWatch that does registers
    // a watch nobody would remove. The open goes on instead, and its cache is closed when it
    // resolves, which removes that watch on the server too.
    const opening = TreeCache.open(this.#zk, this.#path, { maxDepth: this.#maxDepth });
    let tree: TreeCache;
    try {
      tree = await raceAbort(opening, options.signal, options.timeout, { op: `${op}.start`, path: this.#path });
    } catch (err) {
      opening.then((late) => late.close(), () => undefined);
      await this.#end(err instanceof Error ? err : new Error(String(err)));
      throw err;
    }
    if (this.#ended) {
      await tree.close();
      throw new ClientClosedError(`${op}: the cache was closed`);
    }
    this.#tree = tree;
    if (options.signal) {
      this.#signal = options.signal;
      options.signal.addEventListener('abort', this.#onAbort, { once: true });
    }
    const loaded = deferred<void>();
    void this.#pump(tree, loaded.resolve);
    await loaded.promise;
  }

  /** Applies the tree cache's events (the snapshot first, then each change) through the policy. */
  async #pump(tree: TreeCache, loaded: () => void): Promise<void> {
    let loading = true;
    try {
      for await (const event of tree.events({ replay: true })) {
        if (this.#ended) break;
        if (event.type === 'initialized') {
          loading = false;
          const out = this.#policy.loaded();
          if (out) this.#emit(out);
          loaded();
          continue;
        }
        if (event.type === 'created' || event.type === 'changed' || event.type === 'deleted') {
          const out = this.#policy.change(event, loading);
          if (out) this.#emit(out);
        }
      }
      loaded();
    } catch (err) {
      loaded();
      if (err instanceof SessionExpiredError && this.#connection !== 'CONNECTION_LOST') this.#emit({ type: 'CONNECTION_LOST' });
      await this.#end(err instanceof Error ? err : new Error(String(err)));
    }
  }

  readonly #onAbort = (): void => void this.close();

  readonly #onState = (state: SessionState): void => {
    if (this.#ended) return;
    const report = (type: ConnectionEvent['type']) => {
      if (this.#connection === type) return;
      this.#connection = type;
      this.#emit({ type });
    };
    switch (state) {
      case 'suspended':
        report('CONNECTION_SUSPENDED');
        break;
      case 'lost':
      case 'expired':
        report('CONNECTION_LOST');
        break;
      case 'connected':
      case 'connectedReadOnly':
        // Reported before the re-read's differences, which the tree cache finds after this.
        if (this.#connection !== undefined && this.#connection !== 'CONNECTION_RECONNECTED') report('CONNECTION_RECONNECTED');
        break;
      default:
        break;
    }
  };

  #emit(event: E | ConnectionEvent): void {
    for (const listener of [...this.#listeners]) {
      try {
        listener(event);
      } catch {
        // a throwing listener must not stop the others or the cache
      }
    }
    for (const stream of this.#streams) stream.push(event);
  }

  close(): Promise<void> {
    this.#closing ??= this.#end(undefined);
    return this.#closing;
  }

  /** Ends the cache: `error` undefined for close(). Removes the watch (the tree cache's close). */
  async #end(error: Error | undefined): Promise<void> {
    if (this.#ended) return;
    this.#ended = true;
    this.#offState?.();
    this.#signal?.removeEventListener('abort', this.#onAbort);
    await this.#tree?.close();
    this.#listeners.clear();
    for (const stream of this.#streams) {
      if (error) stream.fail(error);
      else stream.end();
    }
    this.#streams.clear();
    if (error) this.#done.reject(error);
    else this.#done.resolve();
  }
}

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
import { ClientClosedError, InvalidArgumentError, SessionExpiredError } from '../errors.js';
import { validatePath } from '../util/paths.js';
import type { SessionState } from '../session/session.js';
import type { Stat } from '../jute/data.js';
import type { ZooKeeper } from '../client/zookeeper.js';
import { raceAbort, validateTimeout } from '../util/abort.js';
import { TreeCache } from './tree-cache.js';
import type { CachedNode, NodeChange } from './node-table.js';
import { deferred } from './helpers.js';
import { EventHub } from './event-hub.js';
import { differences, isSessionSource, type SessionSource } from './sessions.js';

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

/** Converts a cached node into ChildData, without its data when `cacheData` is false. */
export function childData(node: CachedNode, cacheData: boolean): ChildData {
  return { path: node.path, stat: node.stat, data: cacheData ? node.data : undefined };
}

/** Validates a cache's constructor arguments (before anything is sent). */
export function validateCacheArgs(zk: ZooKeeper | SessionSource, path: string, options: object | undefined): void {
  if (typeof (zk as Partial<ZooKeeper> | undefined)?.addWatch !== 'function' && !isSessionSource(zk)) throw new InvalidArgumentError('zk', 'must be a ZooKeeper client or a session source (client() and onRenew(), as RenewingClient has)');
  validatePath(path);
  if (options !== undefined && (typeof options !== 'object' || options === null)) throw new InvalidArgumentError('options', 'must be an object');
}

/** Validates `start` options (before anything is sent). */
export function validateStartOptions(options: CacheStartOptions): void {
  if (typeof options !== 'object' || options === null) throw new InvalidArgumentError('options', 'must be an object');
  validateTimeout(options.timeout);
  if (options.signal !== undefined && !(options.signal instanceof AbortSignal)) throw new InvalidArgumentError('signal', 'must be an AbortSignal');
}

/**
 * One level (or one node) of the tree, with its events, listeners and streams: the base of
 * `NodeCache` and `PathChildrenCache`, which say what each change of the tree cache reports.
 */
export abstract class LevelCache<E> implements AsyncDisposable {
  /** The client of the current session (set by start; from the source, when there is one). */
  #zk: ZooKeeper | undefined;
  readonly #source: SessionSource | undefined;
  readonly #path: string;
  /** The nodes passed to `changed`, as the recipe holds them: compared with a new session's. */
  readonly #held = new Map<string, CachedNode>();
  /** Stops waiting for the source's next client. */
  #offRenew: (() => void) | undefined;
  readonly #maxDepth: 0 | 1;
  readonly #hub = new EventHub<E | ConnectionEvent>();
  #tree: TreeCache | undefined;
  #offState: (() => void) | undefined;
  #signal: AbortSignal | undefined;
  #started = false;
  #ended = false;
  /** The last connection event reported, so each outage reports each state once. */
  #connection: ConnectionEvent['type'] | undefined;
  #closing: Promise<void> | undefined;
  readonly #done = deferred<void>();

  protected constructor(zk: ZooKeeper | SessionSource, path: string, maxDepth: 0 | 1) {
    if (isSessionSource(zk)) this.#source = zk;
    else this.#zk = zk;
    this.#path = path;
    this.#maxDepth = maxDepth;
    this.#done.promise.catch(() => undefined); // a rejection nobody awaits is not an unhandled one
  }

  /** A change of a cached node (`loading` while it belongs to the initial set): applies it, and returns the event to report, if any. */
  protected abstract changed(change: NodeChange, loading: boolean): E | undefined;

  /** The initial set is loaded (every change of it was passed to `changed`): the event to report, if any. */
  protected abstract loaded(): E | undefined;

  /** The watched path. */
  get path(): string {
    return this.#path;
  }

  /** True while current: started, loaded, connected and not re-reading after a reconnect. */
  get synced(): boolean {
    return !this.#ended && this.#tree?.synced === true;
  }

  /** Settles when the cache ends: resolves after `close`, rejects with the error that ended it otherwise (a failed start included). */
  get done(): Promise<void> {
    return this.#done.promise;
  }

  /** Adds a listener of every event from now on (called synchronously once the snapshot has the change; a throw is ignored); returns a function that removes it. */
  onEvent(listener: (event: E | ConnectionEvent) => void): () => void {
    return this.#hub.listen(listener);
  }

  /**
   * The events from now on as an async iterable. Ending the loop or aborting `signal`
   * unsubscribes. Ends when the cache is closed; fails with the error that ended it.
   */
  events(options: { signal?: AbortSignal } = {}): AsyncIterableIterator<E | ConnectionEvent> {
    return this.#hub.stream(options.signal);
  }

  /** Stops: removes the watch (on the server too when connected), waits for reads in flight, ends the streams. Idempotent. */
  close(): Promise<void> {
    this.#closing ??= this.#end(undefined);
    return this.#closing;
  }

  /** `await using cache = ...` closes it at the end of the scope. */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  /** Registers the watch, loads the level and reports it as `changed` and `loaded` say; resolves once the initial set is reported. */
  protected async startCache(options: CacheStartOptions, op: string): Promise<void> {
    validateStartOptions(options);
    if (this.#started) throw new InvalidArgumentError('start', `${op} can be started only once`);
    if (this.#ended) throw new ClientClosedError(`${op}: the cache was closed`);
    options.signal?.throwIfAborted();
    this.#started = true;
    // The signal and the deadline bound the wait here, not the tree cache's requests: a request
    // given up on by the client may still reach the server, and an addWatch that does registers
    // a watch nobody would remove. The open goes on instead, and its cache is closed when it
    // resolves, which removes that watch on the server too.
    const opening = (async () => {
      const zk = this.#source ? await this.#source.client() : (this.#zk as ZooKeeper);
      this.#attach(zk);
      return TreeCache.open(zk, this.#path, { maxDepth: this.#maxDepth });
    })();
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
    void this.#pump(tree, loaded.resolve, false);
    await loaded.promise;
  }

  /** Listens to `zk`'s states (and no longer to the previous client's). */
  #attach(zk: ZooKeeper): void {
    this.#offState?.();
    this.#zk = zk;
    this.#offState = zk.onStateChange(this.#onState);
  }

  /**
   * Applies the tree cache's events through `changed`: the snapshot first (the initial set; or,
   * in a new session, compared with what was held), then each change.
   */
  async #pump(tree: TreeCache, loaded: () => void, renewed: boolean): Promise<void> {
    let loading = true;
    const snapshot: CachedNode[] = [];
    try {
      for await (const event of tree.events({ replay: true })) {
        if (this.#ended) break;
        if (event.type === 'initialized') {
          loading = false;
          if (renewed) for (const change of differences(this.#held, snapshot)) this.#apply(change, false);
          const out = renewed ? undefined : this.loaded();
          if (out) this.#hub.emit(out);
          loaded();
          continue;
        }
        if (loading && renewed && event.type === 'created') snapshot.push(event.node);
        else if (event.type === 'created' || event.type === 'changed' || event.type === 'deleted') this.#apply(event, loading);
      }
      loaded();
      // The tree cache's stream may end without an error when its session expires: the same renewal.
      if (!this.#ended && this.#source && this.#zk?.state === 'expired') {
        if (this.#connection !== 'CONNECTION_LOST') this.#report('CONNECTION_LOST');
        return this.#renew();
      }
    } catch (err) {
      loaded();
      if (err instanceof SessionExpiredError && this.#connection !== 'CONNECTION_LOST') this.#report('CONNECTION_LOST');
      if (err instanceof SessionExpiredError && this.#source && !this.#ended) return this.#renew();
      await this.#end(err instanceof Error ? err : new Error(String(err)));
    }
  }

  #apply(change: NodeChange, loading: boolean): void {
    if (change.type === 'deleted') this.#held.delete(change.path);
    else this.#held.set(change.path, change.node);
    const out = this.changed(change, loading);
    if (out) this.#hub.emit(out);
  }

  /**
   * The session expired and a source gives the next: load the level in the new session, report
   * CONNECTION_RECONNECTED, then what differs from what was held (each change once), then carry on.
   */
  async #renew(): Promise<void> {
    const source = this.#source as SessionSource;
    const expired = this.#zk;
    while (!this.#ended) {
      let zk: ZooKeeper;
      let tree: TreeCache;
      try {
        zk = await source.client();
        if (zk === expired || zk.state === 'expired') zk = await this.#nextClient(source, expired);
        if (this.#ended) return;
        this.#attach(zk);
        tree = await TreeCache.open(zk, this.#path, { maxDepth: this.#maxDepth });
      } catch (err) {
        if (this.#ended) return;
        if (err instanceof SessionExpiredError) continue; // that session expired too: the next one
        return this.#end(err instanceof Error ? err : new Error(String(err)));
      }
      if (this.#ended) return void (await tree.close());
      this.#tree = tree;
      this.#report('CONNECTION_RECONNECTED');
      return this.#pump(tree, () => undefined, true);
    }
  }

  /**
   * The source's next client after `expired`; rejects if the cache is closed meanwhile. The
   * renewal may already have happened between the source answering with the expired client and
   * this listener (its word went to no one): the source is asked again once the listener is on.
   */
  #nextClient(source: SessionSource, expired: ZooKeeper | undefined): Promise<ZooKeeper> {
    return new Promise((resolve, reject) => {
      let settled = false;
      const finish = (zk: ZooKeeper): void => {
        if (settled) return;
        settled = true;
        off();
        this.#offRenew = undefined;
        resolve(zk);
      };
      const off = source.onRenew(finish);
      this.#offRenew = () => {
        if (settled) return;
        settled = true;
        off();
        reject(new ClientClosedError('the cache was closed'));
      };
      source.client().then(
        (zk) => {
          if (zk !== expired && zk.state !== 'expired') finish(zk);
        },
        (err: unknown) => {
          // The chain ended: say so instead of waiting for a renewal that will not come.
          if (settled) return;
          settled = true;
          off();
          this.#offRenew = undefined;
          reject(err);
        },
      );
    });
  }

  readonly #onAbort = (): void => void this.close();

  readonly #onState = (state: SessionState): void => {
    if (this.#ended) return;
    switch (state) {
      case 'suspended':
        this.#report('CONNECTION_SUSPENDED');
        break;
      case 'lost':
      case 'expired':
        this.#report('CONNECTION_LOST');
        break;
      case 'connected':
      case 'connectedReadOnly':
        // Reported before the re-read's differences, which the tree cache finds after this.
        if (this.#connection !== undefined && this.#connection !== 'CONNECTION_RECONNECTED') this.#report('CONNECTION_RECONNECTED');
        break;
      default:
        break;
    }
  };

  /** Reports a connection event, unless it is the last one reported (each state once per outage). */
  #report(type: ConnectionEvent['type']): void {
    if (this.#connection === type) return;
    this.#connection = type;
    this.#hub.emit({ type });
  }

  /** Ends the cache: `error` undefined for close(). Removes the watch (the tree cache's close). */
  async #end(error: Error | undefined): Promise<void> {
    if (this.#ended) return;
    this.#ended = true;
    this.#hub.ending(this.#done.promise);
    this.#offState?.();
    this.#offRenew?.();
    this.#signal?.removeEventListener('abort', this.#onAbort);
    await this.#tree?.close();
    this.#hub.finish(error);
    if (error) this.#done.reject(error);
    else this.#done.resolve();
  }
}

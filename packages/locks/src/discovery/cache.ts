/**
 * `ServiceCache`: the instances of one service, kept current (Curator's ServiceCache, which
 * watches `basePath/name` with a CuratorCache). Built on @zk/protocol's TreeCache (one persistent
 * recursive watch on the service node, ZooKeeper 3.6+): each child node is an instance, decoded
 * from Curator's JSON.
 *
 * When the discovery's session expires and it was given a RenewingClient, the cache opens a new
 * TreeCache on the new client and reports the differences (an instance gone with the old session
 * is `removed`, one registered again is `added`), so one cache outlives the session.
 */
import { InvalidArgumentError, SessionExpiredError, setLongTimeout, TreeCache, type LongTimeout, type TreeCacheEvent, type ZooKeeper } from '@zk/protocol';
import { DiscoveryAbortedError, DiscoveryError, DiscoveryTimeoutError } from '../errors.js';
import { checkWaitOptions } from '../internal/barrier-wait.js';
import { pauseUnless, RETRY_FIRST_MS, RETRY_MAX_MS } from '../internal/persistent-node-support.js';
import { EventStream } from './event-stream.js';
import { decodeInstance, type ServiceInstance } from './instance.js';

/** A change of a service's instances. */
export type ServiceCacheEvent =
  | { readonly type: 'added'; readonly instance: ServiceInstance }
  | { readonly type: 'updated'; readonly instance: ServiceInstance; readonly previous: ServiceInstance }
  | { readonly type: 'removed'; readonly previous: ServiceInstance };

/** Called with each change, after the cache applied it; must not throw (a throw is ignored). */
export type ServiceCacheListener = (event: ServiceCacheEvent) => void;

/** Options of a wait: `timeout` in ms (DiscoveryTimeoutError), `signal` (DiscoveryAbortedError). */
export interface DiscoveryWaitOptions {
  timeout?: number;
  signal?: AbortSignal;
}

/** @internal What a cache needs of its discovery: the current client, and each new one after an expiry. */
export interface ClientHost {
  readonly zk: ZooKeeper;
  /** True when a new client follows an expired one (the discovery was given a RenewingClient). */
  readonly renews: boolean;
  onClient(listener: (zk: ZooKeeper) => void): () => void;
}

/**
 * The instances of one service, kept current by a watch. Open it with
 * `discovery.cache(name)`; close it (or the discovery) to remove its watch.
 *
 * - {@link ServiceCache.instances | instances}: the current instances, sorted by node name.
 * - {@link ServiceCache.onChange | onChange} / {@link ServiceCache.changes | changes}: each
 *   instance `added`, `updated` or `removed`, as a listener or an async iterable.
 * - {@link ServiceCache.waitFor | waitFor}: until the instances satisfy a test, with `timeout` and `signal`.
 * - A node whose data is not an instance is left out and listed in {@link ServiceCache.invalid | invalid}.
 *
 * @example
 * ```ts
 * await using cache = await discovery.cache('api');
 * const [first] = await cache.waitFor((list) => list.length > 0, { timeout: 5_000 });
 * for await (const change of cache.changes({ signal })) console.log(change.type);
 * ```
 */
export class ServiceCache implements AsyncDisposable {
  /** The service's name. */
  readonly name: string;
  /** The service's node: `basePath/name`. */
  readonly path: string;
  readonly #host: ClientHost;
  #tree: TreeCache | undefined;
  #offTree: (() => void) | undefined;
  readonly #instances = new Map<string, ServiceInstance>();
  readonly #invalid = new Map<string, Error>();
  readonly #listeners = new Set<ServiceCacheListener>();
  readonly #streams = new Set<EventStream<ServiceCacheEvent>>();
  readonly #waiters = new Set<() => void>();
  #offHost: (() => void) | undefined;
  #ended: Error | undefined;
  #closing: Promise<void> | undefined;
  /** Aborted when the cache ends: stops reattach retries. */
  readonly #stop = new AbortController();
  readonly #onClose: () => void;

  private constructor(host: ClientHost, name: string, path: string, onClose: () => void) {
    this.#host = host;
    this.name = name;
    this.path = path;
    this.#onClose = onClose;
  }

  /** @internal Use `discovery.cache(name)`. */
  static async open(host: ClientHost, name: string, path: string, options: DiscoveryWaitOptions, onClose: () => void): Promise<ServiceCache> {
    const cache = new ServiceCache(host, name, path, onClose);
    try {
      await cache.#attach(host.zk, options);
    } catch (err) {
      await cache.close();
      throw err;
    }
    if (host.renews) cache.#offHost = host.onClient((zk) => void cache.#reattach(zk));
    return cache;
  }

  /** The current instances, sorted by node name. */
  get instances(): ServiceInstance[] {
    return [...this.#instances.keys()].sort().map((k) => this.#instances.get(k)!);
  }

  /** The instance whose node is `basePath/name/<nodeName>` (its id, but for DYNAMIC_SEQUENTIAL), or undefined. */
  get(nodeName: string): ServiceInstance | undefined {
    return this.#instances.get(nodeName);
  }

  /** Nodes under the service that do not hold an instance, and why (DiscoveryError `not-an-instance`, or a read error). */
  get invalid(): ReadonlyMap<string, Error> {
    return this.#invalid;
  }

  /** True once closed, or ended by its session (without a RenewingClient). */
  get closed(): boolean {
    return this.#ended !== undefined;
  }

  /** Adds a listener of every change from now on; returns a function that removes it. */
  onChange(listener: ServiceCacheListener): () => void {
    if (typeof listener !== 'function') throw new InvalidArgumentError('listener', 'must be a function');
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /**
   * The changes from now on, as an async iterable (queued while the loop is busy). Ending the
   * loop or aborting `signal` unsubscribes; the loop ends when the cache is closed, and fails with
   * the error that ended it otherwise.
   */
  changes(options: { signal?: AbortSignal } = {}): AsyncIterableIterator<ServiceCacheEvent> {
    const stream: EventStream<ServiceCacheEvent> = new EventStream(() => this.#streams.delete(stream), options.signal);
    if (this.#ended) stream.fail(this.#ended);
    else this.#streams.add(stream);
    return stream;
  }

  /**
   * Resolves with the instances once `test` accepts them (default: at least one), checked now
   * and after every change. Rejects with DiscoveryTimeoutError after `timeout` ms,
   * DiscoveryAbortedError on `signal`, the cache's error when it ends. Bad options throw
   * InvalidArgumentError.
   */
  waitFor(test: (instances: ServiceInstance[]) => boolean = (list) => list.length > 0, options: DiscoveryWaitOptions = {}): Promise<ServiceInstance[]> {
    if (typeof test !== 'function') throw new InvalidArgumentError('test', 'must be a function');
    checkWaitOptions(options);
    return new Promise((resolve, reject) => {
      let timer: LongTimeout | undefined;
      const finish = (err: unknown, value?: ServiceInstance[]) => {
        this.#waiters.delete(check);
        timer?.clear();
        options.signal?.removeEventListener('abort', onAbort);
        if (err === undefined) resolve(value!);
        else reject(err);
      };
      const onAbort = () => finish(new DiscoveryAbortedError(this.path, options.signal?.reason));
      const check = () => {
        if (this.#ended) return finish(this.#ended);
        const list = this.instances;
        if (test(list)) finish(undefined, list);
      };
      if (options.signal?.aborted) return onAbort();
      if (this.#ended) return reject(this.#ended);
      const now = this.instances;
      if (test(now)) return resolve(now);
      if (options.timeout === 0) return reject(new DiscoveryTimeoutError(this.path, 0));
      this.#waiters.add(check);
      options.signal?.addEventListener('abort', onAbort, { once: true });
      if (options.timeout !== undefined) timer = setLongTimeout(() => finish(new DiscoveryTimeoutError(this.path, options.timeout!)), options.timeout);
    });
  }

  /** Removes the watch (on the server too when connected) and ends the streams and waits. Idempotent. */
  close(): Promise<void> {
    this.#closing ??= this.#end(new DiscoveryError(this.path, 'closed', `service cache ${this.path} was closed`));
    return this.#closing;
  }

  /** `await using cache = await discovery.cache(name)` closes it at the end of the scope. */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  async #attach(zk: ZooKeeper, options: DiscoveryWaitOptions): Promise<void> {
    const tree = await TreeCache.open(zk, this.path, options);
    if (this.#ended) return void (await tree.close());
    this.#tree = tree;
    this.#offTree = tree.onEvent((event) => this.#onTree(event));
    tree.done.catch((err: unknown) => {
      // Without a RenewingClient an expired session ends the cache; with one, the next client reattaches it.
      if (this.#tree === tree && !(this.#host.renews && err instanceof SessionExpiredError)) void this.#end(err instanceof Error ? err : new Error(String(err)));
    });
    // The snapshot: everything differing from what we held (nothing, at the first open).
    const seen = new Set<string>();
    for (const child of tree.children(this.path) ?? []) {
      seen.add(child);
      this.#read(child, tree);
    }
    for (const [child, previous] of [...this.#instances]) {
      if (!seen.has(child)) {
        this.#instances.delete(child);
        this.#emit({ type: 'removed', previous });
      }
    }
    for (const child of [...this.#invalid.keys()]) if (!seen.has(child)) this.#invalid.delete(child);
  }

  async #reattach(zk: ZooKeeper): Promise<void> {
    if (this.#ended) return;
    const old = this.#tree;
    this.#offTree?.();
    this.#tree = undefined;
    await old?.close();
    // Retried until it opens or the cache ends: the new session is young, a failure is transient.
    for (let delay = RETRY_FIRST_MS; !this.#ended && this.#host.zk === zk; delay = Math.min(delay * 2, RETRY_MAX_MS)) {
      try {
        return await this.#attach(zk, {});
      } catch {
        await pauseUnless(delay * (0.5 + Math.random() / 2), this.#stop.signal);
      }
    }
  }

  /** Reads the instance at `child` from the tree cache; emits what changed. */
  #read(child: string, tree: TreeCache): void {
    const node = tree.get(`${this.path}/${child}`);
    const previous = this.#instances.get(child);
    if (!node) {
      this.#invalid.delete(child);
      if (previous) {
        this.#instances.delete(child);
        this.#emit({ type: 'removed', previous });
      }
      return;
    }
    let instance: ServiceInstance;
    try {
      instance = decodeInstance(node.data, node.path);
    } catch (err) {
      this.#invalid.set(child, err as Error);
      if (previous) {
        this.#instances.delete(child);
        this.#emit({ type: 'removed', previous });
      }
      return;
    }
    this.#invalid.delete(child);
    this.#instances.set(child, instance);
    if (!previous) this.#emit({ type: 'added', instance });
    else if (!sameInstance(previous, instance)) this.#emit({ type: 'updated', instance, previous });
  }

  #onTree(event: TreeCacheEvent): void {
    if (event.type !== 'created' && event.type !== 'changed' && event.type !== 'deleted') return;
    const slash = event.path.lastIndexOf('/');
    if (event.path.slice(0, slash) !== this.path || !this.#tree) return; // the service node itself, or deeper
    this.#read(event.path.slice(slash + 1), this.#tree);
  }

  #emit(event: ServiceCacheEvent): void {
    for (const listener of this.#listeners) {
      try {
        listener(event);
      } catch {
        // a listener's throw must not stop the others
      }
    }
    for (const stream of this.#streams) stream.push(event);
    for (const check of [...this.#waiters]) check();
  }

  async #end(error: Error): Promise<void> {
    if (this.#ended) return;
    this.#ended = error;
    this.#stop.abort();
    this.#offHost?.();
    this.#offTree?.();
    const tree = this.#tree;
    this.#tree = undefined;
    await tree?.close();
    const closed = error instanceof DiscoveryError && error.kind === 'closed';
    for (const stream of [...this.#streams]) (closed ? stream.end() : stream.fail(error));
    for (const check of [...this.#waiters]) check();
    this.#onClose();
  }
}

function sameInstance(a: ServiceInstance, b: ServiceInstance): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

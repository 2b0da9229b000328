/**
 * `ServiceCache`: the instances of one service, kept current (Curator's ServiceCache, which
 * follows `basePath/name` with a PathChildrenCache). Built on @zk/protocol's PathChildrenCache
 * (one persistent watch on the service node, ZooKeeper 3.6+): each child node is an instance,
 * decoded from Curator's JSON.
 *
 * Given the discovery's RenewingClient, the PathChildrenCache follows it into the next session
 * after an expiry and reports exactly what differs (an instance gone with the old session is
 * `removed`, one registered again is `added`), so one ServiceCache outlives the session.
 */
import { InvalidArgumentError, PathChildrenCache, setLongTimeout, type ChildData, type LongTimeout, type PathChildrenCacheEvent, type ZooKeeper } from '@zk/protocol';
import { DiscoveryAbortedError, DiscoveryError, DiscoveryTimeoutError } from '../errors.js';
import { checkWaitOptions } from '../internal/barrier-wait.js';
import type { RenewingClient } from '../renewing-client.js';
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
  readonly #children: PathChildrenCache;
  readonly #instances = new Map<string, ServiceInstance>();
  readonly #invalid = new Map<string, Error>();
  readonly #listeners = new Set<ServiceCacheListener>();
  readonly #streams = new Set<EventStream<ServiceCacheEvent>>();
  readonly #waiters = new Set<() => void>();
  #ended: Error | undefined;
  #closing: Promise<void> | undefined;
  readonly #onClose: () => void;

  private constructor(source: ZooKeeper | RenewingClient, name: string, path: string, onClose: () => void) {
    this.name = name;
    this.path = path;
    this.#onClose = onClose;
    this.#children = new PathChildrenCache(source, path);
    this.#children.onEvent((event) => this.#onEvent(event));
  }

  /** @internal Use `discovery.cache(name)`. */
  static async open(source: ZooKeeper | RenewingClient, name: string, path: string, options: DiscoveryWaitOptions, onClose: () => void): Promise<ServiceCache> {
    const cache = new ServiceCache(source, name, path, onClose);
    try {
      // The initial children come as CHILD_ADDED events, applied silently below (nobody listens yet).
      await cache.#children.start({ mode: 'NORMAL', ...options });
    } catch (err) {
      await cache.close();
      throw err;
    }
    // Without a RenewingClient an expired session ends the PathChildrenCache, and so this cache.
    cache.#children.done.then(
      () => undefined,
      (err: unknown) => void cache.#end(err instanceof Error ? err : new Error(String(err))),
    );
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

  #onEvent(event: PathChildrenCacheEvent): void {
    if (event.type !== 'CHILD_ADDED' && event.type !== 'CHILD_UPDATED' && event.type !== 'CHILD_REMOVED') return;
    this.#read(event.path.slice(event.path.lastIndexOf('/') + 1), event.type === 'CHILD_REMOVED' ? undefined : event.data);
  }

  /** Applies what the child `child` now holds (`undefined`: it is gone); emits what changed. */
  #read(child: string, node: ChildData | undefined): void {
    const previous = this.#instances.get(child);
    let instance: ServiceInstance | undefined;
    if (node) {
      try {
        instance = decodeInstance(node.data ?? Buffer.alloc(0), node.path);
        this.#invalid.delete(child);
      } catch (err) {
        this.#invalid.set(child, err as Error);
      }
    } else {
      this.#invalid.delete(child);
    }
    if (!instance) {
      if (previous) {
        this.#instances.delete(child);
        this.#emit({ type: 'removed', previous });
      }
      return;
    }
    this.#instances.set(child, instance);
    if (!previous) this.#emit({ type: 'added', instance });
    else if (!sameInstance(previous, instance)) this.#emit({ type: 'updated', instance, previous });
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
    await this.#children.close();
    const closed = error instanceof DiscoveryError && error.kind === 'closed';
    for (const stream of [...this.#streams]) (closed ? stream.end() : stream.fail(error));
    for (const check of [...this.#waiters]) check();
    this.#onClose();
  }
}

function sameInstance(a: ServiceInstance, b: ServiceInstance): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

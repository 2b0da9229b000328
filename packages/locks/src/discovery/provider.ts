/**
 * `ServiceProvider` and its strategies: Curator's ServiceProvider (a ServiceCache plus a
 * ProviderStrategy) with RandomStrategy, RoundRobinStrategy and StickyStrategy.
 */
import { InvalidArgumentError } from '@zk/protocol';
import type { DiscoveryWaitOptions, ServiceCache } from './cache.js';
import type { ServiceInstance } from './instance.js';

/** Picks one instance of a list (Curator's `ProviderStrategy`); undefined for an empty list. */
export interface ProviderStrategy {
  pick(instances: readonly ServiceInstance[]): ServiceInstance | undefined;
}

/** Curator's RandomStrategy: a uniformly random instance. */
export class RandomStrategy implements ProviderStrategy {
  pick(instances: readonly ServiceInstance[]): ServiceInstance | undefined {
    return instances.length === 0 ? undefined : instances[Math.floor(Math.random() * instances.length)];
  }
}

/**
 * Curator's RoundRobinStrategy: a counter, taken modulo the list's length at each pick. The list
 * is sorted by node name, so with a stable set of instances the picks cycle through it in order.
 */
export class RoundRobinStrategy implements ProviderStrategy {
  #next = 0;
  pick(instances: readonly ServiceInstance[]): ServiceInstance | undefined {
    if (instances.length === 0) return undefined;
    const i = this.#next % instances.length;
    this.#next = (this.#next + 1) % Number.MAX_SAFE_INTEGER;
    return instances[i];
  }
}

/**
 * Curator's StickyStrategy: the same instance as last time while it is still listed, else a new
 * one from `inner` (default round robin).
 */
export class StickyStrategy implements ProviderStrategy {
  readonly #inner: ProviderStrategy;
  #current: ServiceInstance | undefined;
  constructor(inner: ProviderStrategy = new RoundRobinStrategy()) {
    if (typeof inner?.pick !== 'function') throw new InvalidArgumentError('inner', 'must be a ProviderStrategy');
    this.#inner = inner;
  }
  pick(instances: readonly ServiceInstance[]): ServiceInstance | undefined {
    const current = this.#current;
    const still = current && instances.find((i) => i.id === current.id && i.name === current.name);
    if (still) return (this.#current = still);
    return (this.#current = this.#inner.pick(instances));
  }
}

/** Options of `discovery.provider(name)`. */
export interface ServiceProviderOptions extends DiscoveryWaitOptions {
  /** How an instance is picked (default: a new RoundRobinStrategy, as Curator's builder). */
  strategy?: ProviderStrategy;
  /** Only instances it accepts are picked (Curator's `additionalFilter`); disabled instances never are. */
  filter?: (instance: ServiceInstance) => boolean;
}

/**
 * Picks instances of one service for the caller to use, from a {@link ServiceCache} it owns.
 * Instances marked `enabled: false` are skipped, as Curator 5's provider does.
 *
 * @example
 * ```ts
 * await using provider = await discovery.provider('api', { strategy: new RoundRobinStrategy() });
 * const target = provider.getInstance(); // undefined while there is none
 * ```
 */
export class ServiceProvider implements AsyncDisposable {
  readonly #cache: ServiceCache;
  readonly #strategy: ProviderStrategy;
  readonly #filter: ((instance: ServiceInstance) => boolean) | undefined;

  /** @internal Use `discovery.provider(name)`. */
  constructor(cache: ServiceCache, options: ServiceProviderOptions) {
    this.#cache = cache;
    this.#strategy = options.strategy ?? new RoundRobinStrategy();
    this.#filter = options.filter;
  }

  /** The service's name. */
  get name(): string {
    return this.#cache.name;
  }

  /** Every instance that may be picked (enabled, and accepted by the filter), sorted by node name. */
  getAllInstances(): ServiceInstance[] {
    return this.#cache.instances.filter((i) => i.enabled && (this.#filter?.(i) ?? true));
  }

  /** One instance, as the strategy picks it; undefined when there is none (Curator returns null). */
  getInstance(): ServiceInstance | undefined {
    return this.#strategy.pick(this.getAllInstances());
  }

  /**
   * Waits until an instance may be picked, then picks one. Rejects with DiscoveryTimeoutError
   * after `timeout` ms, DiscoveryAbortedError on `signal`.
   */
  async waitForInstance(options: DiscoveryWaitOptions = {}): Promise<ServiceInstance> {
    await this.#cache.waitFor(() => this.getAllInstances().length > 0, options);
    return this.getInstance()!;
  }

  /** Closes its cache (and so its watch). Idempotent. */
  close(): Promise<void> {
    return this.#cache.close();
  }

  /** `await using provider = await discovery.provider(name)` closes it at the end of the scope. */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }
}

/** Checks provider options before anything is sent. */
export function checkProviderOptions(options: ServiceProviderOptions): void {
  if (typeof options !== 'object' || options === null) throw new InvalidArgumentError('options', 'must be an object');
  if (options.strategy !== undefined && typeof options.strategy?.pick !== 'function') throw new InvalidArgumentError('strategy', 'must have a pick(instances) method');
  if (options.filter !== undefined && typeof options.filter !== 'function') throw new InvalidArgumentError('filter', 'must be a function');
}

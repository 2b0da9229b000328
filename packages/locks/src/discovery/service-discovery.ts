/**
 * `ServiceDiscovery`: Curator's curator-x-discovery on the same nodes, so Java and Node services
 * find each other. Layout (Curator 5.4, `ServiceDiscoveryImpl`): each instance is the node
 * `basePath/name/id` holding its JSON (instance.ts), ephemeral for DYNAMIC, ephemeral sequential
 * for DYNAMIC_SEQUENTIAL, persistent for STATIC and PERMANENT; parents are containers.
 */
import { InvalidArgumentError, NoNodeError, validatePath, type ACL, type CallOptions, type SessionState, type ZooKeeper } from '@zk/protocol';
import { DiscoveryError } from '../errors.js';
import { recipeACL } from '../internal/acl.js';
import { RenewingClient } from '../renewing-client.js';
import { checkWaitOptions } from '../internal/barrier-wait.js';
import { ServiceCache, type DiscoveryWaitOptions } from './cache.js';
import { checkSegment, decodeInstance, makeInstance, type JsonValue, type ServiceInstance, type ServiceInstanceInput } from './instance.js';
import { checkProviderOptions, ServiceProvider, type ServiceProviderOptions } from './provider.js';
import { Registrar, type Registration } from './registrations.js';

/** A client, or a {@link RenewingClient}: with one, the discovery outlives its sessions. */
export type ClientSource = ZooKeeper | RenewingClient;

/** Options of {@link ServiceDiscovery.open}. */
export interface ServiceDiscoveryOptions extends DiscoveryWaitOptions {
  /** Where services live (Curator's `basePath`), e.g. `/services`. */
  basePath: string;
  /**
   * ACL of every node the discovery creates: instances and their container parents (default: the
   * client's `acl` connect option, else OPEN_ACL_UNSAFE). Checked here (InvalidArgumentError).
   */
  acl?: readonly ACL[] | undefined;
  /**
   * Write the `enabled` field, as a Java `JsonInstanceSerializer(payloadClass, false)` does.
   * Default false: the layout of `ServiceDiscoveryBuilder`'s default serializer, which has no
   * `enabled` (readers see true), so `enabled: false` is refused unless this is set.
   */
  writeEnabled?: boolean;
}

/**
 * Registers service instances and finds them, on Curator's layout (Java's `ServiceDiscovery`
 * built with `ServiceDiscoveryBuilder.builder(Map.class or a POJO)` reads ours and we read its).
 *
 * - {@link ServiceDiscovery.register | register}, {@link ServiceDiscovery.update | update},
 *   {@link ServiceDiscovery.unregister | unregister}: this process's instances.
 * - {@link ServiceDiscovery.queryForNames | queryForNames}, {@link ServiceDiscovery.queryForInstances | queryForInstances},
 *   {@link ServiceDiscovery.queryForInstance | queryForInstance}: one-off reads.
 * - {@link ServiceDiscovery.cache | cache}, {@link ServiceDiscovery.provider | provider}: watched
 *   instances, and picking one (random, round robin, sticky). Need ZooKeeper 3.6+.
 *
 * Sessions: after a reconnect, instances whose node is missing are created again. When the
 * session expires, a discovery opened with a {@link RenewingClient} registers its instances again
 * on the next session and moves its caches to it (Curator does the same on its new session); one
 * opened with a plain client ends with that session (its calls fail with SessionExpiredError).
 * `close()` (or `await using`) unregisters every instance and closes caches and providers (their
 * watches); the client (or RenewingClient) stays the caller's to close.
 *
 * @example
 * ```ts
 * await using sessions = new RenewingClient(() => ZooKeeper.connect(servers));
 * await using discovery = await ServiceDiscovery.open(sessions, { basePath: '/services' });
 * await discovery.register({ name: 'api', port: 8080, payload: { region: 'eu' } });
 * await using provider = await discovery.provider('api');
 * const target = provider.getInstance();
 * ```
 */
export class ServiceDiscovery implements AsyncDisposable {
  /** Where services live. */
  readonly basePath: string;
  readonly #registrar: Registrar;
  readonly #renewing: RenewingClient | undefined;
  #offRenew: () => void = () => undefined;
  #zk: ZooKeeper;
  #offState: () => void = () => undefined;
  readonly #registrations = new Map<string, Registration>();
  readonly #closeables = new Set<{ close(): Promise<void> }>();
  #closing: Promise<void> | undefined;
  /** Aborted by close: ends re-registration retries. */
  readonly #stop = new AbortController();

  private constructor(zk: ZooKeeper, renewing: RenewingClient | undefined, basePath: string, registrar: Registrar) {
    this.#zk = zk;
    this.#renewing = renewing;
    this.basePath = basePath;
    this.#registrar = registrar;
    this.#watchState();
    if (renewing) this.#offRenew = renewing.onRenew((next) => void this.#renewed(next));
  }

  /**
   * A discovery under `options.basePath` on `client` (a client, or a RenewingClient: see the
   * class). Bad options throw InvalidArgumentError before any request; nothing is written
   * until the first `register`.
   */
  static async open(client: ClientSource, options: ServiceDiscoveryOptions): Promise<ServiceDiscovery> {
    if (typeof options !== 'object' || options === null) throw new InvalidArgumentError('options', 'must be an object with a basePath');
    validatePath(options.basePath);
    if (options.writeEnabled !== undefined && typeof options.writeEnabled !== 'boolean') throw new InvalidArgumentError('writeEnabled', 'must be a boolean');
    checkWaitOptions(options);
    const registrar = new Registrar(options.basePath, recipeACL(options.acl), options.writeEnabled ?? false);
    if (client instanceof RenewingClient) {
      options.signal?.throwIfAborted();
      return new ServiceDiscovery(checkZk(await client.client()), client, options.basePath, registrar);
    }
    return new ServiceDiscovery(checkZk(client), undefined, options.basePath, registrar);
  }

  /** The current client (a new one after an expiry, with a RenewingClient). */
  get zk(): ZooKeeper {
    return this.#zk;
  }

  /** The instances this discovery registered (as last registered or updated). */
  get registered(): ServiceInstance[] {
    return [...this.#registrations.values()].map((r) => r.instance);
  }

  /**
   * Registers an instance (Curator's `registerService`): fills the defaults (a random UUID id,
   * this host's address, now, DYNAMIC), writes its node and resolves with the instance. Registering
   * an id again replaces its node. Bad input throws InvalidArgumentError before any byte is sent.
   * A create that got no answer is not repeated: it rejects, and an ephemeral node it may have made
   * is deleted in the background once connected.
   */
  async register<P extends JsonValue>(input: ServiceInstanceInput<P>, options: CallOptions = {}): Promise<ServiceInstance<P>> {
    this.#checkOpen();
    const instance = makeInstance(input);
    const data = this.#registrar.encode(instance);
    const zk = this.#zk;
    let path: string;
    try {
      path = await this.#registrar.create(zk, instance, data, options);
    } catch (err) {
      this.#registrar.sweepUnanswered(zk, instance, err);
      throw err;
    }
    this.#registrations.set(instance.id, { instance, path });
    return instance;
  }

  /**
   * Replaces a registered instance's data (Curator's `updateService`): `input.id` names it, its
   * name must stay. Throws DiscoveryError `not-registered` for an id this discovery has not
   * registered, InvalidArgumentError for bad input, both before any byte is sent.
   */
  async update<P extends JsonValue>(input: ServiceInstanceInput<P> & { id: string }, options: CallOptions = {}): Promise<ServiceInstance<P>> {
    this.#checkOpen();
    const instance = makeInstance(input);
    const registration = this.#registrations.get(instance.id);
    if (!registration) throw new DiscoveryError(this.#registrar.instancePath(instance.name, instance.id), 'not-registered', `instance ${instance.id} of ${instance.name} is not registered by this discovery`);
    if (registration.instance.name !== instance.name || registration.instance.serviceType !== instance.serviceType) {
      throw new InvalidArgumentError('instance', `update keeps the name and service type of instance ${instance.id} (${registration.instance.name}, ${registration.instance.serviceType})`);
    }
    const data = this.#registrar.encode(instance);
    registration.instance = instance; // what a later re-registration writes, as Curator
    await this.#zk.setData(registration.path ?? this.#registrar.instancePath(instance.name, instance.id), data, options);
    return instance;
  }

  /** Unregisters an instance (by the instance or its id): forgets it and deletes its node (absent is fine). */
  async unregister(instance: ServiceInstance | string, options: CallOptions = {}): Promise<void> {
    const id = typeof instance === 'string' ? instance : instance?.id;
    checkSegment('id', id);
    const registration = this.#registrations.get(id);
    if (!registration) return;
    this.#registrations.delete(id);
    await this.#registrar.remove(this.#zk, registration, options);
  }

  /** The names of the services under the base path ([] when it does not exist; Curator throws NoNode). */
  async queryForNames(options: CallOptions = {}): Promise<string[]> {
    this.#checkOpen();
    return (await this.#zk.getChildren(this.basePath, options).catch(absentAs([]))).sort();
  }

  /**
   * Every instance of service `name`, sorted by node name ([] when none). A node whose data is not
   * an instance fails the query with DiscoveryError `not-an-instance`, as it does Curator's.
   */
  async queryForInstances(name: string, options: CallOptions = {}): Promise<ServiceInstance[]> {
    checkSegment('name', name);
    this.#checkOpen();
    const children = (await this.#zk.getChildren(this.#registrar.servicePath(name), options).catch(absentAs([]))).sort();
    const found = await Promise.all(children.map((id) => this.#read(name, id, options)));
    return found.filter((i): i is ServiceInstance => i !== undefined);
  }

  /** The instance whose node is `basePath/name/id`, or undefined. DiscoveryError `not-an-instance` for data that is not one. */
  async queryForInstance(name: string, id: string, options: CallOptions = {}): Promise<ServiceInstance | undefined> {
    checkSegment('name', name);
    checkSegment('id', id);
    this.#checkOpen();
    return this.#read(name, id, options);
  }

  /** A {@link ServiceCache} of service `name`, loaded (`timeout`, `signal` bound the load). Closed with the discovery. */
  async cache(name: string, options: DiscoveryWaitOptions = {}): Promise<ServiceCache> {
    checkSegment('name', name);
    checkWaitOptions(options);
    this.#checkOpen();
    let cache: ServiceCache | undefined;
    cache = await ServiceCache.open(this.#renewing ?? this.#zk, name, this.#registrar.servicePath(name), options, () => cache && this.#closeables.delete(cache));
    if (this.#closing) {
      await cache.close();
      this.#checkOpen();
    }
    this.#closeables.add(cache);
    return cache;
  }

  /** A {@link ServiceProvider} of service `name` on a cache of its own. Closed with the discovery. */
  async provider(name: string, options: ServiceProviderOptions = {}): Promise<ServiceProvider> {
    checkProviderOptions(options);
    return new ServiceProvider(await this.cache(name, options), options);
  }

  /**
   * Closes caches and providers (removing their watches) and unregisters every instance (deleting
   * its node). Idempotent. The first failed delete rejects it, after everything else was done. The
   * client is not closed.
   */
  close(): Promise<void> {
    this.#stop.abort();
    this.#closing ??= this.#close();
    return this.#closing;
  }

  /** `await using discovery = await ServiceDiscovery.open(...)` closes it at the end of the scope. */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  async #close(): Promise<void> {
    await Promise.all([...this.#closeables].map((c) => c.close()));
    const registrations = [...this.#registrations.values()];
    this.#registrations.clear();
    const results = await Promise.allSettled(registrations.map((r) => this.#registrar.remove(this.#zk, r)));
    this.#offState();
    this.#offRenew();
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) throw failed.reason;
  }

  async #read(name: string, id: string, options: CallOptions): Promise<ServiceInstance | undefined> {
    const path = this.#registrar.instancePath(name, id);
    const found = await this.#zk.getData(path, options).catch(absentAs(undefined));
    return found && decodeInstance(found.data, path);
  }

  #checkOpen(): void {
    if (this.#closing) throw new DiscoveryError(this.basePath, 'closed', `service discovery under ${this.basePath} was closed`);
  }

  #watchState(): void {
    const zk = this.#zk;
    this.#offState = zk.onStateChange((state: SessionState, previous: SessionState) => {
      if (this.#closing || zk !== this.#zk) return;
      if (state === 'connected' && previous !== 'connecting') {
        // Same session, back after a disconnection: our ephemeral nodes are still there unless
        // someone deleted them meanwhile; put back the missing ones.
        void this.#registrar.restore(zk, [...this.#registrations.values()], true, this.#stop.signal, () => zk === this.#zk);
      }
    });
  }

  /** After an expiry, the RenewingClient's next client: the instances registered again there (the caches follow it by themselves). */
  async #renewed(zk: ZooKeeper): Promise<void> {
    if (this.#closing) return;
    this.#offState();
    this.#zk = zk;
    this.#watchState();
    await this.#registrar.restore(zk, [...this.#registrations.values()], false, this.#stop.signal, () => zk === this.#zk);
  }
}

function checkZk(zk: unknown): ZooKeeper {
  if (typeof (zk as ZooKeeper | undefined)?.getChildren !== 'function' || typeof (zk as ZooKeeper).onStateChange !== 'function') {
    throw new InvalidArgumentError('client', 'must be a ZooKeeper client or a function resolving to one');
  }
  return zk as ZooKeeper;
}

/** A catch handler: NoNode becomes `value`, anything else stays an error. */
function absentAs<T>(value: T): (err: unknown) => T {
  return (err) => {
    if (err instanceof NoNodeError) return value;
    throw err;
  };
}

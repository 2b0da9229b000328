/**
 * The instances one discovery registered, and the writes that put them on the server: the node
 * `basePath/name/id` (parents as containers) created with the service type's mode, as Curator's
 * `ServiceDiscoveryImpl.internalRegisterService` does: on NodeExists the node is deleted and
 * created again, once (so watchers see the change), then the error stands.
 */
import { BadVersionError, CreateMode, InvalidArgumentError, NodeExistsError, NoNodeError, SessionExpiredError, ZooKeeperError, type ACL, type CallOptions, type ZooKeeper } from '@zk/protocol';
import { connected } from '../internal/attempt.js';
import { pauseUnless, RETRY_FIRST_MS, RETRY_MAX_MS } from '../internal/persistent-node-support.js';
import { encodeInstance, type ServiceInstance, type ServiceType } from './instance.js';

/** One registered instance and where its node is (a DYNAMIC_SEQUENTIAL node's name has a suffix). */
export interface Registration {
  instance: ServiceInstance;
  /** The node's path once created; for DYNAMIC_SEQUENTIAL the path the last create returned. */
  path: string | undefined;
}

/** CreateMode of each service type (the bytecode's switch: DYNAMIC, DYNAMIC_SEQUENTIAL, else persistent). */
function modeOf(type: ServiceType): number {
  if (type === 'DYNAMIC') return CreateMode.EPHEMERAL;
  if (type === 'DYNAMIC_SEQUENTIAL') return CreateMode.EPHEMERAL_SEQUENTIAL;
  return CreateMode.PERSISTENT;
}

function isEphemeral(type: ServiceType): boolean {
  return type === 'DYNAMIC' || type === 'DYNAMIC_SEQUENTIAL';
}

/** How a discovery writes its instances. */
export class Registrar {
  readonly #basePath: string;
  readonly #acl: readonly ACL[] | undefined;
  readonly #writeEnabled: boolean;

  constructor(basePath: string, acl: readonly ACL[] | undefined, writeEnabled: boolean) {
    this.#basePath = basePath;
    this.#acl = acl;
    this.#writeEnabled = writeEnabled;
  }

  /** `basePath/name`. */
  servicePath(name: string): string {
    return this.#basePath === '/' ? `/${name}` : `${this.#basePath}/${name}`;
  }

  /** `basePath/name/id`. */
  instancePath(name: string, id: string): string {
    return `${this.servicePath(name)}/${id}`;
  }

  /** The node data; refuses `enabled: false` the layout would drop (InvalidArgumentError). */
  encode(instance: ServiceInstance): Buffer {
    if (!instance.enabled && !this.#writeEnabled) {
      throw new InvalidArgumentError('enabled', "false is not written by Curator's default serializer (readers would see true): open the discovery with writeEnabled: true");
    }
    return encodeInstance(instance, this.#writeEnabled);
  }

  /** Creates the instance's node (see the file comment); resolves with its path. */
  async create(zk: ZooKeeper, instance: ServiceInstance, data: Buffer, options: CallOptions = {}): Promise<string> {
    const path = this.instancePath(instance.name, instance.id);
    const create = { ...options, mode: modeOf(instance.serviceType), parents: 'container' as const, acl: this.#acl, parentAcl: this.#acl };
    try {
      return await zk.create(path, data, create);
    } catch (err) {
      if (!(err instanceof NodeExistsError)) throw err;
    }
    await zk.delete(path, options).catch((e: unknown) => (e instanceof NoNodeError ? undefined : Promise.reject(e)));
    return zk.create(path, data, create);
  }

  /**
   * After a create whose outcome is unknown (the connection dropped, its timeout passed, its signal
   * aborted: the request may still be applied), deletes in the background the ephemeral node it
   * may have made, once connected: only when it is this session's own (ephemeralOwner), so someone
   * else's instance of the same id is left alone. The session answers in order, so the `exists`
   * is answered after the create. A persistent or sequential node of such a create stays (its
   * owner or name cannot be told).
   */
  sweepUnanswered(zk: ZooKeeper, instance: ServiceInstance, err: unknown): void {
    const unknown = err instanceof ZooKeeperError ? err.isRetryable : !(err instanceof InvalidArgumentError);
    if (!unknown || instance.serviceType !== 'DYNAMIC') return;
    const path = this.instancePath(instance.name, instance.id);
    void (async () => {
      await connected(zk);
      const stat = await zk.exists(path);
      if (stat && stat.ephemeralOwner === zk.sessionId) await zk.delete(path, { version: stat.version });
    })().catch(() => undefined); // the session ended (so did the node), or the node changed hands
  }

  /**
   * Deletes a registration's node; an absent node is no error. An ephemeral node is deleted only
   * while it is this session's: another process that registered the same id since then keeps its
   * instance (Curator deletes the path whoever owns it).
   */
  async remove(zk: ZooKeeper, registration: Registration, options: CallOptions = {}): Promise<void> {
    const path = registration.path ?? this.instancePath(registration.instance.name, registration.instance.id);
    const ephemeral = isEphemeral(registration.instance.serviceType);
    // A session that ended took its ephemeral nodes along: nothing to delete, nothing to send.
    if (ephemeral && (zk.state === 'expired' || zk.state === 'closed')) return;
    try {
      if (ephemeral) {
        const stat = await zk.exists(path, options);
        if (stat === null || stat.ephemeralOwner !== zk.sessionId) return;
        await zk.delete(path, { ...options, version: stat.version });
      } else {
        await zk.delete(path, options);
      }
    } catch (err) {
      if (!(err instanceof NoNodeError || err instanceof BadVersionError || (ephemeral && err instanceof SessionExpiredError))) throw err;
    }
  }

  /**
   * Puts every registration's node back (after an expiry: on the new session; after a
   * reconnect: only those missing, e.g. deleted by hand meanwhile). A retryable failure is tried
   * again after a jittered pause (doubling), while `keepOn()` and until `stop` aborts.
   */
  async restore(zk: ZooKeeper, registrations: Iterable<Registration>, onlyMissing: boolean, stop: AbortSignal, keepOn: () => boolean): Promise<void> {
    for (const registration of registrations) {
      for (let delay = RETRY_FIRST_MS; keepOn() && !stop.aborted; delay = Math.min(delay * 2, RETRY_MAX_MS)) {
        try {
          const { instance } = registration;
          if (!isEphemeral(instance.serviceType) || onlyMissing) {
            const path = registration.path ?? this.instancePath(instance.name, instance.id);
            const stat = await zk.exists(path);
            // A persistent node outlives the session: rewritten in place, not deleted and made again.
            if (stat && !isEphemeral(instance.serviceType) && !onlyMissing) await zk.setData(path, this.encode(instance));
            if (stat) break;
          }
          registration.path = await this.create(zk, instance, this.encode(instance));
          break;
        } catch (err) {
          if (!(err instanceof ZooKeeperError && err.isRetryable)) break; // NoAuth, expired, ...: the next session or reconnect tries again
          await pauseUnless(delay * (0.5 + Math.random() / 2), stop);
        }
      }
    }
  }
}

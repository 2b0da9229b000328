/**
 * PersistentTtlNode: Curator 5.4's `PersistentTtlNode`, as its bytecode has it: a CONTAINER node
 * kept by a PersistentNode (never deleted by it, not even on close) with one child, `touch` by
 * default, a PERSISTENT_WITH_TTL node whose data is set every ttl / 2 (`touchScheduleFactor`)
 * from the first period on; when the touch node is missing it is created (or set, when it
 * appeared meanwhile) with the ttl. While the process runs the touch node's mtime stays fresh;
 * once it stops (closed, crashed) the server deletes the touch node ttl after its last touch, and
 * the now empty container after it, at its container check (`znode.container.checkIntervalMs`,
 * 60 s by default). Needs a 3.5.3+ server started with `zookeeper.extendedTypesEnabled=true`.
 * The touch node carries no data; Curator's carries its framework's default data (the host's
 * address, unless `defaultData` was set). Nobody reads it: the two keep each other's touch nodes
 * alive on a shared path (test/interop/persistent-node.test.ts).
 */
import { CreateMode, InvalidArgumentError, NodeExistsError, NoNodeError, validatePath, type ACL, type ZooKeeper } from '@zk/protocol';
import { recipeACL } from '../internal/acl.js';
import { PersistentNode, type InitialWaitOptions, type PersistentNodeEvent } from './persistent-node.js';
import type { RenewingClient } from '../renewing-client.js';

/** Curator's `DEFAULT_CHILD_NODE_NAME`. */
export const TTL_TOUCH_NODE = 'touch';
/** Curator's `DEFAULT_TOUCH_SCHEDULE_FACTOR`: the touch node is set ttl / 2 apart. */
const DEFAULT_TOUCH_FACTOR = 2;

/** Options of a {@link PersistentTtlNode}. */
export interface PersistentTtlNodeOptions {
  /** The container node's data (default empty). */
  data?: Uint8Array | string;
  /** The touch child's name (Curator's `childNodeName`, default `touch`). */
  childName?: string;
  /** Touches per ttl (Curator's `touchScheduleFactor`, default 2; at least 2 to outlive a missed one). */
  touchFactor?: number;
  /** Create missing parents as containers (default true). */
  parents?: boolean;
  /** ACL of the container, its touch node and created parents. */
  acl?: readonly ACL[] | undefined;
}

/**
 * A node that lives while this process touches it and disappears about `ttl` after it stops.
 *
 * @example
 * ```ts
 * await using node = new PersistentTtlNode(zk, '/jobs/nightly/owner', 10_000, { data: 'host-1' });
 * node.start();
 * await node.waitForInitialCreate({ timeout: 5_000 });
 * ```
 */
export class PersistentTtlNode implements AsyncDisposable {
  /** The container node's path. */
  readonly path: string;
  /** The touch child's path. */
  readonly touchPath: string;
  /** The touch node's time to live, ms. */
  readonly ttl: number;
  readonly #node: PersistentNode;
  readonly #period: number;
  readonly #acl: readonly ACL[] | undefined;
  #timer: NodeJS.Timeout | undefined;
  #touching = false;
  #touches = 0;

  /** Bad input (path, ttl, child name, factor, data, acl) throws InvalidArgumentError; nothing is sent before `start()`. */
  constructor(client: ZooKeeper | RenewingClient, path: string, ttl: number, options: PersistentTtlNodeOptions = {}) {
    validatePath(path);
    if (!Number.isInteger(ttl) || ttl <= 0 || ttl > 0xff_ffff_ffff) throw new InvalidArgumentError('ttl', `must be a positive integer of ms, got ${String(ttl)}`);
    const childName = options.childName ?? TTL_TOUCH_NODE;
    if (typeof childName !== 'string' || childName.length === 0 || childName.includes('/')) throw new InvalidArgumentError('childName', `must be one node name, got ${String(childName)}`);
    const factor = options.touchFactor ?? DEFAULT_TOUCH_FACTOR;
    if (!Number.isInteger(factor) || factor < 1 || ttl / factor < 1) throw new InvalidArgumentError('touchFactor', `must be a positive integer below the ttl, got ${String(factor)}`);
    this.touchPath = `${path === '/' ? '' : path}/${childName}`;
    validatePath(this.touchPath);
    this.#acl = recipeACL(options.acl);
    this.#node = new PersistentNode(client, path, { mode: CreateMode.CONTAINER, data: options.data ?? '', parents: options.parents ?? true, acl: options.acl }, { deleteOnClose: false });
    this.path = path;
    this.ttl = ttl;
    this.#period = Math.floor(ttl / factor);
  }

  /** How many touches were written so far (sets and creates of the touch node). */
  get touches(): number {
    return this.#touches;
  }

  /** A copy of the container's data. */
  get data(): Buffer {
    return this.#node.data;
  }

  /** Starts keeping the container and touching its child (LockStateError when started twice or after close). */
  start(): void {
    this.#node.start();
    this.#timer = setInterval(() => void this.#touch(), this.#period);
  }

  /** Resolves with the container's path once created; as {@link PersistentNode.waitForInitialCreate}. */
  waitForInitialCreate(options: InitialWaitOptions = {}): Promise<string> {
    return this.#node.waitForInitialCreate(options);
  }

  /** Sets the container's data (as {@link PersistentNode.setData}). */
  setData(data: Uint8Array | string): Promise<void> {
    return this.#node.setData(data);
  }

  /** The container's events (see {@link PersistentNode.onEvent}). */
  onEvent(listener: (event: PersistentNodeEvent) => void): () => void {
    return this.#node.onEvent(listener);
  }

  /**
   * Stops touching and stops keeping the container, deleting nothing (as Curator): the touch node
   * goes ttl after its last touch, then the container. Idempotent.
   */
  async close(): Promise<void> {
    clearInterval(this.#timer);
    this.#timer = undefined;
    await this.#node.close();
  }

  /** With `await using`, {@link PersistentTtlNode.close} at the end of the scope. */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  /** One touch; errors are left for the next period (Curator logs them at debug level). */
  async #touch(): Promise<void> {
    const zk = this.#node.client;
    if (this.#touching || !zk || zk.state !== 'connected') return;
    this.#touching = true;
    try {
      try {
        await zk.setData(this.touchPath, null);
      } catch (err) {
        if (!(err instanceof NoNodeError)) throw err;
        // Curator's create().orSetData(): the container may be missing too (NoNode is left for the next period).
        await zk.create(this.touchPath, null, { mode: CreateMode.PERSISTENT_WITH_TTL, ttl: this.ttl, acl: this.#acl }).catch((e: unknown) => (e instanceof NodeExistsError ? zk.setData(this.touchPath, null) : Promise.reject(e)));
      }
      if (this.#timer) this.#touches++;
    } catch {
      // the next period tries again
    } finally {
      this.#touching = false;
    }
  }
}

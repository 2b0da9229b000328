/**
 * PersistentNode: Curator 5.4's `PersistentNode` (recipes.nodes), a node that stays present for
 * as long as the object is open, in any create mode, optionally protected.
 *
 * As Curator's (from its bytecode):
 * - the first create goes to the base path in the given mode (`_c_<uuid>-` before the name when
 *   protected); once a path is known, every re-create goes to that same path in the mode without
 *   the sequential flag (EPHEMERAL_SEQUENTIAL becomes EPHEMERAL, and so on), so a sequential
 *   node keeps its name across sessions;
 * - NodeExists adopts the existing node: it is watched and given our data (Curator's setData
 *   after NODEEXISTS); an exists watch re-creates the node when it is deleted, and is set again
 *   after a data change;
 * - a reconnect (Curator's RECONNECTED, which it also reports after a new session) runs the
 *   create again; NoAuth, or NoNode with parent creation off, stops until the next reconnect;
 * - close deletes the node (a guaranteed delete) and its watch; a create still in flight when
 *   closed has its node deleted once it answers.
 *
 * Unlike Curator, the session chain is explicit: a plain `ZooKeeper` ends with its session, so
 * re-creating after expiry needs a {@link RenewingClient}; with a plain client the node ends
 * (`ended` event) when the session does.
 */
import { ConnectionLossError, CreateMode, InvalidArgumentError, NodeExistsError, NoNodeError, parentPath, SessionExpiredError, validatePath, ZooKeeperError, type ACL, type CallOptions, type WatchedEvent, type ZooKeeper } from '@zk/protocol';
import { LockStateError } from '../errors.js';
import { recipeACL } from '../internal/acl.js';
import { connectedUnless, deleteGuaranteed } from '../internal/attempt.js';
import { checkClient } from '../internal/client.js';
import { ensureContainers } from '../internal/engine.js';
import { newAttemptId, protectedName } from '../internal/names.js';
import { findProtected, initialWait, pauseUnless, RETRY_FIRST_MS, RETRY_MAX_MS, toBytes, type InitialWaitOptions, type PersistentNodeEvent } from '../internal/persistent-node-support.js';
import { RenewingClient } from '../renewing-client.js';

export type { InitialWaitOptions, PersistentNodeEvent } from '../internal/persistent-node-support.js';

/** The create modes a PersistentNode accepts: `CreateMode.PERSISTENT` ... `PERSISTENT_SEQUENTIAL_WITH_TTL` (0..6). */
export type PersistentNodeMode = (typeof CreateMode)[keyof typeof CreateMode];

/** Options of a {@link PersistentNode}. */
export interface PersistentNodeOptions {
  /** The create mode (default `CreateMode.EPHEMERAL`, Curator's PersistentEphemeralNode). */
  mode?: PersistentNodeMode;
  /** Curator's `withProtection()`: a `_c_<uuid>-` prefix on the node name, so a create whose reply was lost is found again (default false). */
  protection?: boolean;
  /** The node's data (default empty). */
  data?: Uint8Array | string;
  /** Time to live in ms, for the TTL modes only. */
  ttl?: number;
  /** Create missing parents as containers (Curator's `useParentCreation`, default true). */
  parents?: boolean;
  /** ACL of the node and of the container parents (default: the client's `acl` option, else OPEN_ACL_UNSAFE). */
  acl?: readonly ACL[] | undefined;
}

const SEQUENTIAL: ReadonlySet<number> = new Set([CreateMode.PERSISTENT_SEQUENTIAL, CreateMode.EPHEMERAL_SEQUENTIAL, CreateMode.PERSISTENT_SEQUENTIAL_WITH_TTL]);
const TTL_MODES: ReadonlySet<number> = new Set([CreateMode.PERSISTENT_WITH_TTL, CreateMode.PERSISTENT_SEQUENTIAL_WITH_TTL]);
/** Curator's `getCreateMode(true)`: the mode of a re-create at a known path. */
const RECREATE_MODE: Readonly<Record<number, number>> = {
  [CreateMode.EPHEMERAL_SEQUENTIAL]: CreateMode.EPHEMERAL,
  [CreateMode.PERSISTENT_SEQUENTIAL]: CreateMode.PERSISTENT,
  [CreateMode.PERSISTENT_SEQUENTIAL_WITH_TTL]: CreateMode.PERSISTENT_WITH_TTL,
};
const TERMINAL = new Set(['expired', 'closed', 'authFailed']);

/**
 * A node kept present until `close()`: re-created when someone deletes it, after a reconnect
 * and (with a {@link RenewingClient}) after session expiry; its data set with `setData` applies
 * to the node and to every re-creation. Wire-compatible with Curator's `PersistentNode`.
 *
 * @example
 * ```ts
 * await using node = new PersistentNode(sessions, '/services/api/instance', { mode: CreateMode.EPHEMERAL, data: 'host-1:8080' });
 * node.start();
 * const path = await node.waitForInitialCreate({ timeout: 5_000 });
 * ```
 */
export class PersistentNode implements AsyncDisposable {
  /** The path asked for (the actual path differs for sequential and protected nodes: see {@link actualPath}). */
  readonly basePath: string;
  /** The create mode. */
  readonly mode: PersistentNodeMode;
  /** Whether the name carries Curator's protected prefix. */
  readonly protection: boolean;
  readonly #source: ZooKeeper | RenewingClient;
  readonly #ttl: number | undefined;
  readonly #parents: boolean;
  readonly #acl: readonly ACL[] | undefined;
  readonly #attemptId = newAttemptId();
  /** Deleted on close (PersistentTtlNode keeps its container). */
  readonly #deleteOnClose: boolean;
  #data: Buffer;
  #state: 'latent' | 'started' | 'closed' = 'latent';
  #zk: ZooKeeper | undefined;
  #path: string | undefined;
  #created = false;
  #running: Promise<void> | undefined;
  #again = false;
  /** A protected sequential create failed with ConnectionLoss: look for its node before creating again. */
  #unknownCreate = false;
  #failure: Error | undefined;
  #ended: Error | undefined;
  #offState: (() => void) | undefined;
  #offRenew: (() => void) | undefined;
  readonly #stop = new AbortController();
  readonly #listeners = new Set<(event: PersistentNodeEvent) => void>();
  readonly #onWatch = (event: WatchedEvent): void => {
    if (this.#state !== 'started' || event.path !== this.#path) return;
    if (event.type === 'NodeDeleted') this.#kick();
    else if (event.type === 'NodeDataChanged' || event.type === 'NodeCreated') void this.#rewatch();
  };

  /**
   * `client`: a `ZooKeeper` (the node ends with its session) or a {@link RenewingClient} (the
   * node is re-created in each new session). Bad input (path, mode, ttl, data, acl) throws
   * InvalidArgumentError; nothing is sent before `start()`.
   */
  constructor(client: ZooKeeper | RenewingClient, path: string, options: PersistentNodeOptions = {}, internal: { deleteOnClose?: boolean } = {}) {
    validatePath(path);
    if (path === '/') throw new InvalidArgumentError('path', 'a PersistentNode cannot be the root');
    const mode = options.mode ?? CreateMode.EPHEMERAL;
    if (!Number.isInteger(mode) || mode < 0 || mode > 6) throw new InvalidArgumentError('mode', `must be a CreateMode (0..6), got ${String(mode)}`);
    if (TTL_MODES.has(mode) !== (options.ttl !== undefined)) throw new InvalidArgumentError('ttl', TTL_MODES.has(mode) ? 'a TTL mode needs a ttl' : 'ttl applies only to the TTL modes');
    if (options.ttl !== undefined && (!Number.isInteger(options.ttl) || options.ttl <= 0 || options.ttl > 0xff_ffff_ffff)) throw new InvalidArgumentError('ttl', `must be a positive integer of ms, got ${String(options.ttl)}`);
    if (!(client instanceof RenewingClient)) checkClient(client);
    this.#data = toBytes(options.data ?? null, 'data');
    this.#acl = recipeACL(options.acl);
    this.#source = client;
    this.basePath = path;
    this.mode = mode as PersistentNodeMode;
    this.protection = options.protection ?? false;
    this.#ttl = options.ttl;
    this.#parents = options.parents ?? true;
    this.#deleteOnClose = internal.deleteOnClose ?? true;
  }

  /** The node's current path (the created name for sequential or protected nodes), or `undefined` before the first create. */
  get actualPath(): string | undefined {
    return this.#path;
  }

  /** A copy of the data the node is given. */
  get data(): Buffer {
    return Buffer.from(this.#data);
  }

  /** The client in use, once started (with a RenewingClient, the current session's). */
  get client(): ZooKeeper | undefined {
    return this.#zk;
  }

  /** Starts creating the node in the background (LockStateError when started twice or after close). */
  start(): void {
    if (this.#state !== 'latent') throw new LockStateError(this.basePath, `PersistentNode ${this.basePath} was already ${this.#state === 'closed' ? 'closed' : 'started'}`);
    this.#state = 'started';
    if (this.#source instanceof RenewingClient) this.#offRenew = this.#source.onRenew(() => this.#kick());
    this.#kick();
  }

  /**
   * Resolves with the node's path once it has been created (or adopted) for the first time.
   * Rejects with {@link PersistentNodeTimeoutError} / {@link PersistentNodeAbortedError}, with the
   * server's typed error when the create is refused (NoAuth; NoNode with `parents: false`), with
   * LeaseLostError when a plain client's session ended first, LockStateError unless started.
   */
  waitForInitialCreate(options: InitialWaitOptions = {}): Promise<string> {
    if (this.#state !== 'started') return Promise.reject(new LockStateError(this.basePath, `PersistentNode ${this.basePath} is ${this.#state === 'closed' ? 'closed' : 'not started'}`));
    return initialWait(this.basePath, options, {
      now: () => (this.#created && this.#path !== undefined ? this.#path : (this.#ended ?? this.#failure)),
      subscribe: (listener) => this.onEvent(listener),
    });
  }

  /**
   * Sets the data: stored for every later create, and written to the current node when there is
   * one and the client is connected (a write cut off by a disconnection is made again by the
   * re-create after the reconnect). A refused write (NoAuth) rejects with the server's error.
   */
  async setData(data: Uint8Array | string, options: CallOptions = {}): Promise<void> {
    const bytes = toBytes(data, 'data');
    if (this.#state === 'closed') throw new LockStateError(this.basePath, `PersistentNode ${this.basePath} is closed`);
    this.#data = bytes;
    const zk = this.#zk;
    const path = this.#path;
    if (this.#state !== 'started' || !this.#created || path === undefined || zk?.state !== 'connected') return;
    try {
      await zk.setData(path, bytes, options);
    } catch (err) {
      if (err instanceof NoNodeError) return this.#kick();
      if (err instanceof ZooKeeperError && err.isRetryable) return;
      throw err;
    }
  }

  /** Calls `listener` with each event (`created`, `failed`, `uncertain`, `ended`); returns a function that stops it. */
  onEvent(listener: (event: PersistentNodeEvent) => void): () => void {
    this.#listeners.add(listener);
    return () => void this.#listeners.delete(listener);
  }

  /** Stops keeping the node, deletes it (guaranteed delete) and removes its watch. Idempotent. */
  async close(): Promise<void> {
    if (this.#state === 'closed') return;
    const wasStarted = this.#state === 'started';
    this.#state = 'closed';
    this.#stop.abort();
    this.#offState?.();
    this.#offRenew?.();
    if (!wasStarted) return;
    if (!this.#created) this.#emit({ type: 'ended', error: new LockStateError(this.basePath, `PersistentNode ${this.basePath} was closed`) });
    await this.#running?.catch(() => undefined);
    const zk = this.#zk;
    const path = this.#path;
    this.#listeners.clear();
    if (zk === undefined || path === undefined) return;
    if (this.#deleteOnClose && !TERMINAL.has(zk.state)) await deleteNow(zk, path);
    zk.removeLocalWatch('exist', path, this.#onWatch);
    zk.removeLocalWatch('data', path, this.#onWatch);
  }

  /** With `await using`, {@link PersistentNode.close} at the end of the scope. */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  #emit(event: PersistentNodeEvent): void {
    for (const listener of [...this.#listeners]) {
      try {
        listener(event);
      } catch {
        // a listener's throw is its own
      }
    }
  }

  #kick(): void {
    if (this.#state !== 'started') return;
    if (this.#running) {
      this.#again = true;
      return;
    }
    this.#running = this.#ensure().finally(() => {
      this.#running = undefined;
      if (this.#again && this.#state === 'started') this.#kick();
    });
  }

  /** The client to use now: the plain one, or the RenewingClient's current session. */
  async #client(): Promise<ZooKeeper | undefined> {
    const source = this.#source;
    const zk = source instanceof RenewingClient ? await raceStop(source.client(), this.#stop.signal) : source;
    if (zk !== this.#zk) {
      this.#offState?.();
      this.#zk = zk;
      let wasConnected = zk.state === 'connected';
      this.#offState = zk.onStateChange((state) => {
        if (state === 'connected' && !wasConnected) this.#kick(); // Curator's RECONNECTED
        wasConnected = state === 'connected';
        if (TERMINAL.has(state) && !(source instanceof RenewingClient)) this.#end(state);
      });
    }
    if (TERMINAL.has(zk.state) && !(source instanceof RenewingClient)) return void this.#end(zk.state);
    return zk;
  }

  #end(state: string): void {
    if (this.#ended || this.#state !== 'started') return;
    this.#ended = new LockStateError(this.basePath, `the session ${state}: PersistentNode ${this.basePath} is no longer kept (give it a RenewingClient to follow new sessions)`, {
      cause: state === 'expired' ? new SessionExpiredError() : undefined,
    });
    this.#emit({ type: 'ended', error: this.#ended });
  }

  async #ensure(): Promise<void> {
    for (let pause = RETRY_FIRST_MS; this.#state === 'started' && !this.#ended; ) {
      this.#again = false;
      let zk: ZooKeeper | undefined;
      try {
        zk = await this.#client();
        if (!zk) return;
        await connectedUnless(zk, this.#stop.signal);
        await this.#createAndWatch(zk);
        if (!this.#again) return;
      } catch (err) {
        if (this.#state !== 'started') return;
        if (err instanceof SessionExpiredError || (err instanceof ZooKeeperError && err.isRetryable)) {
          // A new connection or session is waited for above; a retryable error while connected
          // (a throttled server) is not tried again at once.
          if (zk?.state === 'connected') await pauseUnless(pause * (0.5 + Math.random() / 2), this.#stop.signal);
          pause = Math.min(pause * 2, RETRY_MAX_MS);
          continue;
        }
        this.#failure = err instanceof Error ? err : new Error(String(err));
        this.#emit({ type: 'failed', error: this.#failure });
        return; // tried again at the next reconnect, renewal or deletion
      }
    }
  }

  async #createAndWatch(zk: ZooKeeper): Promise<void> {
    const known = this.#path;
    let path: string | undefined;
    let adopted = false;
    if (known === undefined && this.#unknownCreate) {
      path = await findProtected(zk, this.basePath, this.#attemptId, this.mode === CreateMode.EPHEMERAL_SEQUENTIAL);
      this.#unknownCreate = false;
    }
    if (path === undefined) {
      const target = known ?? (this.protection ? `${parentPrefix(this.basePath)}${protectedName(this.#attemptId, baseNameOf(this.basePath))}` : this.basePath);
      try {
        path = await this.#create(zk, target, known === undefined ? this.mode : (RECREATE_MODE[this.mode] ?? this.mode));
      } catch (err) {
        if (!(err instanceof NodeExistsError)) {
          if (err instanceof ConnectionLossError && known === undefined && SEQUENTIAL.has(this.mode)) {
            if (this.protection) this.#unknownCreate = true;
            else this.#emit({ type: 'uncertain', path: this.basePath });
          }
          throw err;
        }
        path = target;
        adopted = true;
      }
    }
    this.#path = path; // close() deletes it, even when closed while this create was answered
    if (this.#state !== 'started') return;
    const stat = await zk.exists(path, { watch: this.#onWatch });
    if (stat === null) return void (this.#again = true);
    if (adopted) await zk.setData(path, this.#data);
    this.#failure = undefined;
    const first = !this.#created;
    this.#created = true;
    if (!adopted || first) this.#emit({ type: 'created', path });
  }

  async #create(zk: ZooKeeper, path: string, mode: number): Promise<string> {
    const options = { mode, acl: this.#acl, ...(TTL_MODES.has(mode) ? { ttl: this.#ttl } : {}) };
    try {
      return await zk.create(path, this.#data, options);
    } catch (err) {
      const parent = parentPath(path) ?? '/';
      if (!(err instanceof NoNodeError) || !this.#parents || parent === '/') throw err;
      await ensureContainers(zk, parent, undefined, this.#acl);
      return await zk.create(path, this.#data, options);
    }
  }

  /** After a data change: watch again (re-create when the node is gone). */
  async #rewatch(): Promise<void> {
    const zk = this.#zk;
    const path = this.#path;
    if (!zk || path === undefined) return;
    const stat = await zk.exists(path, { watch: this.#onWatch }).catch(() => undefined);
    if (stat === null) this.#kick();
  }
}

function parentPrefix(path: string): string {
  return path.slice(0, path.lastIndexOf('/') + 1);
}

function baseNameOf(path: string): string {
  return path.slice(path.lastIndexOf('/') + 1);
}

/** Deletes our node on close: at once when connected, else (or when cut off) in the background until the node or the session is gone. */
async function deleteNow(zk: ZooKeeper, path: string): Promise<void> {
  try {
    if (zk.state === 'connected') return await zk.delete(path);
  } catch (err) {
    if (err instanceof NoNodeError || err instanceof SessionExpiredError) return;
    if (!(err instanceof ZooKeeperError) || !err.isRetryable) throw err;
  }
  void deleteGuaranteed(zk, path).catch(() => undefined);
}

function raceStop<T>(promise: Promise<T>, stop: AbortSignal): Promise<T> {
  if (stop.aborted) return Promise.reject(stop.reason);
  return new Promise<T>((resolve, reject) => {
    const onStop = () => reject(stop.reason);
    stop.addEventListener('abort', onStop, { once: true });
    promise.then(
      (v) => (stop.removeEventListener('abort', onStop), resolve(v)),
      (e: unknown) => (stop.removeEventListener('abort', onStop), reject(e)),
    );
  });
}

/**
 * RenewingClient: a chain of sessions, for the recipes that must outlive one (PersistentNode,
 * GroupMember). A `ZooKeeper` client ends with its session; Curator's framework instead opens a
 * new ZooKeeper handle after expiry and reports RECONNECTED, and its PersistentNode re-creates
 * its node then. This class plays that part: it opens a client with the caller's function and,
 * whenever that client's session expires, opens the next one and tells its listeners.
 */
import { InvalidArgumentError, type ZooKeeper } from '@zk/protocol';
import { LockStateError } from './errors.js';
import { brandClass } from './internal/brand.js';
import { checkClient } from './internal/client.js';
import { pauseUnless, RETRY_FIRST_MS, RETRY_MAX_MS } from './internal/persistent-node-support.js';

/**
 * The clients of a chain of sessions: one at a time, the next opened (with the function given)
 * as soon as the current one's session expires. The clients it opens are its own: `close()`
 * closes the current one. A client closed by someone else, or refused for its credentials
 * (`authFailed`), ends the chain (no new session would do better).
 *
 * @example
 * ```ts
 * await using sessions = new RenewingClient(() => ZooKeeper.connect('127.0.0.1:2181'));
 * await using member = new GroupMember(sessions, '/services/api', 'worker-1');
 * ```
 */
export class RenewingClient implements AsyncDisposable {
  static {
    // The recipes tell it from a ZooKeeper with instanceof: true for one made by another copy of this package too.
    brandClass(Symbol.for('@zk/locks:renewing-client'), this, 'RenewingClient');
  }
  readonly #connect: () => Promise<ZooKeeper>;
  #current: ZooKeeper | undefined;
  #opening: Promise<ZooKeeper> | undefined;
  #offState: (() => void) | undefined;
  #closed = false;
  #ended: Error | undefined;
  readonly #listeners = new Set<(zk: ZooKeeper) => void>();
  readonly #stop = new AbortController();

  /** `connect` opens one connected client (e.g. `() => ZooKeeper.connect(hosts, options)`); it is first called by {@link client}. */
  constructor(connect: () => Promise<ZooKeeper>) {
    if (typeof connect !== 'function') throw new InvalidArgumentError('connect', `must be a function returning a connected ZooKeeper client, got ${typeof connect}`);
    this.#connect = connect;
  }

  /** The client of the current session, if one is open. */
  get current(): ZooKeeper | undefined {
    return this.#current;
  }

  /** Why the chain ended (closed elsewhere, auth failed), or `undefined` while it goes on. */
  get ended(): Error | undefined {
    return this.#ended;
  }

  /**
   * The current client, opening the first (or, after an expiry, the next) one. Rejects with
   * {@link LockStateError} once closed or ended.
   */
  client(): Promise<ZooKeeper> {
    if (this.#closed || this.#ended) return Promise.reject(this.#ended ?? new LockStateError('/', 'the RenewingClient is closed'));
    if (this.#current && this.#current.state !== 'expired') return Promise.resolve(this.#current);
    this.#opening ??= this.#open().finally(() => (this.#opening = undefined));
    return this.#opening;
  }

  /** Calls `listener` with every client opened after an expiry (not the first); returns a function that stops it. */
  onRenew(listener: (zk: ZooKeeper) => void): () => void {
    this.#listeners.add(listener);
    return () => void this.#listeners.delete(listener);
  }

  /** Closes the current client (its ephemeral nodes go at once) and ends the chain. Idempotent. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#stop.abort();
    this.#offState?.();
    this.#listeners.clear();
    const zk = this.#current;
    this.#current = undefined;
    await zk?.close();
  }

  /** With `await using`, {@link RenewingClient.close} at the end of the scope. */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  async #open(): Promise<ZooKeeper> {
    const renewal = this.#current !== undefined;
    for (let pause = RETRY_FIRST_MS; ; pause = Math.min(pause * 2, RETRY_MAX_MS)) {
      let zk: ZooKeeper | undefined;
      try {
        zk = await this.#connect();
        checkClient(zk);
      } catch (err) {
        if (!renewal) throw err; // the first connect's failure is the caller's to see
        await pauseUnless(pause * (0.5 + Math.random() / 2), this.#stop.signal);
        if (this.#closed) throw new LockStateError('/', 'the RenewingClient is closed');
        continue;
      }
      if (this.#closed) {
        await zk.close();
        throw new LockStateError('/', 'the RenewingClient is closed');
      }
      this.#adopt(zk);
      if (renewal) for (const listener of [...this.#listeners]) listener(zk);
      return zk;
    }
  }

  #adopt(zk: ZooKeeper): void {
    this.#offState?.();
    const previous = this.#current;
    this.#current = zk;
    if (previous && previous !== zk) void previous.close().catch(() => undefined);
    this.#offState = zk.onStateChange((state) => {
      if (this.#closed || this.#current !== zk) return;
      if (state === 'expired') void this.client().catch(() => undefined);
      else if (state === 'closed' || state === 'authFailed') this.#ended = new LockStateError('/', `the session's client was ${state === 'closed' ? 'closed by its owner' : 'refused for its credentials'}: no new session is opened`);
    });
  }
}

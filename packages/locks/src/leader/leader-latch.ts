/**
 * LeaderLatch: Curator's LeaderLatch, wire-compatible with it, on the acquire engine.
 */
import { InvalidArgumentError, validatePath, type ACL, type ZooKeeper } from '@zk/protocol';
import { LeaseLostError, LockAbortedError, LockStateError, LockTimeoutError } from '../errors.js';
import { recipeACL } from '../internal/acl.js';
import { Attempt, connectedUnless } from '../internal/attempt.js';
import { latchDriver } from '../internal/drivers.js';
import { acquireNode, type HeldNode } from '../internal/engine.js';
import { LATCH_LOCK_NAME } from '../internal/names.js';
import { guard, Lease, reasonOf, signalOf, type GuardOptions } from '../lease.js';
import { Leadership, LEADING, listParticipants, participantId, type Participant } from './leadership.js';
import { acquireTraced, leadershipChannel, traceAcquire, type LeadershipMessage } from '../diagnostics.js';

/** What a leadership wait tells its trace: the term's node and token. */
const termOf = (l: Leadership) => ({ node: l.node, fencingToken: l.fencingToken });

/** Options of a {@link LeaderLatch}. */
export interface LeaderLatchOptions extends GuardOptions {
  /** This participant's id, stored as its node's data (UTF-8), as Curator does. Default: `''`. */
  id?: string;
  /**
   * ACL of every node this latch creates, and of the container parents it makes when they are
   * missing (default: the client's `acl` connect option, else OPEN_ACL_UNSAFE). With
   * `CREATOR_ALL_ACL` on a client authenticated as, say, a digest user, only sessions of that
   * identity can join the election, delete or overwrite a participant's node, or remove the parents: any other session gets NoAuthError. Checked when the latch is made
   * (InvalidArgumentError).
   */
  acl?: readonly ACL[] | undefined;
}

/** Options of {@link LeaderLatch.leadership}. */
export interface LeadershipOptions {
  /** Give up waiting after this many ms ({@link LockTimeoutError}). Default: wait as long as it takes. */
  timeout?: number;
  /** Stop waiting ({@link LockAbortedError}). The latch stays in the election. */
  signal?: AbortSignal;
}

/** A change of leadership seen by one latch. */
export type LeadershipChange =
  /** We became leader: `leadership` is the new term. */
  | { readonly isLeader: true; readonly leadership: Leadership }
  /** Our term ended (`reason`: the {@link LeaseLostError} that ended it). */
  | { readonly isLeader: false; readonly reason: unknown };

/** Where a latch is in its life. */
export type LeaderLatchState = 'latent' | 'started' | 'closed';

const TERMINAL = new Set(['expired', 'closed', 'authFailed']);

/**
 * Leader election by latch (Curator's `LeaderLatch`): every participant keeps a protected
 * ephemeral-sequential node `_c_<uuid>-latch-<seq>` under the path, with its id as data; the
 * first node in Curator's order leads, and every other participant watches only the node right
 * before its own, so a change of leader wakes exactly one participant. Java processes with
 * `LeaderLatch` on the same path take part in the same election.
 *
 * Leadership comes as a {@link Leadership} (a lease on our node: `signal`, `fencingToken`,
 * `fenced()`), as change events ({@link LeaderLatch.onChange}, {@link LeaderLatch.changes}), and
 * as {@link LeaderLatch.hasLeadership}. A term ends when its signal aborts: the session
 * suspended past the grace, lost or expired, the node deleted, `leadership.release()` or
 * `close()`. The latch then queues again with a new node at the back (so every term has its own
 * node and a larger fencing token), unless it was closed or its session has ended. Unlike
 * Curator's, a term that was at risk never silently continues: the leader sees its signal abort
 * before any other participant can lead.
 *
 * @example
 * ```ts
 * await using latch = new LeaderLatch(zk, '/services/reports/leader', { id: 'worker-1' });
 * latch.start();
 * const leadership = await latch.leadership();
 * await runLeaderWork({ signal: leadership.signal, fencingToken: leadership.fencingToken });
 * ```
 */
export class LeaderLatch implements AsyncDisposable {
  /** The client the latch uses. */
  readonly zk: ZooKeeper;
  /** The election path. */
  readonly path: string;
  /** This participant's id. */
  readonly id: string;
  readonly #options: GuardOptions;
  readonly #data: Buffer;
  readonly #acl: readonly ACL[] | undefined;
  readonly #closing = new AbortController();
  readonly #listeners = new Set<(change: LeadershipChange) => void>();
  #state: LeaderLatchState = 'latent';
  #current: Leadership | undefined;
  #loop: Promise<void> | undefined;
  /** Why the latch stopped by itself (its session ended, or the server refused our node). */
  #failure: unknown;

  constructor(zk: ZooKeeper, path: string, options: LeaderLatchOptions = {}) {
    validatePath(path);
    this.id = participantId(options.id);
    this.zk = zk;
    this.path = path;
    this.#options = { suspendedGrace: options.suspendedGrace };
    this.#data = Buffer.from(this.id, 'utf8');
    this.#acl = recipeACL(options.acl);
  }

  /** `latent` before {@link start}, `started`, then `closed` (by {@link close}, or when the session ended). */
  get state(): LeaderLatchState {
    return this.#state;
  }

  /** True while we lead and the term is not at risk. */
  get hasLeadership(): boolean {
    return this.#current?.held ?? false;
  }

  /** The current term, while we lead. */
  get current(): Leadership | undefined {
    return this.#current?.held ? this.#current : undefined;
  }

  /**
   * Joins the election: creates our node in the background and keeps a node queued until
   * {@link close}. Throws {@link LockStateError} if started before or closed.
   */
  start(): void {
    if (this.#state !== 'latent') throw new LockStateError(this.path, `LeaderLatch on ${this.path} cannot be started: it is ${this.#state}`);
    this.#state = 'started';
    this.#loop = this.#run();
  }

  /**
   * Resolves with our leadership once we lead (at once if we do). Rejects with
   * {@link LockTimeoutError}, {@link LockAbortedError}, {@link LockStateError} when the latch is
   * closed or not started, or the {@link LeaseLostError} that stopped the latch.
   */
  leadership(options: LeadershipOptions = {}): Promise<Leadership> {
    if (this.current === undefined && acquireTraced()) return traceAcquire('leader-latch', this.zk, this.path, options.timeout, () => this.#leadership(options), termOf);
    return this.#leadership(options);
  }

  #leadership(options: LeadershipOptions): Promise<Leadership> {
    if (options.timeout !== undefined && (!Number.isFinite(options.timeout) || options.timeout < 0)) {
      return Promise.reject(new InvalidArgumentError('timeout', `must be a number of ms >= 0, got ${String(options.timeout)}`));
    }
    if (options.signal?.aborted) return Promise.reject(LEADING.aborted(this.path, options.signal.reason));
    const now = this.current;
    if (now) return Promise.resolve(now);
    if (this.#state !== 'started') return Promise.reject(this.#stoppedError());
    if (options.timeout === 0) return Promise.reject(LEADING.timeout(this.path, 0));
    // The attempt bounds the wait: deadline, signal, and the session (a waiter gives up at `lost`,
    // as an acquire does; the latch itself stays queued and rejoins once a server answers).
    const attempt = new Attempt(this.zk, this.path, options.timeout, options.signal, LEADING);
    return new Promise<Leadership>((resolve, reject) => {
      const finish = (err: unknown, leadership?: Leadership) => {
        off();
        attempt.end();
        this.#closing.signal.removeEventListener('abort', onClose);
        attempt.signal.removeEventListener('abort', onStop);
        if (leadership) resolve(leadership);
        else reject(err);
      };
      const off = this.onChange((change) => change.isLeader && finish(undefined, change.leadership));
      const onClose = () => finish(this.#stoppedError());
      const onStop = () => finish(attempt.signal.reason);
      this.#closing.signal.addEventListener('abort', onClose, { once: true });
      if (attempt.signal.aborted) return onStop();
      attempt.signal.addEventListener('abort', onStop, { once: true });
    });
  }

  /** Listens to leadership changes; returns the function that stops listening. */
  onChange(listener: (change: LeadershipChange) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /**
   * The leadership changes from now on, as an async iterable; it ends when the latch closes or
   * `signal` aborts. If we lead already, the first change is the current term.
   *
   * @example
   * ```ts
   * for await (const change of latch.changes({ signal })) {
   *   if (change.isLeader) void leaderWork(change.leadership);
   * }
   * ```
   */
  async *changes(options: { signal?: AbortSignal } = {}): AsyncGenerator<LeadershipChange, void, undefined> {
    const queue: LeadershipChange[] = [];
    let wake: (() => void) | undefined;
    const poke = () => {
      wake?.();
      wake = undefined;
    };
    const off = this.onChange((change) => {
      queue.push(change);
      poke();
    });
    const signal = options.signal;
    signal?.addEventListener('abort', poke, { once: true });
    this.#closing.signal.addEventListener('abort', poke, { once: true });
    const now = this.current;
    if (now) queue.push({ isLeader: true, leadership: now });
    try {
      for (;;) {
        while (queue.length > 0) yield queue.shift() as LeadershipChange;
        if (signal?.aborted || this.#state === 'closed') return;
        await new Promise<void>((resolve) => (wake = resolve));
      }
    } finally {
      off();
      signal?.removeEventListener('abort', poke);
      this.#closing.signal.removeEventListener('abort', poke);
    }
  }

  /** Every participant on the path (ours and other processes', Curator's too), leader first. */
  participants(): Promise<Participant[]> {
    return listParticipants(this.zk, this.path, LATCH_LOCK_NAME);
  }

  /** The current leader, or undefined when nobody takes part. */
  async leader(): Promise<Participant | undefined> {
    return (await this.participants())[0];
  }

  /**
   * Leaves the election: the current term's signal aborts at once, then our node is deleted (the
   * next participant leads). Idempotent; a latch never started is just marked closed.
   */
  async close(): Promise<void> {
    if (this.#state === 'closed' && this.#closing.signal.aborted) return this.#loop;
    this.#state = 'closed';
    if (!this.#closing.signal.aborted) this.#closing.abort(new LockStateError(this.path, `LeaderLatch on ${this.path} was closed`));
    await this.#loop;
  }

  /** `await using latch = new LeaderLatch(...)`: {@link LeaderLatch.close} at the end of the scope. */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  #stoppedError(): unknown {
    if (this.#failure !== undefined) return this.#failure;
    return new LockStateError(this.path, `LeaderLatch on ${this.path} is ${this.#state}`);
  }

  #emit(change: LeadershipChange): void {
    for (const listener of [...this.#listeners]) {
      try {
        listener(change);
      } catch (err) {
        queueMicrotask(() => {
          throw err;
        });
      }
    }
  }

  /** Queue, lead, queue again: until closed or the session ends. */
  async #run(): Promise<void> {
    const stop = this.#closing.signal;
    while (!stop.aborted) {
      let held: HeldNode;
      try {
        held = await acquireNode({
          zk: this.zk,
          path: this.path,
          driver: latchDriver,
          data: this.#data,
          acl: this.#acl,
          timeout: undefined,
          signal: stop,
        });
      } catch (err) {
        if (stop.aborted) break;
        if (await this.#waitOut(err)) continue;
        break;
      }
      const core = guard(this.zk, this.path, held.nodePath, held.czxid, this.#options, () => undefined, false, 'leader-latch');
      const lease = new Lease(core);
      const leadership = new Leadership(lease, this.id);
      const ended = new Promise<void>((resolve) => signalOf(core).addEventListener('abort', () => resolve(), { once: true }));
      const onClose = () => void leadership.release().catch(() => undefined);
      if (stop.aborted) onClose();
      else {
        stop.addEventListener('abort', onClose, { once: true });
        this.#current = leadership;
        if (leadershipChannel.hasSubscribers) leadershipChannel.publish({ kind: 'leader-latch', path: this.path, id: this.id, sessionId: this.zk.sessionId, isLeader: true, fencingToken: core.fencingToken } satisfies LeadershipMessage);
        this.#emit({ isLeader: true, leadership });
      }
      await ended;
      stop.removeEventListener('abort', onClose);
      this.#current = undefined;
      const reason: unknown = reasonOf(core);
      // A lost term's node may still exist: deleting it (in the background until a server answers)
      // makes the next term a new node, with a larger fencing token.
      const released = leadership.release();
      if (leadershipChannel.hasSubscribers) leadershipChannel.publish({ kind: 'leader-latch', path: this.path, id: this.id, sessionId: this.zk.sessionId, isLeader: false, fencingToken: core.fencingToken, reason } satisfies LeadershipMessage);
      if (!stop.aborted) this.#emit({ isLeader: false, reason });
      await released.catch(() => undefined);
      if (TERMINAL.has(this.zk.state)) {
        this.#fail(reason);
        break;
      }
    }
    this.#state = 'closed';
  }

  /**
   * After a failed queueing: waits for the session to answer again when it was only lost, and
   * says whether to go on. A session that ended, or a refusal from the server, stops the latch.
   */
  async #waitOut(err: unknown): Promise<boolean> {
    if (!(err instanceof LeaseLostError) || TERMINAL.has(this.zk.state)) {
      this.#fail(err);
      return false;
    }
    const stop = this.#closing.signal;
    try {
      await connectedUnless(this.zk, stop);
      return true;
    } catch (e) {
      if (!stop.aborted) this.#fail(e);
      return false;
    }
  }

  #fail(err: unknown): void {
    this.#failure ??= err;
    this.#state = 'closed';
    if (!this.#closing.signal.aborted) this.#closing.abort(err);
  }
}

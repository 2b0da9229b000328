/**
 * LeaderSelector: Curator's LeaderSelector (leadership as a mutex held while a function runs),
 * wire-compatible with it.
 */
import { validatePath, type ACL, type ZooKeeper } from '@zk/protocol';
import { LeaseLostError, LeaseReleasedError, LockStateError } from '../errors.js';
import { connectedUnless } from '../internal/attempt.js';
import { MUTEX_LOCK_NAME } from '../internal/names.js';
import type { GuardOptions } from '../lease.js';
import { asLeadershipError, Leadership, listParticipants, participantId, type Participant } from './leadership.js';
import type { AcquireOptions } from '../locks/lock.js';
import { Mutex } from '../locks/mutex.js';
import { leadershipChannel, type LeadershipMessage, type LockKind } from '../diagnostics.js';

/** The selector's mutex: Curator's layout, named as a leadership wait on the diagnostics channels. */
class SelectorMutex extends Mutex {
  /** @internal */
  protected override get kind(): LockKind {
    return 'leader-selector';
  }
}

/** Options of a {@link LeaderSelector}. */
export interface LeaderSelectorOptions extends GuardOptions {
  /** This participant's id, stored as its lock node's data (UTF-8), as Curator does. Default: `''`. */
  id?: string;
  /**
   * ACL of every node this selector creates, and of the container parents it makes when they are
   * missing (default: the client's `acl` connect option, else OPEN_ACL_UNSAFE). With
   * `CREATOR_ALL_ACL` on a client authenticated as, say, a digest user, only sessions of that
   * identity can join the election, delete or overwrite a participant's node, or remove the parents: any other session gets NoAuthError. Checked when the selector is made
   * (InvalidArgumentError).
   */
  acl?: readonly ACL[] | undefined;
}

/** Options of {@link LeaderSelector.start}. */
export interface StartOptions {
  /** Queue again after each term (Curator's `autoRequeue()`). Default: false (one term, then stop). */
  autoRequeue?: boolean;
  /** Called with what a term's function threw (the selector goes on, as Curator's does). Default: the error is dropped. */
  onError?: (err: unknown) => void;
}

/** Options of one {@link LeaderSelector.run}. */
export type RunOptions = Pick<AcquireOptions, 'timeout' | 'signal'>;

const TERMINAL = new Set(['expired', 'closed', 'authFailed']);

/**
 * Leader election by mutex (Curator's `LeaderSelector`): participants queue on a {@link Mutex}
 * whose node data is their id; the holder leads while its function runs, and leadership passes
 * when the function returns. Java processes with `LeaderSelector` on the same path queue in the
 * same line.
 *
 * The function gets a {@link Leadership}: its `signal` aborts as soon as leadership is at risk
 * (as a lease's does), when {@link LeaderSelector.interruptLeadership} or
 * {@link LeaderSelector.close} is called, or when the caller's signal aborts. Leadership passes
 * on only once the function has returned: stop the work when the signal aborts, and pass
 * `fencingToken` to what you write.
 *
 * @example
 * ```ts
 * const selector = new LeaderSelector(zk, '/services/billing/leader', { id: 'billing-1' });
 * selector.start(async (leadership) => {
 *   await billingLoop({ signal: leadership.signal, fencingToken: leadership.fencingToken });
 * }, { autoRequeue: true });
 * // ...
 * await selector.close();
 * ```
 */
export class LeaderSelector implements AsyncDisposable {
  /** The client the selector uses. */
  readonly zk: ZooKeeper;
  /** The election path. */
  readonly path: string;
  /** This participant's id. */
  readonly id: string;
  readonly #mutex: Mutex;
  readonly #closing = new AbortController();
  #cancel: AbortController | undefined;
  #current: Leadership | undefined;
  #running = false;
  #started = false;
  #requeue = false;
  #loop: Promise<void> | undefined;
  /** The term of a running or queued {@link run}, settled once it has given leadership up. */
  #term: Promise<unknown> | undefined;

  constructor(zk: ZooKeeper, path: string, options: LeaderSelectorOptions = {}) {
    validatePath(path);
    this.id = participantId(options.id);
    this.zk = zk;
    this.path = path;
    this.#mutex = new SelectorMutex(zk, path, { data: Buffer.from(this.id, 'utf8'), suspendedGrace: options.suspendedGrace, acl: options.acl });
  }

  /** True while our function runs as leader and the term is not at risk. */
  get hasLeadership(): boolean {
    return this.#current?.held ?? false;
  }

  /**
   * One term: waits for leadership, runs `fn` with it, then gives leadership up (also when `fn`
   * throws) and returns what `fn` returned. Rejects like an acquire (`LockTimeoutError`,
   * `LockAbortedError`, `LeaseLostError`), and with {@link LockStateError} when the selector is
   * closed or a term is already running or queued on it.
   */
  run<T>(fn: (leadership: Leadership) => Promise<T> | T, options: RunOptions = {}): Promise<T> {
    if (this.#closing.signal.aborted) return Promise.reject(new LockStateError(this.path, `LeaderSelector on ${this.path} is closed`));
    if (this.#running) return Promise.reject(new LockStateError(this.path, `LeaderSelector on ${this.path} already has a term running or queued; run() cannot be entered again`));
    const term = this.#run(fn, options);
    this.#term = term.catch(() => undefined);
    return term;
  }

  /** Tells `zk:leadership` that a term began or ended. */
  #announce(isLeader: boolean, fencingToken: bigint, reason: unknown): void {
    if (leadershipChannel.hasSubscribers) leadershipChannel.publish({ kind: 'leader-selector', path: this.path, id: this.id, sessionId: this.zk.sessionId, isLeader, fencingToken, reason } satisfies LeadershipMessage);
  }

  async #run<T>(fn: (leadership: Leadership) => Promise<T> | T, options: RunOptions): Promise<T> {
    this.#running = true;
    const cancel = new AbortController();
    this.#cancel = cancel;
    const onClose = () => cancel.abort(this.#closing.signal.reason);
    this.#closing.signal.addEventListener('abort', onClose, { once: true });
    const onCaller = () => cancel.abort(options.signal?.reason);
    if (options.signal?.aborted) onCaller();
    else options.signal?.addEventListener('abort', onCaller, { once: true });
    try {
      // The mutex's timeout and abort say "lock": said as leadership's here.
      const lease = await this.#mutex.acquire({ timeout: options.timeout, signal: cancel.signal, owner: cancel }).catch((err: unknown) => Promise.reject(asLeadershipError(this.path, err)));
      const leadership = new Leadership(lease, this.id, cancel.signal);
      this.#current = leadership;
      this.#announce(true, lease.fencingToken, undefined);
      try {
        return await fn(leadership);
      } finally {
        this.#current = undefined;
        const reason = lease.signal.aborted ? lease.signal.reason : undefined;
        await leadership.release();
        this.#announce(false, lease.fencingToken, reason);
      }
    } finally {
      this.#closing.signal.removeEventListener('abort', onClose);
      options.signal?.removeEventListener('abort', onCaller);
      this.#cancel = undefined;
      this.#running = false;
    }
  }

  /**
   * Runs `fn` in the background each time we lead: once, or again after each term with
   * `autoRequeue` (or after {@link requeue}). Stops at {@link close} or when the session ends.
   * Throws {@link LockStateError} if started before or closed.
   */
  start(fn: (leadership: Leadership) => Promise<unknown> | unknown, options: StartOptions = {}): void {
    if (this.#closing.signal.aborted) throw new LockStateError(this.path, `LeaderSelector on ${this.path} is closed`);
    if (this.#started || this.#running) throw new LockStateError(this.path, `LeaderSelector on ${this.path} was started already`);
    this.#started = true;
    this.#loop = this.#terms(fn, options);
  }

  /**
   * Asks for one more term after the current one (for a selector started without
   * `autoRequeue`). Returns false when the selector is not started or closed.
   */
  requeue(): boolean {
    if (!this.#started || this.#closing.signal.aborted) return false;
    this.#requeue = true;
    return true;
  }

  /** Aborts the current term's signal (its function should return; leadership then passes on). */
  interruptLeadership(): void {
    this.#cancel?.abort(new LeaseReleasedError(this.path, `leadership of ${this.path} interrupted (interruptLeadership())`));
  }

  /** Every participant queued on the path (ours and other processes', Curator's too), leader first. */
  participants(): Promise<Participant[]> {
    return listParticipants(this.zk, this.path, MUTEX_LOCK_NAME);
  }

  /** The current leader, or undefined when nobody takes part. */
  async leader(): Promise<Participant | undefined> {
    return (await this.participants())[0];
  }

  /**
   * Leaves the election: a queued term is abandoned (its node removed), a running term's signal
   * aborts, and this resolves once its function has returned and leadership was given up.
   * Idempotent.
   */
  async close(): Promise<void> {
    if (!this.#closing.signal.aborted) this.#closing.abort(new LockStateError(this.path, `LeaderSelector on ${this.path} was closed`));
    await this.#loop;
    await this.#term;
  }

  /** `await using selector = new LeaderSelector(...)`: {@link LeaderSelector.close} at the end of the scope. */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  async #terms(fn: (leadership: Leadership) => Promise<unknown> | unknown, options: StartOptions): Promise<void> {
    const stop = this.#closing.signal;
    let requeue = true;
    while (requeue && !stop.aborted) {
      this.#requeue = false;
      try {
        await this.run(async (leadership) => {
          try {
            await fn(leadership);
          } catch (err) {
            options.onError?.(err);
          }
        });
      } catch (err) {
        if (stop.aborted) break;
        // The session was lost while queued: queue again once a server answers, unless it ended.
        if (!(err instanceof LeaseLostError) || TERMINAL.has(this.zk.state)) {
          options.onError?.(err);
          break;
        }
        try {
          await connectedUnless(this.zk, stop);
        } catch {
          break;
        }
        continue;
      }
      requeue = options.autoRequeue === true || this.#requeue;
    }
  }
}

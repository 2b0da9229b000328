/**
 * Watching an election without taking part (etcd's `Election.Observe`): the current leader of a
 * LeaderLatch or LeaderSelector path, ours or Curator's, as an async iterable that yields when the
 * leader changes. The observer creates no node, so it is never a candidate and never delays one.
 *
 * How: the participants' nodes sorted as the recipe sorts them (Curator's order, names.ts); the
 * first one that still exists is the leader (its data is the participant id). A one-shot children
 * watch on the election path, set by the same getChildren that lists it, wakes the loop on every
 * join or leave; the loop lists again and yields only when the leader's node is another one (a new
 * term, even by the same id). While the path does not exist an `exists` watch waits for it.
 */
import { InvalidArgumentError, NoNodeError, SessionExpiredError, ZooKeeperError, type ZooKeeper } from '@zk/protocol';
import { NodeWatch } from '../internal/barrier-wait.js';
import { LATCH_LOCK_NAME, MUTEX_LOCK_NAME, sortChildren } from '../internal/names.js';
import type { Participant } from './leadership.js';

/** Options of {@link observeLeader}. */
export interface ObserveLeaderOptions {
  /**
   * The recipe holding the election: `'latch'` for LeaderLatch (Curator's nodes
   * `_c_<uuid>-latch-<seq>`), `'selector'` for LeaderSelector (its mutex's `_c_<uuid>-lock-<seq>`).
   */
  readonly recipe: 'latch' | 'selector';
  /** Ends the iteration (quietly, like ending the loop) and removes the watch. */
  readonly signal?: AbortSignal;
}

const LOCK_NAMES = { latch: LATCH_LOCK_NAME, selector: MUTEX_LOCK_NAME } as const;

/**
 * The leader of the election at `path`, now and at every change, without joining it: yields the
 * current leader (`undefined` when nobody takes part) first, then each new leader (or `undefined`
 * when the last participant leaves). A change is a different leader node: a participant that
 * joins behind the leader yields nothing; a leader that leaves and comes back yields its new term.
 *
 * What it does not promise: the value is what the server this client reads from had applied when
 * it answered, so a yielded leader may already have lost (use the leader's own `Leadership.signal`
 * and fencing token for anything that must not overlap); changes faster than a round trip may be
 * seen as one; while the session is suspended nothing is yielded, and the next listing after it
 * resumes reports the leader then. Session expiry ends the loop with SessionExpiredError (the watch
 * is gone with the session); closing the client or aborting `signal` ends it quietly. Ending the loop
 * removes the watch.
 *
 * @example
 * ```ts
 * for await (const leader of observeLeader(zk, '/election/jobs', { recipe: 'latch', signal })) {
 *   console.log(leader ? `leader: ${leader.id} (${leader.node})` : 'no leader');
 * }
 * ```
 */
export function observeLeader(zk: ZooKeeper, path: string, options: ObserveLeaderOptions): AsyncIterableIterator<Participant | undefined> {
  if (typeof options !== 'object' || options === null) throw new InvalidArgumentError('options', 'must be an object with a recipe (\'latch\' or \'selector\')');
  const lockName = LOCK_NAMES[options.recipe];
  if (lockName === undefined) throw new InvalidArgumentError('recipe', `must be 'latch' or 'selector', got ${String(options.recipe)}`);
  if (typeof path !== 'string' || !path.startsWith('/')) throw new InvalidArgumentError('path', `must be an absolute path, got ${String(path)}`);
  const { signal } = options;
  if (signal !== undefined && !(typeof signal === 'object' && signal !== null && typeof signal.addEventListener === 'function' && 'aborted' in signal)) {
    throw new InvalidArgumentError('signal', 'must be an AbortSignal');
  }
  return observe(zk, path, lockName, signal);
}

async function* observe(zk: ZooKeeper, path: string, lockName: string, signal: AbortSignal | undefined): AsyncGenerator<Participant | undefined> {
  const stop = new Stop(zk, path, signal);
  // `null`: nothing yielded yet; else the leader node last yielded ('' for none).
  let last: string | null = null;
  try {
    for (;;) {
      if (stop.ended) return;
      const watch = new NodeWatch(zk, path);
      try {
        let leader: Participant | undefined;
        try {
          leader = await stop.race(listLeader(zk, watch, path, lockName));
        } catch (err) {
          if (stop.ended) return;
          if (!(err instanceof ZooKeeperError && err.isRetryable && !(err instanceof SessionExpiredError))) throw err;
          await stop.race(stop.connected());
          continue;
        }
        const node = leader?.node ?? '';
        if (node !== last) {
          last = node;
          yield leader;
        }
        await stop.race(watch.fired);
      } finally {
        await watch.remove();
      }
    }
  } catch (err) {
    if (err === Stop.ENDED) return;
    throw err;
  } finally {
    stop.dispose();
  }
}

/**
 * The leader under `path`, with `watch` set on its children (or, while the path is missing, on its
 * creation): the first node in the recipe's order whose data can still be read.
 */
async function listLeader(zk: ZooKeeper, watch: NodeWatch, path: string, lockName: string): Promise<Participant | undefined> {
  let children: string[];
  try {
    children = await watch.getChildren();
  } catch (err) {
    if (!(err instanceof NoNodeError)) throw err;
    // No election yet: wait for the path (a created path fires the exists watch).
    if ((await watch.exists()) !== null) return listLeader(zk, watch, path, lockName);
    return undefined;
  }
  for (const name of sortChildren(children, [lockName])) {
    try {
      const { data } = await zk.getData(`${path}/${name}`);
      return { id: Buffer.from(data).toString('utf8'), isLeader: true, node: name };
    } catch (err) {
      // Gone since the listing (its session ended, or it left): the next one leads; the
      // children watch has fired for it, so the loop lists again anyway.
      if (!(err instanceof NoNodeError)) throw err;
    }
  }
  return undefined;
}

/** What ends an observation: the caller's signal, the client closing (quietly), session expiry (an error). */
class Stop {
  /** The rejection that ends a quiet stop. */
  static readonly ENDED: unique symbol = Symbol('observation ended');
  readonly #zk: ZooKeeper;
  readonly #path: string;
  readonly #signal: AbortSignal | undefined;
  #reject: ((reason: unknown) => void) | undefined;
  readonly #stopped: Promise<never>;
  #error: unknown;
  #wakeConnected: (() => void) | undefined;
  readonly #onAbort = () => this.#end(Stop.ENDED);
  readonly #off: () => void;

  constructor(zk: ZooKeeper, path: string, signal: AbortSignal | undefined) {
    this.#zk = zk;
    this.#path = path;
    this.#signal = signal;
    this.#stopped = new Promise<never>((_, reject) => (this.#reject = reject));
    this.#stopped.catch(() => undefined);
    signal?.addEventListener('abort', this.#onAbort, { once: true });
    this.#off = zk.onStateChange((state) => this.#onState(state));
    if (signal?.aborted) this.#end(Stop.ENDED);
    else this.#onState(zk.state);
  }

  /** True once the signal aborted or the client closed; throws the session's error once it expired. */
  get ended(): boolean {
    if (this.#error === undefined) return false;
    if (this.#error === Stop.ENDED) return true;
    throw this.#error;
  }

  /** `promise`, or the stop's reason if that comes first. */
  race<T>(promise: Promise<T>): Promise<T> {
    if (this.#error !== undefined) {
      promise.catch(() => undefined);
      return Promise.reject(this.#error);
    }
    return Promise.race([promise, this.#stopped]);
  }

  /** Resolves when the session is connected again. */
  connected(): Promise<void> {
    if (this.#zk.state === 'connected' || this.#zk.state === 'connectedReadOnly') return Promise.resolve();
    return new Promise<void>((resolve) => (this.#wakeConnected = resolve));
  }

  dispose(): void {
    this.#signal?.removeEventListener('abort', this.#onAbort);
    this.#off();
  }

  #onState(state: string): void {
    if (state === 'connected' || state === 'connectedReadOnly') {
      this.#wakeConnected?.();
      this.#wakeConnected = undefined;
    } else if (state === 'closed') this.#end(Stop.ENDED);
    else if (state === 'expired') this.#end(new SessionExpiredError(`session expired while observing the leader of ${this.#path}`, { op: 'observeLeader', path: this.#path }));
  }

  #end(reason: unknown): void {
    if (this.#error !== undefined) return;
    this.#error = reason;
    this.#reject?.(reason);
  }
}

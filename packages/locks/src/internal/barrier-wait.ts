/**
 * What bounds one barrier wait (`Barrier.wait`, `DoubleBarrier.enter` / `leave`), and the one-shot
 * watches those waits sleep on.
 *
 * A wait ends at its deadline, on the caller's signal, or when the session ends (`expired`,
 * `closed`, `authFailed`) or is reported `lost`, with one typed reason: BarrierTimeoutError,
 * BarrierAbortedError, LeaseLostError (the client's ClientClosedError when it was closed). It goes on through `suspended`: the session may resume,
 * and the client re-arms its watches when it does. (The same bounds as a lock's acquire, see
 * attempt.ts; the errors name the barrier operation instead of a lock.)
 *
 * A {@link NodeWatch} is removed on every exit that did not see it fire, after the request that
 * set it has settled: a removal sent while the read is still in flight would find nothing, and
 * the read's reply would then register a watch nobody waits for (Curator's CURATOR-654 leak).
 */
import { InvalidArgumentError, SessionExpiredError, ZooKeeperError, type DataResult, type Stat, type WatchedEvent, type ZooKeeper } from '@zk/protocol';
import { BarrierAbortedError, BarrierTimeoutError, type BarrierOperation } from '../errors.js';
import { Attempt } from './attempt.js';

/** Options of a barrier wait. */
export interface BarrierWaitOptions {
  /**
   * Give up after this many ms with {@link BarrierTimeoutError} (0: only if it can complete at
   * once). Default: wait as long as it takes.
   */
  timeout?: number;
  /** Abandon the wait with {@link BarrierAbortedError}. */
  signal?: AbortSignal;
}

/** Refuses bad wait options before anything is sent. */
export function checkWaitOptions(options: BarrierWaitOptions): void {
  if (typeof options !== 'object' || options === null) throw new InvalidArgumentError('options', `must be an object, got ${options === null ? 'null' : typeof options}`);
  const { timeout, signal } = options;
  if (timeout !== undefined && (typeof timeout !== 'number' || !Number.isFinite(timeout) || timeout < 0)) {
    throw new InvalidArgumentError('timeout', `must be a finite number of ms >= 0, got ${String(timeout)}`);
  }
  if (signal !== undefined && !(typeof signal === 'object' && signal !== null && typeof signal.addEventListener === 'function' && 'aborted' in signal)) {
    throw new InvalidArgumentError('signal', 'must be an AbortSignal');
  }
}

/** True for an error after which the same request may be sent again once connected. */
export function isRetryable(err: unknown): boolean {
  return err instanceof ZooKeeperError && err.isRetryable && !(err instanceof SessionExpiredError);
}

/**
 * The bounds of one barrier wait: an {@link Attempt} whose errors name the barrier operation.
 * Call `end()` on every exit.
 */
export function barrierWait(zk: ZooKeeper, path: string, operation: BarrierOperation, options: BarrierWaitOptions): Attempt {
  const doing = operation === 'wait' ? 'waiting on barrier' : operation === 'enter' ? 'entering barrier' : 'leaving barrier';
  return new Attempt(zk, path, options.timeout, options.signal, {
    doing,
    timeout: (p, ms) => new BarrierTimeoutError(p, ms, operation),
    aborted: (p, reason) => new BarrierAbortedError(p, reason, operation),
  });
}

/**
 * One one-shot watch of one node, set by {@link NodeWatch.exists}, {@link NodeWatch.getData} or
 * {@link NodeWatch.getChildren} (a queue consumer's). `fired` resolves on the node's next change
 * (not on the watch's removal). {@link NodeWatch.remove} must run on every exit: it removes what
 * is still registered. One NodeWatch may set two kinds (an `exists` that found the node, then a
 * `getChildren`, as the leader observer does when the path appears between them): the one that
 * fires is gone, the other is not, and is removed too.
 */
export class NodeWatch {
  readonly #zk: ZooKeeper;
  readonly #path: string;
  #removed = false;
  #request: Promise<unknown> | undefined;
  /** The kinds requested, as `removeWatches` names them ('data' covers an exists watch). */
  readonly #kinds = new Set<'data' | 'child'>();
  #resolve!: () => void;
  /** Resolves when the watch fires. */
  readonly fired = new Promise<void>((resolve) => (this.#resolve = resolve));
  /** The kinds whose one-shot watch fired (the client dropped them): nothing to remove. */
  readonly #fired = new Set<'data' | 'child'>();
  readonly #listener = (e: WatchedEvent) => {
    if (e.type === 'DataWatchRemoved' || e.type === 'ChildWatchRemoved') return;
    // A deletion or the session's end fires every kind on the path; a change, its own kind.
    if (e.type !== 'NodeChildrenChanged') this.#fired.add('data');
    if (e.type !== 'NodeCreated' && e.type !== 'NodeDataChanged') this.#fired.add('child');
    this.#resolve();
  };

  constructor(zk: ZooKeeper, path: string) {
    this.#zk = zk;
    this.#path = path;
  }

  /** `exists` with this watch: it fires on creation when the node is absent, else on change or deletion. */
  exists(): Promise<Stat | null> {
    return this.#track('data', this.#zk.exists(this.#path, { watch: this.#listener }));
  }

  /**
   * `getData` with this watch: it fires on change or deletion. A missing node rejects with
   * NoNodeError and sets no watch (the reason Curator's lock reads with getData, not exists).
   */
  getData(): Promise<DataResult> {
    return this.#track('data', this.#zk.getData(this.#path, { watch: this.#listener }));
  }

  /** `getChildren` with this watch: it fires when a child is added or removed, or the node deleted. A missing node rejects with NoNodeError. */
  getChildren(): Promise<string[]> {
    return this.#track('child', this.#zk.getChildren(this.#path, { watch: this.#listener }));
  }

  /**
   * Removes whatever this watch still has registered (nothing for a kind that fired): on the
   * server when connected, else only locally. Never throws.
   */
  async remove(): Promise<void> {
    if (this.#request) await this.#request.catch(() => undefined);
    if (this.#removed) return;
    this.#removed = true;
    for (const kind of this.#kinds) {
      if (this.#fired.has(kind)) continue;
      if (this.#zk.state === 'connected') {
        try {
          // Throws NoWatcherError before sending when nothing of this kind is registered.
          await this.#zk.removeWatches(this.#path, { kind, listener: this.#listener });
          continue;
        } catch {
          // it fired meanwhile, the server has no removeWatches (3.4), or the connection dropped: drop the local registration below
        }
      }
      if (kind === 'child') this.#zk.removeLocalWatch('child', this.#path, this.#listener);
      else {
        this.#zk.removeLocalWatch('data', this.#path, this.#listener);
        this.#zk.removeLocalWatch('exist', this.#path, this.#listener);
      }
    }
  }

  #track<T>(kind: 'data' | 'child', request: Promise<T>): Promise<T> {
    this.#kinds.add(kind);
    this.#request = request;
    return request;
  }
}

/**
 * What bounds one barrier wait (`Barrier.wait`, `DoubleBarrier.enter` / `leave`), and the one-shot
 * watches those waits sleep on.
 *
 * A wait ends at its deadline, on the caller's signal, or when the session ends (`expired`,
 * `closed`, `authFailed`) or is reported `lost`, with one typed reason: BarrierTimeoutError,
 * BarrierAbortedError, LeaseLostError. It goes on through `suspended`: the session may resume,
 * and the client re-arms its watches when it does. (The same bounds as a lock's acquire, see
 * attempt.ts; the errors name the barrier operation instead of a lock.)
 *
 * A {@link NodeWatch} is removed on every exit that did not see it fire, after the request that
 * set it has settled: a removal sent while the read is still in flight would find nothing, and
 * the read's reply would then register a watch nobody waits for (Curator's CURATOR-654 leak).
 */
import { ConnectionLossError, InvalidArgumentError, SessionExpiredError, setLongTimeout, ZooKeeperError, type DataResult, type LongTimeout, type Stat, type WatchedEvent, type ZooKeeper } from '@zk/protocol';
import { BarrierAbortedError, BarrierTimeoutError, LeaseLostError, type BarrierOperation } from '../errors.js';
import { connected } from './attempt.js';

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

/** The bounds of one barrier wait. Call {@link BarrierWait.end} on every exit. */
export class BarrierWait {
  readonly #zk: ZooKeeper;
  readonly #path: string;
  readonly #operation: BarrierOperation;
  readonly #timeout: number | undefined;
  readonly #signal: AbortSignal | undefined;
  readonly #onStop = new Set<(reason: Error) => void>();
  #reason: Error | undefined;
  #timer: LongTimeout | undefined;
  readonly #offState: () => void;
  readonly #onAbort = () => this.#stop(new BarrierAbortedError(this.#path, this.#signal?.reason, this.#operation));

  constructor(zk: ZooKeeper, path: string, operation: BarrierOperation, options: BarrierWaitOptions) {
    this.#zk = zk;
    this.#path = path;
    this.#operation = operation;
    this.#timeout = options.timeout;
    this.#signal = options.signal;
    this.#offState = zk.onStateChange((state) => this.#onState(state));
    if (this.#signal?.aborted) this.#onAbort();
    else this.#signal?.addEventListener('abort', this.#onAbort, { once: true });
    // A zero timeout has no timer: the reads already sent may finish, but nothing waits for a watch.
    if (this.#timeout !== undefined && this.#timeout > 0) this.#timer = setLongTimeout(() => this.#stop(this.timeoutError()), this.#timeout);
    this.#onState(zk.state);
  }

  /** The error for a passed deadline. */
  timeoutError(): BarrierTimeoutError {
    return new BarrierTimeoutError(this.#path, this.#timeout ?? 0, this.#operation);
  }

  /** Throws the reason if the wait must end. */
  check(): void {
    if (this.#reason !== undefined) throw this.#reason;
  }

  /** `promise`, or the wait's reason if it must end first (the work behind `promise` goes on). */
  race<T>(promise: Promise<T>): Promise<T> {
    if (this.#reason !== undefined) {
      promise.catch(() => undefined);
      return Promise.reject(this.#reason);
    }
    return new Promise<T>((resolve, reject) => {
      this.#onStop.add(reject);
      promise.then(
        (value) => (this.#onStop.delete(reject), resolve(value)),
        (err: unknown) => (this.#onStop.delete(reject), reject(err)),
      );
    });
  }

  /**
   * The error a failed wait rejects with: a request refused because the session expired becomes
   * the wait's LeaseLostError (the session's end may be noticed there before the state change).
   */
  typed(err: unknown): unknown {
    if (!(err instanceof SessionExpiredError)) return err;
    this.#onState('expired');
    return this.#reason ?? err;
  }

  /** Waits for a watch to fire; a zero timeout never waits (it rejects with the timeout). */
  sleep(fired: Promise<void>): Promise<void> {
    if (this.#timeout === 0) return Promise.reject(this.timeoutError());
    return this.race(fired);
  }

  /** Resolves once connected again after `cause` (a retryable error); a zero timeout rejects with `cause`. */
  connected(cause: unknown): Promise<void> {
    if (this.#zk.state === 'connected') return Promise.resolve();
    if (this.#timeout === 0) return Promise.reject(cause);
    return this.race(connected(this.#zk));
  }

  /** Stops the timer and the listeners. */
  end(): void {
    this.#timer?.clear();
    this.#offState();
    this.#signal?.removeEventListener('abort', this.#onAbort);
  }

  #onState(state: string): void {
    const doing = this.#operation === 'wait' ? 'waiting on' : this.#operation === 'enter' ? 'entering' : 'leaving';
    if (state === 'expired' || state === 'closed' || state === 'authFailed') {
      this.#stop(new LeaseLostError(this.#path, `session ${state} while ${doing} barrier ${this.#path}`, { cause: state === 'expired' ? new SessionExpiredError() : undefined }));
    } else if (state === 'lost') {
      this.#stop(new LeaseLostError(this.#path, `session lost while ${doing} barrier ${this.#path}: no server answered within the session timeout`, { cause: new ConnectionLossError('session lost') }));
    }
  }

  #stop(reason: Error): void {
    if (this.#reason !== undefined) return;
    this.#reason = reason;
    for (const reject of this.#onStop) reject(reason);
    this.#onStop.clear();
  }
}

/**
 * One one-shot watch of one node, set by {@link NodeWatch.exists} or {@link NodeWatch.getData}.
 * `fired` resolves on the node's next change (not on the watch's removal). {@link NodeWatch.remove}
 * must run on every exit: it removes the watch unless it fired.
 */
export class NodeWatch {
  readonly #zk: ZooKeeper;
  readonly #path: string;
  #done = false;
  #request: Promise<unknown> | undefined;
  #resolve!: () => void;
  /** Resolves when the watch fires. */
  readonly fired = new Promise<void>((resolve) => (this.#resolve = resolve));
  readonly #listener = (e: WatchedEvent) => {
    if (e.type === 'DataWatchRemoved' || e.type === 'ChildWatchRemoved') return;
    this.#done = true;
    this.#resolve();
  };

  constructor(zk: ZooKeeper, path: string) {
    this.#zk = zk;
    this.#path = path;
  }

  /** `exists` with this watch: it fires on creation when the node is absent, else on change or deletion. */
  exists(): Promise<Stat | null> {
    const request = this.#zk.exists(this.#path, { watch: this.#listener });
    this.#request = request;
    return request;
  }

  /**
   * `getData` with this watch: it fires on change or deletion. A missing node rejects with
   * NoNodeError and sets no watch (the reason Curator's lock reads with getData, not exists).
   */
  getData(): Promise<DataResult> {
    const request = this.#zk.getData(this.#path, { watch: this.#listener });
    this.#request = request;
    return request;
  }

  /** Removes the watch unless it fired (on the server when connected, else only locally). Never throws. */
  async remove(): Promise<void> {
    if (this.#request) await this.#request.catch(() => undefined);
    if (this.#done) return;
    this.#done = true;
    if (this.#zk.state === 'connected') {
      try {
        return await this.#zk.removeWatches(this.#path, { kind: 'data', listener: this.#listener });
      } catch {
        // it fired meanwhile, or the connection dropped: drop the local registration below
      }
    }
    this.#zk.removeLocalWatch('data', this.#path, this.#listener);
    this.#zk.removeLocalWatch('exist', this.#path, this.#listener);
  }
}

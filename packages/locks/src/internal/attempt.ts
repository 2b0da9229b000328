/**
 * What bounds one acquire attempt, and what cleans up after it.
 *
 * Every wait of an acquire (the create and its retries, the wait for a connection, the recovery
 * of a protected node, the listing, the watch) goes through {@link Attempt.race} or
 * {@link Attempt.connected}, so each one ends at the attempt's deadline, on the caller's signal,
 * or when the session ends or is reported `lost`, with one typed reason:
 * - the deadline: {@link LockTimeoutError};
 * - the caller's signal: {@link LockAbortedError};
 * - the client closed (before or during the attempt): the client's own `ClientClosedError`, as
 *   its requests give;
 * - the session `expired`, `authFailed`, or `lost` (no server answered for the whole
 *   session timeout): {@link LeaseLostError}. An acquire without a timeout waits through
 *   `suspended` (the session may resume with our queue node intact) but not through `lost`:
 *   Curator likewise gives up once its retry policy runs out.
 *
 * Cleanup never waits for the network on the caller's time: a node known to be ours is deleted at
 * once when connected, else in the background once a server answers again (or never, when the
 * session ends, which takes its ephemeral nodes along). A create whose outcome is unknown (in
 * flight, or failed with ConnectionLoss) is swept in the background by its attempt id.
 */
import { ClientClosedError, ConnectionLossError, MAX_TIMER_DELAY, NoNodeError, SessionExpiredError, setLongTimeout, ZooKeeperError, type LongTimeout, type ZooKeeper } from '@zk/protocol';
import { LeaseLostError, LockAbortedError, LockTimeoutError } from '../errors.js';
import { checkClient } from './client.js';
import { SessionMembers } from './session-members.js';
import { attemptIdOf } from './names.js';

/** What an attempt is for: the errors it ends with, and how its session-end messages name it. */
export interface AttemptKind {
  /** `acquiring`, `entering barrier`, ...: `session expired while <doing> <path>`. */
  readonly doing: string;
  timeout(path: string, ms: number): Error;
  aborted(path: string, reason: unknown): Error;
}

/** A lock's acquire: LockTimeoutError and LockAbortedError. */
export const ACQUIRING: AttemptKind = {
  doing: 'acquiring',
  timeout: (path, ms) => new LockTimeoutError(path, ms),
  aborted: (path, reason) => new LockAbortedError(path, reason),
};

/** The bounds of one acquire attempt (or of another wait of a recipe: see {@link AttemptKind}). Call {@link Attempt.end} on every exit. */
export class Attempt {
  readonly #zk: ZooKeeper;
  readonly #path: string;
  readonly #timeout: number | undefined;
  // The signal is made only when asked for (most attempts never pass it on); race() is told by
  // #onStop, which costs a Set entry instead of an EventTarget listener on every wait.
  #controller: AbortController | undefined;
  #reason: Error | undefined;
  readonly #onStop = new Set<(reason: Error) => void>();
  readonly #deadline: number | undefined;
  /** The deadline's timer: a plain one (a number on Deno), or a chain beyond {@link MAX_TIMER_DELAY}. */
  #timer: ReturnType<typeof setTimeout> | undefined;
  #longTimer: LongTimeout | undefined;
  readonly #signal: AbortSignal | undefined;
  readonly #kind: AttemptKind;
  readonly #onAbort = () => this.#stop(this.#kind.aborted(this.#path, this.#signal?.reason));

  /** The running attempts of each client, told of its state changes by one listener. */
  static readonly #running = new SessionMembers<Attempt>((attempt, state) => attempt.#onState(state));

  /** `timeout` in ms (0: one try, no waiting; undefined: no deadline). */
  constructor(zk: ZooKeeper, path: string, timeout: number | undefined, signal: AbortSignal | undefined, kind: AttemptKind = ACQUIRING) {
    checkClient(zk); // every acquire starts here, before any request
    this.#zk = zk;
    this.#path = path;
    this.#kind = kind;
    this.#timeout = timeout;
    this.#signal = signal;
    this.#deadline = timeout === undefined ? undefined : performance.now() + timeout;
    Attempt.#running.add(zk, this);
    if (signal?.aborted) this.#onAbort();
    else signal?.addEventListener('abort', this.#onAbort, { once: true });
    // A zero timeout has no timer: its one create and listing are allowed to finish. A static
    // callback and a plain timer where one timer can take the delay (most: up to 24.8 days).
    if (timeout !== undefined && timeout > 0) {
      if (timeout <= MAX_TIMER_DELAY) this.#timer = setTimeout(Attempt.#onTimer, timeout, this);
      else this.#longTimer = setLongTimeout(() => Attempt.#onTimer(this), timeout);
    }
    this.#onState(zk.state);
  }

  static #onTimer(attempt: Attempt): void {
    attempt.#stop(attempt.timeoutError());
  }

  /** Aborted (with the typed reason) when the attempt must end. */
  get signal(): AbortSignal {
    if (this.#controller === undefined) {
      this.#controller = new AbortController();
      if (this.#reason !== undefined) this.#controller.abort(this.#reason);
    }
    return this.#controller.signal;
  }

  /** Whether the attempt must end (its reason set). */
  get stopped(): boolean {
    return this.#reason !== undefined;
  }

  /** Why the attempt must end, once {@link stopped}. */
  get reason(): Error | undefined {
    return this.#reason;
  }

  /** True once the deadline has passed (always true right after a zero-timeout attempt started). */
  get expired(): boolean {
    return this.#deadline !== undefined && performance.now() >= this.#deadline;
  }

  /** The error for a passed deadline. */
  timeoutError(): Error {
    return this.#kind.timeout(this.#path, this.#timeout ?? 0);
  }

  /** Throws the reason if the attempt must end. */
  check(): void {
    if (this.#reason !== undefined) throw this.#reason;
  }

  /** `promise`, or the attempt's reason if it must end first (the work behind `promise` goes on). */
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
   * The error a failed request rejects the attempt with: a request refused because the session
   * expired becomes the attempt's LeaseLostError (the session's end may be noticed there before
   * the state change).
   */
  typed(err: unknown): unknown {
    if (!(err instanceof SessionExpiredError)) return err;
    this.#onState('expired');
    return this.#reason ?? err;
  }

  /** Waits for a watch to fire; a zero-timeout attempt never waits (it rejects with the timeout). */
  sleep(fired: Promise<void>): Promise<void> {
    if (this.#timeout === 0) return Promise.reject(this.timeoutError());
    return this.race(fired);
  }

  /**
   * Resolves once the client is connected. A zero-timeout attempt does not wait: it rejects with
   * `cause` (the ConnectionLoss that sent it here).
   */
  connected(cause: unknown): Promise<void> {
    if (this.#zk.state === 'connected') return Promise.resolve();
    if (this.#timeout === 0) return Promise.reject(cause);
    return this.race(connected(this.#zk));
  }

  /** Stops the timers and listeners. */
  end(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#longTimer?.clear();
    Attempt.#running.delete(this.#zk, this);
    this.#signal?.removeEventListener('abort', this.#onAbort);
  }

  #onState(state: string): void {
    const doing = this.#kind.doing;
    if (state === 'closed') {
      // The client's own error, as its requests reject with: nothing was lost, the application closed it.
      this.#stop(new ClientClosedError(`the client is closed (${doing} ${this.#path})`));
    } else if (state === 'expired' || state === 'authFailed') {
      this.#stop(new LeaseLostError(this.#path, `session ${state} while ${doing} ${this.#path}`, { cause: state === 'expired' ? new SessionExpiredError() : undefined }));
    } else if (state === 'lost') {
      this.#stop(
        new LeaseLostError(this.#path, `session lost while ${doing} ${this.#path}: no server answered within the session timeout`, {
          cause: new ConnectionLossError('session lost'),
        }),
      );
    }
  }

  #stop(reason: Error): void {
    if (this.#reason !== undefined) return;
    this.#reason = reason;
    this.#controller?.abort(reason);
    for (const reject of this.#onStop) reject(reason);
    this.#onStop.clear();
  }
}

/**
 * The LeaseLostError for a sequential create at `prefix` that failed with NoNode naming the node it
 * made (on a 3.4 server the Stat is read by a second request, and the node was deleted between
 * the two: by another session, or the session's end); undefined for any other failure (a NoNode
 * naming `prefix` is a missing parent). Queuing again would hand a turn to a node someone removed.
 */
export function createdThenGone(err: unknown, prefix: string, lockPath: string): LeaseLostError | undefined {
  if (!(err instanceof NoNodeError) || err.path === undefined || err.path === prefix || !err.path.startsWith(prefix)) return undefined;
  return new LeaseLostError(lockPath, `our node ${err.path} is gone (session expired, or deleted by someone else)`, { cause: err });
}

/** Resolves once the client is connected (or rejects with SessionExpiredError when it never will be). */
export function connected(zk: ZooKeeper): Promise<void> {
  return new Promise((resolve, reject) => {
    const check = (state: string) => {
      if (state === 'connected') return true;
      if (state === 'expired' || state === 'closed' || state === 'authFailed') throw new SessionExpiredError(`session ${state}`);
      return false;
    };
    try {
      if (check(zk.state)) return resolve();
    } catch (err) {
      return reject(err);
    }
    const off = zk.onStateChange((state) => {
      try {
        if (check(state)) {
          off();
          resolve();
        }
      } catch (err) {
        off();
        reject(err);
      }
    });
  });
}

/**
 * Resolves once the client is connected; rejects with `stop`'s reason if it aborts first, or as
 * {@link connected} does when the session ends.
 */
export function connectedUnless(zk: ZooKeeper, stop: AbortSignal): Promise<void> {
  if (stop.aborted) return Promise.reject(stop.reason);
  return new Promise<void>((resolve, reject) => {
    const onStop = () => reject(stop.reason);
    stop.addEventListener('abort', onStop, { once: true });
    connected(zk).then(
      () => (stop.removeEventListener('abort', onStop), resolve()),
      (err: unknown) => (stop.removeEventListener('abort', onStop), reject(err)),
    );
  });
}

/**
 * Guaranteed delete (Curator's `guaranteed()`): retried across reconnects until the node is gone
 * or the session is (which takes its ephemeral nodes along).
 */
export async function deleteGuaranteed(zk: ZooKeeper, nodePath: string): Promise<void> {
  for (;;) {
    try {
      await zk.delete(nodePath);
      return;
    } catch (err) {
      if (err instanceof NoNodeError || err instanceof SessionExpiredError) return;
      if (!(err instanceof ZooKeeperError) || !err.isRetryable) throw err;
    }
    try {
      await connected(zk);
    } catch {
      return; // session gone: so is the node
    }
  }
}

/**
 * Removes our node on a failure path. Connected: one delete, awaited (so a timed-out acquire
 * leaves nothing behind when it rejects). Otherwise, or when that delete is cut off: the
 * guaranteed delete goes on in the background. A delete's own failure is attached to the original
 * error as `cleanupError`, never substituted for it.
 */
export async function removeNode(zk: ZooKeeper, nodePath: string, original: unknown): Promise<void> {
  if (zk.state !== 'connected') return void background(deleteGuaranteed(zk, nodePath), original);
  try {
    await zk.delete(nodePath);
  } catch (err) {
    if (err instanceof NoNodeError || err instanceof SessionExpiredError) return;
    if (err instanceof ZooKeeperError && err.isRetryable) return void background(deleteGuaranteed(zk, nodePath), original);
    attachCleanupError(original, err);
  }
}

/**
 * Deletes, in the background, whatever node a create of attempt `attemptId` under `dir` made:
 * for a create whose outcome we could not learn. Waits for `inFlight` (the create itself, when
 * it may still answer), then for a connection, then lists `dir` once.
 */
export function sweepAttempt(zk: ZooKeeper, dir: string, attemptId: string, inFlight: Promise<{ path: string }> | undefined, original: unknown): void {
  const sweep = async () => {
    if (inFlight) {
      try {
        return await deleteGuaranteed(zk, (await inFlight).path);
      } catch {
        // its outcome is unknown: look for the node by its attempt id
      }
    }
    await connected(zk);
    const children = await zk.getChildren(dir).catch((e: unknown) => (e instanceof NoNodeError ? [] : Promise.reject(e)));
    for (const name of children) if (attemptIdOf(name) === attemptId) await deleteGuaranteed(zk, `${dir}/${name}`);
  };
  background(sweep(), original);
}

function background(work: Promise<void>, original: unknown): void {
  work.catch((err: unknown) => {
    // The session ended meanwhile: its ephemeral nodes went with it.
    if (!(err instanceof SessionExpiredError)) attachCleanupError(original, err);
  });
}

function attachCleanupError(original: unknown, cleanup: unknown): void {
  if (original instanceof Error) (original as Error & { cleanupError?: unknown }).cleanupError = cleanup;
}

/**
 * The parts of PersistentNode that need none of its state: its events, data checking, the
 * search for a protected node after a lost create reply, the bounded initial wait, and the
 * pause between failed tries (RenewingClient's too).
 */
import { InvalidArgumentError, NoNodeError, setLongTimeout, type ZooKeeper } from '@zk/protocol';
import { PersistentNodeAbortedError, PersistentNodeTimeoutError } from '../errors.js';
import { attemptIdOf } from './names.js';

/**
 * What a PersistentNode reports: `created` (the node was created, or found and adopted the first
 * time, at `path`), `failed` (the server refused the create: NoAuth, or NoNode with
 * `parents: false`; tried again at the next reconnect), `uncertain` (an unprotected sequential
 * create's reply was lost: it may have made a node that nobody will delete; use `protection`),
 * `ended` (closed before the first create, or a plain client's session ended: the node is no longer kept).
 */
export type PersistentNodeEvent =
  | { readonly type: 'created'; readonly path: string }
  | { readonly type: 'failed'; readonly error: Error }
  | { readonly type: 'uncertain'; readonly path: string }
  | { readonly type: 'ended'; readonly error: Error };

/** Options of `waitForInitialCreate`. */
export interface InitialWaitOptions {
  /** Give up after this many ms (PersistentNodeTimeoutError); default: no deadline. */
  timeout?: number;
  /** Give up when aborted (PersistentNodeAbortedError). */
  signal?: AbortSignal;
}

/** Node data as bytes (a copy), or InvalidArgumentError for anything but a Uint8Array or a string. */
export function toBytes(data: unknown, argument: string): Buffer {
  if (data === null) return Buffer.alloc(0);
  if (typeof data === 'string') return Buffer.from(data, 'utf8');
  if (data instanceof Uint8Array) return Buffer.from(data);
  throw new InvalidArgumentError(argument, `must be a Uint8Array or a string, got ${typeof data}`);
}

/**
 * After a protected sequential create failed with ConnectionLoss: the node it made, if any,
 * found by its attempt id among the parent's children (an ephemeral one only when our session
 * owns it, as Curator checks since CURATOR-498).
 */
export async function findProtected(zk: ZooKeeper, basePath: string, attemptId: string, ephemeral: boolean): Promise<string | undefined> {
  const slash = basePath.lastIndexOf('/');
  const dir = slash === 0 ? '/' : basePath.slice(0, slash);
  const children = await zk.getChildren(dir).catch((e: unknown) => (e instanceof NoNodeError ? [] : Promise.reject(e)));
  for (const name of children) {
    if (attemptIdOf(name) !== attemptId) continue;
    const path = `${dir === '/' ? '' : dir}/${name}`;
    const stat = await zk.exists(path);
    if (stat && (!ephemeral || stat.ephemeralOwner === zk.sessionId)) return path;
  }
  return undefined;
}

/** What the initial wait watches. */
export interface InitialWaitHost {
  /** The path once created, the error that ended the wait, or `undefined` to wait. */
  now(): string | Error | undefined;
  subscribe(listener: (event: PersistentNodeEvent) => void): () => void;
}

/** Resolves with the created path; bounded by `timeout` and `signal` (checked before anything waits). */
export function initialWait(path: string, options: InitialWaitOptions, host: InitialWaitHost): Promise<string> {
  const { timeout, signal } = options;
  if (timeout !== undefined && (typeof timeout !== 'number' || !Number.isFinite(timeout) || timeout < 0)) {
    return Promise.reject(new InvalidArgumentError('timeout', `must be a non-negative number of ms, got ${String(timeout)}`));
  }
  const settled = host.now();
  if (typeof settled === 'string') return Promise.resolve(settled);
  if (settled) return Promise.reject(settled);
  if (signal?.aborted) return Promise.reject(new PersistentNodeAbortedError(path, signal.reason));
  if (timeout === 0) return Promise.reject(new PersistentNodeTimeoutError(path, 0));
  return new Promise<string>((resolve, reject) => {
    const done = (finish: () => void) => {
      off();
      timer?.clear();
      signal?.removeEventListener('abort', onAbort);
      finish();
    };
    const onAbort = () => done(() => reject(new PersistentNodeAbortedError(path, signal?.reason)));
    const off = host.subscribe((event) => {
      if (event.type === 'created') done(() => resolve(event.path));
      else if (event.type === 'failed' || event.type === 'ended') done(() => reject(event.error));
    });
    const timer = timeout === undefined ? undefined : setLongTimeout(() => done(() => reject(new PersistentNodeTimeoutError(path, timeout))), timeout);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** First and largest pause between two failed tries (a create refused as retryable, a new session not opened), ms; doubled each time, with jitter. */
export const RETRY_FIRST_MS = 100;
export const RETRY_MAX_MS = 5_000;

/** Resolves after `ms`, or at once when `signal` aborts (never rejects). */
export function pauseUnless(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    if (signal.aborted) return done();
    signal.addEventListener('abort', done, { once: true });
  });
}

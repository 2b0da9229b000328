/**
 * The acquire loop shared by the queue locks (Curator's `LockInternals`), on the public client
 * API only: protected create -> list and sort -> ask the driver -> watch the node it names ->
 * wait (timeout, signal, session) -> clean up on every exit.
 *
 * Fast paths (design.md §6):
 * - the create and the listing are sent back to back without waiting: the server handles one
 *   session's requests in order, so the listing already contains our node (one round trip);
 * - when the node we wait for was the last obstacle (`thenHolds`), its deletion event hands us
 *   the lock without listing again.
 */
import {
  ConnectionLossError,
  CreateMode,
  NodeExistsError,
  NoNodeError,
  SessionExpiredError,
  ZooKeeperError,
  type Stat,
  type WatchedEvent,
  type ZooKeeper,
} from '@zk/protocol';
import { LockAbortedError, LockTimeoutError, LeaseLostError } from '../errors.js';
import type { LockDriver } from './drivers.js';
import { attemptIdOf, newAttemptId, protectedName, sortChildren } from './names.js';

/** What one acquire needs. */
export interface AcquireSpec {
  readonly zk: ZooKeeper;
  /** The lock directory. */
  readonly path: string;
  readonly driver: LockDriver;
  /** Data stored in our node (owner information). */
  readonly data: Buffer;
  /** ms; 0 = try once; undefined = wait forever. */
  readonly timeout: number | undefined;
  readonly signal: AbortSignal | undefined;
}

/** The node that holds the lock for us. */
export interface HeldNode {
  /** Full path of our node. */
  readonly nodePath: string;
  /** Its name (last segment). */
  readonly name: string;
  /** The node's creation zxid: the fencing token. */
  readonly czxid: bigint;
}

/** Acquires: resolves once our node holds the lock; removes it on any failure. */
export async function acquireNode(spec: AcquireSpec): Promise<HeldNode> {
  const deadline = spec.timeout === undefined ? undefined : Date.now() + spec.timeout;
  spec.signal?.throwIfAborted();
  const queued = await createQueued(spec);
  const node = queued.node;
  try {
    await waitForTurn(spec, node, queued, deadline);
    return node;
  } catch (err) {
    await deleteQuietly(spec.zk, node.nodePath, err);
    throw err;
  }
}

/** Creates our protected ephemeral-sequential node and lists the queue in the same round trip. */
async function createQueued(spec: AcquireSpec): Promise<{ node: HeldNode; children?: string[] | undefined }> {
  const { zk, path, driver } = spec;
  const attemptId = newAttemptId();
  const prefix = `${path}/${protectedName(attemptId, driver.lockName)}`;
  for (let parentsCreated = false; ; parentsCreated = true) {
    const created = zk.createWithStat(prefix, spec.data, { mode: CreateMode.EPHEMERAL_SEQUENTIAL });
    const listed = zk.getChildren(path);
    listed.catch(() => undefined); // its failure is the create's failure, handled below
    let result: { path: string; stat: Stat };
    try {
      result = await created;
    } catch (err) {
      if (err instanceof NoNodeError && !parentsCreated) {
        await ensureContainers(zk, path);
        continue;
      }
      if (err instanceof ConnectionLossError) {
        const found = await recoverProtected(zk, path, attemptId);
        if (found) return { node: found, children: await zk.getChildren(path) };
        continue; // the create never happened: try again with a fresh listing
      }
      throw err;
    }
    const name = result.path.slice(path.length + 1);
    return { node: { nodePath: result.path, name, czxid: result.stat.czxid }, children: await listed };
  }
}

/**
 * After a create whose reply was lost: find our node by its attempt id once connected again,
 * and adopt it only if the current session owns it (Curator's CURATOR-498 check); a node of an
 * earlier session is deleted rather than left to block the queue.
 */
async function recoverProtected(zk: ZooKeeper, path: string, attemptId: string): Promise<HeldNode | undefined> {
  await connected(zk);
  const children = await zk.getChildren(path).catch((e: unknown) => (e instanceof NoNodeError ? [] : Promise.reject(e)));
  const name = children.find((c) => attemptIdOf(c) === attemptId);
  if (!name) return undefined;
  const nodePath = `${path}/${name}`;
  const stat = await zk.exists(nodePath);
  if (!stat) return undefined;
  if (stat.ephemeralOwner === zk.sessionId) return { nodePath, name, czxid: stat.czxid };
  await deleteQuietly(zk, nodePath, undefined);
  return undefined;
}

/**
 * Loops until the driver says we hold the lock. The listing is dropped before waiting: with
 * thousands of waiters, each one keeping its copy of the queue would cost memory quadratic in
 * the queue's length.
 */
async function waitForTurn(spec: AcquireSpec, node: HeldNode, first: { children?: string[] | undefined }, deadline: number | undefined): Promise<void> {
  const { zk, path, driver } = spec;
  let children = first.children ?? [];
  first.children = undefined;
  for (;;) {
    const decision = driver.decide(sortChildren(children, driver.sortNames), node.name);
    children = [];
    if (decision.kind === 'holds') return;
    if (decision.kind === 'lost') throw new LeaseLostError(path, `our lock node ${node.nodePath} is gone (session expired, or deleted by someone else)`, { cause: new NoNodeError(undefined, { path: node.nodePath }) });
    if (deadline !== undefined && Date.now() >= deadline) throw new LockTimeoutError(path, spec.timeout ?? 0);
    const event = await waitForDeletion(spec, `${path}/${decision.node}`, deadline);
    if (event === 'deleted' && decision.thenHolds) return;
    children = await zk.getChildren(path);
  }
}

/**
 * Watches `target` with getData (a node already gone leaves no watch behind, unlike exists) and
 * waits for its event, the deadline, the signal, or the end of the session.
 */
async function waitForDeletion(spec: AcquireSpec, target: string, deadline: number | undefined): Promise<'deleted' | 'changed' | 'gone'> {
  const { zk, path, signal } = spec;
  let onEvent!: (e: WatchedEvent) => void;
  const event = new Promise<'deleted' | 'changed'>((resolve) => (onEvent = (e) => resolve(e.type === 'NodeDeleted' ? 'deleted' : 'changed')));
  try {
    await zk.getData(target, { watch: onEvent });
  } catch (err) {
    if (err instanceof NoNodeError) return 'gone';
    throw err;
  }
  try {
    return await waitForEvent(zk, path, event, deadline, spec.timeout, signal);
  } catch (err) {
    // Leave no watch behind on the node we were waiting for.
    await zk.removeWatches(target, { kind: 'data', listener: onEvent }).catch(() => zk.removeLocalWatch('data', target, onEvent));
    throw err;
  }
}

/**
 * Waits for `event`, or rejects with LockTimeoutError at the deadline, LockAbortedError on the
 * signal, or LeaseLostError when the session ends (expired, closed, auth failed).
 */
export async function waitForEvent<T>(zk: ZooKeeper, path: string, event: Promise<T>, deadline: number | undefined, timeout: number | undefined, signal: AbortSignal | undefined): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  let offState = () => {};
  let onAbort = () => {};
  try {
    return await Promise.race([
      event,
      new Promise<never>((_, reject) => {
        if (deadline !== undefined) timer = setTimeout(() => reject(new LockTimeoutError(path, timeout ?? 0)), Math.max(0, deadline - Date.now()));
        onAbort = () => reject(new LockAbortedError(path, signal?.reason));
        signal?.addEventListener('abort', onAbort, { once: true });
        offState = zk.onStateChange((state) => {
          if (state === 'expired' || state === 'closed' || state === 'authFailed') reject(new LeaseLostError(path, `session ${state} while waiting for ${path}`, { cause: state === 'expired' ? new SessionExpiredError() : undefined }));
        });
      }),
    ]);
  } finally {
    if (timer) clearTimeout(timer);
    signal?.removeEventListener('abort', onAbort);
    offState();
  }
}

/** Creates `path` and its missing ancestors as container nodes (garbage-collected when empty). */
export async function ensureContainers(zk: ZooKeeper, path: string): Promise<void> {
  const parts = path.split('/').filter(Boolean);
  for (let i = 1; i <= parts.length; i++) {
    const p = `/${parts.slice(0, i).join('/')}`;
    try {
      await zk.create(p, null, { mode: CreateMode.CONTAINER });
    } catch (err) {
      if (!(err instanceof NodeExistsError)) throw err;
    }
  }
}

/** Resolves once the client is connected (or rejects when it never will be). */
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

/** Cleanup on a failure path: the delete's own failure is attached to the original error, never substituted. */
async function deleteQuietly(zk: ZooKeeper, nodePath: string, original: unknown): Promise<void> {
  try {
    await deleteGuaranteed(zk, nodePath);
  } catch (cleanup) {
    if (original instanceof Error) (original as Error & { cleanupError?: unknown }).cleanupError = cleanup;
  }
}

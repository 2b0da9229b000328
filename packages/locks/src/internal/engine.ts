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
import type { AcquireTrace } from '../diagnostics.js';
import { pathCheck, type PathCheck } from './path-acl.js';
import { ConnectionLossError, CreateMode, NodeExistsError, NoNodeError, type ACL, type Stat, type WatchedEvent, type ZooKeeper } from '@zk/protocol';
import { LeaseLostError } from '../errors.js';
import { Attempt, connected, createdThenGone, deleteGuaranteed, removeNode, sweepAttempt } from './attempt.js';
import { checkClient } from './client.js';
import type { LockDriver } from './drivers.js';
import { attemptIdOf, newAttemptId, protectedName, sortChildren } from './names.js';
import { freshProof, proofIsFresh } from './proof.js';

export { connected, deleteGuaranteed };

/** What one acquire needs. */
export interface AcquireSpec {
  readonly zk: ZooKeeper;
  /** The lock directory. */
  readonly path: string;
  readonly driver: LockDriver;
  /** Data stored in our node (owner information). */
  readonly data: Buffer;
  /** ACL of our node and of the parents we create; undefined: the client's `acl` option. */
  readonly acl?: readonly ACL[] | undefined;
  /** ms; 0 = try once; undefined = wait forever. */
  readonly timeout: number | undefined;
  readonly signal: AbortSignal | undefined;
  /** The wait's `zk:lock:acquire` trace, when traced: told our queue position at the first listing. */
  readonly trace?: AcquireTrace | undefined;
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

/** How many times a create may find its parent missing (a container reaped under us) before giving up. */
const MAX_PARENT_RETRIES = 5;

/**
 * Acquires: resolves once our node holds the lock. Every wait is bounded by the attempt (see
 * attempt.ts); on any failure our node is removed, or swept in the background when the create's
 * outcome is unknown.
 *
 * The attempt's bounds are armed lazily when nothing could end the attempt before the first
 * round trip answers: no signal, no deadline that could pass (no timeout, or 0), and a connected
 * session, whose end fails the requests in flight before it is reported. The uncontended acquire
 * then holds without arming them at all; any other turn (a failed create, a wait, a proof to
 * renew) arms them first, and a session that ended meanwhile gives the same typed reason as
 * when armed from the start.
 */
export async function acquireNode(spec: AcquireSpec): Promise<HeldNode> {
  checkClient(spec.zk); // before any request, and before the client's state is read
  spec.zk.checkLeaseProof(); // a lease that could never be proven fails here, before any node exists
  const state: AcquireState = { attemptId: newAttemptId(), inFlight: undefined, unknown: false, node: undefined, attempt: undefined };
  if (spec.signal !== undefined || (spec.timeout !== undefined && spec.timeout > 0) || spec.zk.state !== 'connected') armed(spec, state);
  try {
    state.attempt?.check();
    const queued = await createQueued(spec, state);
    // Alone in the queue (the uncontended acquire): held, with nothing to sort or wait for.
    const alone = queued.children?.length === 1 && queued.children[0] === queued.node.name;
    if (alone && spec.trace !== undefined) spec.trace.position = 0;
    if (!alone || spec.driver.decide(queued.children!, queued.node.name).kind !== 'holds') await waitForTurn(spec, state, queued.node, queued);
    // No lease is born at risk: a proof too old to last is renewed first (internal/proof.ts).
    if (!proofIsFresh(spec.zk)) {
      const attempt = armed(spec, state);
      await attempt.race(freshProof(spec.zk, attempt.signal));
    }
    return queued.node;
  } catch (err) {
    if (state.node) await removeNode(spec.zk, state.node.nodePath, err);
    else if (state.inFlight || state.unknown) sweepAttempt(spec.zk, spec.path, state.attemptId, state.inFlight, err);
    throw err;
  } finally {
    state.attempt?.end();
  }
}

/** What one acquire knows: its attempt's bounds once armed, and of its creates: one in flight, one that may have happened, or our node. */
interface AcquireState {
  readonly attemptId: string;
  inFlight: Promise<{ path: string; stat: Stat }> | undefined;
  unknown: boolean;
  node: HeldNode | undefined;
  attempt: Attempt | undefined;
}

/** The acquire's bounds, armed now if they were not yet (see {@link acquireNode}). */
function armed(spec: AcquireSpec, state: AcquireState): Attempt {
  return (state.attempt ??= new Attempt(spec.zk, spec.path, spec.timeout, spec.signal));
}

/** Creates our protected ephemeral-sequential node and lists the queue in the same round trip. */
async function createQueued(spec: AcquireSpec, state: AcquireState): Promise<{ node: HeldNode; children?: string[] | undefined }> {
  const { zk, path, driver } = spec;
  const prefix = `${path}/${protectedName(state.attemptId, driver.lockName)}`;
  for (let parentRetries = 0; ; ) {
    const bounded = state.attempt;
    bounded?.check();
    const created = zk.createWithStat(prefix, spec.data, { mode: CreateMode.EPHEMERAL_SEQUENTIAL, acl: spec.acl });
    const listed = zk.getChildren(path);
    listed.catch(() => undefined); // its failure is the create's failure, handled below
    // A closed recipe checks that the path is as closed as its nodes (path-acl.ts), in the same round trip.
    const check = pathCheck(zk, spec.acl, path);
    const pathAcl = check?.readPath(path);
    state.inFlight = created;
    let result: { path: string; stat: Stat };
    try {
      result = await (bounded === undefined ? created : bounded.race(created));
      state.inFlight = undefined;
    } catch (err) {
      if (bounded !== undefined && bounded.stopped && err === bounded.reason) throw err; // the create may still answer: swept
      state.inFlight = undefined;
      const attempt = armed(spec, state);
      if (err instanceof ConnectionLossError) state.unknown = true; // the create may have happened
      // Armed only now: a session that ended meanwhile is the reason, as if armed from the start.
      if (bounded === undefined && attempt.stopped) throw attempt.reason;
      const gone = createdThenGone(err, prefix, path);
      if (gone !== undefined) throw gone;
      if (err instanceof NoNodeError && parentRetries++ < MAX_PARENT_RETRIES) {
        // Only a NoNode counts here: a connection loss while creating the parents is waited out.
        await ensureContainers(zk, path, attempt, spec.acl).catch((e: unknown) => (e instanceof ConnectionLossError ? attempt.connected(e) : Promise.reject(e)));
        continue;
      }
      if (err instanceof ConnectionLossError) {
        state.node = await recoverProtected(zk, path, state.attemptId, attempt, err);
        if (state.node && check !== undefined) await verifyPath(spec, state, check, check.readPath(path), state.node);
        if (state.node) return { node: state.node };
        continue; // not there: try again (the same attempt id, so a later sweep finds any copy)
      }
      throw err;
    }
    state.node = { nodePath: result.path, name: result.path.slice(path.length + 1), czxid: result.stat.czxid };
    if (check !== undefined) await verifyPath(spec, state, check, pathAcl!, state.node);
    try {
      return { node: state.node, children: await (bounded === undefined ? listed : bounded.race(listed)) };
    } catch (err) {
      if (!(err instanceof ConnectionLossError)) throw err;
      return { node: state.node }; // listed again once connected
    }
  }
}

/**
 * Refuses (UnsafeLockPathError, our node then removed by the caller) a lock path that lets in
 * sessions our node shuts out; its ACL is read again after a connection loss.
 */
async function verifyPath(spec: AcquireSpec, state: AcquireState, check: PathCheck, first: Promise<readonly ACL[]>, node: HeldNode): Promise<void> {
  for (let read = first; ; ) {
    const race = <T>(p: Promise<T>): Promise<T> => (state.attempt === undefined ? p : state.attempt.race(p));
    try {
      await check.verify(spec.path, await race(read), node.nodePath, race);
      return;
    } catch (err) {
      if (!(err instanceof ConnectionLossError)) throw err;
      await armed(spec, state).connected(err);
      read = check.readPath(spec.path);
    }
  }
}

/**
 * After a create whose reply was lost: find our node by its attempt id once connected again,
 * and adopt it only if the current session owns it (Curator's CURATOR-498 check); a node of an
 * earlier session is deleted rather than left to block the queue.
 */
async function recoverProtected(zk: ZooKeeper, path: string, attemptId: string, attempt: Attempt, cause: unknown): Promise<HeldNode | undefined> {
  for (;;) {
    await attempt.connected(cause);
    try {
      const children = await attempt.race(zk.getChildren(path).catch((e: unknown) => (e instanceof NoNodeError ? [] : Promise.reject(e))));
      const name = children.find((c) => attemptIdOf(c) === attemptId);
      if (!name) return undefined;
      const nodePath = `${path}/${name}`;
      const stat = await attempt.race(zk.exists(nodePath));
      if (!stat) return undefined;
      if (stat.ephemeralOwner === zk.sessionId) return { nodePath, name, czxid: stat.czxid };
      await removeNode(zk, nodePath, undefined);
      return undefined;
    } catch (err) {
      if (!(err instanceof ConnectionLossError)) throw err;
      cause = err; // cut off again: wait for the next connection
    }
  }
}

/**
 * Loops until the driver says we hold the lock. The listing is dropped before waiting: with
 * thousands of waiters, each one keeping its copy of the queue would cost memory quadratic in
 * the queue's length. A connection loss while listing or watching waits for the next connection
 * (our node lives as long as the session) and lists again.
 */
async function waitForTurn(spec: AcquireSpec, state: AcquireState, node: HeldNode, first: { children?: string[] | undefined }): Promise<void> {
  const { zk, path, driver } = spec;
  let children = first.children;
  first.children = undefined;
  for (;;) {
    try {
      children ??= await armed(spec, state).race(zk.getChildren(path));
      const sorted = children.length === 1 ? children : sortChildren(children, driver.sortNames);
      if (spec.trace !== undefined && spec.trace.position === undefined) spec.trace.position = Math.max(0, sorted.indexOf(node.name));
      const decision = driver.decide(sorted, node.name);
      children = undefined;
      if (decision.kind === 'holds') return;
      if (decision.kind === 'lost') throw new LeaseLostError(path, `our lock node ${node.nodePath} is gone (session expired, or deleted by someone else)`, { cause: new NoNodeError(undefined, { path: node.nodePath }) });
      const attempt = armed(spec, state);
      if (attempt.expired) throw attempt.timeoutError();
      // Taking the lock on the predecessor's deletion alone (no listing) needs our own node to be
      // there still: it is watched too, and its deletion, notified before the predecessor's
      // (notifications come in zxid order), ends the wait.
      const event = await waitForDeletion(zk, attempt, `${path}/${decision.node}`, decision.thenHolds ? node.nodePath : undefined);
      if (event === 'lost') throw new LeaseLostError(path, `our lock node ${node.nodePath} is gone (session expired, or deleted by someone else)`, { cause: new NoNodeError(undefined, { path: node.nodePath }) });
      if (event === 'deleted' && decision.thenHolds) return;
    } catch (err) {
      if (!(err instanceof ConnectionLossError)) throw err;
      children = undefined;
      await armed(spec, state).connected(err);
    }
  }
}

/**
 * Watches `target` with getData (a node already gone leaves no watch behind, unlike exists) and
 * waits for its event, or the end of the attempt. Leaves no watch behind when it throws. With
 * `own`, our node is watched too, in the same round trip: `'lost'` when it is gone or deleted
 * first. Its watch is dropped locally on return; the server's stays until our node changes,
 * which holding or deleting it makes harmless (the lease watches the node itself).
 */
async function waitForDeletion(zk: ZooKeeper, attempt: Attempt, target: string, own?: string): Promise<'deleted' | 'changed' | 'gone' | 'lost'> {
  let onEvent!: (e: WatchedEvent) => void;
  // An event of our own node: 'lost' when deleted, 'ours' otherwise (the target's watch is then still set).
  const event = new Promise<'deleted' | 'changed' | 'lost' | 'ours'>((resolve) => (onEvent = (e) => resolve(e.path === own ? (e.type === 'NodeDeleted' ? 'lost' : 'ours') : e.type === 'NodeDeleted' ? 'deleted' : 'changed')));
  const watched = zk.getData(target, { watch: onEvent });
  const ownWatched = own === undefined ? undefined : zk.getData(own, { watch: onEvent });
  ownWatched?.catch(() => undefined); // handled below, once the target's reply is in
  try {
    try {
      await attempt.race(watched);
    } catch (err) {
      if (err instanceof NoNodeError) return 'gone';
      // Cut off or stopped before the reply: drop the registration whenever the reply comes.
      watched.then(
        () => unwatch(zk, target, onEvent),
        () => zk.removeLocalWatch('data', target, onEvent),
      );
      throw err;
    }
    if (ownWatched !== undefined) {
      try {
        await attempt.race(ownWatched);
      } catch (err) {
        await unwatch(zk, target, onEvent);
        if (err instanceof NoNodeError) return 'lost';
        throw err;
      }
    }
    let result: 'deleted' | 'changed' | 'lost' | 'ours';
    try {
      result = await attempt.race(event);
    } catch (err) {
      await unwatch(zk, target, onEvent);
      throw err;
    }
    if (result === 'deleted' || result === 'changed') return result;
    await unwatch(zk, target, onEvent); // the target's watch has not fired
    return result === 'lost' ? 'lost' : 'changed';
  } finally {
    if (own !== undefined) ownWatched!.finally(() => zk.removeLocalWatch('data', own, onEvent)).catch(() => undefined);
  }
}

/** Removes our data watch on `target`: on the server when connected, else locally only. */
export async function unwatch(zk: ZooKeeper, target: string, listener: (e: WatchedEvent) => void): Promise<void> {
  if (zk.state !== 'connected') {
    zk.removeLocalWatch('data', target, listener);
    return;
  }
  await zk.removeWatches(target, { kind: 'data', listener }).catch(() => zk.removeLocalWatch('data', target, listener));
}

/**
 * Creates `path` and its missing ancestors as container nodes (garbage-collected when empty),
 * within `attempt`, with `acl` (undefined: the client's `acl` option for each path).
 */
export async function ensureContainers(zk: ZooKeeper, path: string, attempt?: Attempt, acl?: readonly ACL[]): Promise<void> {
  const parts = path.split('/').filter(Boolean);
  for (let i = 1; i <= parts.length; i++) {
    const p = `/${parts.slice(0, i).join('/')}`;
    try {
      const created = zk.create(p, null, { mode: CreateMode.CONTAINER, acl });
      await (attempt ? attempt.race(created) : created);
    } catch (err) {
      if (!(err instanceof NodeExistsError)) throw err;
    }
  }
}


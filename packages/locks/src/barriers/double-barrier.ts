/**
 * DoubleBarrier: Curator's DistributedDoubleBarrier, wire-compatible with it.
 *
 * Layout (from the bytecode of curator-recipes 5.4, `DistributedDoubleBarrier`):
 * - each member is an EPHEMERAL node `<path>/<uuid>`, the name being Java's
 *   `UUID.randomUUID().toString()` (36 characters, lower-case hex with dashes), created with
 *   parents as containers;
 * - `<path>/ready` is a PERSISTENT node (`READY_NODE`), created by the member whose listing of
 *   `<path>` counts at least `memberQty` children (NodeExists ignored), and deleted by every
 *   member at the end of `leave` (NoNode ignored). Node data is never read (Curator writes its
 *   client's default data).
 * - enter: `exists(ready)` with a watch; create the member node; if `ready` was absent, list
 *   `<path>` (no watch) and create `ready` when the count is reached, else sleep until the watch
 *   fires.
 * - leave, repeated until done: list `<path>` without `ready`, sorted as strings (Java's
 *   `Collections.sort`, UTF-16 code units, as JavaScript's default sort). Empty: done. Only one
 *   left: delete ours if it is that one, done. We are the lowest: watch the highest. Otherwise:
 *   watch the lowest, then delete ours. Sleep while the watched node exists.
 * Sharing the sort order is what makes mixed members agree on who waits for whom.
 */
import { randomUUID } from 'node:crypto';
import { CreateMode, InvalidArgumentError, type ACL, NodeExistsError, NoNodeError, validatePath, type ZooKeeper } from '@zk/protocol';
import { BarrierAbortedError, LockStateError, type BarrierTimeoutError, type LeaseLostError } from '../errors.js';
import { checkClient } from '../internal/client.js';
import { recipeACL } from '../internal/acl.js';
import { removeNode, type Attempt } from '../internal/attempt.js';
import { barrierWait, checkWaitOptions, isRetryable, NodeWatch, type BarrierWaitOptions } from '../internal/barrier-wait.js';

/** Curator's `DistributedDoubleBarrier.READY_NODE`: the child that says the barrier is open. */
export const READY_NODE = 'ready';

/** Options of a {@link DoubleBarrier}. */
export interface DoubleBarrierOptions {
  /** The data of this member's node (nobody reads it). Default: none. */
  data?: Uint8Array | string;
  /**
   * ACL of the member nodes, of `ready` and of the container parents made when they are missing (default: the
   * client's `acl` connect option, else OPEN_ACL_UNSAFE). Every process on the path, Curator's
   * included, must be allowed by it. Checked when the object is made (InvalidArgumentError).
   */
  acl?: readonly ACL[] | undefined;
}

/**
 * A double barrier: `enter()` waits until `memberCount` members have entered, `leave()` waits
 * until every member has left. Curator's `DistributedDoubleBarrier` on the same nodes, so Java
 * and Node processes are members of one barrier. Each member is an ephemeral node: a member
 * whose process dies or whose session ends leaves with it, and the others' `leave()` completes
 * without it (no one waits forever for a dead member; a live member that never calls `leave()`
 * is waited for, up to each waiter's `timeout`).
 *
 * One object is one member; after `leave()` it may `enter()` again (a new round, a new node).
 *
 * Where Curator's users suffered, this one differs (the node layout stays Curator's):
 * - a timed-out or aborted `enter()` or `leave()` rejects with {@link BarrierTimeoutError} or
 *   {@link BarrierAbortedError} (Curator returns false, the locks here throw too) and removes
 *   this member's node first, so it is not counted as a member that never comes (CURATOR-80,
 *   open: Curator leaves the node until the session ends);
 * - `enter()` passes only once `ready` exists: every wake-up looks again. Curator's timed
 *   `enter` passes on any event of its watcher, a connection event included, with too few
 *   members (apache/curator#1290, open);
 * - `enter()` and `leave()` each wait on their own watch, removed when the wait ends (Curator's
 *   share one watcher, so a `ready` created late wakes a `leave()` early: apache/curator#416;
 *   and its enter leaves the `ready` watch behind);
 * - a member whose node vanished while its session lives (deleted by hand) is treated as
 *   already gone and still waits for the others, where Curator's `leave()` throws
 *   IllegalStateException "Our path is missing". When the session itself ended (expired,
 *   closed), `leave()` rejects at once with {@link LeaseLostError} (the client's `ClientClosedError`
 *   when the client was closed): the member left the barrier
 *   with its session, and the others are not waiting for it;
 * - `enter()` that finds `ready` older than its own node and no other member (a round whose
 *   members all died before deleting it: `ready` is persistent) deletes the stale `ready` and
 *   counts again, where Curator lets a lone member through. Java members arriving at such a
 *   barrier still pass at once. A `ready` newer than its own node always lets it through.
 *
 * @example
 * ```ts
 * const barrier = new DoubleBarrier(zk, '/barriers/batch-42', 3);
 * await barrier.enter({ timeout: 60_000 }); // all 3 workers are in
 * await work();
 * await barrier.leave({ timeout: 60_000 }); // all 3 are done (or died)
 * ```
 */
export class DoubleBarrier {
  /** The client. */
  readonly zk: ZooKeeper;
  /** The barrier's path (the parent of the member nodes and of `ready`). */
  readonly path: string;
  /** How many members `enter()` waits for. */
  readonly memberCount: number;
  readonly #data: Buffer;
  readonly #acl: readonly ACL[] | undefined;
  readonly #readyPath: string;
  #state: 'outside' | 'entering' | 'inside' | 'leaving' = 'outside';
  #name: string | undefined;

  /**
   * Bad input (a relative or malformed path, `memberCount` not an integer in 1..2^31-1) throws
   * InvalidArgumentError; nothing is sent here.
   */
  constructor(zk: ZooKeeper, path: string, memberCount: number, options: DoubleBarrierOptions = {}) {
    validatePath(path);
    if (path === '/') throw new InvalidArgumentError('path', 'must not be the root: the barrier is the parent of its member nodes');
    if (typeof memberCount !== 'number' || !Number.isInteger(memberCount) || memberCount < 1 || memberCount > 2 ** 31 - 1) {
      throw new InvalidArgumentError('memberCount', `must be an integer in 1..2^31-1 (Curator's memberQty, a Java int), got ${String(memberCount)}`);
    }
    if (typeof options !== 'object' || options === null) throw new InvalidArgumentError('options', 'must be an object');
    if (options.data !== undefined && typeof options.data !== 'string' && !(options.data instanceof Uint8Array)) {
      throw new InvalidArgumentError('data', 'must be a string or a Uint8Array');
    }
    this.zk = zk;
    this.path = path;
    this.memberCount = memberCount;
    this.#data = options.data === undefined ? Buffer.alloc(0) : Buffer.from(options.data);
    this.#acl = recipeACL(options.acl);
    this.#readyPath = `${path}/${READY_NODE}`;
  }

  /** This member's node while it is entering, inside or leaving; `undefined` outside. */
  get memberNode(): string | undefined {
    return this.#name === undefined ? undefined : `${this.path}/${this.#name}`;
  }

  /**
   * Enters: creates this member's node and resolves once `memberCount` members have entered
   * (`ready` exists). Rejects with {@link BarrierTimeoutError}, {@link BarrierAbortedError} or
   * {@link LeaseLostError} after removing its node; with {@link LockStateError} unless outside
   * the barrier. Bad options throw InvalidArgumentError before any request.
   */
  async enter(options: BarrierWaitOptions = {}): Promise<void> {
    checkWaitOptions(options);
    checkClient(this.zk);
    if (this.#state !== 'outside') throw new LockStateError(this.path, `this DoubleBarrier member is already ${this.#state} ${this.path}`);
    if (options.signal?.aborted) throw new BarrierAbortedError(this.path, options.signal.reason, 'enter');
    this.#state = 'entering';
    const name = randomUUID(); // the form of Java's UUID.randomUUID().toString()
    this.#name = name;
    const wait = barrierWait(this.zk, this.path, 'enter', options);
    try {
      const joined = await this.#createMember(name, wait);
      await this.#awaitReady(name, joined, wait);
      this.#state = 'inside';
    } catch (cause) {
      const err = wait.typed(cause);
      // Whether or not the create happened (its reply may be lost), the node by this name is ours.
      await removeNode(this.zk, `${this.path}/${name}`, err);
      this.#state = 'outside';
      this.#name = undefined;
      throw err;
    } finally {
      wait.end();
    }
  }

  /**
   * Leaves: removes this member's node and resolves once every member's node is gone (left, or
   * removed with its session). Rejects with {@link BarrierTimeoutError} or
   * {@link BarrierAbortedError} (this member's node is removed first: it has left, the others
   * are only not known to have), with {@link LeaseLostError} when the session ended (`ClientClosedError`: closed), with
   * {@link LockStateError} unless inside the barrier. Bad options throw InvalidArgumentError
   * before any request.
   */
  async leave(options: BarrierWaitOptions = {}): Promise<void> {
    checkWaitOptions(options);
    checkClient(this.zk);
    const name = this.#name;
    if (this.#state !== 'inside' || name === undefined) throw new LockStateError(this.path, `this DoubleBarrier member is ${this.#state === 'outside' ? 'not inside' : this.#state} ${this.path}`);
    if (options.signal?.aborted) throw new BarrierAbortedError(this.path, options.signal.reason, 'leave');
    this.#state = 'leaving';
    const wait = barrierWait(this.zk, this.path, 'leave', options);
    const ours = { present: true };
    try {
      await this.#awaitOthersGone(name, ours, wait);
      await this.#deleteReady(wait);
    } catch (cause) {
      const err = wait.typed(cause);
      if (ours.present) await removeNode(this.zk, `${this.path}/${name}`, err);
      throw err;
    } finally {
      this.#state = 'outside';
      this.#name = undefined;
      wait.end();
    }
  }

  /** The member nodes (children but `ready`), sorted as Curator sorts them; [] without the barrier node. */
  async #members(wait: Attempt): Promise<string[]> {
    try {
      const children = await wait.race(this.zk.getChildren(this.path));
      return children.filter((c) => c !== READY_NODE).sort();
    } catch (err) {
      if (err instanceof NoNodeError) return [];
      throw err;
    }
  }

  /**
   * Creates this member's ephemeral node and returns its czxid; after a lost reply, NodeExists
   * means the first create happened (its czxid then read with `exists`).
   */
  async #createMember(name: string, wait: Attempt): Promise<bigint> {
    const own = `${this.path}/${name}`;
    for (;;) {
      try {
        const { stat } = await wait.race(this.zk.createWithStat(own, this.#data, { mode: CreateMode.EPHEMERAL, parents: 'container', acl: this.#acl, parentAcl: this.#acl }));
        return stat.czxid;
      } catch (err) {
        if (err instanceof NodeExistsError) {
          // a random UUID: only our own earlier try made it
          const stat = await wait.race(this.zk.exists(own));
          if (stat !== null) return stat.czxid;
          continue; // gone again (deleted by hand): create it anew
        }
        if (!isRetryable(err)) throw err;
        await wait.connected(err);
      }
    }
  }

  /**
   * Resolves once `ready` exists (creating it when the count is reached); looks again after every
   * wake-up. A `ready` made after this member's node (czxid above `joined`) opens the barrier
   * whatever the listing now shows: its maker counted enough members, and they may all have
   * entered and left again before this member looked (seen in a CI run: the other member of two
   * left, this one took the ready node for a stale one, deleted it and waited out its timeout).
   */
  async #awaitReady(name: string, joined: bigint, wait: Attempt): Promise<void> {
    for (;;) {
      const watch = new NodeWatch(this.zk, this.#readyPath);
      try {
        const ready = await wait.race(watch.exists());
        if (ready !== null) {
          await watch.remove();
          if (ready.czxid > joined) return;
          const others = (await this.#members(wait)).filter((m) => m !== name);
          if (others.length > 0) return;
          await this.#deleteReady(wait); // stale: left by a round whose members all died
          continue;
        }
        if ((await this.#members(wait)).length >= this.memberCount) {
          await this.#createReady(wait);
          await watch.remove(); // fired by our own create, unless another member's came first
          return;
        }
        await wait.sleep(watch.fired);
      } catch (err) {
        await watch.remove();
        if (!isRetryable(err)) throw err;
        await wait.connected(err);
      }
    }
  }

  async #createReady(wait: Attempt): Promise<void> {
    try {
      await wait.race(this.zk.create(this.#readyPath, this.#data, { mode: CreateMode.PERSISTENT, acl: this.#acl }));
    } catch (err) {
      if (!(err instanceof NodeExistsError)) throw err;
    }
  }

  async #deleteReady(wait: Attempt): Promise<void> {
    try {
      await wait.race(this.zk.delete(this.#readyPath));
    } catch (err) {
      if (!(err instanceof NoNodeError)) throw err;
    }
  }

  /** Curator's leave loop (see the file comment); `ours.present` false once our node is gone. */
  async #awaitOthersGone(name: string, ours: { present: boolean }, wait: Attempt): Promise<void> {
    const own = `${this.path}/${name}`;
    for (;;) {
      try {
        const members = await this.#members(wait);
        if (members.length === 0) return;
        const index = members.indexOf(name);
        if (index < 0) ours.present = false; // gone without us (deleted by hand): we are out already
        if (members.length === 1) {
          if (ours.present) await this.#deleteOwn(own, wait, ours);
          return; // the last one left is another member, which finishes on its own
        }
        // The lowest waits for the highest; everyone else waits for the lowest, gone already.
        const target = new NodeWatch(this.zk, `${this.path}/${index === 0 ? members.at(-1)! : members[0]!}`);
        try {
          const present = await wait.race(target.getData()).then(
            () => true,
            (err: unknown) => (err instanceof NoNodeError ? false : Promise.reject(err)),
          );
          if (index !== 0 && ours.present) await this.#deleteOwn(own, wait, ours);
          if (present) await wait.sleep(target.fired);
        } finally {
          await target.remove();
        }
      } catch (err) {
        if (!isRetryable(err)) throw err;
        await wait.connected(err);
      }
    }
  }

  async #deleteOwn(own: string, wait: Attempt, ours: { present: boolean }): Promise<void> {
    try {
      await wait.race(this.zk.delete(own));
    } catch (err) {
      if (!(err instanceof NoNodeError)) throw err;
    }
    ours.present = false;
  }
}

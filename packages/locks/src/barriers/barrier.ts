/**
 * Barrier: Curator's DistributedBarrier, wire-compatible with it.
 *
 * Layout (from the bytecode of curator-recipes 5.4, `DistributedBarrier`): one node at the
 * barrier path. `setBarrier` creates it PERSISTENT with parents as containers (NodeExists
 * ignored); `removeBarrier` deletes it (NoNode ignored); `waitOnBarrier` loops on `exists` with a
 * watch until the node is absent. The node's data is never read by either side (Curator writes
 * its client's default data, the local IP address as text).
 */
import { CreateMode, InvalidArgumentError, type ACL, NodeExistsError, NoNodeError, validatePath, type CallOptions, type ZooKeeper } from '@zk/protocol';
import { checkClient } from '../internal/client.js';
import { recipeACL } from '../internal/acl.js';
import { barrierWait, checkWaitOptions, isRetryable, NodeWatch, type BarrierWaitOptions } from '../internal/barrier-wait.js';
import { BarrierAbortedError, type BarrierTimeoutError, type LeaseLostError } from '../errors.js';

export type { BarrierWaitOptions } from '../internal/barrier-wait.js';

/** Options of a {@link Barrier}. */
export interface BarrierOptions {
  /** The data `set()` writes in the barrier node (nobody reads it). Default: none. */
  data?: Uint8Array | string;
  /**
   * ACL of the barrier node and of the container parents made when they are missing (default: the
   * client's `acl` connect option, else OPEN_ACL_UNSAFE). Every process on the path, Curator's
   * included, must be allowed by it. Checked when the object is made (InvalidArgumentError).
   */
  acl?: readonly ACL[] | undefined;
}

/**
 * A barrier that holds everyone waiting on it until it is removed: Curator's
 * `DistributedBarrier` on the same node, so Java and Node processes set, wait on and remove the
 * same barrier. The barrier is *set* while its node exists; {@link Barrier.wait} resolves once
 * the node is absent (at once when it was never set).
 *
 * Unlike Curator:
 * - a timed-out or aborted wait rejects with a typed error ({@link BarrierTimeoutError},
 *   {@link BarrierAbortedError}) where Curator's `waitOnBarrier(time, unit)` returns false: the
 *   same choice as the locks' `acquire({ timeout })`, so an unchecked `false` cannot let a
 *   process past a barrier that is still set;
 * - every wait that ends removes its watch (on the server too). Curator's `waitOnBarrier` never
 *   removes its exists watch, which piles up in servers and clients that wait often
 *   (CURATOR-654, open);
 * - the wait reads with `getData`, which sets no watch on an absent node, where `exists` would
 *   leave a creation watch behind after the barrier opened.
 *
 * The wait goes on while the connection is down (the client re-arms the watch when the session
 * resumes) and rejects with {@link LeaseLostError} when the session ends or is lost (with the
 * client's `ClientClosedError` when the client was closed).
 *
 * @example
 * ```ts
 * const barrier = new Barrier(zk, '/barriers/deploy');
 * await barrier.set(); // in the coordinator
 * // in the workers: resolves once the coordinator calls barrier.remove()
 * await barrier.wait({ timeout: 60_000 });
 * ```
 */
export class Barrier {
  /** The client. */
  readonly zk: ZooKeeper;
  /** The barrier node's path. */
  readonly path: string;
  readonly #data: Buffer;
  readonly #acl: readonly ACL[] | undefined;

  /** Bad input (a relative or malformed path) throws InvalidArgumentError; nothing is sent here. */
  constructor(zk: ZooKeeper, path: string, options: BarrierOptions = {}) {
    validatePath(path);
    if (typeof options !== 'object' || options === null) throw new InvalidArgumentError('options', 'must be an object');
    if (options.data !== undefined && typeof options.data !== 'string' && !(options.data instanceof Uint8Array)) {
      throw new InvalidArgumentError('data', 'must be a string or a Uint8Array');
    }
    this.zk = zk;
    this.path = path;
    this.#data = options.data === undefined ? Buffer.alloc(0) : Buffer.from(options.data);
    this.#acl = recipeACL(options.acl);
  }

  /** Sets the barrier: creates its node (parents as containers). Idempotent (Curator's `setBarrier`). */
  async set(options: CallOptions = {}): Promise<void> {
    checkClient(this.zk);
    try {
      await this.zk.create(this.path, this.#data, { ...options, mode: CreateMode.PERSISTENT, parents: 'container', acl: this.#acl, parentAcl: this.#acl });
    } catch (err) {
      if (!(err instanceof NodeExistsError)) throw err;
    }
  }

  /** Removes the barrier: deletes its node, releasing every waiter. Idempotent (Curator's `removeBarrier`). */
  async remove(options: CallOptions = {}): Promise<void> {
    checkClient(this.zk);
    try {
      await this.zk.delete(this.path, options);
    } catch (err) {
      if (!(err instanceof NoNodeError)) throw err;
    }
  }

  /** Whether the barrier is set (its node exists), without waiting or leaving a watch. */
  async isSet(options: CallOptions = {}): Promise<boolean> {
    checkClient(this.zk);
    return (await this.zk.exists(this.path, options)) !== null;
  }

  /**
   * Waits until the barrier is not set (Curator's `waitOnBarrier`). Rejects with
   * {@link BarrierTimeoutError} after `timeout` ms (`timeout: 0`: unless it is open now),
   * {@link BarrierAbortedError} on `signal`, {@link LeaseLostError} when the session ends (`ClientClosedError` when closed); the
   * watch is removed before it rejects. Bad options throw InvalidArgumentError before any request.
   */
  async wait(options: BarrierWaitOptions = {}): Promise<void> {
    checkWaitOptions(options);
    checkClient(this.zk);
    if (options.signal?.aborted) throw new BarrierAbortedError(this.path, options.signal.reason, 'wait');
    const wait = barrierWait(this.zk, this.path, 'wait', options);
    try {
      for (;;) {
        const watch = new NodeWatch(this.zk, this.path);
        try {
          await wait.race(watch.getData());
          // Set: sleep until it changes, then look again (a data change fires it too).
          await wait.sleep(watch.fired);
        } catch (err) {
          await watch.remove();
          if (err instanceof NoNodeError) return;
          if (!isRetryable(err)) throw err;
          await wait.connected(err);
        }
      }
    } finally {
      wait.end();
    }
  }
}

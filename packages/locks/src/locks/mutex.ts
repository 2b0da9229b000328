/**
 * Mutex: Curator's InterProcessMutex, wire-compatible with it.
 */
import { InvalidArgumentError, type ZooKeeper } from '@zk/protocol';
import { acquireNode, type HeldNode } from '../internal/engine.js';
import { mutexDriver } from '../internal/drivers.js';
import { LocalQueue } from '../internal/local-queue.js';
import { guard, type LeaseCore } from '../lease.js';
import { LockBase, type AcquireOptions, type LockOptions } from './lock.js';
import type { AcquireTrace, LockKind } from '../diagnostics.js';

/** The default bound of in-process hand-offs while another process waits. */
export const DEFAULT_MAX_LOCAL_HANDOFFS = 8;

/** Options of a {@link Mutex}. */
export interface MutexOptions extends LockOptions {
  /**
   * In-process hand-offs (default: off). When on, the acquires made through this `Mutex` object
   * queue locally behind a single lock node: the hold passes from one local contender to the
   * next with no server round trip, in FIFO order. Fairness toward other processes: once another
   * contender is seen waiting on the path, at most `maxHandoffs` (default
   * {@link DEFAULT_MAX_LOCAL_HANDOFFS}) more local hand-offs happen before the node is released
   * and the remaining local contenders queue again behind the others.
   *
   * Local holders of one node share its fencing token (they are one session; tokens still grow
   * from node to node, so between processes), and each gets its own lease and signal. Not with
   * `revocable` acquires. `true` means `{ maxHandoffs: 8 }`.
   */
  localQueue?: boolean | { maxHandoffs?: number };
}

/**
 * A fair (FIFO), reentrant mutual-exclusion lock. Each contender queues an
 * ephemeral-sequential node `_c_<uuid>-lock-<seq>` under the lock path and watches only the
 * node before its own, so a release wakes exactly one waiter. Node names and order are
 * Curator 5's, so Node processes and Java processes using `InterProcessMutex` on the same path
 * exclude each other.
 *
 * It does not protect against a holder paused longer than the session timeout: see
 * {@link Lease} (`signal`, `fencingToken`, `fenced()`).
 *
 * @example
 * ```ts
 * const mutex = new Mutex(zk, '/locks/nightly-report');
 * await using lease = await mutex.acquire({ timeout: 30_000 });
 * await writeReport({ fencingToken: lease.fencingToken, signal: lease.signal });
 * ```
 */
export class Mutex extends LockBase {
  readonly #local: LocalQueue | undefined;

  constructor(zk: ZooKeeper, path: string, options: MutexOptions = {}) {
    super(zk, path, options);
    const local = options.localQueue;
    if (local === undefined || local === false) return;
    const maxHandoffs = local === true ? DEFAULT_MAX_LOCAL_HANDOFFS : (local.maxHandoffs ?? DEFAULT_MAX_LOCAL_HANDOFFS);
    if (typeof local !== 'boolean' && (typeof local !== 'object' || local === null)) throw new InvalidArgumentError('localQueue', `must be a boolean or { maxHandoffs }, got ${String(local)}`);
    if (!Number.isSafeInteger(maxHandoffs) || maxHandoffs < 0) throw new InvalidArgumentError('localQueue.maxHandoffs', `must be an integer >= 0, got ${String(maxHandoffs)}`);
    this.#local = new LocalQueue({
      zk,
      path,
      maxHandoffs,
      acquireNode: async (timeout, signal) => {
        const node = await acquireNode({ zk: this.zk, path: this.path, driver: mutexDriver, data: this.data, acl: this.acl, timeout, signal });
        return guard(this.zk, this.path, node.nodePath, node.czxid, this.options, () => undefined, false, 'mutex');
      },
    });
  }

  /** @internal */
  protected override acquireCore(options: AcquireOptions, onEnd: () => void, trace?: AcquireTrace): Promise<LeaseCore> {
    if (!this.#local) return super.acquireCore(options, onEnd, trace);
    if (options.revocable) throw new InvalidArgumentError('revocable', 'revocable acquires are not supported with localQueue (a node shared by local holders cannot be revoked from one of them)');
    return this.#local.acquire(options.timeout, options.signal, onEnd);
  }

  /** @internal */
  protected acquireNode(options: AcquireOptions, _owner: unknown, trace?: AcquireTrace): Promise<HeldNode> {
    return acquireNode({ zk: this.zk, path: this.path, driver: mutexDriver, data: this.data, acl: this.acl, timeout: options.timeout, signal: options.signal, trace });
  }

  /** @internal */
  protected get kind(): LockKind {
    return 'mutex';
  }
}

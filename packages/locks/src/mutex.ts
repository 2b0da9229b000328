/**
 * Mutex: Curator's InterProcessMutex, wire-compatible with it.
 */
import type { ZooKeeper } from '@zk/protocol';
import { acquireNode, type HeldNode } from './internal/engine.js';
import { mutexDriver } from './internal/drivers.js';
import { LockBase, type AcquireOptions, type LockOptions } from './lock.js';

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
  constructor(zk: ZooKeeper, path: string, options: LockOptions = {}) {
    super(zk, path, options);
  }

  /** @internal */
  protected acquireNode(options: AcquireOptions): Promise<HeldNode> {
    return acquireNode({ zk: this.zk, path: this.path, driver: mutexDriver, data: this.data, timeout: options.timeout, signal: options.signal });
  }
}

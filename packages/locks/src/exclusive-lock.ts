/**
 * ExclusiveLock: the first recipe of the seed documents, kept as the baseline.
 */
import { ConnectionLossError, CreateMode, NodeExistsError, NoNodeError, type WatchedEvent, type ZooKeeper } from '@zk/protocol';
import { LockTimeoutError } from './errors.js';
import { connected, ensureContainers, waitForEvent, type HeldNode } from './internal/engine.js';
import { LockBase, type AcquireOptions, type LockOptions } from './lock.js';

/**
 * Mutual exclusion with one ephemeral node at the lock path itself: whoever creates it holds
 * the lock; the others watch it and race again when it is deleted.
 *
 * Not fair (no queue: any waiter may win the next race) and with a herd on release (every waiter
 * is woken and tries again). Use {@link Mutex} unless you need this exact layout; it is here
 * because the seed documents describe it and the bench compares against it. Reentrant by owner
 * like the other locks.
 */
export class ExclusiveLock extends LockBase {
  constructor(zk: ZooKeeper, path: string, options: LockOptions = {}) {
    super(zk, path, options);
  }

  /** @internal */
  protected async acquireNode(options: AcquireOptions): Promise<HeldNode> {
    const { zk, path } = this;
    const deadline = options.timeout === undefined ? undefined : Date.now() + options.timeout;
    const parent = path.slice(0, path.lastIndexOf('/')) || '/';
    for (let parentsCreated = false; ; ) {
      try {
        const { stat } = await zk.createWithStat(path, this.data, { mode: CreateMode.EPHEMERAL });
        return { nodePath: path, name: path.slice(path.lastIndexOf('/') + 1), czxid: stat.czxid };
      } catch (err) {
        if (err instanceof NoNodeError && !parentsCreated && parent !== '/') {
          await ensureContainers(zk, parent);
          parentsCreated = true;
          continue;
        }
        if (err instanceof ConnectionLossError) {
          // The create may have happened: the node is ours if our session owns it.
          await connected(zk);
          const stat = await zk.exists(path);
          if (stat && stat.ephemeralOwner === zk.sessionId) return { nodePath: path, name: path.slice(path.lastIndexOf('/') + 1), czxid: stat.czxid };
          continue;
        }
        if (!(err instanceof NodeExistsError)) throw err;
      }
      if (deadline !== undefined && Date.now() >= deadline) throw new LockTimeoutError(path, options.timeout ?? 0);
      await this.#waitForRelease(options, deadline);
    }
  }

  async #waitForRelease(options: AcquireOptions, deadline: number | undefined): Promise<void> {
    const { zk, path } = this;
    let onEvent!: (e: WatchedEvent) => void;
    const released = new Promise<void>((resolve) => (onEvent = () => resolve()));
    if ((await zk.exists(path, { watch: onEvent })) === null) {
      // Released between our create and the watch: drop the local exists registration; the
      // server's side fires on the next create (likely ours) and reaches nobody.
      zk.removeLocalWatch('exist', path, onEvent);
      return;
    }
    try {
      await waitForEvent(zk, path, released, deadline, options.timeout, options.signal);
    } catch (err) {
      await zk.removeWatches(path, { kind: 'data', listener: onEvent }).catch(() => zk.removeLocalWatch('data', path, onEvent));
      throw err;
    }
  }
}

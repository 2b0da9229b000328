/**
 * ExclusiveLock: the first recipe of the seed documents, kept as the baseline.
 */
import { ConnectionLossError, CreateMode, NodeExistsError, NoNodeError, type WatchedEvent, type ZooKeeper } from '@zk/protocol';
import { LockAbortedError, LockTimeoutError } from './errors.js';
import { connected, ensureContainers, type HeldNode } from './internal/engine.js';
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
      // Released between our create and the watch: the exists watch stays armed (for creation);
      // take it back so it does not linger.
      zk.removeLocalWatch('exist', path, onEvent);
      await zk.removeWatches(path, { kind: 'data' }).catch(() => undefined);
      return;
    }
    let timer: NodeJS.Timeout | undefined;
    let onAbort = () => {};
    try {
      await Promise.race([
        released,
        new Promise<never>((_, reject) => {
          if (deadline !== undefined) timer = setTimeout(() => reject(new LockTimeoutError(path, options.timeout ?? 0)), Math.max(0, deadline - Date.now()));
          onAbort = () => reject(new LockAbortedError(path, options.signal?.reason));
          options.signal?.addEventListener('abort', onAbort, { once: true });
        }),
      ]);
    } catch (err) {
      await zk.removeWatches(path, { kind: 'data', listener: onEvent }).catch(() => zk.removeLocalWatch('data', path, onEvent));
      throw err;
    } finally {
      if (timer) clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
    }
  }
}

/**
 * ExclusiveLock: the first recipe of the seed documents, kept as the baseline.
 */
import { ConnectionLossError, CreateMode, NodeExistsError, NoNodeError, type WatchedEvent, type ZooKeeper } from '@zk/protocol';
import { Attempt, removeNode } from '../internal/attempt.js';
import { ensureContainers, unwatch, type HeldNode } from '../internal/engine.js';
import { pathCheck } from '../internal/path-acl.js';
import { freshProof, proofIsFresh } from '../internal/proof.js';
import { LockBase, type AcquireOptions, type LockOptions } from './lock.js';
import type { LockKind } from '../diagnostics.js';

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
  protected get kind(): LockKind {
    return 'exclusive';
  }

  /** @internal */
  protected async acquireNode(options: AcquireOptions): Promise<HeldNode> {
    const attempt = new Attempt(this.zk, this.path, options.timeout, options.signal);
    // A create in flight when the attempt ends may still succeed: its node is removed then. (A
    // create cut off by a connection loss and not found before the attempt ended is not swept:
    // this lock's node has no attempt id, and another flow of this session may hold it.)
    let inFlight: Promise<HeldNode> | undefined;
    try {
      const node = await this.#acquire(attempt, (p) => (inFlight = p));
      inFlight = Promise.resolve(node);
      // A closed lock under a parent that lets others delete in it is refused (path-acl.ts); one
      // more round trip, for closed ACLs only.
      const parent = this.path.slice(0, this.path.lastIndexOf('/')) || '/';
      const check = pathCheck(this.zk, this.acl, this.path);
      if (check !== undefined) await check.verify(parent, await attempt.race(check.readPath(parent)), node.nodePath, (p) => attempt.race(p));
      // No lease is born at risk (internal/proof.ts).
      if (!proofIsFresh(this.zk)) await attempt.race(freshProof(this.zk, attempt.signal));
      return node;
    } catch (err) {
      inFlight?.then((node) => removeNode(this.zk, node.nodePath, err), () => undefined);
      throw err;
    } finally {
      attempt.end();
    }
  }

  async #acquire(attempt: Attempt, track: (create: Promise<HeldNode>) => void): Promise<HeldNode> {
    const { zk, path } = this;
    const parent = path.slice(0, path.lastIndexOf('/')) || '/';
    const name = path.slice(path.lastIndexOf('/') + 1);
    for (let parentRetries = 0; ; ) {
      attempt.check();
      try {
        const created = zk.createWithStat(path, this.data, { mode: CreateMode.EPHEMERAL, acl: this.acl }).then(({ stat }) => ({ nodePath: path, name, czxid: stat.czxid }));
        track(created);
        return await attempt.race(created);
      } catch (err) {
        if (attempt.stopped && err === attempt.reason) throw err;
        if (err instanceof NoNodeError && parentRetries++ < 5 && parent !== '/') {
          await ensureContainers(zk, parent, attempt, this.acl).catch((e: unknown) => (e instanceof ConnectionLossError ? attempt.connected(e) : Promise.reject(e)));
          continue;
        }
        if (err instanceof ConnectionLossError) {
          // The create may have happened: the node is ours if our session owns it.
          const found = await this.#recover(attempt, err);
          if (found) return found;
          continue;
        }
        if (!(err instanceof NodeExistsError)) throw err;
      }
      if (attempt.expired) throw attempt.timeoutError();
      await this.#waitForRelease(attempt).catch((e: unknown) => (e instanceof ConnectionLossError ? attempt.connected(e) : Promise.reject(e)));
    }
  }

  async #recover(attempt: Attempt, cause: unknown): Promise<HeldNode | undefined> {
    const { zk, path } = this;
    for (;;) {
      await attempt.connected(cause);
      try {
        const stat = await attempt.race(zk.exists(path));
        return stat && stat.ephemeralOwner === zk.sessionId ? { nodePath: path, name: path.slice(path.lastIndexOf('/') + 1), czxid: stat.czxid } : undefined;
      } catch (err) {
        if (!(err instanceof ConnectionLossError)) throw err;
        cause = err;
      }
    }
  }

  async #waitForRelease(attempt: Attempt): Promise<void> {
    const { zk, path } = this;
    let onEvent!: (e: WatchedEvent) => void;
    const released = new Promise<void>((resolve) => (onEvent = () => resolve()));
    const watched = zk.exists(path, { watch: onEvent });
    let stat;
    try {
      stat = await attempt.race(watched);
    } catch (err) {
      watched.then(
        () => unwatch(zk, path, onEvent),
        () => zk.removeLocalWatch('exist', path, onEvent),
      );
      throw err;
    }
    if (stat === null) {
      // Released between our create and the watch: drop the local exists registration; the
      // server's side fires on the next create (likely ours) and reaches nobody.
      zk.removeLocalWatch('exist', path, onEvent);
      return;
    }
    try {
      await attempt.race(released);
    } catch (err) {
      await unwatch(zk, path, onEvent);
      throw err;
    }
  }
}

/**
 * ReadWriteLock: Curator's InterProcessReadWriteLock, wire-compatible with it.
 */
import { CreateMode, type ZooKeeper } from '@zk/protocol';
import { LockUpgradeError } from '../errors.js';
import { acquireNode, type HeldNode } from '../internal/engine.js';
import { readDriver, writeDriver } from '../internal/drivers.js';
import { newAttemptId, protectedName, READ_LOCK_NAME, sortKey, READ_WRITE_LOCK_NAMES } from '../internal/names.js';
import { LockBase, ownerOf, type AcquireOptions, type LockOptions } from './lock.js';
import type { AcquireTrace, LockKind } from '../diagnostics.js';

/**
 * A fair read-write lock on one path: any number of readers, or one writer. Readers hold when
 * no writer is queued ahead of them (they watch the nearest writer ahead; Curator watches the
 * first, which wakes more readers for nothing, and the two interoperate); a writer holds when it
 * is first. Node names are Curator 5's (`_c_<uuid>-__READ__<seq>`, `_c_<uuid>-__WRIT__<seq>`).
 *
 * - Downgrade: the write holder may take the read lock, then release the write lock. As in
 *   Curator since CURATOR-621, the read node takes the write node's place in the queue, so a
 *   writer that queued meanwhile still waits for the downgraded reader.
 * - Upgrade: taking the write lock while holding only the read lock would wait for itself
 *   forever (Curator deadlocks); it is refused at once with {@link LockUpgradeError}.
 */
export class ReadWriteLock {
  readonly #read: ReadLock;
  readonly #write: WriteLock;

  constructor(zk: ZooKeeper, path: string, options: LockOptions = {}) {
    this.#write = new WriteLock(zk, path, options, () => this.#read);
    this.#read = new ReadLock(zk, path, options, this.#write);
  }

  /** The shared side. */
  readLock(): ReadLock {
    return this.#read;
  }

  /** The exclusive side. */
  writeLock(): WriteLock {
    return this.#write;
  }
}

/** The exclusive side of a {@link ReadWriteLock}. */
export class WriteLock extends LockBase {
  readonly #read: () => ReadLock;

  /** @internal */
  constructor(zk: ZooKeeper, path: string, options: LockOptions, read: () => ReadLock) {
    super(zk, path, options);
    this.#read = read;
  }

  /** @internal The node this owner holds the write lock with, if any. */
  heldNode(owner: unknown): string | undefined {
    const core = this.holdOf(owner);
    return core && !core.released ? core.nodePath : undefined;
  }

  /** @internal */
  protected get kind(): LockKind {
    return 'write';
  }

  /** @internal */
  protected acquireNode(options: AcquireOptions, owner: unknown, trace?: AcquireTrace): Promise<HeldNode> {
    if (owner !== undefined && this.#read().isHeldBy(owner) && !this.isHeldBy(owner)) throw new LockUpgradeError(this.path);
    return acquireNode({ zk: this.zk, path: this.path, driver: writeDriver, data: this.data, acl: this.acl, timeout: options.timeout, signal: options.signal, trace });
  }
}

/** The shared side of a {@link ReadWriteLock}. */
export class ReadLock extends LockBase {
  readonly #write: WriteLock;

  /** @internal */
  constructor(zk: ZooKeeper, path: string, options: LockOptions, write: WriteLock) {
    super(zk, path, options);
    this.#write = write;
  }

  /** @internal */
  protected get kind(): LockKind {
    return 'read';
  }

  /** @internal */
  protected async acquireNode(options: AcquireOptions, owner: unknown, trace?: AcquireTrace): Promise<HeldNode> {
    const writeNode = this.#write.heldNode(owner ?? ownerOf(options));
    if (writeNode) return this.#downgrade(writeNode);
    return acquireNode({ zk: this.zk, path: this.path, driver: readDriver, data: this.data, acl: this.acl, timeout: options.timeout, signal: options.signal, trace });
  }

  // The read node gets the write node's sequence (an ephemeral node with that exact name), so it
  // sorts where the write node is and keeps every later writer waiting once the write lock goes.
  async #downgrade(writeNode: string): Promise<HeldNode> {
    const seq = sortKey(writeNode.slice(writeNode.lastIndexOf('/') + 1), READ_WRITE_LOCK_NAMES);
    const name = `${protectedName(newAttemptId(), READ_LOCK_NAME)}${seq}`;
    const { path, stat } = await this.zk.createWithStat(`${this.path}/${name}`, this.data, { mode: CreateMode.EPHEMERAL, acl: this.acl });
    return { nodePath: path, name, czxid: stat.czxid };
  }
}

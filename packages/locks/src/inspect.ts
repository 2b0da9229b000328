/**
 * Reading a lock's queue from outside: who holds it and who waits, in order, with fencing
 * tokens and the data their owners attached. Works on Curator's nodes too.
 */
import { NoNodeError, type ZooKeeper } from '@zk/protocol';
import { readDriver } from './internal/drivers.js';
import { MUTEX_LOCK_NAME, MUTEX_LOCK_NAMES, READ_LOCK_NAME, READ_WRITE_LOCK_NAMES, sortChildren, WRITE_LOCK_NAME } from './internal/names.js';

/** One node of a lock queue. */
export interface LockEntry {
  /** The node's name. */
  readonly node: string;
  /** `lock` (mutex), `read`, `write`, or `exclusive`. */
  readonly kind: 'lock' | 'read' | 'write' | 'exclusive';
  /** The node's creation zxid: the holder's fencing token. */
  readonly fencingToken: bigint;
  /** What the owner stored (by default `{"host","pid"}` JSON). */
  readonly data: Buffer;
  /** When the node was created (queued). */
  readonly createdAt: Date;
  /** The owning session. */
  readonly sessionId: bigint;
}

/** A snapshot of a lock. */
export interface LockState {
  readonly path: string;
  /** Holders: one, or several readers. */
  readonly holders: LockEntry[];
  /** Waiters, in queue order. */
  readonly waiters: LockEntry[];
}

/**
 * Reads the state of the queue lock at `path` (a {@link Mutex} or {@link ReadWriteLock}, ours or
 * Curator's) in two round trips: the listing, then every node's data and Stat in one multiRead.
 * Nodes that vanish in between are left out.
 */
export async function inspectLock(zk: ZooKeeper, path: string): Promise<LockState> {
  let children: string[];
  try {
    children = await zk.getChildren(path);
  } catch (err) {
    if (err instanceof NoNodeError) return { path, holders: [], waiters: [] };
    throw err;
  }
  const rw = children.some((c) => c.includes(READ_LOCK_NAME) || c.includes(WRITE_LOCK_NAME));
  const sorted = sortChildren(
    children.filter((c) => (rw ? c.includes(READ_LOCK_NAME) || c.includes(WRITE_LOCK_NAME) : c.includes(MUTEX_LOCK_NAME))),
    rw ? READ_WRITE_LOCK_NAMES : MUTEX_LOCK_NAMES,
  );
  if (sorted.length === 0) return { path, holders: [], waiters: [] };
  const results = await zk.multiRead(sorted.map((c) => ({ type: 'getData' as const, path: `${path}/${c}` })));
  const entries: LockEntry[] = [];
  const names: string[] = [];
  results.forEach((r, i) => {
    if (r.type !== 'getData') return;
    const node = sorted[i] as string;
    names.push(node);
    entries.push({
      node,
      kind: !rw ? 'lock' : node.includes(WRITE_LOCK_NAME) ? 'write' : 'read',
      fencingToken: r.stat.czxid,
      data: r.data,
      createdAt: new Date(Number(r.stat.ctime)),
      sessionId: r.stat.ephemeralOwner,
    });
  });
  const holds = (e: LockEntry, i: number) => (e.kind === 'read' ? readDriver.decide(names, e.node).kind === 'holds' : i === 0);
  return { path, holders: entries.filter(holds), waiters: entries.filter((e, i) => !holds(e, i)) };
}

/** The state of an {@link ExclusiveLock} at `path`: its holder, if any (waiters are invisible: they only watch). */
export async function inspectExclusive(zk: ZooKeeper, path: string): Promise<LockState> {
  try {
    const { data, stat } = await zk.getData(path);
    const entry: LockEntry = { node: path.slice(path.lastIndexOf('/') + 1), kind: 'exclusive', fencingToken: stat.czxid, data, createdAt: new Date(Number(stat.ctime)), sessionId: stat.ephemeralOwner };
    return { path, holders: [entry], waiters: [] };
  } catch (err) {
    if (err instanceof NoNodeError) return { path, holders: [], waiters: [] };
    throw err;
  }
}

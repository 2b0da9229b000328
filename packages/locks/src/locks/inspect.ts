/**
 * Reading a lock's queue from outside: who holds it and who waits, in order, with fencing
 * tokens and the data their owners attached. Works on Curator's nodes too.
 */
import { NoNodeError, type Stat, type ZooKeeper } from '@zk/protocol';
import { readDriver } from '../internal/drivers.js';
import { MUTEX_LOCK_NAME, MUTEX_LOCK_NAMES, READ_LOCK_NAME, READ_WRITE_LOCK_NAMES, sortChildren, WRITE_LOCK_NAME } from '../internal/names.js';

/** One node of a lock queue. */
export interface LockEntry {
  /** The node's name. */
  readonly node: string;
  /** `lock` (mutex), `read`, `write`, `exclusive`, or `lease` (a semaphore permit). */
  readonly kind: 'lock' | 'read' | 'write' | 'exclusive' | 'lease';
  /** The node's creation zxid: the holder's fencing token. */
  readonly fencingToken: bigint;
  /** What the owner stored (by default `{"host","pid"}` JSON). */
  readonly data: Buffer;
  /** When the node was created (queued). */
  readonly createdAt: Date;
  /**
   * When its data last changed (the server's clock). zk-lock rewrites its node's data once it
   * holds, so for its holders this is when the hold began; equal to `createdAt` otherwise.
   */
  readonly modifiedAt: Date;
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
 * Curator's) in two round trips: the listing, then every node's data and Stat, pipelined (one
 * multiRead where the client coalesces reads; each alone on a 3.4 server, which has no multiRead).
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
  const results = await readNodes(zk, path, sorted);
  const entries: LockEntry[] = [];
  const names: string[] = [];
  results.forEach((r, i) => {
    if (r === undefined) return;
    const node = sorted[i] as string;
    names.push(node);
    entries.push({
      node,
      kind: !rw ? 'lock' : node.includes(WRITE_LOCK_NAME) ? 'write' : 'read',
      fencingToken: r.stat.czxid,
      data: r.data,
      createdAt: new Date(r.stat.ctime),
      modifiedAt: new Date(r.stat.mtime),
      sessionId: r.stat.ephemeralOwner,
    });
  });
  const holds = (e: LockEntry, i: number) => (e.kind === 'read' ? readDriver.decide(names, e.node).kind === 'holds' : i === 0);
  return { path, holders: entries.filter(holds), waiters: entries.filter((e, i) => !holds(e, i)) };
}

/**
 * The state of a {@link Semaphore} of `maxLeases` permits at `path` (ours or Curator's
 * `InterProcessSemaphoreV2`). A lease node exists from the moment a contender, holding the
 * semaphore's internal lock, starts waiting for a free permit; only that one contender waits
 * that way, so the newest lease nodes beyond `maxLeases` are waiting ones. Holders: the other
 * lease nodes, oldest first. Waiters: those newest lease nodes, then the contenders queued on the
 * internal lock (`locks/`) behind the one that holds it.
 */
export async function inspectSemaphore(zk: ZooKeeper, path: string, maxLeases: number): Promise<LockState> {
  const base = path === '/' ? '' : path;
  const [leases, queue] = await Promise.all([readEntries(zk, `${base}/leases`, 'lease-', 'lease'), inspectLock(zk, `${base}/locks`)]);
  const holders = leases.slice(0, maxLeases);
  const waiting = leases.slice(maxLeases);
  // The internal lock's holder is the contender whose lease node waits (when one does).
  const queued = waiting.length > 0 ? queue.waiters : [...queue.holders, ...queue.waiters];
  return { path, holders, waiters: [...waiting, ...queued] };
}

/** The data and Stat of each of `names` under `dir`, read together; undefined for a node gone meanwhile. */
function readNodes(zk: ZooKeeper, dir: string, names: readonly string[]): Promise<({ data: Buffer; stat: Stat } | undefined)[]> {
  return Promise.all(names.map((name) => zk.getData(`${dir}/${name}`).catch((err: unknown) => (err instanceof NoNodeError ? undefined : Promise.reject(err)))));
}

/** The nodes under `dir` whose names contain `name`, sorted as Curator sorts them, with data and Stat. */
async function readEntries(zk: ZooKeeper, dir: string, name: string, kind: LockEntry['kind']): Promise<LockEntry[]> {
  let children: string[];
  try {
    children = await zk.getChildren(dir);
  } catch (err) {
    if (err instanceof NoNodeError) return [];
    throw err;
  }
  const sorted = sortChildren(children.filter((c) => c.includes(name)), [name]);
  if (sorted.length === 0) return [];
  const results = await readNodes(zk, dir, sorted);
  const entries: LockEntry[] = [];
  results.forEach((r, i) => {
    if (r !== undefined) entries.push({ node: sorted[i] as string, kind, fencingToken: r.stat.czxid, data: r.data, createdAt: new Date(r.stat.ctime), modifiedAt: new Date(r.stat.mtime), sessionId: r.stat.ephemeralOwner });
  });
  return entries;
}

/** The state of an {@link ExclusiveLock} at `path`: its holder, if any (waiters are invisible: they only watch). */
export async function inspectExclusive(zk: ZooKeeper, path: string): Promise<LockState> {
  try {
    const { data, stat } = await zk.getData(path);
    const entry: LockEntry = { node: path.slice(path.lastIndexOf('/') + 1), kind: 'exclusive', fencingToken: stat.czxid, data, createdAt: new Date(stat.ctime), modifiedAt: new Date(stat.mtime), sessionId: stat.ephemeralOwner };
    return { path, holders: [entry], waiters: [] };
  } catch (err) {
    if (err instanceof NoNodeError) return { path, holders: [], waiters: [] };
    throw err;
  }
}

/**
 * The tree cache's table as it was before the compact store (one CachedNode object per node in a
 * Map by path, a Map of parent path to a Set of child names): the reference model the compact
 * NodeTable's randomised test compares with, change for change. Test-only (not emitted).
 */
import type { Stat } from '../index.js';
import { childPath, type CachedNode, type NodeChange } from '../cache/node-table.js';

/** The Map-based table the compact one replaced, kept as the reference its tests compare with. */
export class MapNodeTable {
  readonly root: string;
  readonly #nodes = new Map<string, CachedNode>();
  /** Parent path -> names of its cached children. Kept for every cached node, whether its parent is cached or not. */
  readonly #children = new Map<string, Set<string>>();

  constructor(root: string) {
    this.root = root;
  }

  /** The number of cached nodes. */
  get size(): number {
    return this.#nodes.size;
  }

  /** The node at `path`, if cached. */
  get(path: string): CachedNode | undefined {
    return this.#nodes.get(path);
  }

  /** The names of the cached children of `path`, sorted; `undefined` when `path` is not cached. */
  children(path: string): string[] | undefined {
    if (!this.#nodes.has(path)) return undefined;
    return [...(this.#children.get(path) ?? [])].sort();
  }

  /** True when `path` is the root or below it. */
  covers(path: string): boolean {
    return path === this.root || path.startsWith(this.root === '/' ? '/' : `${this.root}/`);
  }

  /** Every cached node, parents before their children (breadth first from the root). */
  *nodes(): IterableIterator<CachedNode> {
    const root = this.#nodes.get(this.root);
    if (!root) return;
    const queue: string[] = [this.root];
    for (let i = 0; i < queue.length; i++) {
      const path = queue[i] as string;
      const node = this.#nodes.get(path);
      if (node) yield node;
      for (const name of this.#children.get(path) ?? []) queue.push(childPath(path, name));
    }
  }

  /**
   * A read found `path` with `data` and `stat`: a new node is created; a node with another czxid
   * replaced the cached one (its subtree is deleted, then it is created); the same node with a
   * newer mzxid changed. An older read changes nothing (a newer Stat of the same data is kept
   * silently: its child fields are fresher).
   */
  found(path: string, data: Buffer, stat: Stat): NodeChange[] {
    const previous = this.#nodes.get(path);
    if (previous && (stat.czxid === previous.stat.czxid ? stat.mzxid < previous.stat.mzxid : stat.czxid < previous.stat.czxid)) return [];
    if (previous && stat.czxid === previous.stat.czxid && stat.mzxid === previous.stat.mzxid) {
      if (stat.pzxid > previous.stat.pzxid) this.#nodes.set(path, { path, data: previous.data, stat: compact(stat) });
      return [];
    }
    const node: CachedNode = { path, data: own(data), stat: compact(stat) };
    if (!previous) {
      this.#insert(node);
      return [{ type: 'created', path, node }];
    }
    if (node.stat.czxid !== previous.stat.czxid) {
      // Replaced: the old node and its subtree went first. Descendants created with or after the
      // new node (the same czxid: one multi; or a larger one) are its own, already read: they stay.
      const out: NodeChange[] = [];
      this.#removeBelow(path, out, node.stat.czxid);
      this.#remove(path);
      out.push({ type: 'deleted', path, previous });
      this.#insert(node);
      out.push({ type: 'created', path, node });
      return out;
    }
    this.#nodes.set(path, node);
    return [{ type: 'changed', path, node, previous }];
  }

  /**
   * A read found no node at `path`: it and everything cached below it are deleted, deepest first
   * (the order in which the server must have deleted them).
   */
  missing(path: string): NodeChange[] {
    const out: NodeChange[] = [];
    this.#removeBelow(path, out);
    const previous = this.#nodes.get(path);
    if (previous) {
      this.#remove(path);
      out.push({ type: 'deleted', path, previous });
    }
    return out;
  }

  /** A read listed `names` as the children of `path`: cached children not listed are deleted (with their subtrees). */
  listed(path: string, names: readonly string[]): NodeChange[] {
    const cached = this.#children.get(path);
    if (!cached) return [];
    const keep = new Set(names);
    const out: NodeChange[] = [];
    for (const name of [...cached]) if (!keep.has(name)) out.push(...this.missing(childPath(path, name)));
    return out;
  }

  /** Forgets every node (no changes reported). */
  clear(): void {
    this.#nodes.clear();
    this.#children.clear();
  }

  #insert(node: CachedNode): void {
    this.#nodes.set(node.path, node);
    if (node.path === this.root) return;
    const parent = parentOf(node.path);
    let set = this.#children.get(parent);
    if (!set) this.#children.set(parent, (set = new Set()));
    set.add(node.path.slice(parent === '/' ? 1 : parent.length + 1));
  }

  #remove(path: string): void {
    this.#nodes.delete(path);
    if (path === this.root) return;
    const parent = parentOf(path);
    const set = this.#children.get(parent);
    if (!set) return;
    set.delete(path.slice(parent === '/' ? 1 : parent.length + 1));
    if (set.size === 0) this.#children.delete(parent);
  }

  /** Removes the cached subtrees below `path` (only those whose czxid is below `olderThan`, when given). */
  #removeBelow(path: string, out: NodeChange[], olderThan?: bigint): void {
    const names = this.#children.get(path);
    if (!names) return;
    for (const name of [...names]) {
      const child = childPath(path, name);
      const previous = this.#nodes.get(child);
      if (olderThan !== undefined && previous && previous.stat.czxid >= olderThan) continue;
      this.#removeBelow(child, out, olderThan);
      if (previous) {
        this.#remove(child);
        out.push({ type: 'deleted', path: child, previous });
      }
    }
    if (names.size === 0) this.#children.delete(path);
  }
}

const EMPTY = Buffer.alloc(0);
const ZERO = 0n;

/**
 * A copy of `data` of its own: a read's data is a view of the whole reply frame (a multiRead
 * batch), which a long-lived view would keep alive. Small copies share Node's buffer pool.
 */
function own(data: Buffer): Buffer {
  return data.length === 0 ? EMPTY : Buffer.from(data);
}

/**
 * The Stat with equal 64-bit fields sharing one bigint (each bigint is a heap object of its own):
 * a node never modified has mzxid = czxid, one without child changes pzxid = czxid, and a
 * persistent node's ephemeralOwner is 0. About 100 bytes less per cached node.
 */
function compact(stat: Stat): Stat {
  const mzxid = stat.mzxid === stat.czxid ? stat.czxid : stat.mzxid;
  return {
    ...stat,
    mzxid,
    pzxid: stat.pzxid === stat.czxid ? stat.czxid : stat.pzxid === mzxid ? mzxid : stat.pzxid,
    ephemeralOwner: stat.ephemeralOwner === ZERO ? ZERO : stat.ephemeralOwner,
  };
}

function parentOf(path: string): string {
  const i = path.lastIndexOf('/');
  return i <= 0 ? '/' : path.slice(0, i);
}

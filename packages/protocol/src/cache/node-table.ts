/**
 * The tree cache's in-memory copy of a subtree: nodes by path, a child index, and the rules that
 * turn one observation of the server (a read of a node, or the list of a node's children) into
 * the created / changed / deleted changes it implies. Pure: no I/O, no timers.
 *
 * Observations must be applied in the order the server made them (the cache applies reads in the
 * order they were sent, and a session's reads see the tree move only forward). A node is known by
 * its czxid: a read that shows another czxid at a cached path means the node was deleted and
 * created again. Its mzxid orders its data: a read with an older mzxid changes nothing.
 *
 * The nodes are rows of a compact store (node-rows.ts): no object per node is kept. A
 * {@link CachedNode} is made when asked for ({@link NodeTable.get}, {@link NodeTable.nodes}, the
 * changes returned), with a copy of the data of its own: it stays as it was when made.
 */
import { copyStat, type Stat } from '../jute/data.js';
import { NodeRows, NONE } from './node-rows.js';

/** One cached node: its data and Stat as last read. */
export interface CachedNode {
  /** The node's path (as the client names it, below its chroot). */
  readonly path: string;
  /** The data, as last read. */
  readonly data: Buffer;
  /**
   * The Stat of that read. `czxid`, `mzxid`, `version`, `dataLength`, `ctime`, `mtime` and
   * `ephemeralOwner` are those of `data`; the child-related fields (`cversion`, `pzxid`,
   * `numChildren`) may lag behind (a child's creation does not make the cache re-read its
   * parent): use {@link TreeCache.children} for the children.
   */
  readonly stat: Stat;
}

/** A change the cache reports. */
export type NodeChange =
  | { readonly type: 'created'; readonly path: string; readonly node: CachedNode }
  | { readonly type: 'changed'; readonly path: string; readonly node: CachedNode; readonly previous: CachedNode }
  | { readonly type: 'deleted'; readonly path: string; readonly previous: CachedNode };

/** The cached nodes of the subtree below (and including) one root. */
export class NodeTable {
  readonly root: string;
  /** What every path below the root starts with: the root and a '/' ('/' for the root '/'). */
  readonly #prefix: string;
  readonly #rows = new NodeRows();
  /**
   * The last path found() or listed() looked up and its row: the cache lists a node's children
   * right after reading it, so the second lookup is this one. Forgotten whenever a row may be freed.
   */
  #lastPath: string | undefined;
  #lastRow = NONE;

  constructor(root: string) {
    this.root = root;
    this.#prefix = root === '/' ? '/' : `${root}/`;
  }

  /** The number of cached nodes. */
  get size(): number {
    return this.#rows.size;
  }

  /** The node at `path`, if cached (a new object, its data a copy). */
  get(path: string): CachedNode | undefined {
    const row = this.#find(path);
    return row !== NONE && this.#rows.present(row) ? this.#node(row, path) : undefined;
  }

  /** True when `path` is cached. */
  has(path: string): boolean {
    const row = this.#find(path);
    return row !== NONE && this.#rows.present(row);
  }

  /** The names of the cached children of `path`, sorted; `undefined` when `path` is not cached. */
  children(path: string): string[] | undefined {
    const row = this.#find(path);
    if (row === NONE || !this.#rows.present(row)) return undefined;
    const names: string[] = [];
    for (let c = this.#rows.first(row); c !== NONE; c = this.#rows.next(c)) if (this.#rows.present(c)) names.push(this.#rows.name(c));
    return names.sort();
  }

  /** True when `path` is the root or below it. */
  covers(path: string): boolean {
    return path === this.root || path.startsWith(this.#prefix);
  }

  /** Every cached node, parents before their children (breadth first from the root). */
  *nodes(): IterableIterator<CachedNode> {
    const rows = this.#rows;
    if (rows.root === NONE || !rows.present(rows.root)) return;
    // By path, not by row: the table may change between two steps, and a freed row be reused.
    const queue: string[] = [this.root];
    for (let i = 0; i < queue.length; i++) {
      const path = queue[i] as string;
      const row = this.#find(path);
      if (row === NONE || !rows.present(row)) continue;
      const node = this.#node(row, path);
      for (let c = rows.first(row); c !== NONE; c = rows.next(c)) if (rows.present(c)) queue.push(childPath(path, rows.name(c)));
      yield node;
    }
  }

  /**
   * A read found `path` with `data` and `stat`: a new node is created; a node with another czxid
   * replaced the cached one (its subtree is deleted, then it is created); the same node with a
   * newer mzxid changed. An older read changes nothing (a newer Stat of the same data is kept
   * silently: its child fields are fresher).
   */
  found(path: string, data: Buffer, stat: Stat): NodeChange[] {
    if (!this.covers(path)) return [];
    const rows = this.#rows;
    // One lookup: a row not there yet is made (a placeholder until setNode below).
    const row = path === this.#lastPath ? this.#lastRow : rows.find(this.#relative(path), true);
    this.#lastPath = path;
    this.#lastRow = row;
    if (rows.present(row)) {
      const czxid = rows.stats.czxid(row);
      const mzxid = rows.stats.mzxid(row);
      if (stat.czxid === czxid ? stat.mzxid < mzxid : stat.czxid < czxid) return [];
      if (stat.czxid === czxid && stat.mzxid === mzxid) {
        if (stat.pzxid > rows.stats.pzxid(row)) rows.stats.set(row, stat);
        return [];
      }
      const previous = this.#node(row, path);
      const node: CachedNode = { path, data: Buffer.from(data), stat: copyStat(stat) };
      if (stat.czxid !== czxid) {
        // Replaced: the old node and its subtree went first. Descendants created with or after the
        // new node (the same czxid: one multi; or a larger one) are its own, already read: they stay.
        const out: NodeChange[] = [];
        this.#removeBelow(row, path, out, stat.czxid);
        rows.clearNode(row);
        out.push({ type: 'deleted', path, previous });
        rows.moveToEnd(row);
        rows.setNode(row, data, stat);
        out.push({ type: 'created', path, node });
        return out;
      }
      rows.setNode(row, data, stat);
      return [{ type: 'changed', path, node, previous }];
    }
    // A new node (its row may have been there: a placeholder above cached children).
    rows.moveToEnd(row);
    rows.setNode(row, data, stat);
    return [{ type: 'created', path, node: { path, data: Buffer.from(data), stat: copyStat(stat) } }];
  }

  /**
   * A read found no node at `path`: it and everything cached below it are deleted, deepest first
   * (the order in which the server must have deleted them).
   */
  missing(path: string): NodeChange[] {
    this.#lastPath = undefined;
    const row = this.#find(path);
    if (row === NONE) return [];
    const out: NodeChange[] = [];
    this.#removeBelow(row, path, out);
    if (this.#rows.present(row)) {
      out.push({ type: 'deleted', path, previous: this.#node(row, path) });
      this.#rows.clearNode(row);
    }
    this.#rows.release(row, true);
    return out;
  }

  /** A read listed `names` as the children of `path`: cached children not listed are deleted (with their subtrees). */
  listed(path: string, names: readonly string[]): NodeChange[] {
    const rows = this.#rows;
    const row = path === this.#lastPath ? this.#lastRow : this.#find(path);
    if (row === NONE || rows.first(row) === NONE) return [];
    const keep = new Set(names);
    const gone: string[] = [];
    for (let c = rows.first(row); c !== NONE; c = rows.next(c)) {
      if (!rows.present(c)) continue;
      const name = rows.name(c);
      if (!keep.has(name)) gone.push(name);
    }
    const out: NodeChange[] = [];
    for (const name of gone) out.push(...this.missing(childPath(path, name)));
    return out;
  }

  /** Where the table's bytes go (see NodeRows.footprint): for the bench's accounting. */
  footprint(): ReturnType<NodeRows['footprint']> {
    return this.#rows.footprint();
  }

  /** Forgets every node (no changes reported). */
  clear(): void {
    this.#lastPath = undefined;
    this.#rows.clear();
  }

  /** The row at `path`, or NONE (also for a path outside the root). */
  #find(path: string): number {
    return this.covers(path) ? this.#rows.find(this.#relative(path), false) : NONE;
  }

  /** `path` below the root, without a leading '/' ('' for the root). */
  #relative(path: string): string {
    return path === this.root ? '' : path.slice(this.#prefix.length);
  }

  #node(row: number, path: string): CachedNode {
    return { path, data: this.#rows.data(row), stat: this.#rows.stats.get(row) };
  }

  /**
   * Removes what is cached below `row` (at `path`), deepest first; with `olderThan`, only the
   * nodes created before that zxid (and what is below them).
   */
  #removeBelow(row: number, path: string, out: NodeChange[], olderThan?: bigint): void {
    const rows = this.#rows;
    this.#lastPath = undefined;
    for (let c = rows.first(row); c !== NONE; ) {
      const next = rows.next(c);
      const present = rows.present(c);
      if (!(olderThan !== undefined && present && rows.stats.czxid(c) >= olderThan)) {
        const child = childPath(path, rows.name(c));
        this.#removeBelow(c, child, out, olderThan);
        if (present) {
          out.push({ type: 'deleted', path: child, previous: this.#node(c, child) });
          rows.clearNode(c);
        }
        rows.release(c, false);
      }
      c = next;
    }
  }
}

/** `parent` + `/` + `name`, for the root too. */
export function childPath(parent: string, name: string): string {
  return parent === '/' ? `/${name}` : `${parent}/${name}`;
}

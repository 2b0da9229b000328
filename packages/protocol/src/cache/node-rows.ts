/**
 * The tree cache's store: one row per node in typed-array columns, no object per node.
 *
 * - A row is a number. Its parent, first child and siblings are rows (children in insertion
 *   order: the first child's `prev` is the last child), so a path is never stored: it is the
 *   root's path and the names on the way down, built when asked for.
 * - Names (UTF-8) and data live in two {@link ByteSlab}s; data over {@link LARGE} bytes is kept
 *   as a Buffer of its own (its object costs little beside it).
 * - The Stat: 68 bytes per row in {@link StatColumns}, no bigint object kept.
 * - A child is found by (parent row, name) in one open-addressing hash table of rows (linear
 *   probing, deletion by backward shift), so a path is looked up a component at a time.
 *
 * A row may exist without a node ("placeholder"): an ancestor of a cached node that is not
 * cached itself (read after its child, or gone and not read yet). {@link NodeRows.release} frees
 * a row with neither node nor children, and its placeholder ancestors that become empty.
 */
import type { Stat } from '../jute/data.js';
import { ByteSlab } from './byte-slab.js';
import { grown, StatColumns } from './stat-columns.js';

/** No row. */
export const NONE = -1;
/** Data longer than this is kept as a Buffer of its own rather than in the slab. */
export const LARGE = 1024;

const ALLOCATED = 1;
const PRESENT = 2;
/** `dataLen` of a row whose data is in {@link NodeRows.large}. */
const IN_LARGE = -1;
const EMPTY = Buffer.alloc(0);
/** Columns grow by half up to 65,536 rows, then by a quarter (so that the slack stays small), from this many. */
const MIN_ROWS = 1024;

export class NodeRows {
  #capacity = 0;
  /** Rows ever allocated (the high-water mark); freed ones are chained through `next` from `#free`. */
  #allocated = 0;
  #free = NONE;
  #present = 0;
  #root = NONE;
  #parent = new Int32Array(0);
  #first = new Int32Array(0);
  #next = new Int32Array(0);
  #prev = new Int32Array(0);
  #nameOff = new Uint32Array(0);
  #nameLen = new Uint32Array(0);
  #dataOff = new Uint32Array(0);
  #dataLen = new Int32Array(0);
  #hash = new Int32Array(0);
  #flags = new Uint8Array(0);
  readonly #stats = new StatColumns();
  readonly #names = new ByteSlab();
  readonly #data = new ByteSlab();
  readonly #large = new Map<number, Buffer>();
  /** The hash table: row + 1 per slot, 0 when empty. */
  #slots = new Int32Array(16);
  #inTable = 0;
  /** Where a path being looked up is encoded (UTF-8). */
  #scratch = Buffer.allocUnsafeSlow(256);

  /** The number of rows holding a node. */
  get size(): number {
    return this.#present;
  }

  /** The root's row, or NONE. */
  get root(): number {
    return this.#root;
  }

  /**
   * Where the store's bytes go (allocated, slack included): the row columns (links, offsets,
   * flags: 37 bytes a row), the Stats (68 a row), the hash table, the name and data slabs, and
   * the large data kept apart. For the bench's accounting.
   */
  footprint(): { rows: number; capacity: number; columns: number; stats: number; hash: number; names: number; data: number; large: number } {
    let large = 0;
    for (const b of this.#large.values()) large += b.length;
    return {
      rows: this.#allocated - this.#freeCount(),
      capacity: this.#capacity,
      columns: this.#capacity * 37,
      stats: this.#capacity * 68,
      hash: this.#slots.byteLength,
      names: this.#names.bytes.length,
      data: this.#data.bytes.length,
      large,
    };
  }

  /**
   * The row at `rel` (a path relative to the root, '' for the root itself; components separated
   * by '/'). With `create`, missing rows on the way are made (as placeholders).
   */
  find(rel: string, create: boolean): number {
    let row = this.#root;
    if (row === NONE) {
      if (!create) return NONE;
      row = this.#root = this.#alloc(NONE, 0, 0, 0);
    }
    if (rel === '') return row;
    if (this.#scratch.length < rel.length * 3) this.#scratch = Buffer.allocUnsafeSlow(rel.length * 3);
    const b = this.#scratch;
    const n = b.write(rel, 0);
    for (let s = 0; s <= n; ) {
      let e = s;
      while (e < n && b[e] !== 0x2f) e++;
      const h = hashName(row, b, s, e);
      let child = this.#probe(row, b, s, e, h);
      if (child === NONE) {
        if (!create) return NONE;
        child = this.#alloc(row, h, s, e);
      }
      row = child;
      s = e + 1;
    }
    return row;
  }

  /** True when `row` holds a node. */
  present(row: number): boolean {
    return ((this.#flags[row] as number) & PRESENT) !== 0;
  }

  /** The row's first child, or NONE. */
  first(row: number): number {
    return this.#first[row] as number;
  }

  /** The row's next sibling, or NONE. */
  next(row: number): number {
    return this.#next[row] as number;
  }

  /** The row's name. */
  name(row: number): string {
    const off = this.#nameOff[row] as number;
    return this.#names.bytes.toString('utf8', off, off + (this.#nameLen[row] as number));
  }

  /** The row's Stat columns (valid while it holds a node). */
  get stats(): StatColumns {
    return this.#stats;
  }

  /** The row's data, as a copy of its own (a large one is the kept Buffer itself). */
  data(row: number): Buffer {
    const len = this.#dataLen[row] as number;
    if (len === IN_LARGE) return this.#large.get(row) as Buffer;
    if (len === 0) return EMPTY;
    const out = Buffer.allocUnsafe(len);
    const off = this.#dataOff[row] as number;
    this.#data.bytes.copy(out, 0, off, off + len);
    return out;
  }

  /** Makes the row hold a node with `data` (copied) and `stat`. */
  setNode(row: number, data: Buffer, stat: Stat): void {
    const flags = this.#flags[row] as number;
    const old = flags & PRESENT ? (this.#dataLen[row] as number) : 0;
    if (data.length > LARGE) {
      this.#dropData(row, old);
      this.#large.set(row, Buffer.from(data));
      this.#dataLen[row] = IN_LARGE;
    } else if (old >= data.length && data.length > 0) {
      this.#data.overwrite(this.#dataOff[row] as number, old, data);
      this.#dataLen[row] = data.length;
    } else {
      this.#dropData(row, old);
      this.#dataOff[row] = data.length === 0 ? 0 : this.#data.append(data);
      this.#dataLen[row] = data.length;
    }
    this.#stats.set(row, stat);
    if (!(flags & PRESENT)) {
      this.#flags[row] = flags | PRESENT;
      this.#present++;
    }
    if (this.#data.wasteful) this.#compactData();
  }

  /** Makes the row a placeholder (its node gone); its children stay. */
  clearNode(row: number): void {
    const flags = this.#flags[row] as number;
    if (!(flags & PRESENT)) return;
    this.#dropData(row, this.#dataLen[row] as number);
    this.#dataLen[row] = 0;
    this.#flags[row] = flags & ~PRESENT;
    this.#present--;
  }

  /** Moves the row to the end of its parent's children (the order of insertion). */
  moveToEnd(row: number): void {
    const parent = this.#parent[row] as number;
    if (parent === NONE) return;
    this.#unlink(row);
    this.#link(parent, row);
  }

  /**
   * Frees `row` when it holds no node and has no children; with `upward`, then its placeholder
   * ancestors left empty too.
   */
  release(row: number, upward: boolean): void {
    while (row !== NONE && !((this.#flags[row] as number) & PRESENT) && this.#first[row] === NONE) {
      const parent = this.#parent[row] as number;
      this.#freeRow(row);
      if (!upward) return;
      row = parent;
    }
  }

  /** Frees every row. */
  clear(): void {
    this.#capacity = this.#allocated = this.#present = this.#inTable = 0;
    this.#free = this.#root = NONE;
    this.#resize(0);
    this.#slots = new Int32Array(16);
    this.#large.clear();
    this.#names.compact(() => undefined);
    this.#data.compact(() => undefined);
  }

  #freeCount(): number {
    let n = 0;
    for (let r = this.#free; r !== NONE; r = this.#next[r] as number) n++;
    return n;
  }

  #alloc(parent: number, hash: number, s: number, e: number): number {
    let row = this.#free;
    if (row !== NONE) this.#free = this.#next[row] as number;
    else {
      if (this.#allocated === this.#capacity) this.#resize(Math.max(MIN_ROWS, this.#capacity + (this.#capacity >>> (this.#capacity < 1 << 16 ? 1 : 2))));
      row = this.#allocated++;
    }
    this.#parent[row] = parent;
    this.#first[row] = NONE;
    this.#next[row] = NONE;
    this.#prev[row] = NONE;
    this.#flags[row] = ALLOCATED;
    this.#dataLen[row] = 0;
    this.#hash[row] = hash;
    this.#nameLen[row] = e - s;
    this.#nameOff[row] = e > s ? this.#names.append(this.#scratch, s, e) : 0;
    if (parent !== NONE) {
      this.#link(parent, row);
      this.#insertSlot(row);
    }
    return row;
  }

  #freeRow(row: number): void {
    if (row === this.#root) this.#root = NONE;
    else {
      this.#removeSlot(row);
      this.#unlink(row);
    }
    this.#names.free(this.#nameLen[row] as number);
    this.#flags[row] = 0;
    this.#next[row] = this.#free;
    this.#free = row;
    if (this.#names.wasteful) this.#compactNames();
  }

  #dropData(row: number, length: number): void {
    if (length === IN_LARGE) this.#large.delete(row);
    else if (length > 0) this.#data.free(length);
  }

  /** Appends `row` to `parent`'s children. */
  #link(parent: number, row: number): void {
    this.#parent[row] = parent;
    this.#next[row] = NONE;
    const first = this.#first[parent] as number;
    if (first === NONE) {
      this.#first[parent] = row;
      this.#prev[row] = row;
    } else {
      const last = this.#prev[first] as number;
      this.#next[last] = row;
      this.#prev[row] = last;
      this.#prev[first] = row;
    }
  }

  #unlink(row: number): void {
    const parent = this.#parent[row] as number;
    const first = this.#first[parent] as number;
    const next = this.#next[row] as number;
    const prev = this.#prev[row] as number;
    if (first === row) {
      this.#first[parent] = next;
      if (next !== NONE) this.#prev[next] = prev;
    } else {
      this.#next[prev] = next;
      if (next !== NONE) this.#prev[next] = prev;
      else this.#prev[first] = prev;
    }
  }

  #probe(parent: number, b: Uint8Array, s: number, e: number, h: number): number {
    const slots = this.#slots;
    const mask = slots.length - 1;
    const len = e - s;
    const names = this.#names.bytes;
    for (let i = h & mask; ; i = (i + 1) & mask) {
      const v = slots[i] as number;
      if (v === 0) return NONE;
      const row = v - 1;
      if (this.#hash[row] !== h || this.#parent[row] !== parent || this.#nameLen[row] !== len) continue;
      const off = this.#nameOff[row] as number;
      let j = 0;
      while (j < len && names[off + j] === b[s + j]) j++;
      if (j === len) return row;
    }
  }

  #insertSlot(row: number): void {
    if ((this.#inTable + 1) * 4 > this.#slots.length * 3) this.#rehash(this.#slots.length * 2);
    this.#place(row);
    this.#inTable++;
  }

  #place(row: number): void {
    const slots = this.#slots;
    const mask = slots.length - 1;
    let i = (this.#hash[row] as number) & mask;
    while (slots[i] !== 0) i = (i + 1) & mask;
    slots[i] = row + 1;
  }

  #removeSlot(row: number): void {
    const slots = this.#slots;
    const mask = slots.length - 1;
    let i = (this.#hash[row] as number) & mask;
    while (slots[i] !== row + 1) i = (i + 1) & mask;
    // Backward shift: pull later entries of the probe run into the hole when their home allows.
    for (let j = (i + 1) & mask; ; j = (j + 1) & mask) {
      const v = slots[j] as number;
      if (v === 0) break;
      const home = (this.#hash[v - 1] as number) & mask;
      const stays = i <= j ? i < home && home <= j : i < home || home <= j;
      if (stays) continue;
      slots[i] = v;
      i = j;
    }
    slots[i] = 0;
    this.#inTable--;
  }

  #rehash(size: number): void {
    const old = this.#slots;
    this.#slots = new Int32Array(size);
    for (const v of old) if (v !== 0) this.#place(v - 1);
  }

  #resize(capacity: number): void {
    this.#capacity = capacity;
    this.#parent = grown(this.#parent, capacity);
    this.#first = grown(this.#first, capacity);
    this.#next = grown(this.#next, capacity);
    this.#prev = grown(this.#prev, capacity);
    this.#nameOff = grown(this.#nameOff, capacity);
    this.#nameLen = grown(this.#nameLen, capacity);
    this.#dataOff = grown(this.#dataOff, capacity);
    this.#dataLen = grown(this.#dataLen, capacity);
    this.#hash = grown(this.#hash, capacity);
    this.#flags = grown(this.#flags, capacity);
    this.#stats.resize(capacity);
  }

  #compactNames(): void {
    const flags = this.#flags;
    this.#names.compact((move) => {
      for (let r = 0; r < this.#allocated; r++) if ((flags[r] as number) & ALLOCATED) this.#nameOff[r] = move(this.#nameOff[r] as number, this.#nameLen[r] as number);
    });
  }

  #compactData(): void {
    const flags = this.#flags;
    this.#data.compact((move) => {
      for (let r = 0; r < this.#allocated; r++) {
        const len = this.#dataLen[r] as number;
        if ((flags[r] as number) & PRESENT && len > 0) this.#dataOff[r] = move(this.#dataOff[r] as number, len);
      }
    });
  }
}

/** FNV-1a of the name's bytes, seeded with the parent row. */
function hashName(parent: number, b: Uint8Array, s: number, e: number): number {
  let h = Math.imul(parent + 1, 0x9e3779b1) ^ 0x811c9dc5;
  for (let i = s; i < e; i++) h = Math.imul(h ^ (b[i] as number), 0x01000193);
  return (h ^ (h >>> 15)) | 0;
}

/**
 * The Stats of the tree cache's rows (node-rows.ts) without an object per node: the four 64-bit
 * ids in one BigInt64Array (4 per row), the two times in one Float64Array (2 per row: ms since
 * the epoch, safe integers, so exact), the five 32-bit fields in one Int32Array (5 per row): the
 * 68 bytes of the wire's Stat. A bigint is made only when a field is read.
 */
import { StatRecord, type Stat } from '../jute/data.js';

export class StatColumns {
  /** czxid, mzxid, ephemeralOwner, pzxid. */
  #longs = new BigInt64Array(0);
  /** ctime, mtime. */
  #times = new Float64Array(0);
  /** version, cversion, aversion, dataLength, numChildren. */
  #ints = new Int32Array(0);

  /** Room for `rows` rows (the first ones kept). */
  resize(rows: number): void {
    this.#longs = grown(this.#longs, rows * 4);
    this.#times = grown(this.#times, rows * 2);
    this.#ints = grown(this.#ints, rows * 5);
  }

  czxid(row: number): bigint {
    return this.#longs[row * 4] as bigint;
  }

  mzxid(row: number): bigint {
    return this.#longs[row * 4 + 1] as bigint;
  }

  pzxid(row: number): bigint {
    return this.#longs[row * 4 + 3] as bigint;
  }

  /** The row's Stat, as a new object (one that serialises, as the client's own Stats do). */
  get(row: number): Stat {
    const l = this.#longs;
    const z = row * 4;
    const t = this.#times;
    const m = row * 2;
    const i = this.#ints;
    const k = row * 5;
    return new StatRecord(
      l[z] as bigint,
      l[z + 1] as bigint,
      t[m] as number,
      t[m + 1] as number,
      i[k] as number,
      i[k + 1] as number,
      i[k + 2] as number,
      l[z + 2] as bigint,
      i[k + 3] as number,
      i[k + 4] as number,
      l[z + 3] as bigint,
    );
  }

  set(row: number, stat: Stat): void {
    const l = this.#longs;
    const z = row * 4;
    l[z] = stat.czxid;
    l[z + 1] = stat.mzxid;
    l[z + 2] = stat.ephemeralOwner;
    l[z + 3] = stat.pzxid;
    const t = this.#times;
    const m = row * 2;
    t[m] = stat.ctime;
    t[m + 1] = stat.mtime;
    const i = this.#ints;
    const k = row * 5;
    i[k] = stat.version;
    i[k + 1] = stat.cversion;
    i[k + 2] = stat.aversion;
    i[k + 3] = stat.dataLength;
    i[k + 4] = stat.numChildren;
  }
}

type Column = Int32Array | Uint32Array | Uint8Array | BigInt64Array | Float64Array;

/** A column of `length` entries holding `old`'s first ones (or as many as fit). */
export function grown<A extends Column>(old: A, length: number): A {
  const next = new (old.constructor as new (n: number) => A)(length);
  (next as Int32Array).set((length < old.length ? old.subarray(0, length) : old) as Int32Array);
  return next;
}

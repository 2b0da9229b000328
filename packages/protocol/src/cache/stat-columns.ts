/**
 * The Stats of the tree cache's rows (node-rows.ts) without an object per node: the six 64-bit
 * fields in one BigInt64Array (6 per row), the five 32-bit ones in one Int32Array (5 per row):
 * the 68 bytes of the wire's Stat. A bigint is made only when a field is read.
 */
import type { Stat } from '../jute/data.js';

export class StatColumns {
  /** czxid, mzxid, ctime, mtime, ephemeralOwner, pzxid. */
  #longs = new BigInt64Array(0);
  /** version, cversion, aversion, dataLength, numChildren. */
  #ints = new Int32Array(0);

  /** Room for `rows` rows (the first ones kept). */
  resize(rows: number): void {
    this.#longs = grown(this.#longs, rows * 6);
    this.#ints = grown(this.#ints, rows * 5);
  }

  czxid(row: number): bigint {
    return this.#longs[row * 6] as bigint;
  }

  mzxid(row: number): bigint {
    return this.#longs[row * 6 + 1] as bigint;
  }

  pzxid(row: number): bigint {
    return this.#longs[row * 6 + 5] as bigint;
  }

  /** The row's Stat, as a new object. */
  get(row: number): Stat {
    const l = this.#longs;
    const z = row * 6;
    const i = this.#ints;
    const k = row * 5;
    return {
      czxid: l[z] as bigint,
      mzxid: l[z + 1] as bigint,
      ctime: l[z + 2] as bigint,
      mtime: l[z + 3] as bigint,
      version: i[k] as number,
      cversion: i[k + 1] as number,
      aversion: i[k + 2] as number,
      ephemeralOwner: l[z + 4] as bigint,
      dataLength: i[k + 3] as number,
      numChildren: i[k + 4] as number,
      pzxid: l[z + 5] as bigint,
    };
  }

  set(row: number, stat: Stat): void {
    const l = this.#longs;
    const z = row * 6;
    l[z] = stat.czxid;
    l[z + 1] = stat.mzxid;
    l[z + 2] = stat.ctime;
    l[z + 3] = stat.mtime;
    l[z + 4] = stat.ephemeralOwner;
    l[z + 5] = stat.pzxid;
    const i = this.#ints;
    const k = row * 5;
    i[k] = stat.version;
    i[k + 1] = stat.cversion;
    i[k + 2] = stat.aversion;
    i[k + 3] = stat.dataLength;
    i[k + 4] = stat.numChildren;
  }
}

type Column = Int32Array | Uint32Array | Uint8Array | BigInt64Array;

/** A column of `length` entries holding `old`'s first ones (or as many as fit). */
export function grown<A extends Column>(old: A, length: number): A {
  const next = new (old.constructor as new (n: number) => A)(length);
  (next as Int32Array).set((length < old.length ? old.subarray(0, length) : old) as Int32Array);
  return next;
}

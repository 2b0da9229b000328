/**
 * A growable run of bytes shared by many small values (the tree cache's node names and data): a
 * value is an offset and a length into {@link ByteSlab.bytes}, so a million values cost one
 * buffer instead of a million Buffer objects. Values are appended; a freed value's bytes are
 * garbage until {@link ByteSlab.compact} copies the live ones into a new buffer. Offsets change
 * only there, and views of `bytes` must not outlive the next append or compaction (copy instead).
 */

/** The largest slab: offsets are kept in Uint32Array columns. */
const MAX_BYTES = 2 ** 32 - 1;
/** The smallest buffer allocated. */
const MIN_BYTES = 4096;
/** The garbage tolerated whatever the live size. */
const MIN_GARBAGE = 64 * 1024;

export class ByteSlab {
  /** The bytes; values live at their offsets below {@link ByteSlab.used}. */
  bytes: Buffer;
  #used = 0;
  #garbage = 0;

  constructor(initial = 0) {
    this.bytes = Buffer.allocUnsafeSlow(initial);
  }

  /** Bytes in use, garbage included. */
  get used(): number {
    return this.#used;
  }

  /** Bytes of freed values not reclaimed yet. */
  get garbage(): number {
    return this.#garbage;
  }

  /** Copies `src[start, end)` in and returns its offset. */
  append(src: Uint8Array, start = 0, end = src.length): number {
    const off = this.#used;
    const len = end - start;
    if (off + len > this.bytes.length) this.#grow(off + len);
    this.bytes.set(start === 0 && end === src.length ? src : src.subarray(start, end), off);
    this.#used = off + len;
    return off;
  }

  /** Overwrites the value at `off` with `src` (of the value's length or less: the rest becomes garbage). */
  overwrite(off: number, oldLength: number, src: Uint8Array): void {
    this.bytes.set(src, off);
    this.#garbage += oldLength - src.length;
  }

  /** A value of `length` bytes is no longer used. */
  free(length: number): void {
    this.#garbage += length;
    if (this.#garbage === this.#used) this.#used = this.#garbage = 0;
  }

  /** True when the garbage outweighs the live values (and a minimum): time to {@link ByteSlab.compact}. */
  get wasteful(): boolean {
    return this.#garbage > MIN_GARBAGE && this.#garbage > this.#used - this.#garbage;
  }

  /**
   * Copies the live values into a new buffer: `each` is called with a `move(offset, length)`
   * that copies one value and returns its new offset; it must move every live value once.
   */
  compact(each: (move: (off: number, length: number) => number) => void): void {
    const old = this.bytes;
    const live = this.#used - this.#garbage;
    const next = Buffer.allocUnsafeSlow(Math.min(MAX_BYTES, Math.max(MIN_BYTES, live + (live >>> 3))));
    let used = 0;
    each((off, length) => {
      old.copy(next, used, off, off + length);
      used += length;
      return used - length;
    });
    this.bytes = next;
    this.#used = used;
    this.#garbage = 0;
  }

  /** Makes room for `need` bytes: a quarter more than now, so that the slack stays small. */
  #grow(need: number): void {
    if (need > MAX_BYTES) throw new RangeError(`the tree cache's byte slab would exceed ${MAX_BYTES} bytes`);
    const size = Math.min(MAX_BYTES, Math.max(need, MIN_BYTES, this.bytes.length + (this.bytes.length >>> 2)));
    const next = Buffer.allocUnsafeSlow(size);
    this.bytes.copy(next, 0, 0, this.#used);
    this.bytes = next;
  }
}

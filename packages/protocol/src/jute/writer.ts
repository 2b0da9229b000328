/**
 * JuteWriter: a growable buffer that writes Jute's binary encoding (Java
 * `org.apache.jute.BinaryOutputArchive`), the mirror of {@link JuteReader}.
 *
 * Strings and UTF-8 (checked against the 3.8.0 classes with `javap -c`):
 * - `BinaryOutputArchive.writeString` encodes through its private `stringToByteBuffer`, which
 *   walks the UTF-16 code units one by one: < 0x80 one byte, < 0x800 two bytes, anything else
 *   three bytes. For the Basic Multilingual Plane that is exactly standard UTF-8 (U+0000 is a
 *   single 0x00 byte, not modified UTF-8's C0 80). A character outside the BMP, however, is two
 *   surrogates and comes out as two 3-byte sequences (6 bytes, the CESU-8 form), where standard
 *   UTF-8 has 4 bytes.
 * - `BinaryInputArchive.readString` decodes with `new String(bytes, UTF_8)`. Java's UTF-8
 *   decoder rejects encoded surrogates, so the 6-byte form reads back as two U+FFFD, while the
 *   standard 4-byte form reads back as the original character (verified with the 3.8.0 jar:
 *   "x\uD83D\uDE00y" written by Java reads back as "x\uFFFD\uFFFDy").
 *
 * So Java is well-defined only inside the BMP, and there this writer produces the same bytes as
 * Java. Outside the BMP this writer sends standard UTF-8 on purpose: the server (which reads
 * with `readString`) then stores the character intact, where Java's own bytes would be stored
 * as U+FFFD U+FFFD. A byte comparison with Java therefore differs for such strings by design;
 * compare them by what Java's `readString` decodes instead. The server writes such a stored
 * character back in the 6-byte form, which {@link JuteReader.readUString} understands.
 * A lone surrogate (not valid text) is written by Node as U+FFFD (EF BF BD); Java writes it
 * as ED xx xx, which its reader also turns into U+FFFD, so the server ends up with the same
 * string either way.
 */
import { InvalidArgumentError } from '../errors.js';

const MIN_LONG = -(2n ** 63n);
const MAX_LONG = 2n ** 63n - 1n;
const EMPTY = Buffer.alloc(0);

/**
 * Writes Jute primitives into a buffer that doubles when full. A writer is single-use:
 * {@link toBuffer} and {@link finishFrame} hand the bytes to the caller.
 *
 * @example
 * ```ts
 * const w = JuteWriter.frame();
 * w.writeInt(xid).writeInt(OpCode.getData);
 * writeGetDataRequest(w, { path: '/a', watch: false });
 * socket.write(w.finishFrame());
 * ```
 */
export class JuteWriter {
  #buf: Buffer;
  #pos = 0;
  #framed = false;

  /** @param initialCapacity bytes to allocate up front (the buffer doubles as needed). */
  constructor(initialCapacity = 256) {
    if (!Number.isInteger(initialCapacity) || initialCapacity < 0) {
      throw new InvalidArgumentError('initialCapacity', `must be a non-negative integer, got ${String(initialCapacity)}`);
    }
    this.#buf = Buffer.allocUnsafe(Math.max(initialCapacity, 16));
  }

  /** A writer whose first 4 bytes are reserved for the frame length that {@link finishFrame} fills in. */
  static frame(initialCapacity = 256): JuteWriter {
    const w = new JuteWriter(initialCapacity);
    w.#pos = 4;
    w.#framed = true;
    return w;
  }

  /** Bytes written so far, the reserved frame-length prefix included. */
  get length(): number {
    return this.#pos;
  }

  /** A 4-byte big-endian signed int (Jute `int`); `v` must be an integer in int32 range. */
  writeInt(v: number): this {
    if ((v | 0) !== v) throw new InvalidArgumentError('int', `not a 32-bit signed integer: ${String(v)}`);
    const p = this.#reserve(4);
    const b = this.#buf;
    b[p] = v >>> 24;
    b[p + 1] = v >>> 16;
    b[p + 2] = v >>> 8;
    b[p + 3] = v;
    return this;
  }

  /** An 8-byte big-endian signed long (Jute `long`); `v` must be in int64 range. */
  writeLong(v: bigint): this {
    if (typeof v !== 'bigint' || v < MIN_LONG || v > MAX_LONG) {
      throw new InvalidArgumentError('long', `not a 64-bit signed bigint: ${String(v)}`);
    }
    const p = this.#reserve(8);
    this.#buf.writeBigInt64BE(v, p);
    return this;
  }

  /** A Jute `long` given as a number (a time in ms), the mirror of `readLongAsNumber`; `v` must be a safe integer. */
  writeLongAsNumber(v: number): this {
    if (!Number.isSafeInteger(v)) throw new InvalidArgumentError('long', `not a safe integer: ${String(v)}`);
    const p = this.#reserve(8);
    const b = this.#buf;
    const hi = Math.floor(v / 4294967296);
    b.writeInt32BE(hi, p);
    b.writeUInt32BE(v - hi * 4294967296, p + 4);
    return this;
  }

  /** One byte, 1 or 0 (Jute `boolean`, Java `DataOutput.writeBoolean`). */
  writeBool(v: boolean): this {
    const p = this.#reserve(1);
    this.#buf[p] = v ? 1 : 0;
    return this;
  }

  /** A length-prefixed byte string (Jute `buffer`); `null` is written as length -1. */
  writeBuffer(b: Uint8Array | null): this {
    if (b === null) return this.writeInt(-1);
    const n = b.length;
    const p = this.#reserve(4 + n);
    this.#putInt(p, n);
    this.#buf.set(b, p + 4);
    return this;
  }

  /**
   * A length-prefixed UTF-8 string (Jute `ustring`); `null` is written as length -1, `''` as
   * length 0. Standard UTF-8: identical to Java's bytes inside the BMP (see the file comment).
   */
  writeUString(s: string | null): this {
    if (s === null) return this.writeInt(-1);
    const n = Buffer.byteLength(s, 'utf8');
    const p = this.#reserve(4 + n);
    this.#putInt(p, n);
    if (n !== 0) this.#buf.write(s, p + 4, n, 'utf8');
    return this;
  }

  /** A count-prefixed vector (Jute `vector<T>`); `null` is written as count -1. */
  writeVector<T>(items: readonly T[] | null, writeItem: (w: JuteWriter, item: T) => void): this {
    if (items === null) return this.writeInt(-1);
    const n = items.length;
    this.writeInt(n);
    for (let i = 0; i < n; i++) writeItem(this, items[i] as T);
    return this;
  }

  /** A `vector<ustring>`; `null` is written as count -1, a `null` element as length -1. */
  writeStringVector(items: readonly (string | null)[] | null): this {
    if (items === null) return this.writeInt(-1);
    const n = items.length;
    this.writeInt(n);
    for (let i = 0; i < n; i++) this.writeUString(items[i] ?? null);
    return this;
  }

  /**
   * The bytes written, as a view (no copy). Ownership passes to the caller: the writer lets
   * go of its buffer, so a later write cannot alter the returned bytes; do not reuse it.
   */
  toBuffer(): Buffer {
    const out = this.#buf.subarray(0, this.#pos);
    this.#buf = EMPTY;
    this.#pos = 0;
    this.#framed = false;
    return out;
  }

  /**
   * For a writer made by {@link JuteWriter.frame}: writes the payload length (total - 4) into
   * the reserved prefix, big-endian, and returns the whole frame (see {@link toBuffer}).
   */
  finishFrame(): Buffer {
    if (!this.#framed) throw new InvalidArgumentError('finishFrame', 'the writer was not made by JuteWriter.frame()');
    this.#putInt(0, this.#pos - 4);
    return this.toBuffer();
  }

  /** Makes room for `n` more bytes and returns the position where they go. */
  #reserve(n: number): number {
    const p = this.#pos;
    const need = p + n;
    if (need > this.#buf.length) this.#grow(need);
    this.#pos = need;
    return p;
  }

  #grow(need: number): void {
    let cap = Math.max(this.#buf.length, 16) * 2;
    while (cap < need) cap *= 2;
    const next = Buffer.allocUnsafe(cap);
    this.#buf.copy(next, 0, 0, this.#pos);
    this.#buf = next;
  }

  #putInt(p: number, v: number): void {
    const b = this.#buf;
    b[p] = v >>> 24;
    b[p + 1] = v >>> 16;
    b[p + 2] = v >>> 8;
    b[p + 3] = v;
  }
}

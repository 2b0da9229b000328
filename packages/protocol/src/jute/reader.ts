/**
 * JuteReader: a bounds-checked cursor over Jute's binary encoding (Java
 * `org.apache.jute.BinaryInputArchive`): big-endian int and long, one-byte boolean, and
 * int-length-prefixed buffers, strings and vectors where length -1 means null.
 *
 * Decoding never trusts a length: every read checks the bytes that remain first, and a
 * claimed length that is below -1 or larger than what remains throws {@link DecodeError}
 * before anything of that size is allocated.
 */
import { DecodeError } from '../errors.js';

// readLong's scratch: 8 bytes seen as one signed 64-bit integer in the machine's byte order.
const SCRATCH = new Uint8Array(8);
const SCRATCH_LONG = new BigInt64Array(SCRATCH.buffer);
const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/**
 * Reads Jute primitives from `buf[offset, end)`. Buffers are returned as views into `buf`
 * (no copy), so they stay valid only as long as the caller keeps `buf` unchanged.
 *
 * @example
 * ```ts
 * const r = new JuteReader(frame, 4);
 * const xid = r.readInt();
 * const zxid = r.readLong();
 * ```
 */
export class JuteReader {
  readonly #buf: Buffer;
  #pos: number;
  readonly #end: number;

  constructor(buf: Buffer, offset = 0, end = buf.length) {
    if (!Number.isInteger(offset) || !Number.isInteger(end) || offset < 0 || end > buf.length || offset > end) {
      throw new RangeError(`JuteReader: bad window [${offset}, ${end}) over ${buf.length} bytes`);
    }
    this.#buf = buf;
    this.#pos = offset;
    this.#end = end;
  }

  /** The position of the next byte to read, counted from the start of the buffer. */
  get offset(): number {
    return this.#pos;
  }

  /** How many bytes are left before the end of the window. */
  get remaining(): number {
    return this.#end - this.#pos;
  }

  /** A 4-byte big-endian signed int (Jute `int`). */
  readInt(): number {
    const p = this.#pos;
    if (this.#end - p < 4) throw truncated('int', 4, p, this.#end);
    const b = this.#buf;
    this.#pos = p + 4;
    return (b[p]! << 24) | (b[p + 1]! << 16) | (b[p + 2]! << 8) | b[p + 3]!;
  }

  /**
   * An 8-byte big-endian signed long (Jute `long`), as a bigint. The bytes are swapped into a
   * scratch BigInt64Array (on a little-endian machine; big-endian ones keep the Buffer method), which
   * allocates only the result: `Buffer.readBigInt64BE` builds it from several intermediate
   * bigints, and a reply carries up to seven longs (its zxid and a Stat's six).
   */
  readLong(): bigint {
    const p = this.#pos;
    if (this.#end - p < 8) throw truncated('long', 8, p, this.#end);
    this.#pos = p + 8;
    const b = this.#buf;
    if (!LITTLE_ENDIAN) return b.readBigInt64BE(p);
    SCRATCH[0] = b[p + 7]!;
    SCRATCH[1] = b[p + 6]!;
    SCRATCH[2] = b[p + 5]!;
    SCRATCH[3] = b[p + 4]!;
    SCRATCH[4] = b[p + 3]!;
    SCRATCH[5] = b[p + 2]!;
    SCRATCH[6] = b[p + 1]!;
    SCRATCH[7] = b[p]!;
    return SCRATCH_LONG[0]!;
  }

  /**
   * A Jute `long` as a number, for the longs that are times in ms (a Stat's ctime and mtime):
   * no bigint is made. A value a double cannot hold exactly (beyond ±(2^53 - 1), about 285,000
   * years from 1970) throws {@link DecodeError} rather than reading as a rounded number, so what
   * is read writes back as the same bytes.
   */
  readLongAsNumber(): number {
    const p = this.#pos;
    if (this.#end - p < 8) throw truncated('long', 8, p, this.#end);
    const b = this.#buf;
    // hi * 2^32 + lo is exact whenever the result is a safe integer, and not one otherwise.
    const v = ((b[p]! << 24) | (b[p + 1]! << 16) | (b[p + 2]! << 8) | b[p + 3]!) * 4294967296 + (((b[p + 4]! << 24) | (b[p + 5]! << 16) | (b[p + 6]! << 8) | b[p + 7]!) >>> 0);
    if (!Number.isSafeInteger(v)) throw new DecodeError(`long at offset ${p} is not a safe integer: ${b.readBigInt64BE(p)}`, { offset: p });
    this.#pos = p + 8;
    return v;
  }

  /**
   * One byte (Jute `boolean`). Any non-zero byte is true, as Java's `DataInput.readBoolean`
   * (used by `BinaryInputArchive.readBool`) reads it.
   */
  readBool(): boolean {
    const p = this.#pos;
    if (this.#end - p < 1) throw truncated('boolean', 1, p, this.#end);
    this.#pos = p + 1;
    return this.#buf[p] !== 0;
  }

  /**
   * A length-prefixed byte string (Jute `buffer`): a view into the underlying buffer, not a
   * copy. Length -1 is `null`, which is distinct from an empty buffer (length 0).
   */
  readBuffer(): Buffer | null {
    const start = this.#pos;
    const len = this.readInt();
    if (len === -1) return null;
    this.#checkLength('buffer', len, start);
    const p = this.#pos;
    this.#pos = p + len;
    return this.#buf.subarray(p, p + len);
  }

  /**
   * A length-prefixed UTF-8 string (Jute `ustring`). Length -1 is `null`, distinct from `''`.
   *
   * Besides standard UTF-8, this accepts the 3-byte-per-surrogate form (CESU-8) in which a
   * Java server writes characters outside the Basic Multilingual Plane (see writer.ts), and
   * rebuilds the original character from it; a surrogate without its partner reads as U+FFFD,
   * as Java's own `BinaryInputArchive.readString` reads each such sequence.
   */
  readUString(): string | null {
    const start = this.#pos;
    const len = this.readInt();
    if (len === -1) return null;
    this.#checkLength('ustring', len, start);
    const p = this.#pos;
    const e = p + len;
    this.#pos = e;
    const s = this.#buf.toString('utf8', p, e);
    // Node turns each byte of a CESU-8 surrogate into U+FFFD; only then is the slow path needed.
    return s.indexOf('\uFFFD') === -1 ? s : decodeJavaUtf8(this.#buf, p, e);
  }

  /**
   * A count-prefixed vector (Jute `vector<T>`), each item read by `readItem`. Count -1 is
   * `null`, distinct from an empty vector. A count larger than the bytes that remain is
   * rejected before reading, since every Jute item takes at least one byte.
   */
  readVector<T>(readItem: (r: JuteReader) => T): T[] | null {
    const start = this.#pos;
    const count = this.readInt();
    if (count === -1) return null;
    this.#checkLength('vector', count, start);
    const out: T[] = [];
    for (let i = 0; i < count; i++) out.push(readItem(this));
    return out;
  }

  /**
   * A `vector<ustring>`. Count -1 is `null`. Java's `BinaryOutputArchive` writes a null
   * element of a `List<String>` as length -1 and its reader gives it back as null, so an
   * element may be `null` here too: it is kept as `null` rather than mapped to `''`, so that
   * what Java wrote is what this returns. (Servers never put a null in the vectors they
   * send: child names, ephemeral paths and watch paths are never null.)
   */
  readStringVector(): (string | null)[] | null {
    const start = this.#pos;
    const count = this.readInt();
    if (count === -1) return null;
    // Each element has at least its 4-byte length.
    if (count < -1 || count > (this.#end - this.#pos) >>> 2) throw badLength('vector<ustring>', count, start, this.#end - this.#pos);
    const out: (string | null)[] = [];
    for (let i = 0; i < count; i++) out.push(this.readUString());
    return out;
  }

  /** Moves past `n` bytes without reading them. */
  skip(n: number): void {
    const p = this.#pos;
    if (!Number.isInteger(n) || n < 0) throw new RangeError(`JuteReader.skip: bad count ${n}`);
    if (this.#end - p < n) throw truncated('skip', n, p, this.#end);
    this.#pos = p + n;
  }

  #checkLength(what: string, len: number, at: number): void {
    if (len < -1 || len > this.#end - this.#pos) throw badLength(what, len, at, this.#end - this.#pos);
  }
}

function truncated(what: string, need: number, at: number, end: number): DecodeError {
  return new DecodeError(`truncated ${what} at offset ${at}: needs ${need} bytes, ${end - at} left`, { offset: at });
}

function badLength(what: string, len: number, at: number, left: number): DecodeError {
  const why = len < 0 ? 'negative length' : `length exceeds the ${left} bytes left`;
  return new DecodeError(`bad ${what} at offset ${at}: ${why} (${len})`, { offset: at });
}

/**
 * UTF-8 decoding that also understands surrogates encoded one by one in 3 bytes
 * (`ED A0..BF 80..BF`), the form Java's `BinaryOutputArchive.stringToByteBuffer` produces for
 * characters outside the BMP. A high/low pair becomes the original character; a lone one
 * becomes U+FFFD. Everything between such sequences is decoded by Node's standard decoder.
 */
function decodeJavaUtf8(buf: Buffer, start: number, end: number): string {
  let out = '';
  let from = start;
  let i = start;
  while (i + 2 < end) {
    const hi = surrogateAt(buf, i);
    if (hi === -1) {
      i++;
      continue;
    }
    out += buf.toString('utf8', from, i);
    const lo = hi < 0xdc00 && i + 5 < end ? surrogateAt(buf, i + 3) : -1;
    if (hi < 0xdc00 && lo >= 0xdc00) {
      out += String.fromCharCode(hi, lo);
      i += 6;
    } else {
      out += '\uFFFD';
      i += 3;
    }
    from = i;
  }
  return out + buf.toString('utf8', from, end);
}

/** The UTF-16 surrogate encoded by the 3 bytes at `i`, or -1 when they are not one. */
function surrogateAt(buf: Buffer, i: number): number {
  const b1 = buf[i + 1]!;
  if (buf[i] !== 0xed || b1 < 0xa0 || b1 > 0xbf) return -1;
  const b2 = buf[i + 2]!;
  if ((b2 & 0xc0) !== 0x80) return -1;
  return 0xd000 | ((b1 & 0x3f) << 6) | (b2 & 0x3f);
}

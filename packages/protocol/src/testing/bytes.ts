/**
 * An independent byte builder for tests. It builds Jute bytes with plain Buffer operations and
 * shares no code with JuteWriter, so an encoder bug cannot cancel itself out in an assertion
 * that compares the writer's output with bytes built here.
 */

/**
 * Chainable builder of big-endian Jute bytes.
 *
 * @example
 * ```ts
 * const expected = new Bytes().int(5).str('/a').bool(true).build();
 * ```
 */
export class Bytes {
  readonly #parts: Buffer[] = [];

  /** 4-byte big-endian signed int. */
  int(v: number): this {
    const b = Buffer.alloc(4);
    b.writeInt32BE(v, 0);
    this.#parts.push(b);
    return this;
  }

  /** 8-byte big-endian signed long. */
  long(v: bigint): this {
    const b = Buffer.alloc(8);
    b.writeBigInt64BE(v, 0);
    this.#parts.push(b);
    return this;
  }

  /** One byte, 1 or 0. */
  bool(v: boolean): this {
    this.#parts.push(Buffer.from([v ? 1 : 0]));
    return this;
  }

  /** Raw bytes, no length prefix. */
  raw(bytes: Uint8Array | readonly number[]): this {
    this.#parts.push(Buffer.from(bytes as Uint8Array));
    return this;
  }

  /** Length-prefixed bytes; `null` is length -1. */
  buf(bytes: Uint8Array | null): this {
    if (bytes === null) return this.int(-1);
    return this.int(bytes.length).raw(bytes);
  }

  /** Length-prefixed standard UTF-8 string; `null` is length -1. */
  str(s: string | null): this {
    if (s === null) return this.int(-1);
    return this.buf(Buffer.from(s, 'utf8'));
  }

  /** Count-prefixed vector of strings; `null` is count -1. */
  strs(items: readonly (string | null)[] | null): this {
    if (items === null) return this.int(-1);
    this.int(items.length);
    for (const s of items) this.str(s);
    return this;
  }

  /** Bytes built by another builder, appended. */
  append(other: Bytes | Uint8Array): this {
    this.#parts.push(other instanceof Bytes ? other.build() : Buffer.from(other));
    return this;
  }

  /** Total length so far. */
  get length(): number {
    let n = 0;
    for (const p of this.#parts) n += p.length;
    return n;
  }

  /** The bytes. */
  build(): Buffer {
    return Buffer.concat(this.#parts);
  }

  /** The bytes behind a 4-byte big-endian length prefix (a frame). */
  frame(): Buffer {
    const body = this.build();
    const len = Buffer.alloc(4);
    len.writeInt32BE(body.length, 0);
    return Buffer.concat([len, body]);
  }
}

/** Shorthand: `bytes()` is `new Bytes()`. */
export function bytes(): Bytes {
  return new Bytes();
}

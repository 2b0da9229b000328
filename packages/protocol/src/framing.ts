/**
 * Framing: ZooKeeper frames are a 4-byte big-endian length followed by that many bytes.
 * {@link FrameDecoder} turns TCP chunks, cut anywhere, into whole frames. Pure, no I/O.
 */
import { DEFAULT_MAX_FRAME_SIZE } from './constants.js';
import { DecodeError } from './errors.js';

/** How much of an oversized frame is kept for {@link FrameSink.oversize}: a reply header. */
export const OVERSIZE_HEADER_BYTES = 16;

/** Receives what the decoder finds. */
export interface FrameSink {
  /** A whole frame's payload (without the length): a view of the chunk or a fresh buffer, never reused by the decoder. */
  frame(payload: Buffer): void;
  /**
   * A frame longer than the limit was announced. Its bytes are skipped (never buffered) and the
   * stream continues after it. Called once its first {@link OVERSIZE_HEADER_BYTES} bytes (a reply
   * header: xid, zxid, err) have arrived, however the stream was cut, with those bytes in
   * `header`, so the receiver can tell whose reply it was.
   */
  oversize(length: number, header: Buffer): void;
}

/**
 * Chunks in, frames out. A frame inside one chunk is handed over as a view of the chunk (no
 * copy); a frame spanning chunks is assembled into one buffer of exactly its length, allocated
 * only once the length has been read and checked. A negative length is a {@link DecodeError};
 * a length over `maxFrameSize` is reported through `sink.oversize` and skipped. `maxFrameSize`
 * may be a function, asked as each frame's length arrives (the connection allows a coalesced
 * read's reply more than one reply's worth).
 */
export class FrameDecoder {
  readonly #max: number | (() => number);
  readonly #sink: FrameSink;
  /** Bytes of a length prefix cut across chunks. */
  readonly #lenBuf = Buffer.alloc(4);
  #lenHave = 0;
  /** The frame being assembled across chunks. */
  #partial: Buffer | undefined;
  #partialHave = 0;
  /** Bytes still to skip of an oversized frame. */
  #skip = 0;
  /** The oversized frame's first bytes, until they are all in and it is reported. */
  #oversizeHeader: Buffer | undefined;
  #oversizeHave = 0;
  #oversizeLength = 0;

  constructor(sink: FrameSink, maxFrameSize: number | (() => number) = DEFAULT_MAX_FRAME_SIZE) {
    this.#sink = sink;
    this.#max = maxFrameSize;
  }

  /** True when no partial frame or length is buffered (a clean frame boundary). */
  get idle(): boolean {
    return this.#lenHave === 0 && this.#partial === undefined && this.#skip === 0;
  }

  /** Feeds one chunk. Throws {@link DecodeError} on a negative length. */
  push(chunk: Buffer): void {
    let off = 0;
    const end = chunk.length;
    while (off < end) {
      if (this.#skip > 0) {
        const n = Math.min(this.#skip, end - off);
        const header = this.#oversizeHeader;
        if (header) {
          const h = Math.min(header.length - this.#oversizeHave, n);
          chunk.copy(header, this.#oversizeHave, off, off + h);
          this.#oversizeHave += h;
          if (this.#oversizeHave === header.length) {
            this.#oversizeHeader = undefined;
            this.#skip -= n;
            off += n;
            this.#sink.oversize(this.#oversizeLength, header);
            continue;
          }
        }
        this.#skip -= n;
        off += n;
        continue;
      }
      if (this.#partial) {
        const n = Math.min(this.#partial.length - this.#partialHave, end - off);
        chunk.copy(this.#partial, this.#partialHave, off, off + n);
        this.#partialHave += n;
        off += n;
        if (this.#partialHave === this.#partial.length) {
          const frame = this.#partial;
          this.#partial = undefined;
          this.#partialHave = 0;
          this.#sink.frame(frame);
        }
        continue;
      }
      let length: number;
      if (this.#lenHave === 0 && end - off >= 4) {
        length = chunk.readInt32BE(off);
        off += 4;
      } else {
        const n = Math.min(4 - this.#lenHave, end - off);
        chunk.copy(this.#lenBuf, this.#lenHave, off, off + n);
        this.#lenHave += n;
        off += n;
        if (this.#lenHave < 4) return;
        this.#lenHave = 0;
        length = this.#lenBuf.readInt32BE(0);
      }
      if (length < 0) throw new DecodeError(`negative frame length ${length}`, { offset: off - 4 });
      const max = this.#max;
      if (length > (typeof max === 'number' ? max : max())) {
        // Only the reply header is kept (a few bytes, allocated once the length is known).
        this.#skip = length;
        this.#oversizeLength = length;
        this.#oversizeHeader = Buffer.alloc(Math.min(OVERSIZE_HEADER_BYTES, length));
        this.#oversizeHave = 0;
        continue;
      }
      if (end - off >= length) {
        const frame = chunk.subarray(off, off + length);
        off += length;
        this.#sink.frame(frame);
      } else {
        this.#partial = Buffer.allocUnsafe(length);
        this.#partialHave = 0;
      }
    }
  }
}

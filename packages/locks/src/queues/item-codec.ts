/**
 * What a queue node holds: Curator 5.4's `ItemSerializer` framing around the user's serializer
 * bytes, so a Java producer and a Node consumer (and the other way round) read each other's items.
 *
 * The framing, from the bytecode of `ItemSerializer.serialize` / `deserialize` (a
 * `DataOutputStream`, so every int is 4 bytes big-endian):
 *
 *     int   0x00010001                 VERSION
 *     per item:
 *       byte  0x01                     ITEM_OPCODE
 *       int   n                        the serializer's byte count (>= 0)
 *       n bytes                        the serializer's bytes (none when n is 0)
 *     byte  0x02                       EOF_OPCODE
 *
 * One node carries one item (`put`) or several (`putMulti`). Curator reads with `readByte` and
 * `readFully`, so a node that ends early fails with an EOFException; it rejects another version
 * ("Incorrect version"), another opcode ("Incorrect opcode") and a negative size ("Bad size").
 * Bytes after the end opcode are ignored by Curator, and here too.
 */

/** Curator's `ItemSerializer.VERSION`. */
export const ITEM_VERSION = 0x00010001;
/** Curator's `ItemSerializer.ITEM_OPCODE`. */
export const ITEM_OPCODE = 0x01;
/** Curator's `ItemSerializer.EOF_OPCODE`. */
export const EOF_OPCODE = 0x02;

/**
 * Turns the user's items into bytes and back: Curator's `QueueSerializer`. Both sides of a shared
 * queue must agree on it (Curator's own has no default; interop tests use UTF-8 strings).
 */
export interface QueueSerializer<T> {
  /** The bytes of one item. Throwing refuses the item (before anything is sent). */
  serialize(item: T): Uint8Array;
  /** The item of these bytes. Throwing makes the node unreadable (QueueItemError). */
  deserialize(bytes: Uint8Array): T;
}

/** The default: the item is its bytes (a Uint8Array out, a Buffer in). */
export const bytesSerializer: QueueSerializer<Uint8Array> = Object.freeze({
  serialize(item: Uint8Array): Uint8Array {
    if (!(item instanceof Uint8Array)) throw new TypeError(`the bytes serializer takes a Uint8Array, got ${describe(item)}`);
    return item;
  },
  deserialize: (bytes: Uint8Array): Uint8Array => bytes,
});

/** Strings as UTF-8: Java's `new String(bytes, UTF_8)` / `getBytes(UTF_8)`. */
export const stringSerializer: QueueSerializer<string> = Object.freeze({
  serialize(item: string): Uint8Array {
    if (typeof item !== 'string') throw new TypeError(`the string serializer takes a string, got ${describe(item)}`);
    return Buffer.from(item, 'utf8');
  },
  deserialize: (bytes: Uint8Array): string => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8'),
});

/** JSON text as UTF-8 (undefined, functions and symbols have no JSON and are refused). */
export const jsonSerializer: QueueSerializer<unknown> = Object.freeze({
  serialize(item: unknown): Uint8Array {
    const text = JSON.stringify(item);
    if (text === undefined) throw new TypeError(`the JSON serializer cannot encode ${describe(item)}`);
    return Buffer.from(text, 'utf8');
  },
  deserialize: (bytes: Uint8Array): unknown => JSON.parse(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8')) as unknown,
});

function describe(value: unknown): string {
  return value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value;
}

/** Frames the serializer's bytes of `payloads` (one per item) as Curator's `ItemSerializer.serialize` does. */
export function encodeItems(payloads: readonly Uint8Array[]): Buffer {
  let size = 4 + 1;
  for (const p of payloads) size += 5 + p.byteLength;
  const out = Buffer.alloc(size);
  let at = out.writeInt32BE(ITEM_VERSION, 0);
  for (const p of payloads) {
    at = out.writeUInt8(ITEM_OPCODE, at);
    at = out.writeInt32BE(p.byteLength, at);
    out.set(p, at);
    at += p.byteLength;
  }
  out.writeUInt8(EOF_OPCODE, at);
  return out;
}

/** Why {@link decodeItems} refused a node's bytes. */
export class ItemFramingError extends Error {
  override name = 'ItemFramingError';
}

/**
 * The payloads framed in a node's bytes, as Curator's `ItemSerializer.deserialize` reads them;
 * throws {@link ItemFramingError} where Curator throws (wrong version or opcode, negative size,
 * truncation).
 */
export function decodeItems(data: Uint8Array): Buffer[] {
  const buf = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  const need = (at: number, n: number) => {
    if (at + n > buf.length) throw new ItemFramingError(`truncated: ${buf.length} bytes, ${at + n} needed`);
  };
  need(0, 4);
  const version = buf.readInt32BE(0);
  if (version !== ITEM_VERSION) throw new ItemFramingError(`version 0x${(version >>> 0).toString(16)}, expected 0x${ITEM_VERSION.toString(16)}`);
  const payloads: Buffer[] = [];
  for (let at = 4; ; ) {
    need(at, 1);
    const opcode = buf.readInt8(at++);
    if (opcode === EOF_OPCODE) return payloads;
    if (opcode !== ITEM_OPCODE) throw new ItemFramingError(`opcode ${opcode} at byte ${at - 1}, expected ${ITEM_OPCODE} or ${EOF_OPCODE}`);
    need(at, 4);
    const size = buf.readInt32BE(at);
    at += 4;
    if (size < 0) throw new ItemFramingError(`item size ${size}`);
    need(at, size);
    payloads.push(buf.subarray(at, at + size));
    at += size;
  }
}

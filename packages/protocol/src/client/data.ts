/**
 * Node data and credentials as callers give them, checked and turned into bytes before anything
 * is sent. TypeScript keeps typed callers right; these checks are for JavaScript callers and
 * `any`, who would otherwise get Node's raw `TypeError ... Received undefined` from deep inside
 * `Buffer.from`.
 */
import { InvalidArgumentError } from '../errors.js';

/** Node data as the caller may give it: bytes, or a string sent as UTF-8; null or undefined for none. */
export type Data = Uint8Array | string | null | undefined;

/**
 * @internal The bytes of node data (`null` for none), without copying a Buffer. Throws
 * {@link InvalidArgumentError} for anything but a string, a Uint8Array (Buffer included), null or
 * undefined, and for data over `maxFrameSize` (the server's `jute.maxbuffer` would refuse it).
 */
export function dataBytes(data: unknown, maxFrameSize: number, argument = 'data'): Buffer | null {
  if (data === null || data === undefined) return null;
  const bytes = toBuffer(data, argument, 'null');
  if (bytes.length > maxFrameSize) {
    throw new InvalidArgumentError(argument, `${bytes.length} bytes exceed the client's maxFrameSize of ${maxFrameSize} bytes (jute.maxbuffer): connect with a larger maxFrameSize, and the servers' own jute.maxbuffer (default 1048575) must allow it too`);
  }
  return bytes;
}

/** @internal Credentials as bytes (a copy): a string (UTF-8) or a Uint8Array, else {@link InvalidArgumentError}. */
export function authBytes(auth: unknown, argument = 'auth'): Buffer {
  return Buffer.from(toBuffer(auth, argument));
}

function toBuffer(value: unknown, argument: string, alsoAllowed?: string): Buffer {
  if (typeof value === 'string') return Buffer.from(value, 'utf8');
  if (Buffer.isBuffer(value)) return value;
  if (value instanceof Uint8Array) return Buffer.from(value.buffer, value.byteOffset, value.byteLength);
  throw new InvalidArgumentError(argument, `must be a string or a Uint8Array (Buffer)${alsoAllowed ? ` or ${alsoAllowed}` : ''}, got ${describe(value)}`);
}

function describe(value: unknown): string {
  if (value === null || value === undefined) return String(value);
  if (typeof value === 'object') return `an object (${(value as object).constructor?.name ?? 'no prototype'})`;
  if (typeof value === 'function' || typeof value === 'symbol') return `a ${typeof value}`;
  return `${typeof value} ${String(value)}`;
}

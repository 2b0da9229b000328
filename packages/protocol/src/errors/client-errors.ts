/**
 * Client-side errors of `@zk/protocol`: problems the client finds itself, which have no
 * ZooKeeper error code.
 */
import { brandError } from './base.js';

/**
 * Bytes that break the protocol: a truncated or malformed record, a negative or oversized
 * length, a reply to an xid that is not the oldest outstanding one. The connection that
 * received them is closed; its outstanding requests fail with {@link ConnectionLossError}
 * whose `cause` is this error.
 */
export class DecodeError extends Error {
  static {
    brandError(this, 'DecodeError');
  }
  override name = 'DecodeError';
  /** Byte offset in the buffer being decoded where the problem was found, when known. */
  readonly offset: number | undefined;
  constructor(message: string, options: { offset?: number; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.offset = options.offset;
  }
}

/**
 * Input refused before any byte was sent: an invalid path, data over the frame limit, a
 * version below -1, an empty ACL list, a negative timeout, a flag where it does not apply.
 */
export class InvalidArgumentError extends TypeError {
  static {
    brandError(this, 'InvalidArgumentError');
  }
  override name = 'InvalidArgumentError';
  /** The argument that was refused (`'path'`, `'version'`, `'acl'`, ...). */
  readonly argument: string;
  constructor(argument: string, message: string) {
    super(`${argument}: ${message}`);
    this.argument = argument;
  }
}

/**
 * A frame over the client's `maxFrameSize` (ZooKeeper's `jute.maxbuffer`): on the way out the
 * request is refused before sending; on the way in only the request whose reply it was fails
 * (the frame's bytes are skipped and the connection stays up). The message names the option
 * and a size that would do: `connect(hosts, { maxFrameSize })`. A larger request must also fit
 * the servers' own `jute.maxbuffer` (default 1 MiB), or the server closes the connection.
 */
export class PacketTooLargeError extends Error {
  static {
    brandError(this, 'PacketTooLargeError');
  }
  override name = 'PacketTooLargeError';
  /** The frame's length in bytes. */
  readonly size: number;
  /** The limit it exceeded: the client's `maxFrameSize`. */
  readonly limit: number;
  /** `'request'` (refused before sending) or `'reply'` (skipped on arrival), when known. */
  readonly direction: 'request' | 'reply' | undefined;
  /** The operation (`'getChildren'`, ...), when known. */
  readonly op: string | undefined;
  /** The path it concerned, when known. */
  readonly path: string | undefined;
  constructor(size: number, limit: number, options: { cause?: unknown; direction?: 'request' | 'reply' | undefined; op?: string | undefined; path?: string | undefined } = {}) {
    const { direction, op, path } = options;
    const what = `${op ? `${op}${path ? ` ${path}` : ''}: ` : ''}${direction === 'reply' ? 'the reply of' : direction === 'request' ? 'the request of' : 'a packet of'} ${size} bytes`;
    const fix = `connect with a larger maxFrameSize (e.g. { maxFrameSize: ${suggestedFrameSize(size)} })`;
    const server = direction === 'reply' ? '' : "; the servers' own jute.maxbuffer (default 1048575) must allow a request that large too";
    super(`${what} exceeds the client's maxFrameSize of ${limit} bytes (jute.maxbuffer): ${fix}${server}`, options.cause === undefined ? undefined : { cause: options.cause });
    this.size = size;
    this.limit = limit;
    this.direction = direction;
    this.op = op;
    this.path = path;
  }
}

/** A maxFrameSize that fits `size` with room to grow: the next power of two at least twice it, less one. */
function suggestedFrameSize(size: number): number {
  return 2 ** Math.ceil(Math.log2(size * 2)) - 1;
}

/** The client was closed; the call was refused or, if in flight, abandoned. */
export class ClientClosedError extends Error {
  static {
    brandError(this, 'ClientClosedError');
  }
  override name = 'ClientClosedError';
  constructor(message = 'the client is closed') {
    super(message);
  }
}

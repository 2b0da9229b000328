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
 * (the frame's bytes are skipped and the connection stays up).
 */
export class PacketTooLargeError extends Error {
  static {
    brandError(this, 'PacketTooLargeError');
  }
  override name = 'PacketTooLargeError';
  /** The frame's length in bytes. */
  readonly size: number;
  /** The limit it exceeded. */
  readonly limit: number;
  constructor(size: number, limit: number, options: { cause?: unknown } = {}) {
    super(`packet of ${size} bytes exceeds the limit of ${limit} bytes (jute.maxbuffer)`, options.cause === undefined ? undefined : { cause: options.cause });
    this.size = size;
    this.limit = limit;
  }
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

/**
 * The session handshake, the first exchange on every connection. It has no request header:
 * `len | ConnectRequest | readOnly:bool`, answered by `len | ConnectResponse | readOnly:bool`
 * (design.md §4; the trailing flag is written outside the record by Java's `ClientCnxnSocket`
 * and `ZooKeeperServer.finishSessionInit`, and servers before 3.4 omit it).
 */
import { DEFAULT_MAX_FRAME_SIZE, PROTOCOL_VERSION } from '../constants.js';
import { DecodeError, fromCode, isErrorCode, PacketTooLargeError, SessionExpiredError } from '../errors.js';
import { readConnectResponse, readReplyHeader, writeConnectRequest, type ConnectResponse } from '../jute/proto.js';
import { JuteReader } from '../jute/reader.js';
import { JuteWriter } from '../jute/writer.js';
import { setLongTimeout } from '../util/timer.js';
import { foreignProtocol, NOT_ZOOKEEPER } from './foreign.js';
import type { Transport } from './transport.js';
import { hex64 } from '../util/hex.js';

/** The session the server granted on a connection. */
export interface HandshakeResult {
  /** `resumed` when we presented a session id and the server granted that same id. */
  readonly kind: 'new' | 'resumed';
  readonly sessionId: bigint;
  /** The session password (16 bytes from a real server), needed to resume the session. */
  readonly passwd: Buffer;
  /** The negotiated session timeout, ms (the server clamps the request to its min/max). */
  readonly timeOut: number;
  /** True when the server is in read-only mode. */
  readonly readOnly: boolean;
  readonly protocolVersion: number;
}

/** What the handshake presents to the server. */
export interface HandshakeRequest {
  /** Requested session timeout, ms. */
  sessionTimeout: number;
  /** Session to resume; 0n or undefined asks for a new one. */
  sessionId?: bigint | undefined;
  /** Password of the session to resume (16 zero bytes for a new one). */
  passwd?: Buffer | undefined;
  /** The highest zxid this client has seen: a server behind it refuses us (Java `ZooKeeperServer.processConnectRequest`). */
  lastZxidSeen?: bigint | undefined;
  /** Whether a read-only server may accept us. */
  canBeReadOnly?: boolean | undefined;
}

const EMPTY_PASSWD = Buffer.alloc(16);
const noop = (): void => {};

/** Encodes the handshake frame (length included): `ConnectRequest`, then the read-only flag. */
export function encodeConnectRequest(req: HandshakeRequest): Buffer {
  const w = JuteWriter.frame(64);
  writeConnectRequest(w, {
    protocolVersion: PROTOCOL_VERSION,
    lastZxidSeen: req.lastZxidSeen ?? 0n,
    timeOut: req.sessionTimeout,
    sessionId: req.sessionId ?? 0n,
    passwd: req.passwd ?? EMPTY_PASSWD,
  });
  w.writeBool(req.canBeReadOnly ?? false);
  return w.finishFrame();
}

/**
 * Decodes the handshake reply's payload (without its length): `ConnectResponse`, then the
 * read-only flag when present. A timeout of 0 or less is the server saying the session we
 * presented has expired (Java `ClientCnxn.onConnected` treats `negotiatedSessionTimeout <= 0` the
 * same way): {@link SessionExpiredError}. A short or malformed reply, or a bare header whose error
 * field is no ZooKeeper code, is a {@link DecodeError} ("the server's handshake reply could not be
 * decoded").
 */
export function decodeConnectResponse(payload: Buffer, requestedSessionId: bigint): HandshakeResult {
  // A server that refuses to create the session may answer with a bare ReplyHeader instead
  // (16 bytes; a ConnectResponse has at least 20): a read-only server without
  // localSessionsEnabled replies NOTREADONLY to a new session.
  if (payload.length === 16) {
    const header = readReplyHeader(new JuteReader(payload));
    // Only a code ZooKeeper defines is a refusal; other bytes are not a ZooKeeper reply at all.
    if (header.err !== 0 && !isErrorCode(header.err)) throw undecodable(`a 16-byte reply whose error field, ${header.err}, is no ZooKeeper error code`);
    if (header.err !== 0) {
      const hint = header.err === -119 ? ': a read-only server creates only local sessions (localSessionsEnabled=true on the server)' : '';
      throw fromCode(header.err, { op: 'connect', cause: new DecodeError(`the server answered the handshake with error ${header.err}${hint}`) });
    }
  }
  const r = new JuteReader(payload);
  let res: ConnectResponse;
  let readOnly: boolean;
  try {
    res = readConnectResponse(r);
    readOnly = r.remaining > 0 ? r.readBool() : false;
  } catch (err) {
    throw err instanceof DecodeError ? undecodable(err.message, err) : err;
  }
  if (res.timeOut <= 0) throw new SessionExpiredError(`session 0x${hex64(requestedSessionId)} has expired`, { op: 'connect' });
  return {
    kind: requestedSessionId !== 0n && res.sessionId === requestedSessionId ? 'resumed' : 'new',
    sessionId: res.sessionId,
    passwd: res.passwd ?? EMPTY_PASSWD,
    timeOut: res.timeOut,
    readOnly,
    protocolVersion: res.protocolVersion,
  };
}

function undecodable(why: string, cause?: DecodeError): DecodeError {
  return new DecodeError(`the server's handshake reply could not be decoded: ${why}`, { ...(cause?.offset !== undefined ? { offset: cause.offset } : {}), ...(cause ? { cause } : {}) });
}

/**
 * @internal The server closed the connection without answering the handshake. ZooKeeper does so,
 * sending nothing, when it is behind the zxid we presented ("client must try another server",
 * Java `ZooKeeperServer.processConnectRequest`), when it is not serving yet, when it throttles
 * connections, or (read-only) to a client that did not allow read-only servers.
 */
export class HandshakeClosedError extends Error {
  override name = 'HandshakeClosedError';
  constructor() {
    super('the server closed the connection during the handshake (a server behind our last zxid, or one refusing clients)');
  }
}

/** The handshake reply frame and the bytes that came after it in the same reads. */
export interface HandshakeReply {
  /** The reply's payload, without its length. */
  payload: Buffer;
  /**
   * Bytes read past the reply (possibly a partial frame), for the connection's decoder. Chunks
   * that arrive later keep being appended until the caller sets its own data handler.
   */
  rest: Buffer[];
}

/**
 * Sends the handshake frame and waits for the reply frame. Rejects when the transport closes
 * first, on a negative or over-limit length, with a {@link DecodeError} "not a ZooKeeper server
 * (it answered like HTTP: ...)" when the first bytes are another protocol's (see foreign.ts),
 * after `timeoutMs` (any length; longer than 2^31-1 ms is chained), or with the signal's reason.
 * Leaves the transport's data and close handlers to the caller afterwards.
 */
export function exchangeHandshake(
  transport: Transport,
  request: Buffer,
  timeoutMs: number,
  maxFrameSize: number = DEFAULT_MAX_FRAME_SIZE,
  signal?: AbortSignal,
): Promise<HandshakeReply> {
  return new Promise((resolve, reject) => {
    let settled = false;
    let buffered: Buffer | undefined;
    const finish = (err: unknown, reply?: HandshakeReply) => {
      if (settled) return;
      settled = true;
      timer.clear();
      signal?.removeEventListener('abort', onAbort);
      const rest = reply?.rest;
      // Nothing read after the reply may be lost before the caller takes over.
      transport.onData(rest ? (chunk) => rest.push(chunk) : noop);
      if (reply) resolve(reply);
      else reject(err);
    };
    const onAbort = () => finish(signal?.reason);
    const timer = setLongTimeout(() => finish(new Error(`no handshake reply within ${Math.round(timeoutMs)} ms`)), timeoutMs);
    // A port that another service answers (HTTP, SSH, TLS, ...) is recognised by its first bytes,
    // which we would otherwise take for an absurd frame length. SSH servers speak first.
    transport.onData((chunk) => {
      buffered = buffered === undefined ? chunk : Buffer.concat([buffered, chunk]);
      const other = foreignProtocol(buffered);
      if (other !== undefined) return finish(new DecodeError(`${NOT_ZOOKEEPER} (${other})`));
      if (buffered.length < 4) return;
      const length = buffered.readInt32BE(0);
      if (length < 0) return finish(new DecodeError(`negative frame length ${length} in the handshake reply`));
      if (length > maxFrameSize) return finish(new PacketTooLargeError(length, maxFrameSize));
      if (buffered.length < 4 + length) return;
      // Copied: the payload outlives this chunk, which may be a view of a larger read.
      const payload = Buffer.from(buffered.subarray(4, 4 + length));
      finish(undefined, { payload, rest: buffered.length > 4 + length ? [buffered.subarray(4 + length)] : [] });
    });
    transport.onClose((err) => finish(err ?? new HandshakeClosedError()));
    signal?.addEventListener('abort', onAbort, { once: true });
    if (signal?.aborted) return onAbort();
    transport.write(request);
  });
}

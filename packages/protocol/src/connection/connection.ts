/**
 * One socket to one server: the handshake, then pipelined requests matched to replies in order,
 * notifications handed upward, pings and the dead-connection check, closeSession on close.
 * Any protocol violation closes the connection; every outstanding request then fails with
 * ConnectionLoss whose `cause` says why. Nothing waits forever.
 */
import type { ConnectionOptions as TlsConnectionOptions } from 'node:tls';
import { DEFAULT_MAX_FRAME_SIZE, OpCode, PROTOCOL_VERSION, Xid } from '../constants.js';
import { ConnectionLossError, DecodeError, fromCode, PacketTooLargeError, SessionExpiredError, ZooKeeperError } from '../errors.js';
import { FrameDecoder } from '../framing.js';
import { JuteReader } from '../jute/reader.js';
import { JuteWriter } from '../jute/writer.js';
import { readConnectResponse, readReplyHeader, readWatcherEvent, writeConnectRequest, type WatcherEvent } from '../jute/proto.js';
import { Liveness } from './liveness.js';
import { PendingQueue, type PendingRequest } from './pending.js';
import { dial, type Transport as Socket } from './transport.js';

/** How to open a connection. */
export interface ConnectionOptions {
  host: string;
  port: number;
  tls?: TlsConnectionOptions | undefined;
  /** Requested session timeout, ms. */
  sessionTimeout: number;
  /** Session to resume (0n or undefined for a new one). */
  sessionId?: bigint | undefined;
  passwd?: Buffer | undefined;
  lastZxidSeen?: bigint | undefined;
  canBeReadOnly?: boolean | undefined;
  /** Deadline for TCP + handshake, ms. */
  connectTimeout: number;
  maxFrameSize?: number | undefined;
  signal?: AbortSignal | undefined;
}

/** What the layer above hears from a connection. */
export interface ConnectionEvents {
  /** A watch notification, in stream order, called synchronously from the read path. */
  notification(event: WatcherEvent, zxid: bigint): void;
  /** The connection ended (exactly once); `reason` is undefined after a requested close. */
  close(reason: Error | undefined): void;
}

/** The session the server granted on this connection. */
export interface HandshakeResult {
  /** `resumed` when we presented a session id and the server accepted it. */
  readonly kind: 'new' | 'resumed';
  readonly sessionId: bigint;
  readonly passwd: Buffer;
  /** The negotiated session timeout, ms. */
  readonly timeOut: number;
  /** True when the server is in read-only mode. */
  readonly readOnly: boolean;
  readonly protocolVersion: number;
}

/** A reply: the header's zxid and error, and the body when err is 0 and a reader was given. */
export interface Reply<T> {
  readonly zxid: bigint;
  readonly err: number;
  readonly body: T | undefined;
}

const EMPTY_PASSWD = Buffer.alloc(16);

/** Encodes the handshake: `ConnectRequest` then the read-only flag outside the record (design.md §4). */
export function encodeConnectRequest(opts: ConnectionOptions): Buffer {
  const w = JuteWriter.frame(64);
  writeConnectRequest(w, {
    protocolVersion: PROTOCOL_VERSION,
    lastZxidSeen: opts.lastZxidSeen ?? 0n,
    timeOut: opts.sessionTimeout,
    sessionId: opts.sessionId ?? 0n,
    passwd: opts.passwd ?? EMPTY_PASSWD,
  });
  w.writeBool(opts.canBeReadOnly ?? false);
  return w.finishFrame();
}

/**
 * Decodes the handshake reply: `ConnectResponse`, then the read-only flag when present (servers
 * before 3.4 omit it). A timeout of 0 or less is the server saying the session we presented has
 * expired: {@link SessionExpiredError}.
 */
export function decodeConnectResponse(frame: Buffer, requestedSessionId: bigint): HandshakeResult {
  // A server that refuses to create the session may answer with a bare ReplyHeader instead
  // (16 bytes; a ConnectResponse has at least 20): a read-only server without
  // localSessionsEnabled replies NOTREADONLY to a new session.
  if (frame.length === 16) {
    const header = readReplyHeader(new JuteReader(frame));
    if (header.err !== 0) {
      const hint = header.err === -119 ? ': a read-only server creates only local sessions (localSessionsEnabled=true on the server)' : '';
      throw fromCode(header.err, { op: 'connect', cause: new DecodeError(`the server answered the handshake with error ${header.err}${hint}`) });
    }
  }
  const r = new JuteReader(frame);
  const res = readConnectResponse(r);
  const readOnly = r.remaining > 0 ? r.readBool() : false;
  if (res.timeOut <= 0) throw new SessionExpiredError(`session 0x${requestedSessionId.toString(16)} has expired`, { op: 'connect' });
  return {
    kind: requestedSessionId !== 0n && res.sessionId === requestedSessionId ? 'resumed' : 'new',
    sessionId: res.sessionId,
    passwd: res.passwd ?? EMPTY_PASSWD,
    timeOut: res.timeOut,
    readOnly,
    protocolVersion: res.protocolVersion,
  };
}

/** One connection to one server. */
export class Connection {
  readonly #socket: Socket;
  readonly #events: ConnectionEvents;
  readonly #maxFrame: number;
  readonly #pending = new PendingQueue();
  readonly #decoder: FrameDecoder;
  readonly #liveness: Liveness;
  #session: HandshakeResult;
  #lastZxid: bigint;
  #closed = false;
  #corked = false;
  #closing: Promise<void> | undefined;

  /**
   * Dials, performs the handshake and resolves with a ready connection. Rejects with
   * SessionExpiredError when the server reports the presented session expired, otherwise with
   * ConnectionLoss (cause: what went wrong), within `connectTimeout`.
   */
  static async open(opts: ConnectionOptions, events: ConnectionEvents): Promise<Connection> {
    const deadline = performance.now() + opts.connectTimeout;
    const socket = await dial({ host: opts.host, port: opts.port, tls: opts.tls, connectTimeout: opts.connectTimeout, signal: opts.signal });
    try {
      const frame = await handshake(socket, encodeConnectRequest(opts), Math.max(1, deadline - performance.now()), opts);
      const session = decodeConnectResponse(frame.payload, opts.sessionId ?? 0n);
      return new Connection(socket, events, session, opts, frame.rest);
    } catch (err) {
      socket.destroy();
      if (err instanceof ZooKeeperError) throw err;
      if (opts.signal?.aborted && err === opts.signal.reason) throw err;
      throw new ConnectionLossError(`handshake with ${opts.host}:${opts.port} failed: ${(err as Error)?.message}`, { cause: err });
    }
  }

  private constructor(socket: Socket, events: ConnectionEvents, session: HandshakeResult, opts: ConnectionOptions, rest: Buffer[]) {
    this.#socket = socket;
    this.#events = events;
    this.#session = session;
    this.#lastZxid = opts.lastZxidSeen ?? 0n;
    this.#maxFrame = opts.maxFrameSize ?? DEFAULT_MAX_FRAME_SIZE;
    this.#decoder = new FrameDecoder({ frame: (f) => this.#onFrame(f), oversize: (len, header) => this.#onOversize(len, header) }, this.#maxFrame);
    this.#liveness = new Liveness({ sendPing: () => this.#ping(), onDead: (idle) => this.#fail(new ConnectionLossError(`no reply from ${opts.host}:${opts.port} for ${Math.round(idle)} ms`)) }, session.timeOut);
    socket.on('data', (chunk: Buffer) => this.#onData(chunk));
    socket.on('error', (err) => this.#fail(new ConnectionLossError(`socket error: ${err.message}`, { cause: err })));
    socket.on('close', () =>
      this.#fail(
        this.#decoder.idle
          ? new ConnectionLossError(`connection to ${opts.host}:${opts.port} closed by the server`)
          : new DecodeError(`connection to ${opts.host}:${opts.port} closed inside a frame`),
      ),
    );
    // Bytes that came with the handshake reply are decoded once open() has handed this
    // connection over, so a failure they cause reaches a listener that knows the connection.
    if (rest.length > 0) setImmediate(() => rest.forEach((chunk) => this.#onData(chunk)));
  }

  /** The session granted by the handshake. */
  get session(): HandshakeResult {
    return this.#session;
  }
  /** The highest zxid seen in a reply header. */
  get lastZxid(): bigint {
    return this.#lastZxid;
  }
  /** Requests waiting for their reply. */
  get pendingCount(): number {
    return this.#pending.size;
  }
  /** True once closed or failed. */
  get closed(): boolean {
    return this.#closed;
  }

  /**
   * Sends a request. Resolves with the reply (whatever its error code); rejects with
   * ConnectionLoss if the connection ends first, or PacketTooLarge if the request (before
   * sending) or its reply is over the frame limit.
   */
  request<T>(type: number, write: ((w: JuteWriter) => void) | undefined, read: ((r: JuteReader) => T) | undefined, options?: { xid?: number }): Promise<Reply<T>> {
    if (this.#closed) return Promise.reject(new ConnectionLossError('connection closed'));
    const w = JuteWriter.frame();
    try {
      w.writeInt(options?.xid ?? 0).writeInt(type);
      if (write) write(w);
    } catch (err) {
      return Promise.reject(err);
    }
    const frame = w.finishFrame();
    if (frame.length - 4 > this.#maxFrame) return Promise.reject(new PacketTooLargeError(frame.length - 4, this.#maxFrame));
    // The xid is taken only for a request that will be sent, and patched in place.
    const xid = options?.xid ?? this.#pending.nextXid();
    frame.writeInt32BE(xid, 4);
    return new Promise<Reply<T>>((resolve, reject) => {
      this.#pending.push({ xid, type, read, settle: (err, value) => (err === undefined ? resolve(value as Reply<T>) : reject(err)) });
      this.#write(frame);
    });
  }

  /**
   * Ends the session: closeSession, its reply awaited for at most `timeoutMs`, then the socket.
   * Outstanding requests fail with ConnectionLoss. Idempotent.
   */
  close(timeoutMs = 2000): Promise<void> {
    this.#closing ??= (async () => {
      if (this.#closed) return;
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs)));
      await Promise.race([this.request(OpCode.closeSession, undefined, undefined).then(() => undefined, () => undefined), timeout]);
      clearTimeout(timer);
      this.#shutdown(undefined);
      // Half-close, then let go of the socket once our FIN is out: a server that never closes
      // its side must not keep the handle (and the event loop) alive.
      this.#socket.end(() => this.#socket.destroy());
    })();
    return this.#closing;
  }

  /** Drops the connection at once (no closeSession): outstanding requests fail with ConnectionLoss. */
  destroy(reason?: Error): void {
    this.#fail(reason ?? new ConnectionLossError('connection destroyed'));
  }

  // Writes issued in the same tick leave in one syscall: cork now, uncork on the next tick.
  #write(frame: Buffer): void {
    if (!this.#corked) {
      this.#corked = true;
      this.#socket.cork();
      process.nextTick(() => {
        this.#corked = false;
        this.#socket.uncork();
      });
    }
    this.#socket.write(frame);
    this.#liveness.sent();
  }

  #ping(): void {
    if (this.#closed) return;
    const w = JuteWriter.frame(16);
    w.writeInt(Xid.ping).writeInt(OpCode.ping);
    this.#pending.push({ xid: Xid.ping, type: OpCode.ping, read: undefined, settle: () => {} });
    this.#write(w.finishFrame());
  }

  #onData(chunk: Buffer): void {
    if (this.#closed) return;
    this.#liveness.received();
    try {
      this.#decoder.push(chunk);
    } catch (err) {
      this.#fail(err instanceof Error ? err : new DecodeError(String(err)));
    }
  }

  #onFrame(frame: Buffer): void {
    if (this.#closed) return;
    const r = new JuteReader(frame);
    const xid = r.readInt();
    const zxid = r.readLong();
    const err = r.readInt();
    // lastZxid moves only with a reply matched to a request (as in the Java client): a stray or
    // garbage frame must not make every server refuse our next handshake, and pings and
    // notifications do not count.
    if (xid === Xid.notification) {
      this.#events.notification(readWatcherEvent(r), zxid);
      return;
    }
    if (xid === Xid.ping || xid === Xid.auth) {
      const req = this.#pending.shiftSide(xid);
      if (!req) throw new DecodeError(`unexpected reply with xid ${xid}`);
      req.settle(undefined, { zxid, err, body: undefined });
      return;
    }
    const req = this.#pending.peek();
    if (!req || req.xid !== xid) {
      throw new DecodeError(req ? `reply xid ${xid} does not match the oldest outstanding request (xid ${req.xid})` : `reply xid ${xid} with no request outstanding`);
    }
    this.#pending.shift();
    if (zxid > this.#lastZxid) this.#lastZxid = zxid;
    let body: unknown;
    if (err === 0 && req.read) {
      try {
        body = req.read(r);
      } catch (e) {
        // A reply we cannot decode: fail its request with the reason, then the connection.
        req.settle(new ConnectionLossError(`undecodable reply to xid ${xid}: ${(e as Error).message}`, { cause: e }));
        throw e;
      }
    }
    req.settle(undefined, { zxid, err, body });
  }

  // A reply over the frame limit: fail the request it answers, skip its bytes, stay connected.
  #onOversize(length: number, header: Buffer): void {
    const xid = header.length >= 4 ? header.readInt32BE(0) : undefined;
    const req = this.#pending.peek();
    if (req && (xid === undefined || xid === req.xid)) {
      this.#pending.shift();
      req.settle(new PacketTooLargeError(length, this.#maxFrame));
    } else {
      this.#fail(new PacketTooLargeError(length, this.#maxFrame));
    }
  }

  #fail(reason: Error): void {
    if (this.#closed) return;
    this.#shutdown(reason);
    this.#socket.destroy();
  }

  #shutdown(reason: Error | undefined): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#liveness.stop();
    const loss = reason instanceof ConnectionLossError ? reason : new ConnectionLossError(reason ? `connection closed: ${reason.message}` : 'connection closed', { cause: reason });
    this.#pending.failAll((req: PendingRequest) => (req.xid === Xid.ping ? undefined : loss));
    this.#events.close(reason);
  }
}

/**
 * Waits for the first frame (the ConnectResponse); returns it and the raw bytes that followed it
 * in the same reads (possibly a partial frame), for the connection's decoder to continue from.
 */
function handshake(socket: Socket, request: Buffer, timeoutMs: number, opts: ConnectionOptions): Promise<{ payload: Buffer; rest: Buffer[] }> {
  const max = opts.maxFrameSize ?? DEFAULT_MAX_FRAME_SIZE;
  return new Promise((resolve, reject) => {
    let buffered: Buffer = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      buffered = buffered.length === 0 ? chunk : Buffer.concat([buffered, chunk]);
      if (buffered.length < 4) return;
      const length = buffered.readInt32BE(0);
      if (length < 0) return finish(new DecodeError(`negative frame length ${length} in the handshake reply`));
      if (length > max) return finish(new PacketTooLargeError(length, max));
      if (buffered.length < 4 + length) return;
      const payload = Buffer.from(buffered.subarray(4, 4 + length));
      const rest = buffered.length > 4 + length ? [buffered.subarray(4 + length)] : [];
      finish(undefined, { payload, rest });
    };
    const onClose = () => finish(new Error('the server closed the connection during the handshake (a server behind our last zxid, or one refusing clients)'));
    const onError = (err: Error) => finish(err);
    const onAbort = () => finish(opts.signal?.reason);
    const timer = setTimeout(() => finish(new Error(`no handshake reply within ${Math.round(timeoutMs)} ms`)), timeoutMs);
    function finish(err: unknown, result?: { payload: Buffer; rest: Buffer[] }): void {
      clearTimeout(timer);
      socket.off('data', onData);
      socket.off('close', onClose);
      socket.off('error', onError);
      opts.signal?.removeEventListener('abort', onAbort);
      if (result) resolve(result);
      else reject(err);
    }
    socket.on('data', onData);
    socket.once('close', onClose);
    socket.once('error', onError);
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    socket.write(request);
  });
}

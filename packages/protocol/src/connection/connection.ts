/**
 * One socket to one server: the handshake, then pipelined requests matched to replies in order
 * (a tick's watch-less reads as one multiRead), notifications handed upward, pings and the
 * dead-connection check, closeSession on close. What it must learn of its server first, and the
 * requests held meanwhile, are probes.ts's; its types, options.ts's.
 * Any protocol violation closes the connection; every outstanding request then fails with
 * ConnectionLoss whose `cause` says why. Nothing waits forever.
 */
import { DEFAULT_MAX_FRAME_SIZE, OpCode, Xid } from '../constants.js';
import { ConnectionLossError, DecodeError, ErrorCode, PacketTooLargeError, SessionClosedRequireSaslAuthError, ZooKeeperError } from '../errors.js';
import { FrameDecoder } from '../framing.js';
import { JuteReader } from '../jute/reader.js';
import { JuteWriter } from '../jute/writer.js';
import { readWatcherEvent } from '../jute/proto.js';
import { HeardLog } from './heard-log.js';
import { decodeConnectResponse, encodeConnectRequest, exchangeHandshake, type HandshakeResult } from './handshake.js';
import { MAX_COALESCED_READS, ReadBatch, writeReadBatch, type QueuedRead } from './coalesce.js';
import { SINCE_VERSION, type ServerGeneration } from './generation.js';
import { Liveness } from './liveness.js';
import { LargeRequests } from './oversize.js';
import type { ConnectionEvents, ConnectionOptions, RequestOptions } from './options.js';
import { PendingQueue, type Reply, type WireTrace } from './pending.js';
import { Probes } from './probes.js';
import { dial, type Transport } from './transport.js';

export type { HandshakeResult } from './handshake.js';
export type { Reply } from './pending.js';
export type { ConnectionEvents, ConnectionOptions, RequestOptions } from './options.js';

const noop = (): void => {};

/** One connection to one server. */
export class Connection {
  readonly #transport: Transport;
  readonly #events: ConnectionEvents;
  readonly #where: string;
  readonly #maxFrame: number;
  /** The newest request unanswered so far that is larger than a server takes by default (jute.maxbuffer). */
  readonly #largeSent = new LargeRequests();
  readonly #pending = new PendingQueue();
  readonly #decoder: FrameDecoder;
  readonly #liveness: Liveness;
  readonly #session: HandshakeResult;
  #lastZxid: bigint;
  /** Send time (performance.now()) of the newest request or ping answered on this connection. */
  #lastHeard = -Infinity;
  #lastHeardAt = -Infinity;
  /** Which requests were answered by when, for the quorum proof (heard-log.ts). */
  readonly #heardLog: HeardLog;
  #closed = false;
  #closing: Promise<void> | undefined;
  /** Chunks held back until open() has returned (see the constructor). */
  #deferred: Buffer[] | undefined;
  /** The generation and multiRead probes, and the requests held while one is out. */
  readonly #probes: Probes;
  /** Reads of this tick waiting to leave as one batch (coalesceReads, or to trigger the probe). */
  #reads: QueuedRead[] | undefined;
  /** End of the tick: the batch leaves through the transport at once (see {@link Transport.writeNow}). */
  readonly #flushReads = () => this.#sendReads(true);

  /**
   * Dials, performs the handshake and resolves with a ready connection, within `connectTimeout`.
   * Rejects with SessionExpiredError when the server reports the presented session expired, with
   * the typed error of a handshake refused with an error code, with the signal's reason when
   * aborted, otherwise with ConnectionLoss (cause: what went wrong).
   */
  static async open(opts: ConnectionOptions, events: ConnectionEvents): Promise<Connection> {
    const deadline = performance.now() + opts.connectTimeout;
    const where = opts.address === undefined || opts.address === opts.host ? `${opts.host}:${opts.port}` : `${opts.host}:${opts.port} (${opts.address})`;
    const transport = await (opts.dial ?? dial)({ host: opts.host, address: opts.address, port: opts.port, tls: opts.tls, connectTimeout: opts.connectTimeout, signal: opts.signal });
    try {
      const timeLeft = Math.max(1, deadline - performance.now());
      const reply = await exchangeHandshake(transport, encodeConnectRequest(opts), timeLeft, opts.maxFrameSize ?? DEFAULT_MAX_FRAME_SIZE, opts.signal);
      const session = decodeConnectResponse(reply.payload, opts.sessionId ?? 0n);
      return new Connection(transport, events, session, opts, where, reply.rest);
    } catch (err) {
      transport.destroy();
      if (err instanceof ZooKeeperError) throw err;
      if (opts.signal?.aborted && err === opts.signal.reason) throw err;
      throw new ConnectionLossError(`handshake with ${where} failed: ${(err as Error)?.message}`, { cause: err });
    }
  }

  private constructor(transport: Transport, events: ConnectionEvents, session: HandshakeResult, opts: ConnectionOptions, where: string, rest: Buffer[]) {
    this.#transport = transport;
    this.#events = events;
    this.#session = session;
    this.#where = where;
    this.#lastZxid = opts.lastZxidSeen ?? 0n;
    this.#heardLog = new HeardLog(session.timeOut);
    this.#maxFrame = opts.maxFrameSize ?? DEFAULT_MAX_FRAME_SIZE;
    this.#probes = new Probes(
      {
        send: (type, write, read, resolve, reject) => this.#send(type, write, read, resolve, reject),
        request: (type, write, read, options) => this.request(type, write, read, options),
        sendReads: () => this.#sendReads(),
        pendingSize: () => this.#pending.size,
        closed: () => this.#closed,
        lastZxid: () => this.#lastZxid,
        fail: (reason) => this.#fail(reason),
        noMultiRead: () => this.#events.noMultiRead?.(),
      },
      opts,
      `${opts.address ?? opts.host}:${opts.port}`,
      where,
    );
    // A coalesced batch's reply may be as large as its reads' replies together. The limit is
    // asked when a frame's length arrives; a notification coming just before that reply gets
    // the same allowance, which is harmless. Asked on every connection, since coalescing may be
    // switched on after the multiRead probe.
    const limit = () => this.#pending.peek()?.maxReply ?? this.#maxFrame;
    this.#decoder = new FrameDecoder({ frame: (f) => this.#onFrame(f), oversize: (len, header) => this.#onOversize(len, header) }, limit);
    this.#liveness = new Liveness(
      { sendPing: () => this.#ping(), onDead: (idle) => this.#fail(new ConnectionLossError(`no reply from ${where} for ${Math.round(idle)} ms`)) },
      session.timeOut,
    );
    // Bytes that came with (or right after) the handshake reply are decoded once open() has
    // handed this connection over, so a failure they cause reaches an owner that knows the
    // connection. Chunks arriving meanwhile queue behind them, keeping stream order.
    if (rest.length > 0) {
      this.#deferred = rest;
      setImmediate(() => {
        const chunks = this.#deferred ?? [];
        this.#deferred = undefined;
        for (const chunk of chunks) this.#onData(chunk);
      });
    }
    transport.onData((chunk) => (this.#deferred ? this.#deferred.push(chunk) : this.#onData(chunk)));
    // Registered after the deferred delivery above: a transport already closed calls back on a
    // later turn, after those bytes.
    // (After a requested close there is nothing to report: no error is built.)
    transport.onClose((err) =>
      this.#closed ||
      this.#fail(
        err
          ? new ConnectionLossError(`connection to ${where} failed: ${err.message}`, { cause: err })
          : this.#decoder.idle
            ? new ConnectionLossError(`connection to ${where} closed by the server${this.#largeSent.hint()}`)
            : new DecodeError(`connection to ${where} closed inside a frame`),
      ),
    );
  }

  /**
   * Sends the generation probe (with `probeGeneration`; once, later calls do nothing). The owner
   * calls it after SASL, which must come first on a connection: a server answers SASL packets
   * at once, outside its request pipeline, so a request sent before them would be answered out
   * of order. Until it is answered, operations a 3.4 server lacks are held.
   */
  startGenerationProbe(): void {
    this.#probes.startGenerationProbe();
  }

  /** The session granted by the handshake. */
  get session(): HandshakeResult {
    return this.#session;
  }
  /** The highest zxid seen in the header of a reply matched to a request (notifications and pings do not count, as in Java's `ClientCnxn`). */
  get lastZxid(): bigint {
    return this.#lastZxid;
  }
  /**
   * When the server last provably heard us on this connection: the send time (performance.now())
   * of the newest request or ping it answered; -Infinity before the first reply. The handshake
   * does not count: a server that completes handshakes and then answers nothing is not healthy.
   */
  get lastHeard(): number {
    return this.#lastHeard;
  }
  /**
   * The send time of the newest request this connection's server had answered by `t` (a
   * performance.now() time), about a {@link HeardLog} grain late at most; -Infinity when none.
   */
  heardBy(t: number): number {
    return this.#heardLog.newestBy(t);
  }
  /** When the oldest reply to a request sent after `sentAfter` arrived (see {@link HeardLog.firstAnsweredAfter}); Infinity when none. */
  answeredAfter(sentAfter: number): number {
    return this.#heardLog.firstAnsweredAfter(sentAfter);
  }
  /** When the reply that set {@link lastHeard} arrived (performance.now()); -Infinity before the first. */
  get lastHeardAt(): number {
    return this.#lastHeardAt;
  }
  /** Requests waiting for their reply (pings included). */
  get pendingCount(): number {
    return this.#pending.size;
  }
  /** True once closed or failed. */
  get closed(): boolean {
    return this.#closed;
  }

  /**
   * Sends a request: header `{xid, type}` then what `write` adds. Resolves with the reply whatever
   * its error code (the body is read with `read` only when err is 0). Rejects with ConnectionLoss
   * if the connection ends first, with PacketTooLarge if the request (before sending) or its reply
   * is over the frame limit, or with what `write` threw (nothing sent). `options.xid` sends with a
   * reserved xid (auth -4 is answered out of band; setWatches -8 in order). `options.coalesce`
   * marks a watch-less getData or getChildren that may share a multiRead with the other reads
   * of this tick, when the connection was opened with `coalesceReads`.
   *
   * With `coalesceReads: 'probe'`, the first tick with two such reads starts the probe: those
   * reads and every request made after them are held, in order; once every request already
   * sent is answered, a multiRead of no ops goes out alone, with nothing behind it (a 3.5 server
   * answers it with Unimplemented and closes the connection, losing whatever follows). Answered
   * with an empty result, the connection coalesces from then on and the held requests leave;
   * refused, the connection closes and they fail with ConnectionLoss marked `notSent` (they
   * never left: sending them again is safe).
   */
  request<T>(type: number, write: ((w: JuteWriter) => void) | undefined, read: ((r: JuteReader) => T) | undefined, options?: RequestOptions): Promise<Reply<T>> {
    if (this.#closed) return Promise.reject(new ConnectionLossError(`connection to ${this.#where} closed`));
    const held = this.#probes.hold(type, write, read, options);
    if (held !== undefined) return held;
    if (options?.coalesce && this.#probes.batching) {
      return new Promise<Reply<T>>((resolve, reject) => {
        const q: QueuedRead = { type, write, read, trace: options.trace, resolve: resolve as (reply: Reply<unknown>) => void, reject };
        const reads = this.#reads;
        if (reads === undefined) {
          this.#reads = [q];
          process.nextTick(this.#flushReads);
        } else if (reads.push(q) >= MAX_COALESCED_READS) {
          this.#sendReads();
        }
      });
    }
    // Reads queued earlier in this tick leave first: the server answers in the order it receives.
    if (this.#reads !== undefined) this.#sendReads();
    return new Promise<Reply<T>>((resolve, reject) => this.#send(type, write, read, resolve as (reply: Reply<unknown>) => void, reject, options?.xid, options?.trace));
  }

  /**
   * Ends the session: closeSession, its reply awaited for at most `timeoutMs`, then the socket.
   * Outstanding requests fail with ConnectionLoss; the close event reports no reason. Idempotent;
   * after a failure it resolves without sending anything.
   */
  close(timeoutMs = 2000): Promise<void> {
    this.#closing ??= (async () => {
      if (this.#closed) return;
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs)));
      await Promise.race([this.request(OpCode.closeSession, undefined, undefined).then(noop, noop), timeout]);
      clearTimeout(timer);
      this.#shutdown(undefined);
      this.#transport.end();
    })();
    return this.#closing;
  }

  /** The server's generation: `'legacy'` (3.4) or `'modern'` (3.5+); undefined until the probe is answered. */
  get generation(): ServerGeneration | undefined {
    return this.#probes.generation;
  }

  /** Resolves with the server's generation once known; rejects with ConnectionLoss if the connection ends first. */
  generationKnown(): Promise<ServerGeneration> {
    return this.#probes.generationKnown();
  }

  /** Whether reads marked `coalesce` are batched on this connection. */
  get coalescing(): boolean {
    return this.#probes.coalescing;
  }

  /**
   * Whether a request made now (a read marked `coalesce` or not) may be held for the multiRead
   * or the generation probe, and so may fail as never sent (see {@link request}).
   */
  mayHold(coalesce: boolean): boolean {
    return this.#probes.mayHold(coalesce);
  }

  /**
   * Sends a ping now and resolves when it is answered (rejects with ConnectionLoss when the
   * connection ends first): proof that the server serves this connection.
   */
  ping(): Promise<void> {
    if (this.#closed) return Promise.reject(new ConnectionLossError(`connection to ${this.#where} closed`));
    return new Promise<void>((resolve, reject) => this.#writePing(() => resolve(), reject));
  }

  /** Drops the connection at once (no closeSession): outstanding requests fail with ConnectionLoss caused by `reason`. */
  destroy(reason?: Error): void {
    this.#fail(reason ?? new ConnectionLossError(`connection to ${this.#where} destroyed`));
  }

  // Serialises one request, takes its xid (only for a request that will be sent; patched in
  // place) and queues it for the next write.
  // `now`: written at once (Transport.writeNow), by a caller at the end of its tick.
  #send(type: number, write: ((w: JuteWriter) => void) | undefined, read: ((r: JuteReader) => unknown) | undefined, resolve: (reply: Reply<unknown>) => void, reject: (err: unknown) => void, fixedXid?: number, trace?: WireTrace, now = false): void {
    const w = JuteWriter.frame();
    try {
      w.writeInt(fixedXid ?? 0).writeInt(type);
      if (write) write(w);
    } catch (err) {
      reject(err);
      return;
    }
    const frame = w.finishFrame();
    if (frame.length - 4 > this.#maxFrame) {
      reject(new PacketTooLargeError(frame.length - 4, this.#maxFrame, { direction: 'request' }));
      return;
    }
    const xid = fixedXid ?? this.#pending.nextXid();
    if (fixedXid === undefined) frame.writeInt32BE(xid, 4);
    this.#largeSent.sent(xid, frame.length - 4);
    const sentAt = this.#liveness.sent();
    if (trace === undefined) this.#pending.push({ xid, type, read, resolve, reject, sentAt });
    else {
      trace.xid = xid;
      trace.requestBytes = frame.length;
      this.#pending.push({ xid, type, read, resolve, reject, sentAt, trace });
    }
    this.#write(frame, now);
  }

  #write(frame: Buffer, now: boolean): void {
    const transport = this.#transport;
    if (now && transport.writeNow !== undefined) transport.writeNow(frame);
    else transport.write(frame);
  }

  // Writes this tick's coalesced reads: one alone as itself, several as one multiRead. Should the
  // batch not encode or not fit in a frame, each read goes alone, in the same order. Several
  // before the server's multiRead is known start the probe (see request). `endOfTick`: called
  // from the tick's flush, nothing more will join this tick's writes: they leave at once
  // rather than one more tick later (a lone read at one outstanding waited two ticks).
  #sendReads(endOfTick = false): void {
    const reads = this.#reads;
    if (reads === undefined) return;
    this.#reads = undefined;
    if (reads.length > 1 && this.#probes.holdForMultiRead(reads)) return;
    if (reads.length > 1) {
      const w = JuteWriter.frame(32 + reads.length * 48);
      let frame: Buffer | undefined;
      try {
        w.writeInt(0).writeInt(OpCode.multiRead);
        writeReadBatch(w, reads);
        frame = w.finishFrame();
      } catch {
        frame = undefined;
      }
      if (frame !== undefined && frame.length - 4 <= this.#maxFrame) {
        const xid = this.#pending.nextXid();
        frame.writeInt32BE(xid, 4);
        this.#pending.push(new ReadBatch(xid, reads, this.#maxFrame, this.#liveness.sent(), frame.length));
        this.#write(frame, endOfTick);
        return;
      }
    }
    const last = reads.length - 1;
    for (let i = 0; i <= last; i++) {
      const q = reads[i]!;
      this.#send(q.type, q.write, q.read, q.resolve, q.reject, undefined, q.trace, endOfTick && i === last);
    }
  }

  #ping(): void {
    if (!this.#closed) this.#writePing(noop, noop);
  }

  #writePing(resolve: () => void, reject: (err: unknown) => void): void {
    const w = JuteWriter.frame(8);
    w.writeInt(Xid.ping).writeInt(OpCode.ping);
    this.#pending.push({ xid: Xid.ping, type: OpCode.ping, read: undefined, resolve, reject, sentAt: performance.now() });
    this.#transport.write(w.finishFrame());
  }

  // A reply to a request written at `sentAt`: the server heard us no earlier than that.
  #heard(sentAt: number): void {
    if (sentAt > this.#lastHeard) {
      this.#lastHeard = sentAt;
      this.#lastHeardAt = performance.now();
      this.#heardLog.note(sentAt, this.#lastHeardAt);
    }
    this.#liveness.received();
  }

  #onData(chunk: Buffer): void {
    if (this.#closed) return;
    try {
      this.#decoder.push(chunk);
    } catch (err) {
      this.#fail(err instanceof Error ? err : new DecodeError(String(err)));
    }
  }

  // Throws (DecodeError) on anything but a well-formed, expected frame; #onData closes the connection.
  #onFrame(frame: Buffer): void {
    if (this.#closed) return;
    const r = new JuteReader(frame);
    const xid = r.readInt();
    const zxid = r.readLong();
    const err = r.readInt();
    if (xid === Xid.notification) {
      this.#events.notification(readWatcherEvent(r), zxid);
      return;
    }
    if (err === ErrorCode.SESSIONCLOSEDREQUIRESASLAUTH) {
      // A server that requires SASL answers the first other request (a ping too) of a connection
      // without it so, then closes the connection (AuthenticationHelper.enforceAuthentication,
      // 3.6+): every request, this one included, fails with the error that says what to do.
      this.#fail(new SessionClosedRequireSaslAuthError());
      return;
    }
    if (xid === Xid.ping || xid === Xid.auth) {
      // Answered on arrival by the server, outside the request pipeline (Java `ClientCnxn.readResponse`
      // handles both before looking at its pending queue, and never queues them there).
      const req = this.#pending.shiftSide(xid);
      if (!req) throw new DecodeError(`unexpected reply with xid ${xid}`);
      this.#heard(req.sentAt);
      req.resolve({ zxid, err, body: undefined });
      this.#probes.answered();
      return;
    }
    const req = this.#pending.peek();
    if (!req || req.xid !== xid) {
      throw new DecodeError(req ? `reply xid ${xid} does not match the oldest outstanding request (xid ${req.xid})` : `reply xid ${xid} with no request outstanding`);
    }
    this.#pending.shift();
    if (req.trace !== undefined) req.trace.replyBytes = frame.length + 4;
    this.#largeSent.answered(xid);
    this.#heard(req.sentAt);
    // lastZxid moves only with a reply matched to a request: a stray or garbage frame must not
    // make every server refuse our next handshake.
    if (zxid > this.#lastZxid) this.#lastZxid = zxid;
    // An operation this server should have, refused: it is not what was remembered (replaced by
    // an older one at the same address). The next connection probes it again.
    if (err === ErrorCode.UNIMPLEMENTED && SINCE_VERSION.has(req.type)) this.#probes.forgetGeneration();
    let body: unknown;
    if (err === 0 && req.read) {
      try {
        body = req.read(r);
      } catch (e) {
        // A reply we cannot decode: fail its request with the reason, then the connection.
        req.reject(new ConnectionLossError(`undecodable reply to xid ${xid}: ${(e as Error).message}`, { cause: e }));
        throw e;
      }
    }
    req.resolve({ zxid, err, body });
    this.#probes.answered();
  }

  // A reply over the frame limit: fail the request it answers, skip its bytes, stay connected.
  // Replies come in order, so it answers the oldest request; its xid, when it came with the
  // length, must agree.
  #onOversize(length: number, header: Buffer): void {
    const xid = header.length >= 4 ? header.readInt32BE(0) : undefined;
    const req = this.#pending.peek();
    if (req && (xid === undefined || xid === req.xid)) {
      this.#pending.shift();
      req.reject(new PacketTooLargeError(length, this.#maxFrame, { direction: 'reply' }));
      this.#probes.answered();
    } else {
      this.#fail(new PacketTooLargeError(length, this.#maxFrame, { direction: 'reply' }));
    }
  }

  #fail(reason: Error): void {
    if (this.#closed) return;
    this.#shutdown(reason);
    this.#transport.destroy();
  }

  #shutdown(reason: Error | undefined): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#deferred = undefined;
    this.#liveness.stop();
    const reads = this.#reads ?? [];
    this.#reads = undefined;
    // Built only when something is outstanding: an Error's stack costs tens of µs, a good part
    // of a connect+close cycle.
    let loss: ConnectionLossError | SessionClosedRequireSaslAuthError | undefined;
    const lossError = () =>
      (loss ??=
        reason instanceof ConnectionLossError || reason instanceof SessionClosedRequireSaslAuthError
          ? reason
          : new ConnectionLossError(reason ? `connection to ${this.#where} closed: ${reason.message}` : `connection to ${this.#where} closed`, { cause: reason }));
    this.#pending.failAll(lossError);
    for (const q of reads) q.reject(lossError());
    this.#probes.shutdown(reason, lossError);
    this.#events.close(reason);
  }
}

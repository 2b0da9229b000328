/**
 * A scripted fake ZooKeeper server for unit tests (node:net on 127.0.0.1, OS-chosen port): it answers
 * the handshake as told, then the test writes each reply, notification or raw byte itself. Requests
 * are parsed with plain Buffer reads and kept for assertions; replies are built with the independent
 * `Bytes` builder. Not part of the package's public surface.
 */
import { createServer, type Server, type Socket } from 'node:net';
import { FrameDecoder } from '../framing.js';
import { bytes } from './bytes.js';

/** The handshake as the client sent it: `ConnectRequest`, then the read-only flag (undefined when absent). */
export interface FakeConnectRequest {
  readonly protocolVersion: number;
  readonly timeOut: number;
  readonly lastZxidSeen: bigint;
  readonly sessionId: bigint;
  readonly passwd: Buffer;
  readonly readOnly: boolean | undefined;
}

/** One request as the client sent it: the RequestHeader and the body bytes after it. */
export type FakeRequest = { readonly xid: number; readonly type: number; readonly body: Buffer };

/**
 * How to answer the handshake: a ConnectResponse (timeOut 0 tells the client its session expired;
 * `readOnly: null` omits the flag as pre-3.4 servers do; `trailer` is written in the same write,
 * right after the response), or close the socket, or never answer.
 */
export type FakeHandshake =
  | { timeOut: number; sessionId: bigint; passwd?: Buffer; readOnly?: boolean | null; trailer?: Buffer }
  | 'close'
  | 'silent';

/** What the fake server does on its own. */
export interface FakeServerOptions {
  /** Default: resume a presented session id, else grant session 0x5eed with the requested timeout. */
  handshake?: (req: FakeConnectRequest) => FakeHandshake;
  /** Called for every request after the handshake (e.g. to answer pings); replies are otherwise scripted. */
  onRequest?: (req: FakeRequest, conn: FakeConnection) => void;
  /** Keep the server's side open after the client's FIN, as a hung server does (default false). */
  halfOpen?: boolean;
  /**
   * What the fake does with the client's multiRead probe (a multiRead of no ops, sent under
   * coalesceReads 'auto' at a connection's first tick with two reads): `'answer'` (default) answers the empty result list
   * as a 3.6+ server does; `'unimplemented'` answers Unimplemented and closes the connection, as
   * a 3.5 server does with any multiRead. Either way the probe is counted in
   * {@link FakeConnection.probes}, not kept in `requests`. `'script'`: an ordinary request.
   */
  multiRead?: 'answer' | 'unimplemented' | 'script';
  /**
   * How the fake answers the client's generation probe (`exists /zookeeper/config`, the first
   * request of every connection): `'modern'` (default) with a Stat, as a 3.5+ server does;
   * `'legacy'` with NoNode, as a 3.4 server does. Either way it is counted in
   * {@link FakeConnection.generationProbes}, not kept in `requests`. `'script'`: an ordinary request.
   */
  generation?: 'modern' | 'legacy' | 'script';
  /**
   * Where to listen (default 127.0.0.1, a port the OS chooses): another loopback address, or a
   * given port, to stand for one address of a name that resolves to several.
   */
  listen?: { host?: string; port?: number };
}

/** The body of a multiRead of no ops: the end marker `MultiHeader { type -1, done true, err -1 }`. */
const EMPTY_MULTI = bytes().int(-1).bool(true).int(-1).build();
/** The generation probe's body: ExistsRequest `{ /zookeeper/config, false }`. */
const GENERATION_PROBE = bytes().str('/zookeeper/config').bool(false).build();
/** A Stat of zeros (68 bytes). */
const ZERO_STAT = Buffer.alloc(68);

/** The session id the default handshake grants to a client that presents none. */
export const FAKE_SESSION_ID = 0x5eedn;

/** A reply frame: ReplyHeader `{xid, zxid, err}` then `body` as is. */
export function replyFrame(r: { xid: number; zxid: bigint; err: number; body?: Buffer }): Buffer {
  return bytes().int(r.xid).long(r.zxid).int(r.err).raw(r.body ?? Buffer.alloc(0)).frame();
}

/** A notification frame: xid -1, then WatcherEvent `{type, state, path}`. */
export function notificationFrame(e: { type: number; state: number; path: string | null }, zxid = -1n): Buffer {
  return bytes().int(-1).long(zxid).int(0).int(e.type).int(e.state).str(e.path).frame();
}

/** The server side of one client connection. */
export class FakeConnection {
  readonly socket: Socket;
  /** The handshake, once received. */
  connectRequest: FakeConnectRequest | undefined;
  /** Every request received after the handshake, in order (multiRead probes aside, see {@link FakeServerOptions.multiRead}). */
  readonly requests: FakeRequest[] = [];
  /** MultiRead probes received, and how many had come before them in `requests` (each entry: `requests.length` then). */
  readonly probes: number[] = [];
  /** Generation probes received (see {@link FakeServerOptions.generation}). */
  generationProbes = 0;
  /**
   * Frames that came in the same chunk as the handshake, behind it: what a client wrote without
   * waiting for the handshake's answer.
   */
  withHandshake = 0;
  /** True once the client half-closed or closed its side; `closed` once the socket closed. */
  clientEnded = false;
  closed = false;
  #cursor = 0;
  #chunk = 0;
  #handshakeChunk = -1;
  readonly #waiters = new Set<() => void>();

  constructor(socket: Socket, options: FakeServerOptions) {
    this.socket = socket;
    const decoder = new FrameDecoder({ frame: (f) => this.#onFrame(Buffer.from(f), options), oversize: () => socket.destroy() }, 64 * 1024 * 1024);
    // Bytes the fake cannot parse (a negative length, a short handshake) end the connection.
    const onData = (chunk: Buffer) => {
      this.#chunk++;
      try {
        decoder.push(chunk);
      } catch {
        socket.destroy();
      }
    };
    socket.on('data', onData);
    socket.on('end', () => ((this.clientEnded = true), this.#changed())).on('close', () => ((this.closed = true), this.#changed()));
    socket.on('error', () => {}); // the tests look at `closed`; resets are expected here
  }

  /** Resolves with `check()`'s first defined result, re-checked whenever something arrives; rejects after `timeoutMs`. */
  waitFor<T>(check: () => T | undefined, timeoutMs = 5000, what = 'condition'): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const test = () => {
        const v = check();
        if (v !== undefined) (done(), resolve(v));
      };
      const timer = setTimeout(() => (done(), reject(new Error(`fake server: no ${what} within ${timeoutMs} ms`))), timeoutMs);
      const done = () => (clearTimeout(timer), this.#waiters.delete(test));
      this.#waiters.add(test);
      test();
    });
  }

  /** The next request not yet taken by this method, in arrival order. */
  nextRequest(timeoutMs?: number): Promise<FakeRequest> {
    return this.waitFor(() => (this.#cursor < this.requests.length ? this.requests[this.#cursor++] : undefined), timeoutMs, 'request');
  }

  /** Writes buffers in one write (so they usually arrive in one chunk). */
  send = (...chunks: Buffer[]): void => void this.socket.write(Buffer.concat(chunks));

  /** Sends one reply. */
  reply = (r: { xid: number; zxid: bigint; err: number; body?: Buffer }): void => this.send(replyFrame(r));

  /** Sends one watch notification. */
  notify = (e: { type: number; state: number; path: string | null }, zxid?: bigint): void => this.send(notificationFrame(e, zxid));

  /** Closes the socket after flushing what was written. */
  end = (): void => void this.socket.end();

  #changed = (): void => [...this.#waiters].forEach((w) => w());

  #onFrame(f: Buffer, options: FakeServerOptions): void {
    if (this.connectRequest === undefined) {
      const len = f.readInt32BE(24);
      const passwd = Buffer.from(f.subarray(28, 28 + Math.max(0, len)));
      const req: FakeConnectRequest = {
        protocolVersion: f.readInt32BE(0),
        lastZxidSeen: f.readBigInt64BE(4),
        timeOut: f.readInt32BE(12),
        sessionId: f.readBigInt64BE(16),
        passwd,
        readOnly: f.length > 28 + passwd.length ? f[28 + passwd.length] !== 0 : undefined,
      };
      this.connectRequest = req;
      this.#handshakeChunk = this.#chunk;
      const action = (options.handshake ?? defaultHandshake)(req);
      if (action === 'close') this.socket.destroy();
      else if (action !== 'silent') {
        const b = bytes().int(0).int(action.timeOut).long(action.sessionId).buf(action.passwd ?? Buffer.alloc(16, 0xab));
        if (action.readOnly !== null) b.bool(action.readOnly ?? false);
        this.send(b.frame(), action.trailer ?? Buffer.alloc(0));
      }
    } else {
      if (this.#chunk === this.#handshakeChunk) this.withHandshake++;
      const req: FakeRequest = { xid: f.readInt32BE(0), type: f.readInt32BE(4), body: f.subarray(8) };
      const generation = options.generation ?? 'modern';
      if (req.type === 3 && generation !== 'script' && req.body.equals(GENERATION_PROBE)) {
        this.generationProbes++;
        this.reply(generation === 'modern' ? { xid: req.xid, zxid: 0n, err: 0, body: ZERO_STAT } : { xid: req.xid, zxid: 0n, err: -101 });
        this.#changed();
        return;
      }
      const probe = options.multiRead ?? 'answer';
      if (req.type === 22 && probe !== 'script' && req.body.equals(EMPTY_MULTI)) {
        this.probes.push(this.requests.length);
        if (probe === 'answer') this.reply({ xid: req.xid, zxid: 0n, err: 0, body: EMPTY_MULTI });
        else (this.reply({ xid: req.xid, zxid: 0n, err: -6 }), this.end());
        this.#changed();
        return;
      }
      this.requests.push(req);
      options.onRequest?.(req, this);
    }
    this.#changed();
  }
}

function defaultHandshake(req: FakeConnectRequest): FakeHandshake {
  return { timeOut: req.timeOut, sessionId: req.sessionId !== 0n ? req.sessionId : FAKE_SESSION_ID };
}

/** The listening fake server. */
export class FakeServer {
  readonly #server: Server;
  /** Every accepted connection, in order. */
  readonly connections: FakeConnection[] = [];
  #cursor = 0;
  #onAccept: (() => void) | undefined;
  readonly #counters = new Set<() => void>();

  private constructor(options: FakeServerOptions) {
    this.#server = createServer({ allowHalfOpen: options.halfOpen ?? false }, (socket) => {
      this.connections.push(new FakeConnection(socket, options));
      this.#onAccept?.();
      for (const check of [...this.#counters]) check();
    });
  }

  /** Starts listening: on 127.0.0.1 and an OS-chosen port unless `options.listen` says otherwise. */
  static async start(options: FakeServerOptions = {}): Promise<FakeServer> {
    const self = new FakeServer(options);
    const { host = '127.0.0.1', port = 0 } = options.listen ?? {};
    await new Promise<void>((resolve, reject) => self.#server.once('error', reject).listen(port, host, resolve));
    return self;
  }

  /** The port it listens on. */
  get port(): number {
    const addr = this.#server.address();
    if (addr === null || typeof addr === 'string') throw new Error('fake server is not listening');
    return addr.port;
  }

  /** The next accepted connection not yet taken by this method. */
  nextConnection(timeoutMs = 5000): Promise<FakeConnection> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`fake server: no connection within ${timeoutMs} ms`)), timeoutMs);
      const check = () => {
        const c = this.connections[this.#cursor];
        if (c) (this.#cursor++, (this.#onAccept = undefined), clearTimeout(timer), resolve(c));
      };
      (this.#onAccept = check)();
    });
  }

  /** Resolves once `n` connections have been accepted in all; rejects after `timeoutMs`. */
  waitForConnections(n: number, timeoutMs = 5000): Promise<void> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => (this.#counters.delete(check), reject(new Error(`fake server: ${this.connections.length} of ${n} connections within ${timeoutMs} ms`))), timeoutMs);
      const check = () => {
        if (this.connections.length >= n) (this.#counters.delete(check), clearTimeout(timer), resolve());
      };
      this.#counters.add(check);
      check();
    });
  }

  /** The address it listens on. */
  get host(): string {
    const addr = this.#server.address();
    if (addr === null || typeof addr === 'string') throw new Error('fake server is not listening');
    return addr.address;
  }

  /** Destroys every connection and stops listening. */
  close(): Promise<void> {
    for (const c of this.connections) c.socket.destroy();
    return new Promise((resolve) => this.#server.close(() => resolve()));
  }
}

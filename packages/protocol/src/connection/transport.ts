/**
 * Dialing a server: TCP, or TLS to a secure client port. The only module of the package that
 * imports node:net and node:tls; everything above it sees the narrow {@link Transport}.
 */
import { connect as netConnect, isIP, type Socket } from 'node:net';
import { connect as tlsConnect, type ConnectionOptions as TlsConnectionOptions } from 'node:tls';
import { ConnectionLossError } from '../errors.js';
import { setLongTimeout } from '../util/timer.js';

/**
 * A byte pipe to one server, as the connection layer uses it. Small enough for a unit test to
 * fake: bytes in through `onData`, frames out through `write`, one `onClose` at the end.
 */
export interface Transport {
  /**
   * Queues bytes for sending. Everything written in the same tick leaves together on the next
   * one (one syscall instead of one per request); order is kept.
   */
  write(bytes: Buffer): void;
  /**
   * Sends `bytes` now, after anything queued by {@link write} in this tick (order is kept), for a
   * caller that has done its own batching and runs at the end of a tick (the connection's read
   * batch, on `process.nextTick`): one deferral instead of two. Optional: without it the
   * connection uses {@link write}.
   */
  writeNow?(bytes: Buffer): void;
  /** Sets the receiver of incoming chunks, replacing the previous one. */
  onData(cb: (chunk: Buffer) => void): void;
  /**
   * Sets the handler called once when the transport has closed, with the error that closed it
   * if any. Set after the close, it is called on a later turn of the event loop.
   */
  onClose(cb: (err: Error | undefined) => void): void;
  /** Sends what is queued, half-closes, and lets go of the socket once the FIN is out. */
  end(): void;
  /** Drops the socket at once; queued bytes are discarded. */
  destroy(): void;
}

/**
 * TLS options, or a function that gives them, called before each connection attempt: certificate
 * files rotated on disk are picked up at the next reconnect (ZooKeeper 3.9's `certReload`).
 */
export type TlsSource = TlsConnectionOptions | (() => TlsConnectionOptions | Promise<TlsConnectionOptions>);

/**
 * The TLS options of one connection attempt (undefined: plain TCP). A function that throws or
 * rejects fails that attempt with ConnectionLoss, its error as the cause (a certificate file
 * missing in the middle of a rotation: the next attempt reads it again).
 */
export async function loadTls(source: TlsSource | undefined, where: string): Promise<TlsConnectionOptions | undefined> {
  if (typeof source !== 'function') return source;
  try {
    return await source();
  } catch (err) {
    throw new ConnectionLossError(`connect to ${where}: the TLS options could not be loaded: ${(err as Error)?.message ?? String(err)}`, { op: 'connect', cause: err });
  }
}

/** Where and how to dial. */
export interface DialOptions {
  /** The host as the connect string names it: dialed unless `address` is given, and the name TLS verifies. */
  host: string;
  port: number;
  /**
   * The address to dial, resolved from `host` (see resolve.ts); default `host`. The TLS
   * certificate is still checked against `host`: a server is who its name says, not its address.
   */
  address?: string | undefined;
  /** TLS options; TCP when undefined. `servername` defaults to the host unless it is an IP. */
  tls?: TlsConnectionOptions | undefined;
  /** Deadline for the TCP (and TLS) handshake, in ms. */
  connectTimeout: number;
  signal?: AbortSignal | undefined;
}

/** Opens a transport; rejects with ConnectionLoss (cause: the socket error) on failure or timeout, or with the signal's reason. */
export function dial(options: DialOptions): Promise<Transport> {
  return new Promise<Transport>((resolve, reject) => {
    options.signal?.throwIfAborted();
    const { host, port } = options;
    const target = options.address ?? host;
    // node:tls sends `servername` as SNI and checks the certificate against it (before `host`),
    // so dialing a resolved address keeps hostname verification on the name.
    const socket: Socket = options.tls
      ? tlsConnect({ host: target, port, ...(isIpAddress(host) ? {} : { servername: host }), ...options.tls })
      : netConnect({ host: target, port });
    const readyEvent = options.tls ? 'secureConnect' : 'connect';
    const fail = (err: unknown) => {
      cleanup();
      socket.destroy();
      if (options.signal?.aborted && err === options.signal.reason) return reject(err);
      if (err instanceof ConnectionLossError) return reject(err);
      // Node's own message usually names the address already ("connect ECONNREFUSED 127.0.0.1:1");
      // a name dialed at a resolved address is named too.
      const message = (err as Error)?.message ?? String(err);
      const named = target === host && message.includes(`${host}:${port}`);
      reject(new ConnectionLossError(named ? message : `connect to ${host}:${port} failed: ${message}`, { op: 'connect', cause: err }));
    };
    const onTimeout = () => fail(new Error(`timed out after ${options.connectTimeout} ms`));
    const onAbort = () => fail(options.signal?.reason);
    const onReady = () => {
      cleanup();
      resolve(new SocketTransport(socket));
    };
    const timer = setLongTimeout(onTimeout, options.connectTimeout);
    const cleanup = () => {
      timer.clear();
      socket.off(readyEvent, onReady);
      socket.off('error', fail);
      options.signal?.removeEventListener('abort', onAbort);
    };
    socket.once(readyEvent, onReady);
    socket.once('error', fail);
    options.signal?.addEventListener('abort', onAbort, { once: true });
  });
}

const noData = (): void => {};

/**
 * {@link Transport} over a connected socket. Writes made in one tick are collected and sent on
 * the next as a single write. Measured against a local fake server that answers at once (the
 * client is then the bottleneck; 2 shared cores): 50,000 pipelined 30-byte requests went from
 * about 120,000 to 470,000 requests/s and from 9.4 to 3.1 us of client CPU per request, and 100
 * request loops from 124,000 to 518,000 requests/s; one request at a time was unchanged. Against
 * the real server the server is the bottleneck and the difference is within noise. A batch up to
 * 64 KiB is joined with one copy; a larger one goes out through the socket's writev
 * (cork/uncork) so big payloads are not copied again.
 */
class SocketTransport implements Transport {
  readonly #socket: Socket;
  #queue: Buffer[] | undefined;
  #queuedBytes = 0;
  #onData: (chunk: Buffer) => void = noData;
  #onClose: ((err: Error | undefined) => void) | undefined;
  #closed = false;
  #error: Error | undefined;
  readonly #flush = () => this.#send();

  constructor(socket: Socket) {
    this.#socket = socket;
    // Requests are small and latency-bound; coalescing is done here, not by Nagle.
    socket.setNoDelay(true);
    socket.on('data', (chunk: Buffer) => this.#onData(chunk));
    socket.on('error', (err) => (this.#error ??= err));
    socket.once('close', () => {
      this.#closed = true;
      this.#queue = undefined;
      const cb = this.#onClose;
      this.#onClose = undefined;
      cb?.(this.#error);
    });
  }

  write(bytes: Buffer): void {
    if (this.#queue === undefined) {
      this.#queue = [bytes];
      this.#queuedBytes = bytes.length;
      process.nextTick(this.#flush);
    } else {
      this.#queue.push(bytes);
      this.#queuedBytes += bytes.length;
    }
  }

  writeNow(bytes: Buffer): void {
    const q = this.#queue;
    if (q === undefined) {
      if (!this.#closed && !this.#socket.destroyed) this.#socket.write(bytes);
      return;
    }
    q.push(bytes);
    this.#queuedBytes += bytes.length;
    this.#send();
  }

  onData(cb: (chunk: Buffer) => void): void {
    this.#onData = cb;
  }

  onClose(cb: (err: Error | undefined) => void): void {
    if (this.#closed) setImmediate(() => cb(this.#error));
    else this.#onClose = cb;
  }

  end(): void {
    this.#send();
    const socket = this.#socket;
    // A server that never closes its side must not keep the handle (and the process) alive.
    socket.end(() => socket.destroy());
  }

  destroy(): void {
    this.#queue = undefined;
    this.#socket.destroy();
  }

  #send(): void {
    const q = this.#queue;
    if (q === undefined) return;
    this.#queue = undefined;
    const socket = this.#socket;
    if (this.#closed || socket.destroyed) return;
    if (q.length === 1) {
      socket.write(q[0]!);
    } else if (this.#queuedBytes <= 65_536) {
      socket.write(Buffer.concat(q, this.#queuedBytes));
    } else {
      socket.cork();
      for (const b of q) socket.write(b);
      socket.uncork();
    }
  }
}

/** @internal Whether `host` is an IPv4 or IPv6 address rather than a name. */
export function isIpAddress(host: string): boolean {
  return isIP(host) !== 0;
}

/**
 * Asks a server with the `isro` four-letter word whether it is read-only: `'rw'`, `'ro'`, or
 * `undefined` when it does not answer (down, or 4lw not whitelisted). Used while connected to a
 * read-only server, to find a read-write one (the Java client's `pingRwServer`).
 */
export function probeReadWrite(host: string, port: number, timeoutMs: number): Promise<'rw' | 'ro' | undefined> {
  return new Promise((resolve) => {
    const socket = netConnect({ host, port });
    let answer = '';
    const done = (v: 'rw' | 'ro' | undefined) => {
      timer.clear();
      socket.destroy();
      resolve(v);
    };
    const timer = setLongTimeout(() => done(undefined), timeoutMs);
    socket.on('connect', () => socket.end('isro'));
    socket.on('data', (d: Buffer) => (answer += d.toString('latin1')));
    socket.on('error', () => done(undefined));
    socket.on('close', () => done(answer === 'rw' ? 'rw' : answer === 'ro' ? 'ro' : undefined));
  });
}

/** What a server's `srvr` four-letter word says of it: its mode and the last zxid it applied. */
export interface ServerStat {
  /** `standalone`, `leader`, `follower`, `observer`, `read-only`. */
  readonly mode: string;
  /** The last zxid the server applied (`Zxid: 0x...`). */
  readonly zxid: bigint;
}

/**
 * Asks a server with the `srvr` four-letter word (whitelisted by default since 3.5) for its
 * mode and last zxid; `undefined` when it does not answer them (down, not serving, 4lw
 * disabled, a secure-only port). Used to tell why a server closes our handshake: one behind the
 * session's last zxid refuses it (Java `ZooKeeperServer.processConnectRequest`).
 */
export function probeServerStat(host: string, port: number, timeoutMs: number): Promise<ServerStat | undefined> {
  return new Promise((resolve) => {
    const socket = netConnect({ host, port });
    let answer = '';
    const done = (v: ServerStat | undefined) => {
      timer.clear();
      socket.destroy();
      resolve(v);
    };
    const timer = setLongTimeout(() => done(undefined), timeoutMs);
    socket.on('connect', () => socket.end('srvr'));
    socket.on('data', (d: Buffer) => (answer += d.toString('latin1')));
    socket.on('error', () => done(undefined));
    socket.on('close', () => {
      const zxid = /^Zxid: 0x([0-9a-f]+)$/im.exec(answer)?.[1];
      const mode = /^Mode: (\S+)$/im.exec(answer)?.[1];
      done(zxid !== undefined && mode !== undefined ? { mode, zxid: BigInt(`0x${zxid}`) } : undefined);
    });
  });
}

/**
 * Dialing a server: TCP, or TLS to a secure client port. The only module of the package that
 * imports node:net and node:tls.
 */
import { connect as netConnect, type Socket } from 'node:net';
import { connect as tlsConnect, type ConnectionOptions as TlsConnectionOptions } from 'node:tls';
import { ConnectionLossError } from '../errors.js';

/** The socket a connection runs on (TCP or TLS). */
export type Transport = Socket;

/** Where and how to dial. */
export interface DialOptions {
  host: string;
  port: number;
  /** TLS options; TCP when undefined. `servername` defaults to the host unless it is an IP. */
  tls?: TlsConnectionOptions | undefined;
  /** Deadline for the TCP (and TLS) handshake, in ms. */
  connectTimeout: number;
  signal?: AbortSignal | undefined;
}

/** Opens a socket; rejects with ConnectionLoss (cause: the socket error) on failure or timeout. */
export function dial(options: DialOptions): Promise<Socket> {
  return new Promise<Socket>((resolve, reject) => {
    options.signal?.throwIfAborted();
    const { host, port } = options;
    const socket: Socket = options.tls
      ? tlsConnect({ host, port, ...(isIp(host) ? {} : { servername: host }), ...options.tls })
      : netConnect({ host, port });
    const readyEvent = options.tls ? 'secureConnect' : 'connect';
    const fail = (err: unknown) => {
      cleanup();
      socket.destroy();
      reject(err instanceof ConnectionLossError ? err : new ConnectionLossError(`connect to ${host}:${port} failed: ${(err as Error)?.message ?? String(err)}`, { cause: err }));
    };
    const onTimeout = () => fail(new Error(`timed out after ${options.connectTimeout} ms`));
    const onAbort = () => fail(options.signal?.reason);
    const onReady = () => {
      cleanup();
      socket.setNoDelay(true);
      resolve(socket);
    };
    const timer = setTimeout(onTimeout, options.connectTimeout);
    const cleanup = () => {
      clearTimeout(timer);
      socket.off(readyEvent, onReady);
      socket.off('error', fail);
      options.signal?.removeEventListener('abort', onAbort);
    };
    socket.once(readyEvent, onReady);
    socket.once('error', fail);
    options.signal?.addEventListener('abort', onAbort, { once: true });
  });
}

function isIp(host: string): boolean {
  return /^[\d.]+$/.test(host) || host.includes(':');
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
      clearTimeout(timer);
      socket.destroy();
      resolve(v);
    };
    const timer = setTimeout(() => done(undefined), timeoutMs);
    socket.on('connect', () => socket.end('isro'));
    socket.on('data', (d: Buffer) => (answer += d.toString('latin1')));
    socket.on('error', () => done(undefined));
    socket.on('close', () => done(answer === 'rw' ? 'rw' : answer === 'ro' ? 'ro' : undefined));
  });
}

/**
 * How a connection is opened, what it tells the layer above, and how one request is sent: the
 * types of Connection's API.
 */
import type { ConnectionOptions as TlsConnectionOptions } from 'node:tls';
import type { WatcherEvent } from '../jute/proto.js';
import type { WireTrace } from './pending.js';
import type { DialOptions, Transport } from './transport.js';

/** How to open a connection. */
export interface ConnectionOptions {
  /** The server's host as given (a name, or an IP address). */
  host: string;
  port: number;
  /** The address to dial, resolved from `host` (default `host`); TLS still verifies `host`. */
  address?: string | undefined;
  tls?: TlsConnectionOptions | undefined;
  /** Requested session timeout, ms. */
  sessionTimeout: number;
  /** Session to resume (0n or undefined for a new one). */
  sessionId?: bigint | undefined;
  passwd?: Buffer | undefined;
  lastZxidSeen?: bigint | undefined;
  canBeReadOnly?: boolean | undefined;
  /**
   * `true`: send the reads marked `coalesce` that are made in the same tick as one multiRead
   * (3.6+; see coalesce.ts). `'probe'`: the same once the server has shown it has multiRead,
   * learnt at the first tick with two such reads (see {@link Connection.request}); until then
   * each read goes alone. `false` or undefined: never.
   */
  coalesceReads?: boolean | 'probe' | undefined;
  /**
   * Learn the server's generation (3.4 or newer, see generation.ts) with one `exists`, sent by
   * {@link Connection.startGenerationProbe}. Operations a 3.4 server lacks, made before the
   * answer, are held (with every request after them, in order) until it comes; on a 3.4 server
   * they are answered here with Unimplemented, never sent. Default false: taken as 3.5+.
   */
  probeGeneration?: boolean | undefined;
  /** Deadline for TCP + handshake, ms. */
  connectTimeout: number;
  /** Frame size limit for both directions, bytes (default {@link DEFAULT_MAX_FRAME_SIZE}, as the server's `jute.maxbuffer`). */
  maxFrameSize?: number | undefined;
  signal?: AbortSignal | undefined;
  /** Opens the transport; the TCP/TLS {@link dial} by default. For tests and custom transports. */
  dial?: ((options: DialOptions) => Promise<Transport>) | undefined;
}

/** What the layer above hears from a connection. */
export interface ConnectionEvents {
  /** A watch notification, in stream order, called synchronously from the read path. */
  notification(event: WatcherEvent, zxid: bigint): void;
  /** The connection ended (exactly once); `reason` is undefined after a requested close. */
  close(reason: Error | undefined): void;
  /**
   * The server refused the multiRead probe (`coalesceReads: 'probe'`; a 3.5 server answers
   * Unimplemented and closes). Called just before the connection closes.
   */
  noMultiRead?(): void;
}

/** How one request is sent. */
export interface RequestOptions {
  /** A fixed xid (auth, SetWatches) instead of the next one. */
  xid?: number | undefined;
  /** A watch-less read that may share a multiRead batch (see {@link ConnectionOptions.coalesceReads}). */
  coalesce?: boolean | undefined;
  /** Filled in with the xid and sizes once sent and answered (a traced request). */
  trace?: WireTrace | undefined;
}

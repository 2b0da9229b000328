/**
 * The settings a session runs with, as the client normalises them from its ClientOptions.
 */
import type { TlsSource } from '../connection/transport.js';
import type { LookupFunction } from '../connection/resolve.js';
import type { HostAddress } from './hosts.js';
import type { LeaseProofMode } from './quorum-proof.js';
import type { SaslOptions } from './sasl.js';

/** Settings the session needs; the client normalises them. */
export interface SessionOptions {
  hosts: readonly HostAddress[];
  chroot: string;
  sessionTimeout: number;
  connectTimeout: number;
  maxFrameSize: number;
  canBeReadOnly: boolean;
  /**
   * Send watch-less reads of one tick as one multiRead (see connection/coalesce.ts): `true` on
   * every connection, `'auto'` on the connections whose server answered the multiRead probe
   * (asked at a connection's first batch: Connection.request), `false` or undefined never.
   */
  coalesceReads?: boolean | 'auto' | undefined;
  tls: TlsSource | undefined;
  /** Resolves host names at every attempt (see connection/resolve.ts); `dns.lookup` by default. */
  lookup?: LookupFunction | undefined;
  /**
   * The host list asked again at the start of every round over the hosts after the first (a
   * `dns-srv://` connect string, connection/srv.ts); a failure keeps the list.
   */
  refreshHosts?: ((signal?: AbortSignal) => Promise<readonly HostAddress[]>) | undefined;
  /** A session to resume rather than start. */
  session?: { id: bigint; password: Buffer } | undefined;
  /** SASL credentials, authenticated on every new connection. */
  sasl?: SaslOptions | undefined;
  /** The ensemble's tickTime if known, ms (see quorum-proof.ts). */
  serverTickTime?: number | undefined;
  /** How the quorum proof is kept (see quorum-proof.ts); default 'auto'. */
  leaseProof?: LeaseProofMode | undefined;
  /** A causal token's zxid given at connect: the first handshake's lastZxidSeen (no server behind it grants the session). */
  after?: bigint | undefined;
}

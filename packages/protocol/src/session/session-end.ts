/**
 * Why a session can no longer serve requests, in the errors its calls fail with: what happened
 * and what to do. A call on a client whose session is `lost` or `expired` would otherwise say
 * only "not connected", which reads as a network problem to retry when the session is gone.
 */
import { ConnectionLossError, SessionExpiredError } from '../errors.js';
import { HandshakeClosedError } from '../connection/handshake.js';
import { probeServerStat, type ServerStat } from '../connection/transport.js';
import { endpointLabel, type Endpoint } from './hosts.js';
import { hex64 } from '../util/hex.js';

/** What to do about an expired session, in every SessionExpiredError of a call. */
const AFTER_EXPIRY =
  'This client cannot be used again: connect a new client (and re-create what the session held: ephemeral nodes, watches, locks), or use RenewingClient from @zk/locks, which opens the next session on every expiry';

/** A server that is serving and has applied less than the session saw. */
export interface ServerBehind {
  readonly server: Endpoint;
  readonly stat: ServerStat;
  /** The session's last zxid. */
  readonly ours: bigint;
  /** The failed attempt (the handshake the server closed). */
  readonly attempt: unknown;
}

/** The error of a call after the session expired; `cause` is how the client learnt it. */
export function sessionExpired(sessionId: bigint, cause: unknown): SessionExpiredError {
  const why = isBehind(cause)
    ? `${endpointLabel(cause.server)} (${cause.stat.mode}) is at zxid 0x${cause.stat.zxid.toString(16)}, behind this session's last zxid 0x${cause.ours.toString(16)}, and no server took the session back within its timeout: the ensemble lost the data this session saw (a server restarted with its data wiped, or restored from an older snapshot), and the session with it`
    : 'the ensemble ended it, with its ephemeral nodes and watches (no server heard from it for its timeout)';
  const attempt = isBehind(cause) ? cause.attempt : cause;
  return new SessionExpiredError(`session 0x${hex64(sessionId)} has expired: ${why}. ${AFTER_EXPIRY}.`, attempt === undefined ? {} : { cause: attempt });
}

/** The error of a call while the session is `lost`; `lastAttempt` is the latest reconnect's failure. */
export function sessionLost(sessionId: bigint, lastAttempt: unknown): ConnectionLossError {
  const last = lastAttempt instanceof Error ? ` (last attempt: ${lastAttempt.message})` : '';
  return new ConnectionLossError(
    `not connected (lost): session 0x${hex64(sessionId)} is lost: no server took it back within its timeout, so the ensemble has probably expired it${last}. ` +
      "The client keeps trying and reports 'connected' if a server takes the session back, 'expired' if one says it is gone; to go on at once, close this client and connect a new one",
    lastAttempt === undefined ? {} : { cause: lastAttempt },
  );
}

/** The error of a call while the connection is down and the session may still be alive. */
export function notConnected(state: string, lastAttempt: unknown): ConnectionLossError {
  const last = lastAttempt instanceof Error ? `; last attempt: ${lastAttempt.message}` : '';
  return new ConnectionLossError(`not connected (${state}${last})`, lastAttempt === undefined ? {} : { cause: lastAttempt });
}

/** `srvr` modes of a server that serves clients as part of its ensemble (not `read-only`). */
const SERVING = new Set(['standalone', 'leader', 'follower', 'observer']);

/**
 * After an attempt on `server` failed: when the server closed the handshake without a word, asks
 * it (`srvr`) for its mode and zxid, and resolves with the evidence when it is serving and behind
 * `ours`, the session's last zxid. That is the one refusal that waiting does not cure: ZooKeeper
 * refuses a session whose client saw a later zxid ("client must try another server", Java
 * `ZooKeeperServer.processConnectRequest`). A follower only catching up lags by far less than a
 * session timeout; a server that lost its data (wiped, or restored from an older snapshot)
 * refuses for ever, and the Java client would retry it for ever.
 */
export async function findServerBehind(server: Endpoint, ours: bigint, attempt: unknown, timeoutMs: number): Promise<ServerBehind | undefined> {
  if (!closedInHandshake(attempt)) return undefined;
  const stat = await probeServerStat(server.address, server.port, timeoutMs);
  if (stat === undefined || !SERVING.has(stat.mode) || stat.zxid >= ours) return undefined;
  return { server, stat, ours, attempt };
}

/** Whether a failed attempt is a handshake the server closed without answering (handshake.ts). */
function closedInHandshake(err: unknown): boolean {
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 4; e = e.cause, depth++) {
    if (e instanceof HandshakeClosedError) return true;
  }
  return false;
}

function isBehind(cause: unknown): cause is ServerBehind {
  return typeof cause === 'object' && cause !== null && 'stat' in cause && 'ours' in cause;
}

/**
 * Connection, session, credential and deadline errors: what happened to the way a request
 * travels rather than to the node it names. Several leave the outcome of a write unknown
 * (`isRetryable`; see {@link retry} and {@link isSafeToRetry} for what may be repeated).
 */
import { brandError, ZooKeeperError, type ErrorContext } from './base.js';
import { ErrorCode } from './codes.js';

/**
 * `CONNECTIONLOSS` (-4): the connection dropped, or could not be made, before this request's
 * reply came. The client raises it on the server's behalf: for every request in flight when a
 * connection closes (a socket error, the server closing it, no reply for too long); for a
 * request made while disconnected with `whileDisconnected: 'fail'` (the default), with
 * `notSent` true; and for a connect that failed (`could not connect to ...`, naming the likely
 * cause; its `cause` an `AggregateError` of each attempt's error).
 *
 * The session usually survives: the client reconnects by itself (state `suspended`, then
 * `connected`) and keeps its ephemeral nodes and watches, unless the ensemble expires it
 * ({@link SessionExpiredError}).
 *
 * While the session is `lost` (no server took it back within its timeout), the message says the
 * ensemble has probably expired it and names the last reconnect attempt (its `cause`).
 *
 * What to do: a write in flight may or may not have been applied (`notSent` true: it was not).
 * Reads can be sent again. {@link retry} repeats reads, and writes only with `idempotent: true`:
 * a conditional write's repeat fails with {@link BadVersionError} instead of applying twice, a
 * create's with {@link NodeExistsError} when the first one was applied. `isRetryable` is true,
 * except for a connect that failed for good: every host's name does not exist (ENOTFOUND) or
 * every port answered as another kind of server ("not a ZooKeeper server"); such a connect
 * rejects within one round over the hosts and says "Not retried".
 *
 * @example
 * ```ts
 * const { data } = await retry(({ signal }) => zk.getData('/config', { signal }), { maxElapsed: 30_000 });
 * ```
 */
export class ConnectionLossError extends ZooKeeperError {
  static {
    brandError(this, 'ConnectionLossError');
  }
  override name = 'ConnectionLossError';
  constructor(message?: string, context?: ErrorContext) {
    super(ErrorCode.CONNECTIONLOSS, message, context);
  }
}

/**
 * `SESSIONEXPIRED` (-112): the session is gone. The ensemble heard nothing from it for the
 * negotiated session timeout and ended it, deleting its ephemeral nodes (so every lock, lease
 * or leadership held through them is lost: a `@zk/locks` lease's `signal` aborts) and its
 * watches.
 *
 * Raised when a reconnect learns of the expiry (the state becomes `expired`), then by every
 * call of this client, by open watch streams and by a {@link TreeCache}; also by a `connect`
 * that resumes a session ({@link ClientOptions.session}) the server no longer has. The client
 * also concludes it by itself when the session is `lost` and a serving server is behind the
 * session's last zxid (its data wiped, or restored from an older snapshot): that server refuses
 * the session's handshakes for ever. A call's message says which, and what to do; its `cause`
 * chain ends at the server's answer or the refused handshake.
 *
 * What to do: `expired` is terminal; this client does not start a new session. Close it,
 * connect a new client, and rebuild what the old session held (ephemeral nodes, watches,
 * locks); `RenewingClient` of `@zk/locks` does that on every expiry. Not retryable.
 *
 * @example
 * ```ts
 * zk.onStateChange((state) => { if (state === 'expired') void restart(); }); // close, connect again, re-register
 * ```
 */
export class SessionExpiredError extends ZooKeeperError {
  static {
    brandError(this, 'SessionExpiredError');
  }
  override name = 'SessionExpiredError';
  constructor(message?: string, context?: ErrorContext) {
    super(ErrorCode.SESSIONEXPIRED, message, context);
  }
}

/**
 * `SESSIONMOVED` (-118): the session is now held by another server (the client reconnected
 * elsewhere) and this request reached a server through the old connection. ZooKeeper ignores
 * such a request; this client still counts it with ConnectionLoss as an unknown outcome:
 * `isRetryable` is true, and {@link retry} repeats reads, and writes only with
 * `idempotent: true`. Rare: the old connection usually just closes, with ConnectionLoss.
 */
export class SessionMovedError extends ZooKeeperError {
  static {
    brandError(this, 'SessionMovedError');
  }
  override name = 'SessionMovedError';
  constructor(message?: string, context?: ErrorContext) {
    super(ErrorCode.SESSIONMOVED, message, context);
  }
}

/**
 * `AUTHFAILED` (-115): the server refused credentials. {@link ZooKeeper.addAuth} fails with it
 * (the credentials are not kept). Refused connect credentials (the `auth` option, sent again
 * on every reconnect, or SASL with the `sasl` option) end the client: the state becomes
 * `authFailed`, which is terminal, and every call fails with it.
 *
 * What to do: check the credentials (the scheme, and `user:password` for `digest`; the SASL
 * user and password), then connect a new client. Not retryable.
 */
export class AuthFailedError extends ZooKeeperError {
  static {
    brandError(this, 'AuthFailedError');
  }
  override name = 'AuthFailedError';
  constructor(message?: string, context?: ErrorContext) {
    super(ErrorCode.AUTHFAILED, message, context);
  }
}

/** What to do when a server requires SASL (the message of {@link SessionClosedRequireSaslAuthError}). */
const REQUIRES_SASL =
  'the server requires SASL authentication (sessionRequireClientSASLAuth, or enforce.auth.enabled with enforce.auth.schemes=sasl) and this client offered none: connect with the sasl option (mechanism GSSAPI with a principal and a keytab, password or kinit ccache, for Kerberos; or DIGEST-MD5)';

/**
 * `SESSIONCLOSEDREQUIRESASLAUTH` (-124): the server requires SASL authentication
 * (`zookeeper.sessionRequireClientSASLAuth=true`, or `zookeeper.enforce.auth.enabled=true` with
 * `zookeeper.enforce.auth.schemes=sasl`, ZooKeeper 3.6+) and this connection has none: it answers
 * the first request with this code and closes the connection. Reconnecting cannot help, so the
 * client ends as for refused credentials (state `authFailed`). Connect with the `sasl` option
 * ({@link ClientOptions.sasl}): GSSAPI (Kerberos) or DIGEST-MD5, as the server's JAAS `Server`
 * section accepts.
 */
export class SessionClosedRequireSaslAuthError extends ZooKeeperError {
  static {
    brandError(this, 'SessionClosedRequireSaslAuthError');
  }
  override name = 'SessionClosedRequireSaslAuthError';
  constructor(message?: string, context: ErrorContext = {}) {
    const where = [context.op, context.path].filter(Boolean).join(' ');
    super(ErrorCode.SESSIONCLOSEDREQUIRESASLAUTH, message ?? `${REQUIRES_SASL}${where ? ` (${where})` : ''}`, context);
  }
}

/**
 * `NOTREADONLY` (-119): a write sent to a read-only server. With `canBeReadOnly: true`
 * ({@link ClientOptions.canBeReadOnly}), a server cut off from its quorum serves reads only
 * (state `connectedReadOnly`); the client keeps looking for a read-write server and moves to
 * it (state `connected`). Write again once connected read-write. `isRetryable` is false: a
 * repeat on the same server gets the same answer.
 */
export class NotReadOnlyError extends ZooKeeperError {
  static {
    brandError(this, 'NotReadOnlyError');
  }
  override name = 'NotReadOnlyError';
  constructor(message?: string, context?: ErrorContext) {
    super(ErrorCode.NOTREADONLY, message, context);
  }
}

/**
 * `REQUESTTIMEOUT` (-122): the call's deadline passed before its reply came: its `timeout`
 * option or the client's `requestTimeout` ({@link ClientOptions.requestTimeout}), also while
 * waiting to reconnect (`whileDisconnected: 'wait'`), or {@link retry}'s `maxElapsed`. Raised
 * by this client (the Java client's `zookeeper.request.timeout` uses the same code).
 *
 * A request already sent stays sent: its reply is ignored, and a write may still be applied.
 * `isRetryable` is true; {@link retry} repeats reads, and writes only with `idempotent: true`.
 */
export class RequestTimeoutError extends ZooKeeperError {
  static {
    brandError(this, 'RequestTimeoutError');
  }
  override name = 'RequestTimeoutError';
  constructor(message?: string, context?: ErrorContext) {
    super(ErrorCode.REQUESTTIMEOUT, message, context);
  }
}

/**
 * `OPERATIONTIMEOUT` (-7): "operation timeout" in the Java client's table. This client never
 * raises it; a server that answers with it is treated as after a ConnectionLoss (unknown
 * outcome, `isRetryable` true).
 */
export class OperationTimeoutError extends ZooKeeperError {
  static {
    brandError(this, 'OperationTimeoutError');
  }
  override name = 'OperationTimeoutError';
  constructor(message?: string, context?: ErrorContext) {
    super(ErrorCode.OPERATIONTIMEOUT, message, context);
  }
}

/**
 * `THROTTLEDOP` (-127): the server, under load, shed the request without executing it
 * (ZooKeeper 3.6+ request throttling). Safe to send again after a back-off, whatever the
 * operation: {@link retry} does, with jitter. `isRetryable` is true.
 */
export class ThrottledOpError extends ZooKeeperError {
  static {
    brandError(this, 'ThrottledOpError');
  }
  override name = 'ThrottledOpError';
  constructor(message?: string, context?: ErrorContext) {
    super(ErrorCode.THROTTLEDOP, message, context);
  }
}

/**
 * `UNKNOWNSESSION` (-12): "unknown session", used between ZooKeeper servers. A client is not
 * expected to receive it and this client never raises it; if a server answers with it, it is
 * final for that request (not retryable).
 */
export class UnknownSessionError extends ZooKeeperError {
  static {
    brandError(this, 'UnknownSessionError');
  }
  override name = 'UnknownSessionError';
  constructor(message?: string, context?: ErrorContext) {
    super(ErrorCode.UNKNOWNSESSION, message, context);
  }
}

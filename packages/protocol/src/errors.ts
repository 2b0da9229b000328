/**
 * Errors of `@zk/protocol`.
 *
 * Server errors are {@link ZooKeeperError} subclasses named after the Java client's
 * `KeeperException.Code` (NoNode -> {@link NoNodeError}); each carries the numeric `code`,
 * its Java name in `codeName`, the operation and the path it concerned. Client-side problems
 * have their own classes: {@link DecodeError} (bytes that break the protocol),
 * {@link InvalidArgumentError} (bad input, raised before any byte is sent) and
 * {@link PacketTooLargeError}.
 *
 * `instanceof` works across copies of this package in one process (two installed versions, or
 * the bundled entry next to tsc's modules): each class is branded under
 * `Symbol.for('@zk/protocol:error')` (see util/brand.ts), so `err instanceof NoNodeError` holds
 * for a NoNode error of any copy, and an unrelated error of the same name is not taken for one.
 */
import { brandClass } from './util/brand.js';

/** The key every copy and version of this package brands its error classes under. */
const ERROR_BRAND = Symbol.for('@zk/protocol:error');

/** Brands an error class of this package as `name`, for `instanceof` across copies (see util/brand.ts). */
export function brandError(cls: abstract new (...args: never[]) => Error, name: string): void {
  brandClass(ERROR_BRAND, cls, name);
}

/**
 * ZooKeeper error codes, as `KeeperException.Code` in the Java client defines them.
 * Negative numbers travel in the `err` field of a reply header or of a multi result.
 */
export const ErrorCode = {
  OK: 0,
  SYSTEMERROR: -1,
  RUNTIMEINCONSISTENCY: -2,
  DATAINCONSISTENCY: -3,
  CONNECTIONLOSS: -4,
  MARSHALLINGERROR: -5,
  UNIMPLEMENTED: -6,
  OPERATIONTIMEOUT: -7,
  BADARGUMENTS: -8,
  UNKNOWNSESSION: -12,
  NEWCONFIGNOQUORUM: -13,
  RECONFIGINPROGRESS: -14,
  APIERROR: -100,
  NONODE: -101,
  NOAUTH: -102,
  BADVERSION: -103,
  NOCHILDRENFOREPHEMERALS: -108,
  NODEEXISTS: -110,
  NOTEMPTY: -111,
  SESSIONEXPIRED: -112,
  INVALIDCALLBACK: -113,
  INVALIDACL: -114,
  AUTHFAILED: -115,
  SESSIONMOVED: -118,
  NOTREADONLY: -119,
  EPHEMERALONLOCALSESSION: -120,
  NOWATCHER: -121,
  REQUESTTIMEOUT: -122,
  RECONFIGDISABLED: -123,
  SESSIONCLOSEDREQUIRESASLAUTH: -124,
  QUOTAEXCEEDED: -125,
  THROTTLEDOP: -127,
} as const;

/** The Java name of an error code (`'NONODE'`, `'BADVERSION'`, ...). */
export type ErrorCodeName = keyof typeof ErrorCode;
/** A numeric ZooKeeper error code. */
export type ErrorCodeValue = (typeof ErrorCode)[ErrorCodeName];

const codeNames = new Map<number, ErrorCodeName>(
  (Object.keys(ErrorCode) as ErrorCodeName[]).map((name) => [ErrorCode[name], name]),
);

/** The Java name of a numeric code, or `'UNKNOWN(<n>)'` for a code this client does not know. */
export function errorCodeName(code: number): string {
  return codeNames.get(code) ?? `UNKNOWN(${code})`;
}

/** True when `code` is one of the {@link ErrorCode} values (0, OK, included). */
export function isErrorCode(code: number): code is ErrorCodeValue {
  return codeNames.has(code);
}

/** Where an error happened, attached by the client. */
export interface ErrorContext {
  /** The operation (`'create'`, `'getData'`, `'multi'`, ...). */
  op?: string | undefined;
  /** The path the operation concerned, as the caller gave it (chroot not included). */
  path?: string | undefined;
  /** The underlying error. */
  cause?: unknown;
  /** True when the request never left the client (see {@link ZooKeeperError.notSent}). */
  notSent?: boolean | undefined;
}

/**
 * An error with a ZooKeeper error code, raised by the server or, for connection loss and
 * session expiry, by the client on the server's behalf. `instanceof` recognises the errors of
 * every copy of `@zk/protocol` in the process (see the module comment); a subclass of your own
 * is matched as usual, by its prototype chain.
 *
 * @example
 * ```ts
 * try { await zk.delete('/a') } catch (e) {
 *   if (e instanceof NoNodeError) { ... }             // by class
 *   if (e instanceof ZooKeeperError && e.code === ErrorCode.NONODE) { ... } // by code
 * }
 * ```
 */
export class ZooKeeperError extends Error {
  static {
    brandError(this, 'ZooKeeperError');
  }
  override name = 'ZooKeeperError';
  /** The numeric code (`ErrorCode.NONODE` is -101). */
  readonly code: number;
  /** The code's Java name (`'NONODE'`). */
  readonly codeName: string;
  /** The operation that failed, when known. */
  readonly op: string | undefined;
  /** The path that operation concerned, when known. */
  readonly path: string | undefined;
  /**
   * True when the request was never sent (the client was not connected when it was made, and
   * `whileDisconnected` is `'fail'`; or it waited behind the multiRead probe and the connection
   * closed first, which the client itself answers by sending it again once connected, within
   * the call's deadline): it certainly was not applied, so sending it again is safe whatever it
   * is. False when unknown.
   */
  readonly notSent: boolean;

  constructor(code: number, message?: string, context: ErrorContext = {}) {
    const codeName = errorCodeName(code);
    const where = [context.op, context.path].filter(Boolean).join(' ');
    super(message ?? `${codeName}${where ? ` (${where})` : ''}`, context.cause === undefined ? undefined : { cause: context.cause });
    this.code = code;
    this.codeName = codeName;
    this.op = context.op;
    this.path = context.path;
    this.notSent = context.notSent === true;
  }

  /**
   * True when the same request may succeed if sent again once the client is connected:
   * connection loss, operation timeout, throttling, a session moved. A retry of a write after
   * connection loss may apply it twice: the caller decides; this library never does it silently.
   */
  get isRetryable(): boolean {
    return retryable.has(this.code);
  }
}

const retryable = new Set<number>([
  ErrorCode.CONNECTIONLOSS,
  ErrorCode.OPERATIONTIMEOUT,
  ErrorCode.SESSIONMOVED,
  ErrorCode.THROTTLEDOP,
  ErrorCode.REQUESTTIMEOUT,
]);

type ZkErrorClass = new (message?: string, context?: ErrorContext) => ZooKeeperError;

function codeClass(code: ErrorCodeValue, name: string): ZkErrorClass {
  const cls = class extends ZooKeeperError {
    static {
      brandError(this, name);
    }
    override name = name;
    constructor(message?: string, context?: ErrorContext) {
      super(code, message, context);
    }
  };
  Object.defineProperty(cls, 'name', { value: name });
  return cls;
}

/* One class per KeeperException.Code, named as the Java exceptions are (NoNodeException -> NoNodeError). */
/** `SYSTEMERROR` (-1). */
export const SystemError = codeClass(ErrorCode.SYSTEMERROR, 'SystemError');
export type SystemError = ZooKeeperError;
/** `RUNTIMEINCONSISTENCY` (-2). */
export const RuntimeInconsistencyError = codeClass(ErrorCode.RUNTIMEINCONSISTENCY, 'RuntimeInconsistencyError');
export type RuntimeInconsistencyError = ZooKeeperError;
/** `DATAINCONSISTENCY` (-3). */
export const DataInconsistencyError = codeClass(ErrorCode.DATAINCONSISTENCY, 'DataInconsistencyError');
export type DataInconsistencyError = ZooKeeperError;
/** `CONNECTIONLOSS` (-4): the connection dropped before the reply came; the request may or may not have been applied. */
export const ConnectionLossError = codeClass(ErrorCode.CONNECTIONLOSS, 'ConnectionLossError');
export type ConnectionLossError = ZooKeeperError;
/** `MARSHALLINGERROR` (-5). */
export const MarshallingError = codeClass(ErrorCode.MARSHALLINGERROR, 'MarshallingError');
export type MarshallingError = ZooKeeperError;
/** `UNIMPLEMENTED` (-6): the server does not know this operation (too old a version). */
export const UnimplementedError = codeClass(ErrorCode.UNIMPLEMENTED, 'UnimplementedError');
export type UnimplementedError = ZooKeeperError;
/** `OPERATIONTIMEOUT` (-7). */
export const OperationTimeoutError = codeClass(ErrorCode.OPERATIONTIMEOUT, 'OperationTimeoutError');
export type OperationTimeoutError = ZooKeeperError;
/** `BADARGUMENTS` (-8): the server refused the arguments (a TTL node on a server without extended types, ...). */
export const BadArgumentsError = codeClass(ErrorCode.BADARGUMENTS, 'BadArgumentsError');
export type BadArgumentsError = ZooKeeperError;
/** `UNKNOWNSESSION` (-12). */
export const UnknownSessionError = codeClass(ErrorCode.UNKNOWNSESSION, 'UnknownSessionError');
export type UnknownSessionError = ZooKeeperError;
/** `NEWCONFIGNOQUORUM` (-13). */
export const NewConfigNoQuorumError = codeClass(ErrorCode.NEWCONFIGNOQUORUM, 'NewConfigNoQuorumError');
export type NewConfigNoQuorumError = ZooKeeperError;
/** `RECONFIGINPROGRESS` (-14). */
export const ReconfigInProgressError = codeClass(ErrorCode.RECONFIGINPROGRESS, 'ReconfigInProgressError');
export type ReconfigInProgressError = ZooKeeperError;
/** `APIERROR` (-100). */
export const ApiError = codeClass(ErrorCode.APIERROR, 'ApiError');
export type ApiError = ZooKeeperError;
/** `NONODE` (-101): the node does not exist. */
export const NoNodeError = codeClass(ErrorCode.NONODE, 'NoNodeError');
export type NoNodeError = ZooKeeperError;
/** `NOAUTH` (-102): the node's ACL does not allow this session the operation. */
export const NoAuthError = codeClass(ErrorCode.NOAUTH, 'NoAuthError');
export type NoAuthError = ZooKeeperError;
/** `BADVERSION` (-103): the expected version did not match. */
export const BadVersionError = codeClass(ErrorCode.BADVERSION, 'BadVersionError');
export type BadVersionError = ZooKeeperError;
/** `NOCHILDRENFOREPHEMERALS` (-108): ephemeral nodes cannot have children. */
export const NoChildrenForEphemeralsError = codeClass(ErrorCode.NOCHILDRENFOREPHEMERALS, 'NoChildrenForEphemeralsError');
export type NoChildrenForEphemeralsError = ZooKeeperError;
/** `NODEEXISTS` (-110): the node already exists. */
export const NodeExistsError = codeClass(ErrorCode.NODEEXISTS, 'NodeExistsError');
export type NodeExistsError = ZooKeeperError;
/** `NOTEMPTY` (-111): the node has children. */
export const NotEmptyError = codeClass(ErrorCode.NOTEMPTY, 'NotEmptyError');
export type NotEmptyError = ZooKeeperError;
/** `SESSIONEXPIRED` (-112): the session is gone, with its ephemeral nodes and watches. */
export const SessionExpiredError = codeClass(ErrorCode.SESSIONEXPIRED, 'SessionExpiredError');
export type SessionExpiredError = ZooKeeperError;
/** `INVALIDCALLBACK` (-113). */
export const InvalidCallbackError = codeClass(ErrorCode.INVALIDCALLBACK, 'InvalidCallbackError');
export type InvalidCallbackError = ZooKeeperError;
/** `INVALIDACL` (-114): the ACL is malformed or unusable (a digest id not matching, an empty list). */
export const InvalidACLError = codeClass(ErrorCode.INVALIDACL, 'InvalidACLError');
export type InvalidACLError = ZooKeeperError;
/** `AUTHFAILED` (-115): authentication was refused. */
export const AuthFailedError = codeClass(ErrorCode.AUTHFAILED, 'AuthFailedError');
export type AuthFailedError = ZooKeeperError;
/** `SESSIONMOVED` (-118). */
export const SessionMovedError = codeClass(ErrorCode.SESSIONMOVED, 'SessionMovedError');
export type SessionMovedError = ZooKeeperError;
/** `NOTREADONLY` (-119): a write sent to a read-only server. */
export const NotReadOnlyError = codeClass(ErrorCode.NOTREADONLY, 'NotReadOnlyError');
export type NotReadOnlyError = ZooKeeperError;
/** `EPHEMERALONLOCALSESSION` (-120). */
export const EphemeralOnLocalSessionError = codeClass(ErrorCode.EPHEMERALONLOCALSESSION, 'EphemeralOnLocalSessionError');
export type EphemeralOnLocalSessionError = ZooKeeperError;
/** `NOWATCHER` (-121): no such watch to remove or check. */
export const NoWatcherError = codeClass(ErrorCode.NOWATCHER, 'NoWatcherError');
export type NoWatcherError = ZooKeeperError;
/** `REQUESTTIMEOUT` (-122): the request's deadline passed before its reply came. */
export const RequestTimeoutError = codeClass(ErrorCode.REQUESTTIMEOUT, 'RequestTimeoutError');
export type RequestTimeoutError = ZooKeeperError;
/** `RECONFIGDISABLED` (-123). */
export const ReconfigDisabledError = codeClass(ErrorCode.RECONFIGDISABLED, 'ReconfigDisabledError');
export type ReconfigDisabledError = ZooKeeperError;
/** `SESSIONCLOSEDREQUIRESASLAUTH` (-124). */
export const SessionClosedRequireSaslAuthError = codeClass(ErrorCode.SESSIONCLOSEDREQUIRESASLAUTH, 'SessionClosedRequireSaslAuthError');
export type SessionClosedRequireSaslAuthError = ZooKeeperError;
/** `QUOTAEXCEEDED` (-125). */
export const QuotaExceededError = codeClass(ErrorCode.QUOTAEXCEEDED, 'QuotaExceededError');
export type QuotaExceededError = ZooKeeperError;
/** `THROTTLEDOP` (-127): the server shed this request under load; safe to retry later. */
export const ThrottledOpError = codeClass(ErrorCode.THROTTLEDOP, 'ThrottledOpError');
export type ThrottledOpError = ZooKeeperError;

const classesByCode = new Map<number, ZkErrorClass>([
  [ErrorCode.SYSTEMERROR, SystemError],
  [ErrorCode.RUNTIMEINCONSISTENCY, RuntimeInconsistencyError],
  [ErrorCode.DATAINCONSISTENCY, DataInconsistencyError],
  [ErrorCode.CONNECTIONLOSS, ConnectionLossError],
  [ErrorCode.MARSHALLINGERROR, MarshallingError],
  [ErrorCode.UNIMPLEMENTED, UnimplementedError],
  [ErrorCode.OPERATIONTIMEOUT, OperationTimeoutError],
  [ErrorCode.BADARGUMENTS, BadArgumentsError],
  [ErrorCode.UNKNOWNSESSION, UnknownSessionError],
  [ErrorCode.NEWCONFIGNOQUORUM, NewConfigNoQuorumError],
  [ErrorCode.RECONFIGINPROGRESS, ReconfigInProgressError],
  [ErrorCode.APIERROR, ApiError],
  [ErrorCode.NONODE, NoNodeError],
  [ErrorCode.NOAUTH, NoAuthError],
  [ErrorCode.BADVERSION, BadVersionError],
  [ErrorCode.NOCHILDRENFOREPHEMERALS, NoChildrenForEphemeralsError],
  [ErrorCode.NODEEXISTS, NodeExistsError],
  [ErrorCode.NOTEMPTY, NotEmptyError],
  [ErrorCode.SESSIONEXPIRED, SessionExpiredError],
  [ErrorCode.INVALIDCALLBACK, InvalidCallbackError],
  [ErrorCode.INVALIDACL, InvalidACLError],
  [ErrorCode.AUTHFAILED, AuthFailedError],
  [ErrorCode.SESSIONMOVED, SessionMovedError],
  [ErrorCode.NOTREADONLY, NotReadOnlyError],
  [ErrorCode.EPHEMERALONLOCALSESSION, EphemeralOnLocalSessionError],
  [ErrorCode.NOWATCHER, NoWatcherError],
  [ErrorCode.REQUESTTIMEOUT, RequestTimeoutError],
  [ErrorCode.RECONFIGDISABLED, ReconfigDisabledError],
  [ErrorCode.SESSIONCLOSEDREQUIRESASLAUTH, SessionClosedRequireSaslAuthError],
  [ErrorCode.QUOTAEXCEEDED, QuotaExceededError],
  [ErrorCode.THROTTLEDOP, ThrottledOpError],
]);

/**
 * The typed error for a server error code: `fromCode(-101, { op: 'delete', path: '/a' })` is a
 * {@link NoNodeError}. An unknown code gives a plain {@link ZooKeeperError}. `message` replaces the
 * default one (`NONODE (delete /a)`).
 */
export function fromCode(code: number, context: ErrorContext = {}, message?: string): ZooKeeperError {
  const cls = classesByCode.get(code);
  return cls ? new cls(message, context) : new ZooKeeperError(code, message, context);
}

/**
 * Bytes that break the protocol: a truncated or malformed record, a negative or oversized
 * length, a reply to an xid that is not the oldest outstanding one. The connection that
 * received them is closed; its outstanding requests fail with {@link ConnectionLossError}
 * whose `cause` is this error.
 */
export class DecodeError extends Error {
  static {
    brandError(this, 'DecodeError');
  }
  override name = 'DecodeError';
  /** Byte offset in the buffer being decoded where the problem was found, when known. */
  readonly offset: number | undefined;
  constructor(message: string, options: { offset?: number; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.offset = options.offset;
  }
}

/**
 * Input refused before any byte was sent: an invalid path, data over the frame limit, a
 * version below -1, an empty ACL list, a negative timeout, a flag where it does not apply.
 */
export class InvalidArgumentError extends TypeError {
  static {
    brandError(this, 'InvalidArgumentError');
  }
  override name = 'InvalidArgumentError';
  /** The argument that was refused (`'path'`, `'version'`, `'acl'`, ...). */
  readonly argument: string;
  constructor(argument: string, message: string) {
    super(`${argument}: ${message}`);
    this.argument = argument;
  }
}

/**
 * A frame over the client's `maxFrameSize` (ZooKeeper's `jute.maxbuffer`): on the way out the
 * request is refused before sending; on the way in only the request whose reply it was fails
 * (the frame's bytes are skipped and the connection stays up).
 */
export class PacketTooLargeError extends Error {
  static {
    brandError(this, 'PacketTooLargeError');
  }
  override name = 'PacketTooLargeError';
  /** The frame's length in bytes. */
  readonly size: number;
  /** The limit it exceeded. */
  readonly limit: number;
  constructor(size: number, limit: number, options: { cause?: unknown } = {}) {
    super(`packet of ${size} bytes exceeds the limit of ${limit} bytes (jute.maxbuffer)`, options.cause === undefined ? undefined : { cause: options.cause });
    this.size = size;
    this.limit = limit;
  }
}

/** The client was closed; the call was refused or, if in flight, abandoned. */
export class ClientClosedError extends Error {
  static {
    brandError(this, 'ClientClosedError');
  }
  override name = 'ClientClosedError';
  constructor(message = 'the client is closed') {
    super(message);
  }
}

/**
 * Errors of `@zk/protocol`: the module the rest of the package imports them from.
 *
 * Server errors are {@link ZooKeeperError} subclasses named after the Java client's
 * `KeeperException.Code` (NoNode -> {@link NoNodeError}); each carries the numeric `code`,
 * its Java name in `codeName`, the operation and the path it concerned. Client-side problems
 * have their own classes: {@link DecodeError} (bytes that break the protocol),
 * {@link InvalidArgumentError} (bad input, raised before any byte is sent),
 * {@link PacketTooLargeError} and {@link ClientClosedError}.
 *
 * `instanceof` works across copies of this package in one process (two installed versions, or
 * the bundled entry next to tsc's modules): each class is branded under
 * `Symbol.for('@zk/protocol:error')` (see util/brand.ts), so `err instanceof NoNodeError` holds
 * for a NoNode error of any copy, and an unrelated error of the same name is not taken for one.
 *
 * The classes live in errors/: codes.ts (the code table), base.ts (ZooKeeperError and the
 * brand), one file per family of server codes (node-errors.ts, session-errors.ts,
 * server-errors.ts) and client-errors.ts. Here: {@link fromCode}, the code -> class table.
 */
import { ErrorCode } from './errors/codes.js';
import { ZooKeeperError, type ErrorContext } from './errors/base.js';
import {
  BadArgumentsError,
  BadVersionError,
  EphemeralOnLocalSessionError,
  InvalidACLError,
  NoAuthError,
  NoChildrenForEphemeralsError,
  NodeExistsError,
  NoNodeError,
  NotEmptyError,
  NoWatcherError,
  QuotaExceededError,
} from './errors/node-errors.js';
import {
  AuthFailedError,
  ConnectionLossError,
  NotReadOnlyError,
  OperationTimeoutError,
  RequestTimeoutError,
  SessionClosedRequireSaslAuthError,
  SessionExpiredError,
  SessionMovedError,
  ThrottledOpError,
  UnknownSessionError,
} from './errors/session-errors.js';
import {
  ApiError,
  DataInconsistencyError,
  InvalidCallbackError,
  MarshallingError,
  NewConfigNoQuorumError,
  ReconfigDisabledError,
  ReconfigInProgressError,
  RuntimeInconsistencyError,
  SystemError,
  UnimplementedError,
} from './errors/server-errors.js';

export { ErrorCode, errorCodeName, isErrorCode } from './errors/codes.js';
export type { ErrorCodeName, ErrorCodeValue } from './errors/codes.js';
export { brandError, ZooKeeperError } from './errors/base.js';
export type { ErrorContext } from './errors/base.js';
export { ClientClosedError, DecodeError, InvalidArgumentError, PacketTooLargeError } from './errors/client-errors.js';
export {
  ApiError,
  AuthFailedError,
  BadArgumentsError,
  BadVersionError,
  ConnectionLossError,
  DataInconsistencyError,
  EphemeralOnLocalSessionError,
  InvalidACLError,
  InvalidCallbackError,
  MarshallingError,
  NewConfigNoQuorumError,
  NoAuthError,
  NoChildrenForEphemeralsError,
  NodeExistsError,
  NoNodeError,
  NotEmptyError,
  NotReadOnlyError,
  NoWatcherError,
  OperationTimeoutError,
  QuotaExceededError,
  ReconfigDisabledError,
  ReconfigInProgressError,
  RequestTimeoutError,
  RuntimeInconsistencyError,
  SessionClosedRequireSaslAuthError,
  SessionExpiredError,
  SessionMovedError,
  SystemError,
  ThrottledOpError,
  UnimplementedError,
  UnknownSessionError,
};

/** The class of each server code: what {@link fromCode} constructs. One class per `KeeperException.Code` but OK. */
const classesByCode = new Map<number, new (message?: string, context?: ErrorContext) => ZooKeeperError>([
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

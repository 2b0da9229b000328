/**
 * The server's own condition: operations it does not have, reconfiguration refusals, internal
 * errors, and the codes of the Java client's table that mark ranges or never travel. None is
 * retryable.
 */
import { brandError, ZooKeeperError, type ErrorContext } from './base.js';
import { ErrorCode } from './codes.js';

/**
 * `UNIMPLEMENTED` (-6): the server does not have this operation: it is older than the
 * operation (3.5: removeWatches, checkWatches, getConfig, reconfig; 3.5.3: TTL nodes; 3.6:
 * multiRead, addWatch, getEphemerals, getAllChildrenNumber; 3.7: whoAmI). The message names the
 * version needed.
 * On a 3.4 server, which answers an unknown operation with this code and closes the connection,
 * the client raises it itself, before sending. Some versions also answer a TTL create with it
 * when `zookeeper.extendedTypesEnabled` is off (others: {@link BadArgumentsError}).
 *
 * What to do: upgrade the ensemble, or do without the operation.
 */
export class UnimplementedError extends ZooKeeperError {
  static {
    brandError(this, 'UnimplementedError');
  }
  override name = 'UnimplementedError';
  constructor(message?: string, context?: ErrorContext) {
    super(ErrorCode.UNIMPLEMENTED, message, context);
  }
}

/**
 * `NEWCONFIGNOQUORUM` (-13): the leader refused a {@link ZooKeeper.reconfig} because no quorum
 * of the proposed configuration is connected to it and up to date. Start the new servers, let
 * them sync, then reconfigure again.
 */
export class NewConfigNoQuorumError extends ZooKeeperError {
  static {
    brandError(this, 'NewConfigNoQuorumError');
  }
  override name = 'NewConfigNoQuorumError';
  constructor(message?: string, context?: ErrorContext) {
    super(ErrorCode.NEWCONFIGNOQUORUM, message, context);
  }
}

/**
 * `RECONFIGINPROGRESS` (-14): a {@link ZooKeeper.reconfig} while another one is not committed
 * yet; ZooKeeper runs one at a time. Read the configuration ({@link ZooKeeper.getConfig}),
 * which the other one may have changed already, and try again.
 */
export class ReconfigInProgressError extends ZooKeeperError {
  static {
    brandError(this, 'ReconfigInProgressError');
  }
  override name = 'ReconfigInProgressError';
  constructor(message?: string, context?: ErrorContext) {
    super(ErrorCode.RECONFIGINPROGRESS, message, context);
  }
}

/**
 * `RECONFIGDISABLED` (-123): a {@link ZooKeeper.reconfig} on an ensemble without dynamic
 * reconfiguration (`reconfigEnabled=false`, the servers' default since 3.5.3). Enable it on the
 * servers, or change the membership by restarting them with a new configuration.
 */
export class ReconfigDisabledError extends ZooKeeperError {
  static {
    brandError(this, 'ReconfigDisabledError');
  }
  override name = 'ReconfigDisabledError';
  constructor(message?: string, context?: ErrorContext) {
    super(ErrorCode.RECONFIGDISABLED, message, context);
  }
}

/**
 * `RUNTIMEINCONSISTENCY` (-2): in a failed transaction, the code the server gives the
 * operations after the failing one (none of them was applied; the ones before it report OK):
 * see the `results` of {@link TransactionError}. Elsewhere, an internal server error.
 */
export class RuntimeInconsistencyError extends ZooKeeperError {
  static {
    brandError(this, 'RuntimeInconsistencyError');
  }
  override name = 'RuntimeInconsistencyError';
  constructor(message?: string, context?: ErrorContext) {
    super(ErrorCode.RUNTIMEINCONSISTENCY, message, context);
  }
}

/**
 * `DATAINCONSISTENCY` (-3): "a data inconsistency was found", an internal server error. Not
 * expected in normal operation: take it to the ensemble's operators, with the server logs.
 */
export class DataInconsistencyError extends ZooKeeperError {
  static {
    brandError(this, 'DataInconsistencyError');
  }
  override name = 'DataInconsistencyError';
  constructor(message?: string, context?: ErrorContext) {
    super(ErrorCode.DATAINCONSISTENCY, message, context);
  }
}

/**
 * `MARSHALLINGERROR` (-5): a request or reply that could not be serialised or read. A server
 * answers with it when processing a request failed unexpectedly (its log says why); this
 * client gives it to a multiRead operation whose result has an unexpected type. The same
 * request fails the same way: report it with the server's log.
 */
export class MarshallingError extends ZooKeeperError {
  static {
    brandError(this, 'MarshallingError');
  }
  override name = 'MarshallingError';
  constructor(message?: string, context?: ErrorContext) {
    super(ErrorCode.MARSHALLINGERROR, message, context);
  }
}

/**
 * `SYSTEMERROR` (-1): in the Java client's table, the start of the range of system and server
 * errors (-1 to -99); ZooKeeper does not send it. This client gives it to a multiRead operation
 * the reply has no result for.
 */
export class SystemError extends ZooKeeperError {
  static {
    brandError(this, 'SystemError');
  }
  override name = 'SystemError';
  constructor(message?: string, context?: ErrorContext) {
    super(ErrorCode.SYSTEMERROR, message, context);
  }
}

/**
 * `APIERROR` (-100): in the Java client's table, the start of the range of API errors (-100
 * and below: the answers about a request, such as NoNode or BadVersion); ZooKeeper does not
 * send it and this client never raises it.
 */
export class ApiError extends ZooKeeperError {
  static {
    brandError(this, 'ApiError');
  }
  override name = 'ApiError';
  constructor(message?: string, context?: ErrorContext) {
    super(ErrorCode.APIERROR, message, context);
  }
}

/**
 * `INVALIDCALLBACK` (-113): "invalid callback specified", a code of the Java client's
 * callback API. ZooKeeper does not send it and this client never raises it; the class exists
 * so that every code has one.
 */
export class InvalidCallbackError extends ZooKeeperError {
  static {
    brandError(this, 'InvalidCallbackError');
  }
  override name = 'InvalidCallbackError';
  constructor(message?: string, context?: ErrorContext) {
    super(ErrorCode.INVALIDCALLBACK, message, context);
  }
}

/**
 * `@zk/protocol`: a ZooKeeper client written from the wire protocol up.
 *
 * @example
 * ```ts
 * import { ZooKeeper, CreateMode } from '@zk/protocol';
 * await using zk = await ZooKeeper.connect('127.0.0.1:2181');
 * await zk.create('/a', 'data', { mode: CreateMode.EPHEMERAL });
 * ```
 * @packageDocumentation
 */
export { ZooKeeper } from './client/zookeeper.js';
export type { CallOptions, CreateOptions, Data, DataResult, WatchOptions } from './client/types.js';
export type { StateChange } from './client/streams.js';
export type { RemovableWatchKind } from './client/watch-ops.js';
export type { ClientOptions } from './client/options.js';
export type { LeaseProofMode } from './session/quorum-proof.js';
export type { LookupFunction } from './connection/resolve.js';
export type { SrvRecord, SrvResolver } from './connection/srv.js';
export type { ParentsMode } from './client/tree.js';
export { retry, isSafeToRetry } from './client/retry.js';
export type { RetryOptions, RetryAttempt } from './client/retry.js';
export type { ClientRetryOptions } from './client/retry-policy.js';
export { causalTokenOf, parseCausalToken } from './client/consistency.js';
export type { ConsistencyOptions, MultiReadOptions, ReadConsistency, ReadOptions } from './client/consistency.js';
export { StaleServerError } from './errors/read-errors.js';
export { tlsFromFiles, type TlsFiles } from './client/tls-files.js';
export type { DigestMd5Options, SaslOptions } from './session/sasl.js';
export type { GssapiOptions } from './kerberos/gssapi-login.js';
export type { KerberosMessage } from './kerberos/trace.js';
export { ClockSkewError, CrossRealmError, KdcUnreachableError, KerberosConfigError, KerberosError, NoUsableEnctypeError, PreauthFailedError, PrincipalUnknownError, TicketExpiredError } from './kerberos/errors.js';
export { Transaction, TransactionError } from './client/transaction.js';
export type { OpResult, OpOutcome, MultiReadOp, MultiReadResult } from './client/transaction.js';
export {
  ANYONE_ID_UNSAFE,
  AUTH_IDS,
  CREATOR_ALL_ACL,
  OPEN_ACL_UNSAFE,
  READ_ACL_UNSAFE,
  digestACL,
  digestId,
  validateACL,
} from './client/acl.js';
export type { ACL, ACLProvider, Id } from './client/acl.js';
export { validatePath, parentPath, baseName, joinPath, sequenceOf } from './util/paths.js';
export { parseConnectString, DEFAULT_PORT } from './session/hosts.js';
export type { ConnectString, HostAddress } from './session/hosts.js';
export type { EnsembleConfig, EnsembleMember, MemberInput, ReconfigChange } from './client/reconfig.js';
export { CONFIG_NODE } from './constants.js';
export type { SessionState, StateListener } from './session/session.js';
export type { WatchedEvent, WatchEventType, WatchListener } from './session/watches.js';
export type { Stat, StatJSON } from './jute/data.js';
export { CreateMode, Perm, DEFAULT_MAX_FRAME_SIZE } from './constants.js';
export { ChannelName } from './diagnostics.js';
export type { ConnectTrace, EventMessage, ProofMessage, RequestStartMessage, RequestFinishMessage, RequestTrace, StateMessage } from './diagnostics.js';
export {
  ErrorCode,
  errorCodeName,
  fromCode,
  ZooKeeperError,
  DecodeError,
  InvalidArgumentError,
  PacketTooLargeError,
  ClientClosedError,
  SystemError,
  RuntimeInconsistencyError,
  DataInconsistencyError,
  ConnectionLossError,
  MarshallingError,
  UnimplementedError,
  OperationTimeoutError,
  BadArgumentsError,
  UnknownSessionError,
  NewConfigNoQuorumError,
  ReconfigInProgressError,
  ApiError,
  NoNodeError,
  NoAuthError,
  BadVersionError,
  NoChildrenForEphemeralsError,
  NodeExistsError,
  NotEmptyError,
  SessionExpiredError,
  InvalidCallbackError,
  InvalidACLError,
  AuthFailedError,
  SessionMovedError,
  NotReadOnlyError,
  EphemeralOnLocalSessionError,
  NoWatcherError,
  RequestTimeoutError,
  ReconfigDisabledError,
  SessionClosedRequireSaslAuthError,
  QuotaExceededError,
  ThrottledOpError,
} from './errors.js';
export type { ErrorCodeName, ErrorCodeValue, ErrorContext } from './errors.js';
export { setLongTimeout, MAX_TIMER_DELAY } from './util/timer.js';
export { closeOnSignals } from './client/close-on-signals.js';
export type { Closable, CloseOnSignalsOptions, SignalCloser } from './client/close-on-signals.js';
export type { LongTimeout } from './util/timer.js';
export { TreeCache } from './cache/tree-cache.js';
export type { CachedNode, NodeChange, TreeCacheEvent, TreeCacheListener, TreeCacheOptions } from './cache/tree-cache.js';
export { NodeCache } from './cache/node-cache.js';
export type { NodeCacheEvent, NodeCacheListener, NodeCacheStartOptions } from './cache/node-cache.js';
export { PathChildrenCache } from './cache/path-children-cache.js';
export type { CacheStartOptions, ChildData, ConnectionEvent, PathChildrenCacheEvent, PathChildrenCacheListener, PathChildrenCacheOptions, PathChildrenCacheStartOptions, StartMode } from './cache/path-children-cache.js';
export type { SessionSource } from './cache/sessions.js';

/**
 * The answers about nodes: codes a server gives when an operation cannot be applied to the
 * node (or watch) it names. Each is final for that request: sending it again gets the same
 * answer until the tree, the ACL or the server's settings change (`isRetryable` is false).
 */
import { brandError, ZooKeeperError, type ErrorContext } from './base.js';
import { ErrorCode } from './codes.js';

/**
 * `NONODE` (-101): the node does not exist.
 *
 * The answer of getData, setData, delete, getChildren, getACL or setACL on a missing node (in a
 * transaction, the `opError` of its {@link TransactionError}); {@link ZooKeeper.exists} answers
 * `null` instead.
 * From a create it is the parent that is missing: the message names it; pass
 * `{ parents: true }` ({@link CreateOptions.parents}) or call {@link ZooKeeper.ensurePath}
 * first. A container parent can also vanish between two creates, once its last child is gone.
 * Under a chroot that does not exist every operation fails with it and the message names the
 * chroot: create it, or connect with `createChroot: true`.
 *
 * What to do: for a delete, the node is already gone, which is often success; for a read, the
 * node was deleted (or never created): treat it as absent.
 *
 * @example
 * ```ts
 * await zk.delete('/jobs/42').catch((e) => { if (!(e instanceof NoNodeError)) throw e; });
 * ```
 */
export class NoNodeError extends ZooKeeperError {
  static {
    brandError(this, 'NoNodeError');
  }
  override name = 'NoNodeError';
  constructor(message?: string, context?: ErrorContext) {
    super(ErrorCode.NONODE, message, context);
  }
}

/**
 * `NOAUTH` (-102): the node's ACL does not grant this session the permission the operation
 * needs: READ for getData and getChildren, WRITE for setData, CREATE or DELETE on the parent
 * for create and delete, ADMIN for setACL; {@link ZooKeeper.reconfig} needs a super user.
 *
 * The message names where credentials come from: the `auth` connect option
 * ({@link ClientOptions.auth}), {@link ZooKeeper.addAuth}, or SASL ({@link ClientOptions.sasl}).
 * A session keeps its credentials and the client sends them again on every reconnect.
 *
 * What to do: authenticate as an identity the ACL names, or have the node's ACL changed
 * ({@link ZooKeeper.setACL}, by a session with ADMIN on it).
 */
export class NoAuthError extends ZooKeeperError {
  static {
    brandError(this, 'NoAuthError');
  }
  override name = 'NoAuthError';
  constructor(message?: string, context?: ErrorContext) {
    super(ErrorCode.NOAUTH, message, context);
  }
}

/**
 * `BADVERSION` (-103): a conditional write lost a race. A setData, delete or setACL given a
 * `version` (setACL: the ACL version, `aversion`), or a transaction's `check`, found the node
 * at another version: someone changed it since you read it. Also a
 * {@link ZooKeeper.reconfig} whose `fromConfig` is no longer the current configuration.
 *
 * What to do: read the node again (its data and Stat), decide again, and write with the new
 * version; that is optimistic concurrency working. A conditional write repeated after a
 * ConnectionLoss ({@link retry} with `idempotent: true`) may fail with it because the first
 * attempt was applied: read the node to tell.
 *
 * @example
 * ```ts
 * for (;;) {
 *   const { data, stat } = await zk.getData('/counter');
 *   try { await zk.setData('/counter', String(Number(data) + 1), { version: stat.version }); break; }
 *   catch (e) { if (!(e instanceof BadVersionError)) throw e; } // someone else wrote first: again
 * }
 * ```
 */
export class BadVersionError extends ZooKeeperError {
  static {
    brandError(this, 'BadVersionError');
  }
  override name = 'BadVersionError';
  constructor(message?: string, context?: ErrorContext) {
    super(ErrorCode.BADVERSION, message, context);
  }
}

/**
 * `NOCHILDRENFOREPHEMERALS` (-108): a create under an ephemeral node. Ephemeral nodes cannot
 * have children. Make the parent persistent or a container; ephemeral (and ephemeral
 * sequential) children under such a parent are the usual layout of locks and elections.
 */
export class NoChildrenForEphemeralsError extends ZooKeeperError {
  static {
    brandError(this, 'NoChildrenForEphemeralsError');
  }
  override name = 'NoChildrenForEphemeralsError';
  constructor(message?: string, context?: ErrorContext) {
    super(ErrorCode.NOCHILDRENFOREPHEMERALS, message, context);
  }
}

/**
 * `NODEEXISTS` (-110): a create of a path that already exists (never for the sequential modes,
 * whose names the server makes unique). {@link ZooKeeper.ensurePath} and `{ parents: true }`
 * take an existing ancestor as success; the node itself existing still fails the create.
 *
 * What to do: when the node existing is what you wanted, take it as success; when the create
 * was a claim (a leader or lock node), someone else holds it: watch it with
 * {@link ZooKeeper.exists}. A create repeated after a ConnectionLoss may fail with it because
 * the first attempt was applied: the node may be your own.
 */
export class NodeExistsError extends ZooKeeperError {
  static {
    brandError(this, 'NodeExistsError');
  }
  override name = 'NodeExistsError';
  constructor(message?: string, context?: ErrorContext) {
    super(ErrorCode.NODEEXISTS, message, context);
  }
}

/**
 * `NOTEMPTY` (-111): a delete of a node that has children; ZooKeeper deletes leaves only.
 * Delete the children first, or use {@link ZooKeeper.deleteRecursive}, which raises it itself
 * (its message says so) when the node keeps gaining children for 5 rounds.
 */
export class NotEmptyError extends ZooKeeperError {
  static {
    brandError(this, 'NotEmptyError');
  }
  override name = 'NotEmptyError';
  constructor(message?: string, context?: ErrorContext) {
    super(ErrorCode.NOTEMPTY, message, context);
  }
}

/**
 * `INVALIDACL` (-114): the server refused the ACL of a create or setACL: an unknown scheme, an
 * id malformed for its scheme (an `ip` id that is not an address, a `digest` id not
 * `user:base64(sha1)`: see {@link digestACL}), or the `auth` scheme on a session with no
 * credentials. The client checks the list's shape before sending ({@link validateACL}, an
 * {@link InvalidArgumentError}); what a scheme accepts only the server knows.
 */
export class InvalidACLError extends ZooKeeperError {
  static {
    brandError(this, 'InvalidACLError');
  }
  override name = 'InvalidACLError';
  constructor(message?: string, context?: ErrorContext) {
    super(ErrorCode.INVALIDACL, message, context);
  }
}

/**
 * `BADARGUMENTS` (-8): the server refused the request's arguments where the client could not
 * know better: a TTL outside what the server accepts, a TTL create on a server without
 * `zookeeper.extendedTypesEnabled` (some versions answer Unimplemented instead), a
 * {@link ZooKeeper.reconfig} that would leave no members. Input the client can check is
 * refused before sending, with {@link InvalidArgumentError}.
 */
export class BadArgumentsError extends ZooKeeperError {
  static {
    brandError(this, 'BadArgumentsError');
  }
  override name = 'BadArgumentsError';
  constructor(message?: string, context?: ErrorContext) {
    super(ErrorCode.BADARGUMENTS, message, context);
  }
}

/**
 * `QUOTAEXCEEDED` (-125): a create or setData that would exceed a hard quota (node count or
 * bytes) set on the path or an ancestor; ZooKeeper 3.7+ enforces quotas only with
 * `zookeeper.enforceQuota=true`. Free space under the quota, or have it raised.
 */
export class QuotaExceededError extends ZooKeeperError {
  static {
    brandError(this, 'QuotaExceededError');
  }
  override name = 'QuotaExceededError';
  constructor(message?: string, context?: ErrorContext) {
    super(ErrorCode.QUOTAEXCEEDED, message, context);
  }
}

/**
 * `EPHEMERALONLOCALSESSION` (-120): an ephemeral create on a local session. With
 * `localSessionsEnabled=true` on the servers a session starts local (known to one server
 * only), and a local session owns no ephemeral nodes unless the servers also have
 * `localSessionsUpgradingEnabled=true`, which makes it global at its first ephemeral create.
 * Enable upgrading on the servers, or create a persistent node.
 */
export class EphemeralOnLocalSessionError extends ZooKeeperError {
  static {
    brandError(this, 'EphemeralOnLocalSessionError');
  }
  override name = 'EphemeralOnLocalSessionError';
  constructor(message?: string, context?: ErrorContext) {
    super(ErrorCode.EPHEMERALONLOCALSESSION, message, context);
  }
}

/**
 * `NOWATCHER` (-121): no such watch. {@link ZooKeeper.removeWatches} raises it for a path and
 * kind this client has no watch on, found in its own registry before anything is sent (the
 * server's NoWatcher, for a watch it no longer holds, is taken as done);
 * {@link ZooKeeper.checkWatches} answers `false` instead. A {@link TreeCache} ends with it when
 * its watch is removed from under it. Usually harmless: the watch had already fired (a
 * standard watch fires once) or had been removed.
 */
export class NoWatcherError extends ZooKeeperError {
  static {
    brandError(this, 'NoWatcherError');
  }
  override name = 'NoWatcherError';
  constructor(message?: string, context?: ErrorContext) {
    super(ErrorCode.NOWATCHER, message, context);
  }
}

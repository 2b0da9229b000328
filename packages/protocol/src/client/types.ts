/**
 * The options and results of the client's calls, shared by the `ZooKeeper` class and the
 * transaction builder (so that neither imports the other for them).
 */
import type { Stat } from '../jute/data.js';
import type { MultiOpInput } from '../jute/multi.js';
import type { WatchListener } from '../session/watches.js';
import type { ACL } from './acl.js';
import type { ParentsMode } from './tree.js';

export type { Data } from './data.js';

/** @internal A create as the wire carries it, alone or inside a multi. */
export type CreateOp = Extract<MultiOpInput, { type: 1 | 15 | 19 | 21 }>;

/** Options every call accepts. */
export interface CallOptions {
  /** Abandons the wait (a request already sent still gets its reply, which is ignored). */
  signal?: AbortSignal;
  /** Deadline in ms for this call (overrides the client's `requestTimeout`): a finite number >= 0, honoured however long. */
  timeout?: number;
}

/** Options of {@link ZooKeeper.create}. */
export interface CreateOptions extends CallOptions {
  /** A {@link CreateMode} value (default `CreateMode.PERSISTENT`). */
  mode?: number;
  /** The node's ACL (default: the client's `acl` connect option for this path, else {@link OPEN_ACL_UNSAFE}). */
  acl?: readonly ACL[];
  /** Time to live in ms, for the TTL modes only (the server needs `extendedTypesEnabled`). */
  ttl?: number;
  /**
   * Create the missing ancestors first, without data, like `mkdir -p` (default false): `true`
   * makes them persistent, `'container'` makes them containers, which the server deletes some
   * time after their last child is gone. Persistent is the default because ancestors are usually
   * directories the application means to keep (a container may vanish between two of its
   * creates, which then fail with NoNode); containers suit scratch parents such as lock
   * directories. One round trip when the parent exists; otherwise one more, carrying every
   * ancestor's create and this one in order. An ancestor create that fails for any reason but
   * NodeExists (ConnectionLoss included: it may not have happened) fails the call.
   */
  parents?: ParentsMode;
  /**
   * ACL of the ancestors `parents` creates (default: the client's `acl` connect option for each
   * ancestor's path, else {@link OPEN_ACL_UNSAFE}; never this create's `acl`).
   */
  parentAcl?: readonly ACL[];
}

/** Options of reads that can leave a watch. */
export interface WatchOptions extends CallOptions {
  /** Called once with the next change of this node (a one-shot watch). */
  watch?: WatchListener;
}

/** What {@link ZooKeeper.getData} returns. */
export interface DataResult {
  readonly data: Buffer;
  readonly stat: Stat;
  /**
   * The zxid in the reply's header: the last transaction the server had applied when it answered,
   * so this data is at least that new. `causalTokenOf(zxid)` makes it a token another process can
   * read `{ after }` (see the Consistency guide). Always set by {@link ZooKeeper.getData}; optional
   * so that fakes and wrappers written before it still type-check.
   */
  readonly zxid?: bigint;
}

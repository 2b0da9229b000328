/**
 * Numeric constants of the ZooKeeper wire protocol, as `as const` maps with derived types.
 *
 * Every number was checked against the Debian ZooKeeper 3.8.0 jars with `javap -constants`
 * (static finals) or `javap -c` (enum constructors); the Java name is given beside each.
 */

/**
 * Operation codes: the `type` of a `RequestHeader` and of a `MultiHeader`
 * (Java `org.apache.zookeeper.ZooDefs.OpCode`, same names).
 */
export const OpCode = {
  /** `OpCode.notification` (0): used by the server internally, never sent by a client. */
  notification: 0,
  /** `OpCode.create` */
  create: 1,
  /** `OpCode.delete` */
  delete: 2,
  /** `OpCode.exists` */
  exists: 3,
  /** `OpCode.getData` */
  getData: 4,
  /** `OpCode.setData` */
  setData: 5,
  /** `OpCode.getACL` */
  getACL: 6,
  /** `OpCode.setACL` */
  setACL: 7,
  /** `OpCode.getChildren` */
  getChildren: 8,
  /** `OpCode.sync` */
  sync: 9,
  /** `OpCode.ping` */
  ping: 11,
  /** `OpCode.getChildren2` (children and the parent's Stat) */
  getChildren2: 12,
  /** `OpCode.check` (version check, inside a multi) */
  check: 13,
  /** `OpCode.multi` */
  multi: 14,
  /** `OpCode.create2` (create answering with the Stat) */
  create2: 15,
  /** `OpCode.reconfig` */
  reconfig: 16,
  /** `OpCode.checkWatches` */
  checkWatches: 17,
  /** `OpCode.removeWatches` */
  removeWatches: 18,
  /** `OpCode.createContainer` */
  createContainer: 19,
  /** `OpCode.deleteContainer` */
  deleteContainer: 20,
  /** `OpCode.createTTL` */
  createTTL: 21,
  /** `OpCode.multiRead` (3.6+) */
  multiRead: 22,
  /** `OpCode.auth` */
  auth: 100,
  /** `OpCode.setWatches` */
  setWatches: 101,
  /** `OpCode.sasl` */
  sasl: 102,
  /** `OpCode.getEphemerals` (3.6+) */
  getEphemerals: 103,
  /** `OpCode.getAllChildrenNumber` (3.6+) */
  getAllChildrenNumber: 104,
  /** `OpCode.setWatches2` (3.6+) */
  setWatches2: 105,
  /** `OpCode.addWatch` (3.6+) */
  addWatch: 106,
  /** `OpCode.whoAmI` (3.7+) */
  whoAmI: 107,
  /** `OpCode.createSession` */
  createSession: -10,
  /** `OpCode.closeSession` */
  closeSession: -11,
  /** `OpCode.error`: the `type` of a multi result header whose body is an `ErrorResponse`. */
  error: -1,
} as const;
/** The Java name of an op code. */
export type OpCodeName = keyof typeof OpCode;
/** A numeric op code. */
export type OpCodeValue = (typeof OpCode)[OpCodeName];

/**
 * Reserved xids (Java `ClientCnxn.NOTIFICATION_XID`, `PING_XID`, `AUTHPACKET_XID`,
 * `SET_WATCHES_XID`). Ordinary requests use positive xids.
 */
export const Xid = {
  /** `NOTIFICATION_XID`: a reply header with this xid carries a `WatcherEvent`. */
  notification: -1,
  /** `PING_XID` */
  ping: -2,
  /** `AUTHPACKET_XID` */
  auth: -4,
  /** `SET_WATCHES_XID` */
  setWatches: -8,
} as const;
/** A reserved xid. */
export type XidValue = (typeof Xid)[keyof typeof Xid];

/** Node creation modes, the `flags` of a create request (Java `org.apache.zookeeper.CreateMode`, `toFlag()`). */
export const CreateMode = {
  /** `CreateMode.PERSISTENT` */
  PERSISTENT: 0,
  /** `CreateMode.EPHEMERAL` */
  EPHEMERAL: 1,
  /** `CreateMode.PERSISTENT_SEQUENTIAL` */
  PERSISTENT_SEQUENTIAL: 2,
  /** `CreateMode.EPHEMERAL_SEQUENTIAL` */
  EPHEMERAL_SEQUENTIAL: 3,
  /** `CreateMode.CONTAINER` (sent with op `createContainer`) */
  CONTAINER: 4,
  /** `CreateMode.PERSISTENT_WITH_TTL` (sent with op `createTTL`) */
  PERSISTENT_WITH_TTL: 5,
  /** `CreateMode.PERSISTENT_SEQUENTIAL_WITH_TTL` (sent with op `createTTL`) */
  PERSISTENT_SEQUENTIAL_WITH_TTL: 6,
} as const;
/** The Java name of a create mode. */
export type CreateModeName = keyof typeof CreateMode;
/** A numeric create mode. */
export type CreateModeValue = (typeof CreateMode)[CreateModeName];

/** ACL permission bits (Java `ZooDefs.Perms`). Combine with `|`. */
export const Perm = {
  /** `Perms.READ` */
  READ: 1,
  /** `Perms.WRITE` */
  WRITE: 2,
  /** `Perms.CREATE` */
  CREATE: 4,
  /** `Perms.DELETE` */
  DELETE: 8,
  /** `Perms.ADMIN` */
  ADMIN: 16,
  /** `Perms.ALL` (READ | WRITE | CREATE | DELETE | ADMIN) */
  ALL: 31,
} as const;
/** A single named permission value. */
export type PermValue = (typeof Perm)[keyof typeof Perm];

/** Watch event types, the `type` of a `WatcherEvent` (Java `Watcher.Event.EventType`, `getIntValue()`). */
export const EventType = {
  /** `EventType.None`: a state change, no node involved. */
  None: -1,
  /** `EventType.NodeCreated` */
  NodeCreated: 1,
  /** `EventType.NodeDeleted` */
  NodeDeleted: 2,
  /** `EventType.NodeDataChanged` */
  NodeDataChanged: 3,
  /** `EventType.NodeChildrenChanged` */
  NodeChildrenChanged: 4,
  /** `EventType.DataWatchRemoved` */
  DataWatchRemoved: 5,
  /** `EventType.ChildWatchRemoved` */
  ChildWatchRemoved: 6,
  /** `EventType.PersistentWatchRemoved` */
  PersistentWatchRemoved: 7,
} as const;
/** The Java name of an event type. */
export type EventTypeName = keyof typeof EventType;
/** A numeric event type. */
export type EventTypeValue = (typeof EventType)[EventTypeName];

/** Connection states, the `state` of a `WatcherEvent` (Java `Watcher.Event.KeeperState`, `getIntValue()`). */
export const KeeperState = {
  /** `KeeperState.Unknown` (deprecated in Java, never sent by a 3.x server) */
  Unknown: -1,
  /** `KeeperState.Disconnected` */
  Disconnected: 0,
  /** `KeeperState.NoSyncConnected` (deprecated in Java, never sent by a 3.x server) */
  NoSyncConnected: 1,
  /** `KeeperState.SyncConnected`: the state of every watch notification a server sends. */
  SyncConnected: 3,
  /** `KeeperState.AuthFailed` */
  AuthFailed: 4,
  /** `KeeperState.ConnectedReadOnly` */
  ConnectedReadOnly: 5,
  /** `KeeperState.SaslAuthenticated` */
  SaslAuthenticated: 6,
  /** `KeeperState.Expired` (-112, the same number as the SESSIONEXPIRED error code) */
  Expired: -112,
  /** `KeeperState.Closed` (client-side only) */
  Closed: 7,
} as const;
/** The Java name of a keeper state. */
export type KeeperStateName = keyof typeof KeeperState;
/** A numeric keeper state. */
export type KeeperStateValue = (typeof KeeperState)[KeeperStateName];

/** Watcher kinds of `CheckWatchesRequest`/`RemoveWatchesRequest` `type` (Java `Watcher.WatcherType`, `getIntValue()`). */
export const WatcherType = {
  /** `WatcherType.Children` */
  Children: 1,
  /** `WatcherType.Data` */
  Data: 2,
  /** `WatcherType.Any` */
  Any: 3,
  /** `WatcherType.Persistent` (3.9+, ZOOKEEPER-4472: a 3.8 server answers MARSHALLINGERROR) */
  Persistent: 4,
  /** `WatcherType.PersistentRecursive` (3.9+, ZOOKEEPER-4472) */
  PersistentRecursive: 5,
} as const;
/** A numeric watcher type. */
export type WatcherTypeValue = (typeof WatcherType)[keyof typeof WatcherType];

/** Modes of `AddWatchRequest` (Java `org.apache.zookeeper.AddWatchMode`; `ZooDefs.AddWatchModes`). */
export const AddWatchMode = {
  /** `AddWatchMode.PERSISTENT` (`AddWatchModes.persistent`) */
  PERSISTENT: 0,
  /** `AddWatchMode.PERSISTENT_RECURSIVE` (`AddWatchModes.persistentRecursive`) */
  PERSISTENT_RECURSIVE: 1,
} as const;
/** A numeric add-watch mode. */
export type AddWatchModeValue = (typeof AddWatchMode)[keyof typeof AddWatchMode];

/** The `protocolVersion` of a `ConnectRequest`; every 3.x server and client send 0. */
export const PROTOCOL_VERSION = 0;

/**
 * The default largest frame payload in bytes: Java's `jute.maxbuffer` default, 0xfffff
 * (1048575 bytes, one byte under 1 MiB; `org.apache.jute.BinaryInputArchive.maxBuffer`).
 */
export const DEFAULT_MAX_FRAME_SIZE = 0xfffff;

/**
 * The node holding the ensemble's dynamic configuration (Java `ZooDefs.CONFIG_NODE`). The client
 * reads and watches it by this server path whatever the chroot, as the Java client's getConfig does.
 */
export const CONFIG_NODE = '/zookeeper/config';

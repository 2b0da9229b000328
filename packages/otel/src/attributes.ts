/**
 * Attribute and metric names: the OpenTelemetry database semantic conventions' (stable v1.x
 * names) and this instrumentation's own `zookeeper.*` ones.
 */

/** Attribute names set on spans and metrics. */
export const ZooKeeperAttributes = {
  /** Always `zookeeper`. */
  DB_SYSTEM_NAME: 'db.system.name',
  /** The operation (`getData`, `create`, `multi`, ...). */
  DB_OPERATION_NAME: 'db.operation.name',
  /** `{operation} {path summary}` (`create /locks/job/_c_*-lock-*`), low-cardinality; the span's name. */
  DB_QUERY_SUMMARY: 'db.query.summary',
  /** The client's chroot (`/app`), when it has one: the part of the tree it works in. */
  DB_NAMESPACE: 'db.namespace',
  /** The ZooKeeper error code of the reply, as a string (`-101`), when not 0. */
  DB_RESPONSE_STATUS_CODE: 'db.response.status_code',
  /** The number of operations of a `multi` or `multiRead`. */
  DB_OPERATION_BATCH_SIZE: 'db.operation.batch.size',
  /** What failed: the code's Java name (`NONODE`) or the error's class name (`RequestTimeoutError`). */
  ERROR_TYPE: 'error.type',
  SERVER_ADDRESS: 'server.address',
  SERVER_PORT: 'server.port',
  /** The request's xid. */
  XID: 'zookeeper.xid',
  /** The session id, hex (`0x1000a2b3c4d0001`). */
  SESSION_ID: 'zookeeper.session.id',
  /** Bytes of the request frame and of the reply frame, length prefixes included. */
  REQUEST_BYTES: 'zookeeper.request.bytes',
  REPLY_BYTES: 'zookeeper.reply.bytes',
  /** A read sent in a multiRead batch with others: how many reads shared it. */
  BATCHED: 'zookeeper.batched',
  /** A session state (`connected`, `suspended`, ...), and the state before it. */
  SESSION_STATE: 'zookeeper.session.state',
  SESSION_PREVIOUS_STATE: 'zookeeper.session.previous_state',
  /** Connect: the servers as listed, the chroot, the session timeout granted (ms). */
  HOSTS: 'zookeeper.hosts',
  CHROOT: 'zookeeper.chroot',
  SESSION_TIMEOUT: 'zookeeper.session.timeout_ms',
  /** Lock waits and holds. */
  LOCK_KIND: 'zookeeper.lock.kind',
  LOCK_PATH: 'zookeeper.lock.path',
  LOCK_NODE: 'zookeeper.lock.node',
  LOCK_TIMEOUT: 'zookeeper.lock.timeout_ms',
  LOCK_POSITION: 'zookeeper.lock.position',
  /** The fencing token (a zxid, a 64-bit integer), as a decimal string. */
  LOCK_FENCING_TOKEN: 'zookeeper.lock.fencing_token',
  /** A wait's outcome: `acquired`, `timeout`, `aborted`, `lost` or `error`. */
  LOCK_OUTCOME: 'zookeeper.lock.outcome',
  /** A hold's end: whether it had been lost first. */
  LOCK_LOST: 'zookeeper.lock.lost',
  LOCK_HELD_MS: 'zookeeper.lock.held_ms',
  /** Leadership: whether the participant leads after the change. */
  LEADER: 'zookeeper.leadership.is_leader',
  /** A watch notification's type. */
  WATCH_EVENT_TYPE: 'zookeeper.watch.event_type',
} as const;

/** Metric names. */
export const ZooKeeperMetrics = {
  /** Histogram, seconds: one per request (semantic conventions' database client metric). */
  OPERATION_DURATION: 'db.client.operation.duration',
  /** UpDownCounter: sessions in each state (`zookeeper.session.state`). */
  SESSIONS: 'zookeeper.client.sessions',
  /** Observable up-down counter: requests sent and not yet answered, read at collection. */
  OUTSTANDING: 'zookeeper.client.requests.outstanding',
  /** Counter: sessions back to connected after being suspended or lost. */
  RECONNECTS: 'zookeeper.client.reconnects',
  /** Counter: watch notifications received, by type. */
  WATCH_EVENTS: 'zookeeper.client.watch.events',
  /** Histogram, seconds: lock, permit and leadership waits, by kind and outcome. */
  LOCK_WAIT: 'zookeeper.lock.wait.duration',
  /** Histogram, seconds: holds, by kind and whether lost. */
  LOCK_HOLD: 'zookeeper.lock.hold.duration',
  /** Counter: holds lost (or put at risk), by kind. */
  LEASES_LOST: 'zookeeper.lock.leases_lost',
  /** Counter: leadership gained or lost, by kind and `zookeeper.leadership.is_leader`. */
  LEADERSHIP_CHANGES: 'zookeeper.leadership.changes',
} as const;

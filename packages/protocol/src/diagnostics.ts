/**
 * Observability without output: `node:diagnostics_channel` channels (payloads are built only
 * when someone subscribes) and `NODE_DEBUG=zk` through util.debuglog: state changes, and one line
 * per request when it settles (operation, path as the caller gave it, duration, `ok` or the
 * error). The library prints nothing otherwise.
 *
 * Tracing channels (`diagnostics_channel.tracingChannel(name)`: start / end / asyncStart /
 * asyncEnd / error, one context object per operation, filled in as it goes):
 * - `zk:request` {@link RequestTrace}: every request the application makes (not pings, auth,
 *   SetWatches or the quorum proof)
 * - `zk:connect` {@link ConnectTrace}: `ZooKeeper.connect`, from the first dial to the client
 *   being ready (auth, chroot and ensemble tracking included)
 *
 * Plain channels:
 * - `zk:state`          `{ sessionId: bigint, from: string, to: string }`
 * - `zk:event`          `{ sessionId: bigint, type: string, path: string, listeners: number }` per watch notification received
 * - `zk:proof`          `{ sessionId: bigint, err: number, durationMs: number, proven: number }` per quorum-proof write
 *   settled (session/quorum-proof.ts); kept off `zk:request`, which carries the application's requests only
 * - `zk:kerberos`       {@link KerberosMessage} per Kerberos step settled (AS, ccache, renewal, TGS:
 *   kerberos/trace.ts); names, times and enctypes only, never a key, a password or a ticket
 * - `zk:request:start`, `zk:request:finish`: the per-request channels before `zk:request`
 *   (`{ op, path }`, `{ op, path, err, durationMs }`), kept for their subscribers; deprecated.
 */
import * as dc from 'node:diagnostics_channel';
import { channel } from 'node:diagnostics_channel';
import { debuglog } from 'node:util';
import { hex64 } from './util/hex.js';
import type { KerberosMessage } from './kerberos/trace.js';

/** Channel names, for `diagnostics_channel.subscribe(name, fn)`. */
export const ChannelName = {
  requestStart: 'zk:request:start',
  requestFinish: 'zk:request:finish',
  state: 'zk:state',
  event: 'zk:event',
  proof: 'zk:proof',
  /** Kerberos steps of a GSSAPI login (see {@link KerberosMessage}). */
  kerberos: 'zk:kerberos',
  /** Tracing channel: every request (see {@link RequestTrace}). */
  request: 'zk:request',
  /** Tracing channel: `ZooKeeper.connect` (see {@link ConnectTrace}). */
  connect: 'zk:connect',
} as const;

/**
 * The context object of the `zk:request` tracing channel: one per request, the same object at
 * each of its events. Fields marked "when sent" are filled in once the request leaves (a request
 * held while disconnected has them only at `asyncEnd`, and never when it was not sent); the reply's
 * fields at `asyncStart`/`asyncEnd`. A reply carrying a ZooKeeper error code is a completed
 * request (`errorCode` says which; `error` is not published: `exists` answering NoNode, or a
 * recipe deleting a node already gone, are not failures); `error` fires when no reply settles
 * the request: connection loss, timeout, abort, a frame too large, bad input.
 */
export interface RequestTrace {
  /** The operation's name as in the API (`getData`, `create`, `multi`, ...). */
  readonly operation: string;
  /** Its opcode (`OpCode`). */
  readonly op: number;
  /** The path as the caller gave it (without the chroot; for a multi, its first op's). */
  readonly path: string | undefined;
  /** The client's chroot, or '' for none. */
  readonly chroot: string;
  /** Session id when sent (0n before the first connection). */
  sessionId: bigint;
  /**
   * The server: at `start` the one the session is connected to (none while disconnected), then
   * the one it was sent to (the address dialed), when sent.
   */
  serverAddress?: string | undefined;
  serverPort?: number | undefined;
  /** Its xid, when sent (for a read sent in a multiRead batch, the batch's). */
  xid?: number | undefined;
  /** Bytes of the request frame, length prefix included, when sent (a batched read: the batch's). */
  requestBytes?: number | undefined;
  /** Bytes of the reply frame, length prefix included (a batched read: the batch's). */
  replyBytes?: number | undefined;
  /** For a read sent in a multiRead batch with others (`coalesceReads`): how many reads shared it. */
  batched?: number | undefined;
  /** For `multi` and `multiRead`: the number of operations. */
  batchSize?: number | undefined;
  /**
   * The ZooKeeper error code of the reply (0: success), set at `asyncStart`. For a `multi` that
   * failed, the code of the operation that failed (its reply header says 0).
   */
  errorCode?: number | undefined;
  /** The reply (`{ zxid, err, body }`), as `tracePromise` sets it. */
  result?: unknown;
  /** What settled the request when no reply did (ConnectionLossError, RequestTimeoutError, the abort reason, ...). */
  error?: unknown;
}

/**
 * The context object of the `zk:connect` tracing channel. `asyncEnd` comes once the client is
 * ready (or `error`, then `asyncEnd`, with the reason it is not); reconnects of a live client are
 * state changes (`zk:state`), not connects.
 */
export interface ConnectTrace {
  /** The servers as listed (host:port, comma-separated; credentials are never part of it). */
  readonly hosts: string;
  /** The chroot, or '' for none. */
  readonly chroot: string;
  /** The session timeout asked for, ms. */
  readonly sessionTimeout: number;
  /** Once connected: the session id, and the server (address dialed and port). */
  sessionId?: bigint | undefined;
  serverAddress?: string | undefined;
  serverPort?: number | undefined;
  /** The session timeout the server granted, once connected. */
  negotiatedTimeout?: number | undefined;
  /** The client, once ready. */
  result?: unknown;
  error?: unknown;
}

/**
 * A tracing channel, where the runtime has them (Node 19.9+ / 18.19+, Bun, Deno); undefined
 * elsewhere, which leaves the tracing off.
 */
function tracing<T extends object>(name: string): dc.TracingChannel<unknown, T> | undefined {
  const make = (dc as { tracingChannel?: (name: string) => dc.TracingChannel<unknown, T> }).tracingChannel;
  return typeof make === 'function' ? make(name) : undefined;
}

/** @internal */
export const requestChannel = tracing<RequestTrace>(ChannelName.request);
/** @internal */
export const connectChannel = tracing<ConnectTrace>(ChannelName.connect);

/**
 * @internal Whether a tracing channel has subscribers. `TracingChannel.hasSubscribers` is newer
 * than the channels (Node 22 / 20.13); elsewhere its start channel stands for it.
 */
export function traced(tc: dc.TracingChannel<unknown, object> | undefined): boolean {
  if (tc === undefined) return false;
  const has = (tc as { hasSubscribers?: boolean }).hasSubscribers;
  return has ?? (tc.start.hasSubscribers || tc.asyncEnd.hasSubscribers || tc.error.hasSubscribers);
}

/** Payload of `zk:request:start`. */
export interface RequestStartMessage {
  readonly op: number;
  readonly path?: string | undefined;
}
/** Payload of `zk:request:finish`. */
export interface RequestFinishMessage extends RequestStartMessage {
  /** The reply's error code (0 for success, -4 when the connection was lost). */
  readonly err: number;
  readonly durationMs: number;
}
/** Payload of `zk:state`. */
export interface StateMessage {
  readonly sessionId: bigint;
  readonly from: string;
  readonly to: string;
}

/** Payload of `zk:event`: a watch notification and how many listeners it reached. */
export interface EventMessage {
  readonly sessionId: bigint;
  readonly type: string;
  readonly path: string;
  readonly listeners: number;
}

/** @internal */
export const eventChannel = channel(ChannelName.event);
/**
 * Payload of `zk:proof`: one quorum-proof request of the client's own settled (`kind` 'write', a
 * no-op multi, or 'sync'; `err` 0: answered; -4: the connection dropped first) and `proven`, the
 * proof's time after it (performance.now() clock).
 */
export interface ProofMessage {
  readonly sessionId: bigint;
  readonly kind: 'write' | 'sync';
  readonly err: number;
  readonly durationMs: number;
  readonly proven: number;
}

/** @internal */
export const proofChannel = channel(ChannelName.proof);
/** @internal */
export const requestStartChannel = channel(ChannelName.requestStart);
/** @internal */
export const requestFinishChannel = channel(ChannelName.requestFinish);
const stateChannel = channel(ChannelName.state);

/** @internal */
export function publishState(sessionId: bigint, from: string, to: string): void {
  if (debugEnabled) debug('state %s -> %s (session 0x%s)', from, to, hex64(sessionId));
  if (stateChannel.hasSubscribers) stateChannel.publish({ sessionId, from, to } satisfies StateMessage);
}

/** @internal `NODE_DEBUG=zk` logging. */
export const debug = debuglog('zk');
/**
 * @internal Whether `NODE_DEBUG` names `zk`. Node reads NODE_DEBUG once at startup, so this is
 * read once too, and a request tests a constant.
 */
export const debugEnabled = debug.enabled;

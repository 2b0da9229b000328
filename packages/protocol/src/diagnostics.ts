/**
 * Observability without output: `node:diagnostics_channel` channels (payloads are built only
 * when someone subscribes) and `NODE_DEBUG=zk` through util.debuglog: state changes, and one line
 * per request when it settles (operation, path as the caller gave it, duration, `ok` or the
 * error). The library prints nothing otherwise.
 *
 * Channels:
 * - `zk:request:start`  `{ op: number, path?: string }`
 * - `zk:request:finish` `{ op: number, path?: string, err: number, durationMs: number }`
 * - `zk:state`          `{ sessionId: bigint, from: string, to: string }`
 * - `zk:event`          `{ sessionId: bigint, type: string, path: string, listeners: number }` per watch notification received
 * - `zk:proof`          `{ sessionId: bigint, err: number, durationMs: number, proven: number }` per quorum-proof write
 *   settled (session/quorum-proof.ts); kept off `zk:request:*`, which carry the application's requests only
 */
import { channel } from 'node:diagnostics_channel';
import { debuglog } from 'node:util';

/** Channel names, for `diagnostics_channel.subscribe(name, fn)`. */
export const ChannelName = {
  requestStart: 'zk:request:start',
  requestFinish: 'zk:request:finish',
  state: 'zk:state',
  event: 'zk:event',
  proof: 'zk:proof',
} as const;

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
 * Payload of `zk:proof`: one quorum-proof write settled (`err` 0: committed; -4: the connection
 * dropped first) and `proven`, the proof's time after it (performance.now() clock).
 */
export interface ProofMessage {
  readonly sessionId: bigint;
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
  if (debugEnabled) debug('state %s -> %s (session 0x%s)', from, to, sessionId.toString(16));
  if (stateChannel.hasSubscribers) stateChannel.publish({ sessionId, from, to } satisfies StateMessage);
}

/** @internal `NODE_DEBUG=zk` logging. */
export const debug = debuglog('zk');
/**
 * @internal Whether `NODE_DEBUG` names `zk`. Node reads NODE_DEBUG once at startup, so this is
 * read once too, and a request tests a constant.
 */
export const debugEnabled = debug.enabled;

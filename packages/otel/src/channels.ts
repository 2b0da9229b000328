/**
 * The channels this instrumentation reads, and the parts of their payloads it uses. The payloads
 * are published by `@zk/protocol` (`RequestTrace`, `ConnectTrace`, `zk:state`, `zk:event`) and
 * `@zk/locks` (`AcquireTrace`, `zk:lock:hold`, `zk:lock:lost`, `zk:leadership`); they are
 * restated here structurally, so this package depends on neither (the integration tests check that
 * the packages' own types fit these).
 */

/** Channel names: the tracing channels' and the plain ones'. */
export const Channels = {
  request: 'zk:request',
  connect: 'zk:connect',
  acquire: 'zk:lock:acquire',
  state: 'zk:state',
  event: 'zk:event',
  hold: 'zk:lock:hold',
  lost: 'zk:lock:lost',
  revoke: 'zk:lock:revoke',
  leadership: 'zk:leadership',
} as const;

/** What a `zk:request` context holds (see `RequestTrace` in `@zk/protocol`). */
export interface RequestContext {
  readonly operation: string;
  readonly op: number;
  readonly path: string | undefined;
  /** The client's chroot ('' for none; absent from @zk/protocol before it published it). */
  readonly chroot?: string | undefined;
  readonly sessionId: bigint;
  readonly serverAddress?: string | undefined;
  readonly serverPort?: number | undefined;
  readonly xid?: number | undefined;
  readonly requestBytes?: number | undefined;
  readonly replyBytes?: number | undefined;
  readonly batched?: number | undefined;
  readonly batchSize?: number | undefined;
  readonly errorCode?: number | undefined;
  readonly result?: unknown;
  readonly error?: unknown;
}

/** What a `zk:connect` context holds (see `ConnectTrace` in `@zk/protocol`). */
export interface ConnectContext {
  readonly hosts: string;
  readonly chroot: string;
  readonly sessionTimeout: number;
  readonly sessionId?: bigint | undefined;
  readonly serverAddress?: string | undefined;
  readonly serverPort?: number | undefined;
  readonly negotiatedTimeout?: number | undefined;
  readonly error?: unknown;
}

/** What a `zk:lock:acquire` context holds (see `AcquireTrace` in `@zk/locks`). */
export interface AcquireContext {
  readonly kind: string;
  readonly path: string;
  readonly sessionId: bigint;
  readonly timeout: number | undefined;
  readonly position?: number | undefined;
  readonly node?: string | undefined;
  readonly fencingToken?: bigint | undefined;
  readonly error?: unknown;
}

/** `zk:state`: a session changed state. */
export interface StateMessage {
  readonly sessionId: bigint;
  readonly from: string;
  readonly to: string;
}

/** `zk:event`: a watch notification. */
export interface WatchEventMessage {
  readonly sessionId: bigint;
  readonly type: string;
  readonly path: string;
}

/** `zk:lock:hold`: a hold started or ended. */
export interface HoldMessage {
  readonly event: 'start' | 'end';
  readonly kind: string;
  readonly path: string;
  readonly node: string;
  readonly fencingToken: bigint;
  readonly sessionId: bigint;
  readonly heldMs?: number | undefined;
  readonly lost?: boolean | undefined;
}

/** `zk:lock:lost`: a hold is at risk or gone. */
export interface LostMessage {
  readonly kind: string;
  readonly path: string;
  readonly node: string;
  readonly fencingToken: bigint;
  readonly sessionId: bigint;
  readonly reason: unknown;
  readonly heldMs: number;
}

/** `zk:lock:revoke`: the holder of `node` was asked to release. */
export interface RevokeMessage {
  readonly kind: string;
  readonly path: string;
  readonly node: string;
  readonly fencingToken: bigint;
  readonly sessionId: bigint;
}

/** `zk:leadership`: leadership gained or lost. */
export interface LeadershipMessage {
  readonly kind: string;
  readonly path: string;
  readonly id: string;
  readonly sessionId: bigint;
  readonly isLeader: boolean;
  readonly fencingToken?: bigint | undefined;
}

/** A session id as ZooKeeper's logs print it (`0x1000a2b3c4d0001`). */
export function sessionHex(id: bigint): string {
  return `0x${id.toString(16)}`;
}

/** The name of what failed: the error's class name (`RequestTimeoutError`), else its type. */
export function errorName(error: unknown): string {
  if (error instanceof Error) return error.name || error.constructor.name;
  if (typeof error === 'object' && error !== null) return error.constructor?.name ?? 'Object';
  return typeof error;
}

/** An error's message, for span statuses and events. */
export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

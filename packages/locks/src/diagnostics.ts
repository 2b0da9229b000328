/**
 * The recipes' `node:diagnostics_channel` channels: what a tracer or a metrics exporter needs to
 * see lock waits, holds, losses, revocation requests and leadership changes. Payloads are made
 * only when someone subscribes; with no subscriber, each place pays one `hasSubscribers` test.
 *
 * Tracing channel (`diagnostics_channel.tracingChannel('zk:lock:acquire')`, whose events are
 * `tracing:zk:lock:acquire:start|end|asyncStart|asyncEnd|error`), one {@link AcquireTrace} per wait:
 * `Mutex`, `ReadLock`, `WriteLock`, `ExclusiveLock` and `SemaphoreMutex` acquires (a new hold; a
 * reentrant one is not a wait), `Semaphore` acquires, `MultiLock` acquires (its parts' acquires
 * nest inside), `LeaderLatch.leadership()` waits, and the wait of each `LeaderSelector` term.
 *
 * Plain channels:
 * - `zk:lock:hold`   {@link HoldMessage}: a hold starts (`event: 'start'`) and ends (`'end'`)
 * - `zk:lock:lost`   {@link LeaseLostMessage}: a hold is at risk or lost (its signal aborts)
 * - `zk:lock:revoke` {@link RevocationMessage}: a holder received a revocation request
 * - `zk:leadership`  {@link LeadershipMessage}: a LeaderLatch or LeaderSelector gained or lost leadership
 *
 * Stability: channel names and the fields documented here are a public API (a new field may be
 * added in a minor release; none is removed or changes meaning without a major one).
 */
import * as dc from 'node:diagnostics_channel';
import type { ZooKeeper } from '@zk/protocol';

/** Channel names, for `diagnostics_channel.subscribe(name, fn)` or `tracingChannel(name)`. */
export const LockChannelName = {
  /** Tracing channel: one wait for a lock, permit or leadership ({@link AcquireTrace}). */
  acquire: 'zk:lock:acquire',
  hold: 'zk:lock:hold',
  lost: 'zk:lock:lost',
  revoke: 'zk:lock:revoke',
  leadership: 'zk:leadership',
} as const;

/** Which recipe a wait or hold belongs to. */
export type LockKind = 'mutex' | 'read' | 'write' | 'exclusive' | 'semaphore' | 'multi' | 'leader-latch' | 'leader-selector';

/**
 * The context object of the `zk:lock:acquire` tracing channel, the same object at each event.
 * `error` is the wait's failure: LockTimeoutError, LockAbortedError, LeaseLostError (session
 * lost or expired meanwhile), or the client's error.
 */
export interface AcquireTrace {
  readonly kind: LockKind;
  /** The lock path (a MultiLock: its parts' paths, comma-separated). */
  readonly path: string;
  /** The session waiting. */
  readonly sessionId: bigint;
  /** The wait's timeout, ms (undefined: none). */
  readonly timeout: number | undefined;
  /**
   * Contenders ahead of us when our node was first listed (0: free at once), when known: a
   * Mutex, read, write or exclusive lock's wait.
   */
  position?: number | undefined;
  /** Our node once held (a semaphore: its first lease's; a MultiLock: its last part's). */
  node?: string | undefined;
  /** The hold's fencing token, on success. */
  fencingToken?: bigint | undefined;
  /** The lease (or leases, or leadership), on success. */
  result?: unknown;
  error?: unknown;
}

/** Payload of `zk:lock:hold`. */
export interface HoldMessage {
  readonly event: 'start' | 'end';
  readonly kind: LockKind;
  readonly path: string;
  /** The node that holds. */
  readonly node: string;
  readonly fencingToken: bigint;
  readonly sessionId: bigint;
  /** `end` only: how long it was held, ms. */
  readonly heldMs?: number | undefined;
  /** `end` only: whether it had been lost (or put at risk) before it ended. */
  readonly lost?: boolean | undefined;
}

/** Payload of `zk:lock:lost`: a hold's signal aborts because the hold is at risk or gone. */
export interface LeaseLostMessage {
  readonly kind: LockKind;
  readonly path: string;
  readonly node: string;
  readonly fencingToken: bigint;
  readonly sessionId: bigint;
  /** The LeaseLostError (its message says why: suspended past the grace, expired, node deleted, ...). */
  readonly reason: unknown;
  /** How long it had been held, ms. */
  readonly heldMs: number;
}

/** Payload of `zk:lock:revoke`: the holder of `node` was asked to release (Curator's Revoker or {@link revoke}). */
export interface RevocationMessage {
  readonly kind: LockKind;
  readonly path: string;
  readonly node: string;
  readonly fencingToken: bigint;
  readonly sessionId: bigint;
}

/** Payload of `zk:leadership`. */
export interface LeadershipMessage {
  readonly kind: 'leader-latch' | 'leader-selector';
  readonly path: string;
  /** The participant id. */
  readonly id: string;
  readonly sessionId: bigint;
  readonly isLeader: boolean;
  /** The term's fencing token (when it starts, and when it ends). */
  readonly fencingToken?: bigint | undefined;
  /** Why leadership ended (`isLeader: false`), when known. */
  readonly reason?: unknown;
}

function tracing(name: string): dc.TracingChannel<unknown, AcquireTrace> | undefined {
  const make = (dc as { tracingChannel?: (name: string) => dc.TracingChannel<unknown, AcquireTrace> }).tracingChannel;
  return typeof make === 'function' ? make(name) : undefined;
}

/** @internal */
export const acquireChannel = tracing(LockChannelName.acquire);
/** @internal */
export const holdChannel = dc.channel(LockChannelName.hold);
/** @internal */
export const lostChannel = dc.channel(LockChannelName.lost);
/** @internal */
export const revokeChannel = dc.channel(LockChannelName.revoke);
/** @internal */
export const leadershipChannel = dc.channel(LockChannelName.leadership);

/** @internal Whether anyone listens to the acquire waits. */
export function acquireTraced(): boolean {
  const tc = acquireChannel;
  if (tc === undefined) return false;
  const has = (tc as { hasSubscribers?: boolean }).hasSubscribers;
  return has ?? (tc.start.hasSubscribers || tc.asyncEnd.hasSubscribers || tc.error.hasSubscribers);
}

/** What a successful wait tells its trace. */
export interface Held {
  readonly node?: string | undefined;
  readonly fencingToken?: bigint | undefined;
}

/**
 * @internal Runs one wait under the `zk:lock:acquire` tracing channel when anyone listens
 * (otherwise just runs it). `held` reads the node and token from the result; `trace` is handed to
 * `wait` so the engine can fill in the position.
 */
export function traceAcquire<T>(kind: LockKind, zk: ZooKeeper, path: string, timeout: number | undefined, wait: (trace?: AcquireTrace) => Promise<T>, held: (result: T) => Held): Promise<T> {
  if (!acquireTraced()) return wait();
  const trace: AcquireTrace = { kind, path, sessionId: zk.sessionId, timeout };
  return acquireChannel!.tracePromise(async () => {
    const result = await wait(trace);
    const h = held(result);
    trace.node = h.node;
    trace.fencingToken = h.fencingToken;
    return result;
  }, trace);
}

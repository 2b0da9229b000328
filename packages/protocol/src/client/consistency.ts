/**
 * Read consistency and causal tokens: the `consistency` and `after` options of the reads
 * (getData, getChildren, getChildrenWithStat, exists, multiRead), the client-wide
 * `readConsistency` default, and the token format. The fences themselves are
 * session/read-fence.ts; the guarantees are documented in docs/site/guides/consistency.md.
 *
 * - `'plain'`: what ZooKeeper gives: the server's own copy, never older than what this session
 *   saw before (the handshake's lastZxidSeen), possibly older than what another client already
 *   saw committed.
 * - `'sync'`: a sync, then the read, pipelined: the server catches up with the leader it asks.
 *   Stale while that leader is cut off from its quorum and does not know it yet.
 * - `'linearizable'`: the quorum proof's no-op write, then the read, pipelined: reflects every
 *   write completed before the call. One write per tick for all the reads made in it.
 *
 * A causal token names a state of the ensemble (a zxid some server had applied when it answered
 * this client) as a string another process can be handed: a read or a connect given `{ after }`
 * never returns data older than it.
 */
import { OpCode } from '../constants.js';
import { InvalidArgumentError } from '../errors.js';
import { StaleServerError } from '../errors/read-errors.js';
import type { Reply } from '../connection/connection.js';
import type { FenceKind, ReadFence } from '../session/read-fence.js';
import { raceAbort, validateTimeout } from '../util/abort.js';
import type { CallOptions, WatchOptions } from './types.js';

/** How fresh a read must be; see the file comment and the Consistency guide. */
export type ReadConsistency = 'plain' | 'sync' | 'linearizable';

/** The consistency options every read accepts. */
export interface ConsistencyOptions {
  /** Default: the client's `readConsistency` option, else `'plain'`. */
  consistency?: ReadConsistency;
  /**
   * A causal token ({@link ZooKeeper.causalToken}, possibly from another process): the read
   * returns data at least as new as the state it names. When this client has not seen that state
   * yet, a sync goes first; a server still behind after it fails the read with StaleServerError.
   */
  after?: string;
}

/** Options of the reads that can leave a watch, with their consistency. */
export interface ReadOptions extends WatchOptions, ConsistencyOptions {}

/** Options of multiRead. */
export interface MultiReadOptions extends CallOptions, ConsistencyOptions {}

const LEVELS: readonly ReadConsistency[] = ['plain', 'sync', 'linearizable'];
const TOKEN = /^zxid:([0-9a-f]{16})$/;

/** The reads that accept `consistency` and `after`. */
const READS = new Set<number>([OpCode.getData, OpCode.getChildren, OpCode.getChildren2, OpCode.exists, OpCode.multiRead]);

/**
 * The causal token of `zxid`: `zxid:` and 16 lowercase hex digits. A string, for passing between
 * processes (a header, a message, a database column); compare tokens with {@link parseCausalToken}.
 *
 * @example
 * ```ts
 * await zk.setData('/config', 'v2');
 * queue.send({ token: zk.causalToken }); // another process: zk.getData('/config', { after: token })
 * ```
 */
export function causalTokenOf(zxid: bigint): string {
  if (typeof zxid !== 'bigint' || zxid < 0n || zxid >= 1n << 64n) throw new InvalidArgumentError('zxid', `must be a bigint in 0..2^64-1, got ${String(zxid)}`);
  return `zxid:${zxid.toString(16).padStart(16, '0')}`;
}

/** The zxid a causal token names; InvalidArgumentError for anything that is not one. */
export function parseCausalToken(token: unknown, argument = 'after'): bigint {
  const m = typeof token === 'string' ? TOKEN.exec(token) : null;
  if (m === null) throw new InvalidArgumentError(argument, `must be a causal token (zxid: and 16 hex digits, from zk.causalToken), got ${typeof token === 'string' ? JSON.stringify(token) : String(token)}`);
  return BigInt(`0x${m[1]!}`);
}

/** The `consistency` value checked; InvalidArgumentError otherwise. */
export function validateConsistency(value: unknown, argument = 'consistency'): ReadConsistency | undefined {
  if (value === undefined || LEVELS.includes(value as ReadConsistency)) return value as ReadConsistency | undefined;
  throw new InvalidArgumentError(argument, `must be one of ${LEVELS.map((l) => `'${l}'`).join(', ')}, got ${String(value)}`);
}

/** @internal What a read needs before and after it is sent. */
export interface ReadPlan {
  /** The fence to send it behind, if any. */
  readonly fence: FenceKind | undefined;
  /** The token's zxid its reply must reach, if any. */
  readonly after: bigint | undefined;
}

/**
 * @internal The plan of request `op` with `options` (undefined: a plain read, or not a read).
 * Validates `consistency` and `after` (before anything is sent). `lastZxid`: the newest zxid
 * this session saw; the server it talks to has applied at least that, so a token at or below it
 * needs no sync.
 */
export function readPlan(op: number, options: ConsistencyOptions, byDefault: ReadConsistency, lastZxid: bigint): ReadPlan | undefined {
  if (!READS.has(op)) return undefined;
  const level = validateConsistency(options.consistency) ?? byDefault;
  const after = options.after === undefined ? undefined : parseCausalToken(options.after);
  const fence: FenceKind | undefined = level === 'linearizable' ? 'write' : level === 'sync' || (after !== undefined && after > lastZxid) ? 'sync' : undefined;
  if (fence === undefined && after === undefined) return undefined;
  return { fence, after };
}

/** @internal How a fenced read is sent: the fence, the session state and the plain send. */
export interface FencedSend<T> {
  readonly fence: ReadFence;
  /** True when a request made now fails unsent (not connected, `whileDisconnected: 'fail'`): the plain send then fails as it would. */
  readonly failsUnsent: boolean;
  /** Sends the read as a plain one (deadline and signal its own); synchronously when connected. */
  readonly send: () => Promise<Reply<T>>;
  readonly options: CallOptions;
  readonly timeout: number | undefined;
  readonly context: { op: string; path?: string };
}

/**
 * @internal Sends a read by its plan: behind the fence when it has one (the whole wait, the
 * connection's included, within the call's deadline and signal), and checks the reply against the
 * token: a reply whose zxid (the server's last applied transaction when it answered) is below it
 * fails with {@link StaleServerError}.
 */
export async function sendPlanned<T>(plan: ReadPlan, how: FencedSend<T>): Promise<Reply<T>> {
  const { options, timeout } = how;
  validateTimeout(timeout);
  options.signal?.throwIfAborted();
  let reply: Reply<T>;
  if (plan.fence === undefined || how.failsUnsent) reply = await how.send();
  else {
    const deadline = timeout === undefined ? undefined : performance.now() + timeout;
    const gaveUp = () => options.signal?.aborted === true || (deadline !== undefined && performance.now() >= deadline);
    reply = await raceAbort(how.fence.read(plan.fence, how.send, gaveUp), options.signal, timeout, how.context);
  }
  if (plan.after !== undefined && reply.zxid < plan.after) throw new StaleServerError(plan.after, reply.zxid, how.context);
  return reply;
}

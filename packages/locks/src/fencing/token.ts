/**
 * What every store-side fence shares: the fence (a resource name and a token), the token's range
 * and its one text form.
 *
 * A token is a lease's `fencingToken`: the lock node's creation zxid. ZooKeeper's zxid is a Java
 * `long` (`ZxidUtils`: the leader's epoch in the high 32 bits, a counter in the low 32), so it is
 * never negative and never above 2^63 - 1 (the epoch would need 2^31 elections first). That is
 * the range accepted here, and what a Postgres `bigint` holds exactly; Redis and HTTP carry the
 * canonical decimal text (no sign, no leading zeros), whose order is that of the numbers when
 * compared by length first.
 */

/** The largest token accepted: 2^63 - 1, the largest zxid (a Java long). */
export const MAX_FENCING_TOKEN = (1n << 63n) - 1n;

/**
 * What a fenced write presents to a store: the guarded resource's name, and the writer's token.
 *
 * @example
 * ```ts
 * const fence: Fence = { resource: 'reports/daily', token: lease.fencingToken };
 * ```
 */
export interface Fence {
  /**
   * The name under which the store keeps the highest token it accepted: one per thing the lock
   * guards (often the lock path). Tokens are compared only with tokens of the same resource.
   */
  readonly resource: string;
  /** The writer's fencing token (`lease.fencingToken`). */
  readonly token: bigint;
}

/** Throws a RangeError unless `fence` names a resource and carries a token in [0, 2^63 - 1]. */
export function checkFence(fence: Fence): void {
  if (typeof fence.resource !== 'string' || fence.resource.length === 0) throw new RangeError('a fence needs a resource name (a non-empty string)');
  checkToken(fence.token);
}

/** Throws a RangeError unless `token` is a bigint in [0, 2^63 - 1]. */
export function checkToken(token: unknown): asserts token is bigint {
  if (typeof token !== 'bigint') throw new RangeError(`a fencing token is a bigint (lease.fencingToken), not ${typeof token}`);
  if (token < 0n || token > MAX_FENCING_TOKEN) throw new RangeError(`fencing token ${token} is outside [0, 2^63 - 1] (a ZooKeeper zxid)`);
}

const DECIMAL = /^(?:0|[1-9][0-9]{0,18})$/;

/**
 * The token in canonical decimal text, or undefined when `text` is anything else (a sign, leading
 * zeros, spaces, more than 19 digits, or a value over 2^63 - 1).
 */
export function parseToken(text: string): bigint | undefined {
  if (!DECIMAL.test(text)) return undefined;
  const token = BigInt(text);
  return token <= MAX_FENCING_TOKEN ? token : undefined;
}

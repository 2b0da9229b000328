/**
 * The one way a store says no to a fenced write.
 */
import { brandClass } from '../internal/brand.js';

/**
 * A fenced write was refused: the store had already accepted a higher token for the resource, so
 * the writer's lock was taken over by someone else since it got its token (a holder paused past
 * its session timeout, or cut off from the quorum). Nothing of the write was applied. Not
 * retryable with the same token: acquire the lock again and redo the read-modify-write.
 *
 * @example
 * ```ts
 * try {
 *   await fencedSet(redis, { resource: 'report', token: lease.fencingToken }, '{report}:body', text);
 * } catch (err) {
 *   if (!(err instanceof StaleTokenError)) throw err;
 *   console.warn(`lost ${err.resource} to token ${err.highest}; ${err.token} refused`);
 * }
 * ```
 */
export class StaleTokenError extends Error {
  static {
    brandClass(Symbol.for('@zk/locks:error'), this, 'StaleTokenError');
  }
  override name = 'StaleTokenError';
  /** The guarded resource. */
  readonly resource: string;
  /** The token refused (the writer's). */
  readonly token: bigint;
  /** The token that won: the highest the store had accepted for the resource, above {@link token}. */
  readonly highest: bigint;
  /** False: the same token is refused again; only a new lease's token can write. */
  readonly isRetryable = false;

  constructor(resource: string, token: bigint, highest: bigint, options?: { cause?: unknown }) {
    super(`stale fencing token ${token} for ${resource}: the store has accepted ${highest}`, options);
    this.resource = resource;
    this.token = token;
    this.highest = highest;
  }
}

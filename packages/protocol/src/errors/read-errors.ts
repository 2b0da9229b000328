/**
 * The error of a read that could not be made as fresh as asked (client/consistency.ts).
 */
import { brandError } from './base.js';

/**
 * A read given a causal token (`{ after: token }`) was answered by a server that had not applied
 * the state the token names, even after a sync: that server's leader does not have it either (a
 * leader cut off from its quorum, which has elected a successor), or the token comes from another
 * ensemble. Nothing was returned. Try again later, or on another server (`updateServerList`);
 * `isRetryable` is true.
 */
export class StaleServerError extends Error {
  static {
    brandError(this, 'StaleServerError');
  }
  override name = 'StaleServerError';
  /** The zxid the token names. */
  readonly token: bigint;
  /** The zxid the server had applied when it answered. */
  readonly serverZxid: bigint;
  /** The read that failed. */
  readonly op: string | undefined;
  readonly path: string | undefined;
  readonly isRetryable = true;
  constructor(token: bigint, serverZxid: bigint, context: { op?: string; path?: string } = {}) {
    const where = [context.op, context.path].filter(Boolean).join(' ');
    super(`the server had applied zxid 0x${serverZxid.toString(16)}, behind the causal token's 0x${token.toString(16)}, even after a sync${where ? ` (${where})` : ''}`);
    this.token = token;
    this.serverZxid = serverZxid;
    this.op = context.op;
    this.path = context.path;
  }
}

/**
 * Requests larger than a server takes by default: a server closes the connection on a request
 * longer than its jute.maxbuffer ("Len error" in its log), and the client only sees the close. The
 * newest such request still unanswered is remembered, so that the close can name the likely cause.
 * (A request or reply over the client's own maxFrameSize is Connection's: refused before sending,
 * or failed alone and skipped.)
 */
import { DEFAULT_MAX_FRAME_SIZE } from '../constants.js';

/** One connection's newest unanswered request over {@link DEFAULT_MAX_FRAME_SIZE}. */
export class LargeRequests {
  #newest: { xid: number; size: number } | undefined;

  /** A request of `size` bytes (its frame's length prefix excluded) went out with `xid`. */
  sent(xid: number, size: number): void {
    if (size > DEFAULT_MAX_FRAME_SIZE) this.#newest = { xid, size };
  }

  /** The request `xid` was answered: the server took it. */
  answered(xid: number): void {
    if (this.#newest?.xid === xid) this.#newest = undefined;
  }

  /** What to add to the message of a connection the server closed: empty, or the large request and the fix. */
  hint(): string {
    const big = this.#newest;
    if (big === undefined) return '';
    return `, after a request of ${big.size} bytes that is still unanswered: a server closes the connection on a request longer than its jute.maxbuffer (default ${DEFAULT_MAX_FRAME_SIZE} bytes); raise -Djute.maxbuffer on the servers, or send less`;
  }
}

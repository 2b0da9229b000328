/**
 * Outstanding requests of one connection. ZooKeeper answers a session's requests in the order
 * it received them, so replies are matched to a FIFO: a reply must carry the xid of the oldest
 * outstanding request (Java's `ClientCnxn.readResponse` checks the same). Auth packets are
 * answered on arrival by the server (`ZooKeeperServer.processPacket`, outside the request
 * pipeline), and the Java client never puts pings or auth packets in its pending queue either,
 * so both wait in side queues keyed by their fixed xid. SetWatches (xid -8) goes through the
 * pipeline like any request and is answered in order, so it stays in the FIFO and is matched by
 * its fixed xid there. Allocated xids are positive (1 .. 2^31-1, then 1 again), so they never
 * collide with the reserved negative ones.
 */
import { Xid } from '../constants.js';
import type { JuteReader } from '../jute/reader.js';

/** A reply: the header's zxid and error, and the body when err is 0 and a reader was given. */
export interface Reply<T> {
  readonly zxid: bigint;
  readonly err: number;
  readonly body: T | undefined;
}

/**
 * What a traced request learns on the wire, written into the object the caller passed (the
 * `zk:request` trace context, see diagnostics.ts): nothing is made for an untraced request.
 */
export interface WireTrace {
  xid?: number | undefined;
  requestBytes?: number | undefined;
  replyBytes?: number | undefined;
  /** Reads that shared one multiRead batch (coalesceReads), when more than one. */
  batched?: number | undefined;
}

/**
 * One request waiting for its reply. It holds the promise's own resolve and reject, so a request
 * costs one object besides its promise (no closure of its own).
 */
export interface PendingRequest {
  readonly xid: number;
  readonly type: number;
  /** Reads the reply body (only called when err is 0). */
  readonly read: ((r: JuteReader) => unknown) | undefined;
  /** The largest reply accepted for it, when more than the connection's frame limit (a coalesced read batch). */
  readonly maxReply?: number;
  /** When it was written (performance.now()): its reply proves the server heard us no earlier. */
  readonly sentAt: number;
  /** Where a traced request's reply size goes. */
  readonly trace?: WireTrace | undefined;
  resolve(reply: Reply<unknown>): void;
  reject(err: unknown): void;
}

/** Xids the client allocates: 1 .. 2^31-1, then back to 1 (negative xids are reserved). */
const MAX_XID = 0x7fffffff;

/** FIFO of outstanding requests with xid allocation. */
export class PendingQueue {
  #items: Array<PendingRequest | undefined> = [];
  #head = 0;
  #nextXid = 1;
  readonly #side = new Map<number, PendingRequest[]>();

  /** Requests waiting for a reply (FIFO and side queues). */
  get size(): number {
    let n = this.#items.length - this.#head;
    for (const q of this.#side.values()) n += q.length;
    return n;
  }

  /** A fresh xid. */
  nextXid(): number {
    const xid = this.#nextXid;
    this.#nextXid = xid >= MAX_XID ? 1 : xid + 1;
    return xid;
  }

  /** Queues a request sent with `req.xid`. Ping and auth xids go to their side queue. */
  push(req: PendingRequest): void {
    if (req.xid === Xid.ping || req.xid === Xid.auth) {
      let q = this.#side.get(req.xid);
      if (!q) this.#side.set(req.xid, (q = []));
      q.push(req);
      return;
    }
    this.#items.push(req);
  }

  /** The oldest outstanding request of the FIFO, without removing it. */
  peek(): PendingRequest | undefined {
    return this.#items[this.#head];
  }

  /** Removes and returns the oldest outstanding request of the FIFO. */
  shift(): PendingRequest | undefined {
    const item = this.#items[this.#head];
    if (item === undefined) return undefined;
    this.#items[this.#head++] = undefined;
    // Compact now and then instead of Array.shift on every reply (O(n) per call on big queues).
    if (this.#head === this.#items.length) {
      this.#items = [];
      this.#head = 0;
    } else if (this.#head > 4096 && this.#head * 2 > this.#items.length) {
      this.#items = this.#items.slice(this.#head);
      this.#head = 0;
    }
    return item;
  }

  /** Removes and returns the oldest request waiting on a side queue (ping or auth). */
  shiftSide(xid: number): PendingRequest | undefined {
    return this.#side.get(xid)?.shift();
  }

  /** Empties every queue, rejecting each request with `err(request)`. */
  failAll(err: (req: PendingRequest) => unknown): void {
    const items = this.#items;
    const head = this.#head;
    this.#items = [];
    this.#head = 0;
    const side = [...this.#side.values()].flat();
    this.#side.clear();
    for (let i = head; i < items.length; i++) {
      const req = items[i];
      if (req) req.reject(err(req));
    }
    for (const req of side) req.reject(err(req));
  }
}

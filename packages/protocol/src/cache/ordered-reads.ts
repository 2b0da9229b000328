/**
 * The tree cache's reads: batches of nodes read with `multiRead` (getData, and getChildren when
 * asked), pipelined, whose results are applied in the order the requests were sent.
 *
 * Why the order matters: one session's requests are served in order, and the tree a session sees
 * only moves forward (also across reconnects, which present the last zxid seen), so a read sent
 * later saw the tree no earlier than one sent before it. Applying results in send order therefore
 * applies observations in server order, and the newest observation of a node always wins. Replies
 * do arrive in send order, but the promise chains behind them have different lengths, so the
 * results are put back in order here by sequence number.
 */
import { ErrorCode, NoNodeError, PacketTooLargeError, ZooKeeperError } from '../errors.js';
import type { MultiReadOp, MultiReadResult } from '../client/transaction.js';
import type { Stat } from '../jute/data.js';
import type { ZooKeeper } from '../client/zookeeper.js';

/** Most nodes in one multiRead (two ops each with children). A reply over the frame limit is split and sent again. */
export const READ_BATCH = 256;

/** What one read saw of one node. */
export type NodeRead =
  | { readonly kind: 'found'; readonly path: string; readonly data: Buffer; readonly stat: Stat; readonly children?: string[] | undefined }
  | { readonly kind: 'missing'; readonly path: string }
  | { readonly kind: 'unreadable'; readonly path: string; readonly error: Error };

/** The client calls the reads need. */
export type ReadClient = Pick<ZooKeeper, 'multiRead' | 'getData'>;

/** What a batch of reads reports. */
export interface ReadHandler {
  /** One node's result, called in send order across every batch. */
  node(read: NodeRead): void;
  /** All the nodes of the call were handled (after the last `node`). */
  done(): void;
  /** The call failed (ConnectionLoss, a timeout, ...): the nodes not handled yet were not read. */
  failed(error: unknown): void;
}

/** Sends reads and applies their results in send order. */
export class OrderedReads {
  readonly #zk: ReadClient;
  readonly #timeout: number | undefined;
  #nextSeq = 0;
  #nextApply = 0;
  readonly #settled = new Map<number, () => void>();
  #inFlight = 0;
  #idle: Array<() => void> = [];

  constructor(zk: ReadClient, options: { timeout?: number | undefined } = {}) {
    this.#zk = zk;
    this.#timeout = options.timeout;
  }

  /** Requests sent and not yet applied. */
  get inFlight(): number {
    return this.#inFlight;
  }

  /**
   * Reads `paths` (data, and children with `children`), in batches of {@link READ_BATCH}, sent
   * now, synchronously, in this order. `handler` hears each node in send order, then `done`, or
   * `failed` once if any batch failed.
   */
  read(paths: readonly string[], children: boolean, handler: ReadHandler): void {
    let left = 0;
    let failed = false;
    const batchDone = () => {
      if (--left === 0 && !failed) handler.done();
    };
    const fail = (err: unknown) => {
      if (failed) return;
      failed = true;
      handler.failed(err);
    };
    const send = (batch: readonly string[]) => {
      left++;
      const seq = this.#nextSeq++;
      this.#inFlight++;
      const ops: MultiReadOp[] = [];
      for (const path of batch) {
        ops.push({ type: 'getData', path });
        if (children) ops.push({ type: 'getChildren', path });
      }
      let request: Promise<MultiReadResult[]>;
      const options = this.#timeout === undefined ? {} : { timeout: this.#timeout };
      try {
        // One node's data alone (an event's read): a plain getData, which the server serves a
        // little faster than a multiRead of one.
        request = ops.length === 1 ? this.#getData(batch[0] as string, options) : this.#zk.multiRead(ops, options);
      } catch (err) {
        request = Promise.reject(err);
      }
      request.then(
        (results) =>
          this.#settle(seq, () => {
            if (failed) return batchDone();
            for (let i = 0, r = 0; i < batch.length; i++) {
              const data = results[r++];
              const list = children ? results[r++] : undefined;
              handler.node(toNodeRead(batch[i] as string, data, list));
            }
            batchDone();
          }),
        (err: unknown) =>
          this.#settle(seq, () => {
            // A reply over the frame limit: the same nodes again in two halves, read later (so newer).
            if (err instanceof PacketTooLargeError && batch.length > 1 && !failed) {
              const half = Math.ceil(batch.length / 2);
              send(batch.slice(0, half));
              send(batch.slice(half));
              return batchDone();
            }
            if (err instanceof PacketTooLargeError && !failed) {
              handler.node({ kind: 'unreadable', path: batch[0] as string, error: err });
              return batchDone();
            }
            fail(err);
            batchDone();
          }),
      );
    };
    if (paths.length === 0) {
      left = 1;
      queueMicrotask(batchDone);
      return;
    }
    for (let i = 0; i < paths.length; i += READ_BATCH) send(paths.slice(i, i + READ_BATCH));
  }

  /** A getData answered as a multiRead of one is: a result, or the error for that path. */
  #getData(path: string, options: { timeout?: number }): Promise<MultiReadResult[]> {
    return this.#zk.getData(path, options).then(
      ({ data, stat }): MultiReadResult[] => [{ type: 'getData', path, data, stat }],
      (err: unknown) => {
        // The node's own errors, as a multiRead reports them; anything else failed the request.
        if (err instanceof ZooKeeperError && (err.code === ErrorCode.NONODE || err.code === ErrorCode.NOAUTH)) return [{ type: 'error', path, error: err }];
        throw err;
      },
    );
  }

  /** Resolves when no read is in flight. */
  idle(): Promise<void> {
    if (this.#inFlight === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idle.push(resolve));
  }

  #settle(seq: number, apply: () => void): void {
    this.#settled.set(seq, apply);
    for (let next = this.#settled.get(this.#nextApply); next; next = this.#settled.get(this.#nextApply)) {
      this.#settled.delete(this.#nextApply++);
      this.#inFlight--;
      next();
    }
    if (this.#inFlight === 0) for (const resolve of this.#idle.splice(0)) resolve();
  }
}

function toNodeRead(path: string, data: MultiReadResult | undefined, list: MultiReadResult | undefined): NodeRead {
  if (!data || data.type === 'error') {
    const error = data?.error ?? new Error(`no result for ${path}`);
    return error instanceof NoNodeError ? { kind: 'missing', path } : { kind: 'unreadable', path, error };
  }
  if (data.type !== 'getData') return { kind: 'unreadable', path, error: new Error(`unexpected ${data.type} result for ${path}`) };
  // The node was read, then deleted before its children were listed (the ops of one multiRead
  // run one after the other): it is gone.
  if (list?.type === 'error') return list.error instanceof NoNodeError ? { kind: 'missing', path } : { kind: 'unreadable', path, error: list.error };
  return { kind: 'found', path, data: data.data, stat: data.stat, children: list?.type === 'getChildren' ? list.children : undefined };
}


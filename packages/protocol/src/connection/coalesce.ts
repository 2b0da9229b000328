/**
 * Coalesced reads (the `coalesceReads` client option): watch-less getData and getChildren
 * requests made in the same tick leave as one `multiRead` (ZooKeeper 3.6+), which the server
 * handles as one request instead of n.
 *
 * No op-specific code is needed for that, because of how multiRead is encoded (Java's
 * `MultiOperationRecord` and `MultiResponse`): the request is each op's own request record
 * (GetDataRequest, GetChildrenRequest) behind a `MultiHeader { type, done: false, err: -1 }`,
 * and the reply is each op's own reply record (GetDataResponse, GetChildrenResponse) or an
 * `ErrorResponse { err }` behind a header of type -1, then a header marked done. So each read
 * keeps its own writer and reader, and resolves with exactly the reply it would have had if
 * sent alone: the error code of its own op, or its body.
 *
 * What changes for the caller: the reads of one batch see the same server state (they would
 * have been served back to back anyway; another session's write can no longer fall between
 * them), and each waits for the whole batch's reply. Order with the session's other requests is
 * kept by the connection, which writes a pending batch before any other request.
 */
import { OpCode } from '../constants.js';
import { DecodeError } from '../errors.js';
import type { JuteReader } from '../jute/reader.js';
import type { JuteWriter } from '../jute/writer.js';
import type { PendingRequest, Reply, WireTrace } from './pending.js';

/** Most reads in one multiRead; a fuller tick starts the next batch. */
export const MAX_COALESCED_READS = 64;

/** A read waiting for its batch to be written. */
export interface QueuedRead {
  /** `OpCode.getData` or `OpCode.getChildren`. */
  readonly type: number;
  readonly write: ((w: JuteWriter) => void) | undefined;
  readonly read: ((r: JuteReader) => unknown) | undefined;
  /** A traced read's wire facts (see pending.ts). */
  readonly trace?: WireTrace | undefined;
  resolve(reply: Reply<unknown>): void;
  reject(err: unknown): void;
}

/** One read's share of the multiRead reply. */
interface ReadOutcome {
  readonly err: number;
  readonly body: unknown;
}

/** Writes the multiRead body: each read's header and its own request record, then the end marker. */
export function writeReadBatch(w: JuteWriter, reads: readonly QueuedRead[]): void {
  for (const q of reads) {
    w.writeInt(q.type).writeBool(false).writeInt(-1);
    q.write?.(w);
  }
  w.writeInt(-1).writeBool(true).writeInt(-1);
}

/**
 * Reads a multiRead reply to `reads`: one result per read, in order, each read with the read's
 * own reader, then the end marker. Any other shape (too few or too many results, a result of
 * another op, an error result without an error) is a {@link DecodeError}.
 */
export function readReadBatch(r: JuteReader, reads: readonly QueuedRead[]): ReadOutcome[] {
  const out: ReadOutcome[] = new Array<ReadOutcome>(reads.length);
  for (let i = 0; i < reads.length; i++) {
    const q = reads[i]!;
    const at = r.offset;
    const type = r.readInt();
    const done = r.readBool();
    r.readInt(); // the header's err; an error result's code is in its ErrorResponse
    if (done) throw new DecodeError(`multiRead reply ended after ${i} of ${reads.length} results`, { offset: at });
    if (type === OpCode.error) {
      const err = r.readInt();
      if (err === 0) throw new DecodeError(`multiRead result ${i} is an error result with code 0`, { offset: at });
      out[i] = { err, body: undefined };
    } else if (type === q.type) {
      out[i] = { err: 0, body: q.read?.(r) };
    } else {
      throw new DecodeError(`multiRead result ${i} has type ${type}, expected ${q.type}`, { offset: at });
    }
  }
  const at = r.offset;
  r.readInt();
  if (!r.readBool()) throw new DecodeError(`multiRead reply has more than the ${reads.length} results asked for`, { offset: at });
  r.readInt();
  return out;
}

/**
 * The outstanding-request entry of one batch: its reply is split among the reads, a failure
 * (connection loss, oversized reply) reaches each of them.
 */
export class ReadBatch implements PendingRequest {
  readonly type = OpCode.multiRead;
  readonly xid: number;
  readonly reads: readonly QueuedRead[];
  /** The largest reply accepted: as much as each read could have had alone, together. */
  readonly maxReply: number;
  readonly sentAt: number;
  readonly read = (r: JuteReader): ReadOutcome[] => readReadBatch(r, this.reads);
  /** The batch's reply size, when one of its reads is traced (handed on to them in {@link resolve}). */
  readonly trace: WireTrace | undefined;

  /** `requestBytes`: the batch frame's size, told to its traced reads with the xid. */
  constructor(xid: number, reads: readonly QueuedRead[], maxFrame: number, sentAt: number, requestBytes: number) {
    this.xid = xid;
    this.reads = reads;
    this.maxReply = maxFrame * reads.length;
    this.sentAt = sentAt;
    for (const q of reads) {
      if (q.trace === undefined) continue;
      q.trace.xid = xid;
      q.trace.requestBytes = requestBytes;
      q.trace.batched = reads.length;
      this.trace ??= {};
    }
  }

  resolve(reply: Reply<unknown>): void {
    const { zxid, err } = reply;
    if (this.trace !== undefined) for (const q of this.reads) if (q.trace !== undefined) q.trace.replyBytes = this.trace.replyBytes;
    if (err !== 0) {
      // The whole request failed (a server without multiRead answers Unimplemented): each read gets that code.
      for (const q of this.reads) q.resolve({ zxid, err, body: undefined });
      return;
    }
    const outcomes = reply.body as ReadOutcome[];
    for (let i = 0; i < this.reads.length; i++) {
      const o = outcomes[i]!;
      this.reads[i]!.resolve({ zxid, err: o.err, body: o.body });
    }
  }

  reject(err: unknown): void {
    for (const q of this.reads) q.reject(err);
  }
}

/**
 * What a {@link Transaction} and a `multiRead` need of their client: the request path and the
 * checks a create shares with the client's own. The client implements it; declared here, below
 * both, so that transaction.ts does not import zookeeper.ts, which imports it (issue 36: no cycle).
 */
import type { Reply } from '../connection/connection.js';
import type { ServerGeneration } from '../connection/generation.js';
import type * as proto from '../jute/proto.js';
import type { JuteReader } from '../jute/reader.js';
import type { JuteWriter } from '../jute/writer.js';
import type { CallOptions, CreateOp, CreateOptions, Data } from './types.js';

/** @internal The client as its transactions see it (implemented by {@link ZooKeeper}). */
export interface TransactionHost {
  /** The generation of the connected server, a promise of it while probed, undefined when not connected. */
  serverGeneration(): ServerGeneration | Promise<ServerGeneration> | undefined;
  /** Resolves when the connected server is a 3.9 one; rejects with a typed error naming `what` otherwise. */
  requireServer39(op: string, path: string | undefined, what: string, options?: CallOptions): Promise<void>;
  /** A create's wire request and reply reader, after the client's checks. */
  prepareCreate(path: string, data: Data, options: CreateOptions, withStat?: boolean): { request: CreateOp; read: (r: JuteReader) => proto.CreateResponse | proto.Create2Response };
  /** Sends a request and returns its raw reply, under the retry policy (`once`: one attempt). */
  rawRequest<T>(op: number, opName: string, path: string | undefined, write: ((w: JuteWriter) => void) | undefined, read: ((r: JuteReader) => T) | undefined, options: CallOptions, once?: boolean, batchSize?: number): Promise<Reply<T>>;
  /** Node data as bytes, checked before anything is sent. */
  prepareData(data: unknown): Buffer | null;
}

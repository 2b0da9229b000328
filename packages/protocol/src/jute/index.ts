/**
 * The Jute codec: primitives ({@link JuteReader}, {@link JuteWriter}), the records of
 * zookeeper.jute's `data` and `proto` modules the client speaks, multi bodies, and
 * {@link records}, a registry of every record by its Java class's simple name.
 */
import * as data from './data.js';
import * as proto from './proto.js';
import type { JuteReader } from './reader.js';
import type { JuteWriter } from './writer.js';

export { JuteReader } from './reader.js';
export { JuteWriter } from './writer.js';
export * from './data.js';
export * from './proto.js';
export { readMultiRequest, readMultiResponse, writeMultiRequest, writeMultiResponse } from './multi.js';
export type { MultiOp, MultiOpInput, MultiResult, MultiResultInput } from './multi.js';

/** A record's reader and writer. */
export interface RecordCodec<T> {
  /** Reads one record at the reader's position. */
  read(r: JuteReader): T;
  /** Writes one record. */
  write(w: JuteWriter, v: T): void;
}

/**
 * Every Jute record this client knows, keyed by the exact simple name of the Java class
 * (`org.apache.zookeeper.data.Stat` -> `'Stat'`, `org.apache.zookeeper.proto.ReplyHeader` ->
 * `'ReplyHeader'`). Conformance tests iterate it and compare each entry with Java.
 *
 * @example
 * ```ts
 * const stat = records.Stat.read(new JuteReader(bytes));
 * ```
 */
export const records = {
  // org.apache.zookeeper.data
  Id: { read: data.readId, write: data.writeId },
  ACL: { read: data.readACL, write: data.writeACL },
  Stat: { read: data.readStat, write: data.writeStat },
  ClientInfo: { read: data.readClientInfo, write: data.writeClientInfo },
  // org.apache.zookeeper.proto
  ConnectRequest: { read: proto.readConnectRequest, write: proto.writeConnectRequest },
  ConnectResponse: { read: proto.readConnectResponse, write: proto.writeConnectResponse },
  SetWatches: { read: proto.readSetWatches, write: proto.writeSetWatches },
  SetWatches2: { read: proto.readSetWatches2, write: proto.writeSetWatches2 },
  RequestHeader: { read: proto.readRequestHeader, write: proto.writeRequestHeader },
  MultiHeader: { read: proto.readMultiHeader, write: proto.writeMultiHeader },
  AuthPacket: { read: proto.readAuthPacket, write: proto.writeAuthPacket },
  ReplyHeader: { read: proto.readReplyHeader, write: proto.writeReplyHeader },
  GetDataRequest: { read: proto.readGetDataRequest, write: proto.writeGetDataRequest },
  SetDataRequest: { read: proto.readSetDataRequest, write: proto.writeSetDataRequest },
  ReconfigRequest: { read: proto.readReconfigRequest, write: proto.writeReconfigRequest },
  SetDataResponse: { read: proto.readSetDataResponse, write: proto.writeSetDataResponse },
  GetSASLRequest: { read: proto.readGetSASLRequest, write: proto.writeGetSASLRequest },
  SetSASLRequest: { read: proto.readSetSASLRequest, write: proto.writeSetSASLRequest },
  SetSASLResponse: { read: proto.readSetSASLResponse, write: proto.writeSetSASLResponse },
  CreateRequest: { read: proto.readCreateRequest, write: proto.writeCreateRequest },
  CreateTTLRequest: { read: proto.readCreateTTLRequest, write: proto.writeCreateTTLRequest },
  DeleteRequest: { read: proto.readDeleteRequest, write: proto.writeDeleteRequest },
  GetChildrenRequest: { read: proto.readGetChildrenRequest, write: proto.writeGetChildrenRequest },
  GetAllChildrenNumberRequest: { read: proto.readGetAllChildrenNumberRequest, write: proto.writeGetAllChildrenNumberRequest },
  GetChildren2Request: { read: proto.readGetChildren2Request, write: proto.writeGetChildren2Request },
  CheckVersionRequest: { read: proto.readCheckVersionRequest, write: proto.writeCheckVersionRequest },
  SyncRequest: { read: proto.readSyncRequest, write: proto.writeSyncRequest },
  SyncResponse: { read: proto.readSyncResponse, write: proto.writeSyncResponse },
  GetACLRequest: { read: proto.readGetACLRequest, write: proto.writeGetACLRequest },
  SetACLRequest: { read: proto.readSetACLRequest, write: proto.writeSetACLRequest },
  SetACLResponse: { read: proto.readSetACLResponse, write: proto.writeSetACLResponse },
  AddWatchRequest: { read: proto.readAddWatchRequest, write: proto.writeAddWatchRequest },
  WatcherEvent: { read: proto.readWatcherEvent, write: proto.writeWatcherEvent },
  ErrorResponse: { read: proto.readErrorResponse, write: proto.writeErrorResponse },
  CreateResponse: { read: proto.readCreateResponse, write: proto.writeCreateResponse },
  Create2Response: { read: proto.readCreate2Response, write: proto.writeCreate2Response },
  ExistsRequest: { read: proto.readExistsRequest, write: proto.writeExistsRequest },
  ExistsResponse: { read: proto.readExistsResponse, write: proto.writeExistsResponse },
  GetDataResponse: { read: proto.readGetDataResponse, write: proto.writeGetDataResponse },
  GetChildrenResponse: { read: proto.readGetChildrenResponse, write: proto.writeGetChildrenResponse },
  GetAllChildrenNumberResponse: { read: proto.readGetAllChildrenNumberResponse, write: proto.writeGetAllChildrenNumberResponse },
  GetChildren2Response: { read: proto.readGetChildren2Response, write: proto.writeGetChildren2Response },
  GetACLResponse: { read: proto.readGetACLResponse, write: proto.writeGetACLResponse },
  CheckWatchesRequest: { read: proto.readCheckWatchesRequest, write: proto.writeCheckWatchesRequest },
  RemoveWatchesRequest: { read: proto.readRemoveWatchesRequest, write: proto.writeRemoveWatchesRequest },
  GetEphemeralsRequest: { read: proto.readGetEphemeralsRequest, write: proto.writeGetEphemeralsRequest },
  GetEphemeralsResponse: { read: proto.readGetEphemeralsResponse, write: proto.writeGetEphemeralsResponse },
  WhoAmIResponse: { read: proto.readWhoAmIResponse, write: proto.writeWhoAmIResponse },
} as const satisfies Record<string, { read(r: JuteReader): unknown; write(w: JuteWriter, v: never): void }>;

/** The Java simple name of a record in {@link records}. */
export type RecordName = keyof typeof records;

/** The record type of the entry `N` of {@link records}. */
export type RecordOf<N extends RecordName> = ReturnType<(typeof records)[N]['read']>;

/**
 * Records of zookeeper.jute's `org.apache.zookeeper.proto` module that the client speaks.
 *
 * Field names, types and order are those of the Java classes in the Debian 3.8.0
 * `zookeeper-jute` jar, checked one by one with
 * `javap -p -cp /usr/share/java/zookeeper-jute.jar org.apache.zookeeper.proto.<Name>` and the
 * field order of each `serialize` method with `javap -c`. Every record listed here exists in
 * 3.8.0 (WhoAmIResponse and ClientInfo included), so none had to be added from 3.9.
 *
 * Each record is an interface named as the Java class plus a `read<Name>` / `write<Name>` pair.
 * Readers are straight-line object literals (one allocation and one shape per record; property
 * initialisers run in source order, which is the wire order). Writers accept
 * {@link WriteInput}, which allows any Uint8Array for `buffer` fields and readonly arrays for
 * vectors.
 */
import { readACL, readClientInfo, readStat, writeACL, writeClientInfo, writeStat } from './data.js';
import type { ACL, ClientInfo, Stat } from './data.js';
import type { JuteReader } from './reader.js';
import type { JuteWriter } from './writer.js';

/**
 * A record as the writers accept it: `buffer` fields may be any `Uint8Array`, vectors may be
 * readonly arrays. Every record value is also a valid `WriteInput` of itself.
 */
export type WriteInput<T> = {
  readonly [K in keyof T]: T[K] extends Buffer | null
    ? Uint8Array | null
    : T[K] extends (infer E)[] | null
      ? readonly E[] | null
      : T[K];
};

/**
 * The handshake request, sent without a RequestHeader. In the 3.8.0 jar this record has no `readOnly` field: the Java client (`ClientCnxnSocket`) writes a `readOnly` boolean after the record, outside it. The handshake code writes that flag itself.
 *
 * Jute: `ConnectRequest { int protocolVersion; long lastZxidSeen; int timeOut; long sessionId; buffer passwd; }`.
 */
export interface ConnectRequest {
  protocolVersion: number;
  lastZxidSeen: bigint;
  timeOut: number;
  sessionId: bigint;
  passwd: Buffer | null;
}

/** Reads a {@link ConnectRequest}. */
export function readConnectRequest(r: JuteReader): ConnectRequest {
  return {
    protocolVersion: r.readInt(),
    lastZxidSeen: r.readLong(),
    timeOut: r.readInt(),
    sessionId: r.readLong(),
    passwd: r.readBuffer(),
  };
}

/** Writes a {@link ConnectRequest}. */
export function writeConnectRequest(w: JuteWriter, v: WriteInput<ConnectRequest>): void {
  w.writeInt(v.protocolVersion);
  w.writeLong(v.lastZxidSeen);
  w.writeInt(v.timeOut);
  w.writeLong(v.sessionId);
  w.writeBuffer(v.passwd);
}

/**
 * The handshake reply. As with ConnectRequest, the 3.8.0 record has no `readOnly` field: servers since 3.4 send a `readOnly` boolean after the record, which the handshake code reads when bytes remain (older servers omit it). `timeOut` 0 means the session expired.
 *
 * Jute: `ConnectResponse { int protocolVersion; int timeOut; long sessionId; buffer passwd; }`.
 */
export interface ConnectResponse {
  protocolVersion: number;
  timeOut: number;
  sessionId: bigint;
  passwd: Buffer | null;
}

/** Reads a {@link ConnectResponse}. */
export function readConnectResponse(r: JuteReader): ConnectResponse {
  return {
    protocolVersion: r.readInt(),
    timeOut: r.readInt(),
    sessionId: r.readLong(),
    passwd: r.readBuffer(),
  };
}

/** Writes a {@link ConnectResponse}. */
export function writeConnectResponse(w: JuteWriter, v: WriteInput<ConnectResponse>): void {
  w.writeInt(v.protocolVersion);
  w.writeInt(v.timeOut);
  w.writeLong(v.sessionId);
  w.writeBuffer(v.passwd);
}

/**
 * Re-registers watches after a reconnect (op `setWatches`, xid -8).
 *
 * Jute: `SetWatches { long relativeZxid; vector<ustring> dataWatches; vector<ustring> existWatches; vector<ustring> childWatches; }`.
 */
export interface SetWatches {
  relativeZxid: bigint;
  dataWatches: (string | null)[] | null;
  existWatches: (string | null)[] | null;
  childWatches: (string | null)[] | null;
}

/** Reads a {@link SetWatches}. */
export function readSetWatches(r: JuteReader): SetWatches {
  return {
    relativeZxid: r.readLong(),
    dataWatches: r.readStringVector(),
    existWatches: r.readStringVector(),
    childWatches: r.readStringVector(),
  };
}

/** Writes a {@link SetWatches}. */
export function writeSetWatches(w: JuteWriter, v: WriteInput<SetWatches>): void {
  w.writeLong(v.relativeZxid);
  w.writeStringVector(v.dataWatches);
  w.writeStringVector(v.existWatches);
  w.writeStringVector(v.childWatches);
}

/**
 * Re-registers watches, persistent ones included (op `setWatches2`, 3.6+).
 *
 * Jute: `SetWatches2 { long relativeZxid; vector<ustring> dataWatches; vector<ustring> existWatches; vector<ustring> childWatches; vector<ustring> persistentWatches; vector<ustring> persistentRecursiveWatches; }`.
 */
export interface SetWatches2 {
  relativeZxid: bigint;
  dataWatches: (string | null)[] | null;
  existWatches: (string | null)[] | null;
  childWatches: (string | null)[] | null;
  persistentWatches: (string | null)[] | null;
  persistentRecursiveWatches: (string | null)[] | null;
}

/** Reads a {@link SetWatches2}. */
export function readSetWatches2(r: JuteReader): SetWatches2 {
  return {
    relativeZxid: r.readLong(),
    dataWatches: r.readStringVector(),
    existWatches: r.readStringVector(),
    childWatches: r.readStringVector(),
    persistentWatches: r.readStringVector(),
    persistentRecursiveWatches: r.readStringVector(),
  };
}

/** Writes a {@link SetWatches2}. */
export function writeSetWatches2(w: JuteWriter, v: WriteInput<SetWatches2>): void {
  w.writeLong(v.relativeZxid);
  w.writeStringVector(v.dataWatches);
  w.writeStringVector(v.existWatches);
  w.writeStringVector(v.childWatches);
  w.writeStringVector(v.persistentWatches);
  w.writeStringVector(v.persistentRecursiveWatches);
}

/**
 * Starts every request frame after the handshake.
 *
 * Jute: `RequestHeader { int xid; int type; }`.
 */
export interface RequestHeader {
  xid: number;
  type: number;
}

/** Reads a {@link RequestHeader}. */
export function readRequestHeader(r: JuteReader): RequestHeader {
  return {
    xid: r.readInt(),
    type: r.readInt(),
  };
}

/** Writes a {@link RequestHeader}. */
export function writeRequestHeader(w: JuteWriter, v: WriteInput<RequestHeader>): void {
  w.writeInt(v.xid);
  w.writeInt(v.type);
}

/**
 * Precedes each operation and each result of a multi; `done` true with type -1 ends the list.
 *
 * Jute: `MultiHeader { int type; boolean done; int err; }`.
 */
export interface MultiHeader {
  type: number;
  done: boolean;
  err: number;
}

/** Reads a {@link MultiHeader}. */
export function readMultiHeader(r: JuteReader): MultiHeader {
  return {
    type: r.readInt(),
    done: r.readBool(),
    err: r.readInt(),
  };
}

/** Writes a {@link MultiHeader}. */
export function writeMultiHeader(w: JuteWriter, v: WriteInput<MultiHeader>): void {
  w.writeInt(v.type);
  w.writeBool(v.done);
  w.writeInt(v.err);
}

/**
 * Adds credentials (op `auth`, xid -4); `type` is 0.
 *
 * Jute: `AuthPacket { int type; ustring scheme; buffer auth; }`.
 */
export interface AuthPacket {
  type: number;
  scheme: string | null;
  auth: Buffer | null;
}

/** Reads a {@link AuthPacket}. */
export function readAuthPacket(r: JuteReader): AuthPacket {
  return {
    type: r.readInt(),
    scheme: r.readUString(),
    auth: r.readBuffer(),
  };
}

/** Writes a {@link AuthPacket}. */
export function writeAuthPacket(w: JuteWriter, v: WriteInput<AuthPacket>): void {
  w.writeInt(v.type);
  w.writeUString(v.scheme);
  w.writeBuffer(v.auth);
}

/**
 * Starts every reply frame after the handshake; the body follows only when `err` is 0.
 *
 * Jute: `ReplyHeader { int xid; long zxid; int err; }`.
 */
export interface ReplyHeader {
  xid: number;
  zxid: bigint;
  err: number;
}

/** Reads a {@link ReplyHeader}. */
export function readReplyHeader(r: JuteReader): ReplyHeader {
  return {
    xid: r.readInt(),
    zxid: r.readLong(),
    err: r.readInt(),
  };
}

/** Writes a {@link ReplyHeader}. */
export function writeReplyHeader(w: JuteWriter, v: WriteInput<ReplyHeader>): void {
  w.writeInt(v.xid);
  w.writeLong(v.zxid);
  w.writeInt(v.err);
}

/**
 * Op `getData`.
 *
 * Jute: `GetDataRequest { ustring path; boolean watch; }`.
 */
export interface GetDataRequest {
  path: string | null;
  watch: boolean;
}

/** Reads a {@link GetDataRequest}. */
export function readGetDataRequest(r: JuteReader): GetDataRequest {
  return {
    path: r.readUString(),
    watch: r.readBool(),
  };
}

/** Writes a {@link GetDataRequest}. */
export function writeGetDataRequest(w: JuteWriter, v: WriteInput<GetDataRequest>): void {
  w.writeUString(v.path);
  w.writeBool(v.watch);
}

/**
 * Op `setData`; `version` -1 matches any version.
 *
 * Jute: `SetDataRequest { ustring path; buffer data; int version; }`.
 */
export interface SetDataRequest {
  path: string | null;
  data: Buffer | null;
  version: number;
}

/** Reads a {@link SetDataRequest}. */
export function readSetDataRequest(r: JuteReader): SetDataRequest {
  return {
    path: r.readUString(),
    data: r.readBuffer(),
    version: r.readInt(),
  };
}

/** Writes a {@link SetDataRequest}. */
export function writeSetDataRequest(w: JuteWriter, v: WriteInput<SetDataRequest>): void {
  w.writeUString(v.path);
  w.writeBuffer(v.data);
  w.writeInt(v.version);
}

/**
 * Op `reconfig`.
 *
 * Jute: `ReconfigRequest { ustring joiningServers; ustring leavingServers; ustring newMembers; long curConfigId; }`.
 */
export interface ReconfigRequest {
  joiningServers: string | null;
  leavingServers: string | null;
  newMembers: string | null;
  curConfigId: bigint;
}

/** Reads a {@link ReconfigRequest}. */
export function readReconfigRequest(r: JuteReader): ReconfigRequest {
  return {
    joiningServers: r.readUString(),
    leavingServers: r.readUString(),
    newMembers: r.readUString(),
    curConfigId: r.readLong(),
  };
}

/** Writes a {@link ReconfigRequest}. */
export function writeReconfigRequest(w: JuteWriter, v: WriteInput<ReconfigRequest>): void {
  w.writeUString(v.joiningServers);
  w.writeUString(v.leavingServers);
  w.writeUString(v.newMembers);
  w.writeLong(v.curConfigId);
}

/**
 * Reply to `setData`.
 *
 * Jute: `SetDataResponse { Stat stat; }`.
 */
export interface SetDataResponse {
  stat: Stat;
}

/** Reads a {@link SetDataResponse}. */
export function readSetDataResponse(r: JuteReader): SetDataResponse {
  return { stat: readStat(r) };
}

/** Writes a {@link SetDataResponse}. */
export function writeSetDataResponse(w: JuteWriter, v: WriteInput<SetDataResponse>): void {
  writeStat(w, v.stat);
}

/**
 * A SASL token sent by the client (op `sasl`).
 *
 * Jute: `GetSASLRequest { buffer token; }`.
 */
export interface GetSASLRequest {
  token: Buffer | null;
}

/** Reads a {@link GetSASLRequest}. */
export function readGetSASLRequest(r: JuteReader): GetSASLRequest {
  return { token: r.readBuffer() };
}

/** Writes a {@link GetSASLRequest}. */
export function writeGetSASLRequest(w: JuteWriter, v: WriteInput<GetSASLRequest>): void {
  w.writeBuffer(v.token);
}

/**
 * A SASL token record defined by zookeeper.jute; the Java client sends GetSASLRequest instead.
 *
 * Jute: `SetSASLRequest { buffer token; }`.
 */
export interface SetSASLRequest {
  token: Buffer | null;
}

/** Reads a {@link SetSASLRequest}. */
export function readSetSASLRequest(r: JuteReader): SetSASLRequest {
  return { token: r.readBuffer() };
}

/** Writes a {@link SetSASLRequest}. */
export function writeSetSASLRequest(w: JuteWriter, v: WriteInput<SetSASLRequest>): void {
  w.writeBuffer(v.token);
}

/**
 * Reply to op `sasl`: the server's SASL token.
 *
 * Jute: `SetSASLResponse { buffer token; }`.
 */
export interface SetSASLResponse {
  token: Buffer | null;
}

/** Reads a {@link SetSASLResponse}. */
export function readSetSASLResponse(r: JuteReader): SetSASLResponse {
  return { token: r.readBuffer() };
}

/** Writes a {@link SetSASLResponse}. */
export function writeSetSASLResponse(w: JuteWriter, v: WriteInput<SetSASLResponse>): void {
  w.writeBuffer(v.token);
}

/**
 * Ops `create`, `create2` and `createContainer`; `flags` is a CreateMode.
 *
 * Jute: `CreateRequest { ustring path; buffer data; vector<ACL> acl; int flags; }`.
 */
export interface CreateRequest {
  path: string | null;
  data: Buffer | null;
  acl: ACL[] | null;
  flags: number;
}

/** Reads a {@link CreateRequest}. */
export function readCreateRequest(r: JuteReader): CreateRequest {
  return {
    path: r.readUString(),
    data: r.readBuffer(),
    acl: r.readVector(readACL),
    flags: r.readInt(),
  };
}

/** Writes a {@link CreateRequest}. */
export function writeCreateRequest(w: JuteWriter, v: WriteInput<CreateRequest>): void {
  w.writeUString(v.path);
  w.writeBuffer(v.data);
  w.writeVector(v.acl, writeACL);
  w.writeInt(v.flags);
}

/**
 * Op `createTTL`; `ttl` in milliseconds.
 *
 * Jute: `CreateTTLRequest { ustring path; buffer data; vector<ACL> acl; int flags; long ttl; }`.
 */
export interface CreateTTLRequest {
  path: string | null;
  data: Buffer | null;
  acl: ACL[] | null;
  flags: number;
  ttl: bigint;
}

/** Reads a {@link CreateTTLRequest}. */
export function readCreateTTLRequest(r: JuteReader): CreateTTLRequest {
  return {
    path: r.readUString(),
    data: r.readBuffer(),
    acl: r.readVector(readACL),
    flags: r.readInt(),
    ttl: r.readLong(),
  };
}

/** Writes a {@link CreateTTLRequest}. */
export function writeCreateTTLRequest(w: JuteWriter, v: WriteInput<CreateTTLRequest>): void {
  w.writeUString(v.path);
  w.writeBuffer(v.data);
  w.writeVector(v.acl, writeACL);
  w.writeInt(v.flags);
  w.writeLong(v.ttl);
}

/**
 * Ops `delete` and `deleteContainer`; `version` -1 matches any version.
 *
 * Jute: `DeleteRequest { ustring path; int version; }`.
 */
export interface DeleteRequest {
  path: string | null;
  version: number;
}

/** Reads a {@link DeleteRequest}. */
export function readDeleteRequest(r: JuteReader): DeleteRequest {
  return {
    path: r.readUString(),
    version: r.readInt(),
  };
}

/** Writes a {@link DeleteRequest}. */
export function writeDeleteRequest(w: JuteWriter, v: WriteInput<DeleteRequest>): void {
  w.writeUString(v.path);
  w.writeInt(v.version);
}

/**
 * Op `getChildren`.
 *
 * Jute: `GetChildrenRequest { ustring path; boolean watch; }`.
 */
export interface GetChildrenRequest {
  path: string | null;
  watch: boolean;
}

/** Reads a {@link GetChildrenRequest}. */
export function readGetChildrenRequest(r: JuteReader): GetChildrenRequest {
  return {
    path: r.readUString(),
    watch: r.readBool(),
  };
}

/** Writes a {@link GetChildrenRequest}. */
export function writeGetChildrenRequest(w: JuteWriter, v: WriteInput<GetChildrenRequest>): void {
  w.writeUString(v.path);
  w.writeBool(v.watch);
}

/**
 * Op `getAllChildrenNumber` (3.6+).
 *
 * Jute: `GetAllChildrenNumberRequest { ustring path; }`.
 */
export interface GetAllChildrenNumberRequest {
  path: string | null;
}

/** Reads a {@link GetAllChildrenNumberRequest}. */
export function readGetAllChildrenNumberRequest(r: JuteReader): GetAllChildrenNumberRequest {
  return { path: r.readUString() };
}

/** Writes a {@link GetAllChildrenNumberRequest}. */
export function writeGetAllChildrenNumberRequest(w: JuteWriter, v: WriteInput<GetAllChildrenNumberRequest>): void {
  w.writeUString(v.path);
}

/**
 * Op `getChildren2`.
 *
 * Jute: `GetChildren2Request { ustring path; boolean watch; }`.
 */
export interface GetChildren2Request {
  path: string | null;
  watch: boolean;
}

/** Reads a {@link GetChildren2Request}. */
export function readGetChildren2Request(r: JuteReader): GetChildren2Request {
  return {
    path: r.readUString(),
    watch: r.readBool(),
  };
}

/** Writes a {@link GetChildren2Request}. */
export function writeGetChildren2Request(w: JuteWriter, v: WriteInput<GetChildren2Request>): void {
  w.writeUString(v.path);
  w.writeBool(v.watch);
}

/**
 * Op `check`, inside a multi.
 *
 * Jute: `CheckVersionRequest { ustring path; int version; }`.
 */
export interface CheckVersionRequest {
  path: string | null;
  version: number;
}

/** Reads a {@link CheckVersionRequest}. */
export function readCheckVersionRequest(r: JuteReader): CheckVersionRequest {
  return {
    path: r.readUString(),
    version: r.readInt(),
  };
}

/** Writes a {@link CheckVersionRequest}. */
export function writeCheckVersionRequest(w: JuteWriter, v: WriteInput<CheckVersionRequest>): void {
  w.writeUString(v.path);
  w.writeInt(v.version);
}

/**
 * Op `sync`.
 *
 * Jute: `SyncRequest { ustring path; }`.
 */
export interface SyncRequest {
  path: string | null;
}

/** Reads a {@link SyncRequest}. */
export function readSyncRequest(r: JuteReader): SyncRequest {
  return { path: r.readUString() };
}

/** Writes a {@link SyncRequest}. */
export function writeSyncRequest(w: JuteWriter, v: WriteInput<SyncRequest>): void {
  w.writeUString(v.path);
}

/**
 * Reply to `sync`.
 *
 * Jute: `SyncResponse { ustring path; }`.
 */
export interface SyncResponse {
  path: string | null;
}

/** Reads a {@link SyncResponse}. */
export function readSyncResponse(r: JuteReader): SyncResponse {
  return { path: r.readUString() };
}

/** Writes a {@link SyncResponse}. */
export function writeSyncResponse(w: JuteWriter, v: WriteInput<SyncResponse>): void {
  w.writeUString(v.path);
}

/**
 * Op `getACL`.
 *
 * Jute: `GetACLRequest { ustring path; }`.
 */
export interface GetACLRequest {
  path: string | null;
}

/** Reads a {@link GetACLRequest}. */
export function readGetACLRequest(r: JuteReader): GetACLRequest {
  return { path: r.readUString() };
}

/** Writes a {@link GetACLRequest}. */
export function writeGetACLRequest(w: JuteWriter, v: WriteInput<GetACLRequest>): void {
  w.writeUString(v.path);
}

/**
 * Op `setACL`; `version` is the expected aversion, -1 for any.
 *
 * Jute: `SetACLRequest { ustring path; vector<ACL> acl; int version; }`.
 */
export interface SetACLRequest {
  path: string | null;
  acl: ACL[] | null;
  version: number;
}

/** Reads a {@link SetACLRequest}. */
export function readSetACLRequest(r: JuteReader): SetACLRequest {
  return {
    path: r.readUString(),
    acl: r.readVector(readACL),
    version: r.readInt(),
  };
}

/** Writes a {@link SetACLRequest}. */
export function writeSetACLRequest(w: JuteWriter, v: WriteInput<SetACLRequest>): void {
  w.writeUString(v.path);
  w.writeVector(v.acl, writeACL);
  w.writeInt(v.version);
}

/**
 * Reply to `setACL`.
 *
 * Jute: `SetACLResponse { Stat stat; }`.
 */
export interface SetACLResponse {
  stat: Stat;
}

/** Reads a {@link SetACLResponse}. */
export function readSetACLResponse(r: JuteReader): SetACLResponse {
  return { stat: readStat(r) };
}

/** Writes a {@link SetACLResponse}. */
export function writeSetACLResponse(w: JuteWriter, v: WriteInput<SetACLResponse>): void {
  writeStat(w, v.stat);
}

/**
 * Op `addWatch` (3.6+); `mode` is an AddWatchMode.
 *
 * Jute: `AddWatchRequest { ustring path; int mode; }`.
 */
export interface AddWatchRequest {
  path: string | null;
  mode: number;
}

/** Reads a {@link AddWatchRequest}. */
export function readAddWatchRequest(r: JuteReader): AddWatchRequest {
  return {
    path: r.readUString(),
    mode: r.readInt(),
  };
}

/** Writes a {@link AddWatchRequest}. */
export function writeAddWatchRequest(w: JuteWriter, v: WriteInput<AddWatchRequest>): void {
  w.writeUString(v.path);
  w.writeInt(v.mode);
}

/**
 * The body of a notification (xid -1): an EventType, a KeeperState and the path.
 *
 * Jute: `WatcherEvent { int type; int state; ustring path; }`.
 */
export interface WatcherEvent {
  type: number;
  state: number;
  path: string | null;
}

/** Reads a {@link WatcherEvent}. */
export function readWatcherEvent(r: JuteReader): WatcherEvent {
  return {
    type: r.readInt(),
    state: r.readInt(),
    path: r.readUString(),
  };
}

/** Writes a {@link WatcherEvent}. */
export function writeWatcherEvent(w: JuteWriter, v: WriteInput<WatcherEvent>): void {
  w.writeInt(v.type);
  w.writeInt(v.state);
  w.writeUString(v.path);
}

/**
 * The body of a failed operation inside a multi result.
 *
 * Jute: `ErrorResponse { int err; }`.
 */
export interface ErrorResponse {
  err: number;
}

/** Reads a {@link ErrorResponse}. */
export function readErrorResponse(r: JuteReader): ErrorResponse {
  return { err: r.readInt() };
}

/** Writes a {@link ErrorResponse}. */
export function writeErrorResponse(w: JuteWriter, v: WriteInput<ErrorResponse>): void {
  w.writeInt(v.err);
}

/**
 * Reply to `create`.
 *
 * Jute: `CreateResponse { ustring path; }`.
 */
export interface CreateResponse {
  path: string | null;
}

/** Reads a {@link CreateResponse}. */
export function readCreateResponse(r: JuteReader): CreateResponse {
  return { path: r.readUString() };
}

/** Writes a {@link CreateResponse}. */
export function writeCreateResponse(w: JuteWriter, v: WriteInput<CreateResponse>): void {
  w.writeUString(v.path);
}

/**
 * Reply to `create2`, `createContainer` and `createTTL`.
 *
 * Jute: `Create2Response { ustring path; Stat stat; }`.
 */
export interface Create2Response {
  path: string | null;
  stat: Stat;
}

/** Reads a {@link Create2Response}. */
export function readCreate2Response(r: JuteReader): Create2Response {
  return {
    path: r.readUString(),
    stat: readStat(r),
  };
}

/** Writes a {@link Create2Response}. */
export function writeCreate2Response(w: JuteWriter, v: WriteInput<Create2Response>): void {
  w.writeUString(v.path);
  writeStat(w, v.stat);
}

/**
 * Op `exists`.
 *
 * Jute: `ExistsRequest { ustring path; boolean watch; }`.
 */
export interface ExistsRequest {
  path: string | null;
  watch: boolean;
}

/** Reads a {@link ExistsRequest}. */
export function readExistsRequest(r: JuteReader): ExistsRequest {
  return {
    path: r.readUString(),
    watch: r.readBool(),
  };
}

/** Writes a {@link ExistsRequest}. */
export function writeExistsRequest(w: JuteWriter, v: WriteInput<ExistsRequest>): void {
  w.writeUString(v.path);
  w.writeBool(v.watch);
}

/**
 * Reply to `exists` when the node exists (a missing node is err NONODE).
 *
 * Jute: `ExistsResponse { Stat stat; }`.
 */
export interface ExistsResponse {
  stat: Stat;
}

/** Reads a {@link ExistsResponse}. */
export function readExistsResponse(r: JuteReader): ExistsResponse {
  return { stat: readStat(r) };
}

/** Writes a {@link ExistsResponse}. */
export function writeExistsResponse(w: JuteWriter, v: WriteInput<ExistsResponse>): void {
  writeStat(w, v.stat);
}

/**
 * Reply to `getData`.
 *
 * Jute: `GetDataResponse { buffer data; Stat stat; }`.
 */
export interface GetDataResponse {
  data: Buffer | null;
  stat: Stat;
}

/** Reads a {@link GetDataResponse}. */
export function readGetDataResponse(r: JuteReader): GetDataResponse {
  return {
    data: r.readBuffer(),
    stat: readStat(r),
  };
}

/** Writes a {@link GetDataResponse}. */
export function writeGetDataResponse(w: JuteWriter, v: WriteInput<GetDataResponse>): void {
  w.writeBuffer(v.data);
  writeStat(w, v.stat);
}

/**
 * Reply to `getChildren`.
 *
 * Jute: `GetChildrenResponse { vector<ustring> children; }`.
 */
export interface GetChildrenResponse {
  children: (string | null)[] | null;
}

/** Reads a {@link GetChildrenResponse}. */
export function readGetChildrenResponse(r: JuteReader): GetChildrenResponse {
  return { children: r.readStringVector() };
}

/** Writes a {@link GetChildrenResponse}. */
export function writeGetChildrenResponse(w: JuteWriter, v: WriteInput<GetChildrenResponse>): void {
  w.writeStringVector(v.children);
}

/**
 * Reply to `getAllChildrenNumber`.
 *
 * Jute: `GetAllChildrenNumberResponse { int totalNumber; }`.
 */
export interface GetAllChildrenNumberResponse {
  totalNumber: number;
}

/** Reads a {@link GetAllChildrenNumberResponse}. */
export function readGetAllChildrenNumberResponse(r: JuteReader): GetAllChildrenNumberResponse {
  return { totalNumber: r.readInt() };
}

/** Writes a {@link GetAllChildrenNumberResponse}. */
export function writeGetAllChildrenNumberResponse(w: JuteWriter, v: WriteInput<GetAllChildrenNumberResponse>): void {
  w.writeInt(v.totalNumber);
}

/**
 * Reply to `getChildren2`.
 *
 * Jute: `GetChildren2Response { vector<ustring> children; Stat stat; }`.
 */
export interface GetChildren2Response {
  children: (string | null)[] | null;
  stat: Stat;
}

/** Reads a {@link GetChildren2Response}. */
export function readGetChildren2Response(r: JuteReader): GetChildren2Response {
  return {
    children: r.readStringVector(),
    stat: readStat(r),
  };
}

/** Writes a {@link GetChildren2Response}. */
export function writeGetChildren2Response(w: JuteWriter, v: WriteInput<GetChildren2Response>): void {
  w.writeStringVector(v.children);
  writeStat(w, v.stat);
}

/**
 * Reply to `getACL`.
 *
 * Jute: `GetACLResponse { vector<ACL> acl; Stat stat; }`.
 */
export interface GetACLResponse {
  acl: ACL[] | null;
  stat: Stat;
}

/** Reads a {@link GetACLResponse}. */
export function readGetACLResponse(r: JuteReader): GetACLResponse {
  return {
    acl: r.readVector(readACL),
    stat: readStat(r),
  };
}

/** Writes a {@link GetACLResponse}. */
export function writeGetACLResponse(w: JuteWriter, v: WriteInput<GetACLResponse>): void {
  w.writeVector(v.acl, writeACL);
  writeStat(w, v.stat);
}

/**
 * Op `checkWatches`; `type` is a WatcherType.
 *
 * Jute: `CheckWatchesRequest { ustring path; int type; }`.
 */
export interface CheckWatchesRequest {
  path: string | null;
  type: number;
}

/** Reads a {@link CheckWatchesRequest}. */
export function readCheckWatchesRequest(r: JuteReader): CheckWatchesRequest {
  return {
    path: r.readUString(),
    type: r.readInt(),
  };
}

/** Writes a {@link CheckWatchesRequest}. */
export function writeCheckWatchesRequest(w: JuteWriter, v: WriteInput<CheckWatchesRequest>): void {
  w.writeUString(v.path);
  w.writeInt(v.type);
}

/**
 * Op `removeWatches`; `type` is a WatcherType.
 *
 * Jute: `RemoveWatchesRequest { ustring path; int type; }`.
 */
export interface RemoveWatchesRequest {
  path: string | null;
  type: number;
}

/** Reads a {@link RemoveWatchesRequest}. */
export function readRemoveWatchesRequest(r: JuteReader): RemoveWatchesRequest {
  return {
    path: r.readUString(),
    type: r.readInt(),
  };
}

/** Writes a {@link RemoveWatchesRequest}. */
export function writeRemoveWatchesRequest(w: JuteWriter, v: WriteInput<RemoveWatchesRequest>): void {
  w.writeUString(v.path);
  w.writeInt(v.type);
}

/**
 * Op `getEphemerals` (3.6+).
 *
 * Jute: `GetEphemeralsRequest { ustring prefixPath; }`.
 */
export interface GetEphemeralsRequest {
  prefixPath: string | null;
}

/** Reads a {@link GetEphemeralsRequest}. */
export function readGetEphemeralsRequest(r: JuteReader): GetEphemeralsRequest {
  return { prefixPath: r.readUString() };
}

/** Writes a {@link GetEphemeralsRequest}. */
export function writeGetEphemeralsRequest(w: JuteWriter, v: WriteInput<GetEphemeralsRequest>): void {
  w.writeUString(v.prefixPath);
}

/**
 * Reply to `getEphemerals`.
 *
 * Jute: `GetEphemeralsResponse { vector<ustring> ephemerals; }`.
 */
export interface GetEphemeralsResponse {
  ephemerals: (string | null)[] | null;
}

/** Reads a {@link GetEphemeralsResponse}. */
export function readGetEphemeralsResponse(r: JuteReader): GetEphemeralsResponse {
  return { ephemerals: r.readStringVector() };
}

/** Writes a {@link GetEphemeralsResponse}. */
export function writeGetEphemeralsResponse(w: JuteWriter, v: WriteInput<GetEphemeralsResponse>): void {
  w.writeStringVector(v.ephemerals);
}

/**
 * Reply to `whoAmI` (3.7+).
 *
 * Jute: `WhoAmIResponse { vector<ClientInfo> clientInfo; }`.
 */
export interface WhoAmIResponse {
  clientInfo: ClientInfo[] | null;
}

/** Reads a {@link WhoAmIResponse}. */
export function readWhoAmIResponse(r: JuteReader): WhoAmIResponse {
  return { clientInfo: r.readVector(readClientInfo) };
}

/** Writes a {@link WhoAmIResponse}. */
export function writeWhoAmIResponse(w: JuteWriter, v: WriteInput<WhoAmIResponse>): void {
  w.writeVector(v.clientInfo, writeClientInfo);
}

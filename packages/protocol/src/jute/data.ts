/**
 * Records of zookeeper.jute's `org.apache.zookeeper.data` module that the client speaks:
 * Id, ACL, Stat and ClientInfo. Field names and order are those of the Java classes in the
 * 3.8.0 `zookeeper-jute` jar (`javap -p org.apache.zookeeper.data.<Name>`).
 *
 * Jute types map as: int -> number, long -> bigint, boolean -> boolean,
 * buffer -> Buffer | null, ustring -> string | null, vector<T> -> T[] | null.
 */
import type { JuteReader } from './reader.js';
import type { JuteWriter } from './writer.js';

/** An identity: an auth scheme and an id within it (`Id { ustring scheme; ustring id; }`). */
export interface Id {
  scheme: string | null;
  id: string | null;
}

/** Reads an {@link Id}. */
export function readId(r: JuteReader): Id {
  return { scheme: r.readUString(), id: r.readUString() };
}

/** Writes an {@link Id}. */
export function writeId(w: JuteWriter, v: Id): void {
  w.writeUString(v.scheme);
  w.writeUString(v.id);
}

/** A permission grant (`ACL { int perms; Id id; }`); `perms` is a bitwise OR of `Perm` values. */
export interface ACL {
  perms: number;
  id: Id;
}

/** Reads an {@link ACL}. */
export function readACL(r: JuteReader): ACL {
  return { perms: r.readInt(), id: readId(r) };
}

/** Writes an {@link ACL}. */
export function writeACL(w: JuteWriter, v: ACL): void {
  w.writeInt(v.perms);
  writeId(w, v.id);
}

/**
 * A node's metadata (`Stat`), 68 bytes on the wire. zxids, times (milliseconds since the
 * epoch) and the ephemeral owner's session id are longs, hence bigint.
 */
export interface Stat {
  /** zxid of the change that created the node. */
  czxid: bigint;
  /** zxid of the last change to the node's data. */
  mzxid: bigint;
  /** Creation time, ms since the epoch. */
  ctime: bigint;
  /** Last data change time, ms since the epoch. */
  mtime: bigint;
  /** Number of data changes. */
  version: number;
  /** Number of changes to the children. */
  cversion: number;
  /** Number of ACL changes. */
  aversion: number;
  /** Session id of the owner when ephemeral, 0 otherwise. */
  ephemeralOwner: bigint;
  /** Length of the data in bytes. */
  dataLength: number;
  /** Number of children. */
  numChildren: number;
  /** zxid of the last change to the children. */
  pzxid: bigint;
}

/** Reads a {@link Stat} (hot path: straight-line, one object shape). */
export function readStat(r: JuteReader): Stat {
  // Property initialisers run in source order, which is the wire order.
  return {
    czxid: r.readLong(),
    mzxid: r.readLong(),
    ctime: r.readLong(),
    mtime: r.readLong(),
    version: r.readInt(),
    cversion: r.readInt(),
    aversion: r.readInt(),
    ephemeralOwner: r.readLong(),
    dataLength: r.readInt(),
    numChildren: r.readInt(),
    pzxid: r.readLong(),
  };
}

/** Writes a {@link Stat}. */
export function writeStat(w: JuteWriter, v: Stat): void {
  w.writeLong(v.czxid);
  w.writeLong(v.mzxid);
  w.writeLong(v.ctime);
  w.writeLong(v.mtime);
  w.writeInt(v.version);
  w.writeInt(v.cversion);
  w.writeInt(v.aversion);
  w.writeLong(v.ephemeralOwner);
  w.writeInt(v.dataLength);
  w.writeInt(v.numChildren);
  w.writeLong(v.pzxid);
}

/** One identity of a session, as `whoAmI` reports it (`ClientInfo { ustring authScheme; ustring user; }`, 3.7+). */
export interface ClientInfo {
  authScheme: string | null;
  user: string | null;
}

/** Reads a {@link ClientInfo}. */
export function readClientInfo(r: JuteReader): ClientInfo {
  return { authScheme: r.readUString(), user: r.readUString() };
}

/** Writes a {@link ClientInfo}. */
export function writeClientInfo(w: JuteWriter, v: ClientInfo): void {
  w.writeUString(v.authScheme);
  w.writeUString(v.user);
}

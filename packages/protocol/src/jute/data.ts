/**
 * Records of zookeeper.jute's `org.apache.zookeeper.data` module that the client speaks:
 * Id, ACL, Stat and ClientInfo. Field names and order are those of the Java classes in the
 * 3.8.0 `zookeeper-jute` jar (`javap -p org.apache.zookeeper.data.<Name>`).
 *
 * Jute types map as: int -> number, long -> bigint (a Stat's times: number), boolean -> boolean,
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
 * A node's metadata (`Stat`), 68 bytes on the wire. The zxids and the ephemeral owner's session
 * id are 64-bit ids, hence bigint; ctime and mtime are milliseconds since the epoch, which a
 * number holds exactly: `new Date(stat.mtime)`.
 *
 * The Stats the client returns also go through `JSON.stringify`, as {@link StatJSON}: the
 * 64-bit ids as decimal strings (`BigInt(json.czxid)` gives the id back), the rest as numbers.
 * That `toJSON` is on their prototype, not an own property: `Object.keys`, spread and equality
 * see the eleven fields alone, and a copy made with spread or `structuredClone` is a plain
 * object without it.
 *
 * @example
 * ```ts
 * const stat = await zk.exists('/config');
 * if (stat) console.log(new Date(stat.mtime).toISOString(), JSON.stringify(stat));
 * // 2026-11-29T06:00:04.690Z {"czxid":"4294967301","mzxid":"4294967305","ctime":1795932000123,...}
 * ```
 */
export interface Stat {
  /** zxid of the change that created the node (the locks' fencing token). */
  czxid: bigint;
  /** zxid of the last change to the node's data. */
  mzxid: bigint;
  /** Creation time, ms since the epoch (the server's clock). */
  ctime: number;
  /** Last data change time, ms since the epoch (the server's clock). */
  mtime: number;
  /** Number of data changes. */
  version: number;
  /** Number of changes to the children. */
  cversion: number;
  /** Number of ACL changes. */
  aversion: number;
  /**
   * Session id of the owner when ephemeral, 0 otherwise; negative for a session of a server whose
   * myid is 128 or more (Java's signed long), and for containers and TTL nodes (their markers).
   */
  ephemeralOwner: bigint;
  /** Length of the data in bytes. */
  dataLength: number;
  /** Number of children. */
  numChildren: number;
  /** zxid of the last change to the children. */
  pzxid: bigint;
}

/**
 * A {@link Stat} as `JSON.stringify` writes it: each 64-bit id as its decimal string (signed,
 * as Java's `Long.toString` writes it), since JSON numbers are doubles and lose digits past
 * 2^53.
 */
export interface StatJSON {
  czxid: string;
  mzxid: string;
  ctime: number;
  mtime: number;
  version: number;
  cversion: number;
  aversion: number;
  ephemeralOwner: string;
  dataLength: number;
  numChildren: number;
  pzxid: string;
}

/**
 * The class of every Stat the client makes (decoded, or rebuilt by the caches). A class so that
 * `toJSON` sits once on the prototype: an own non-enumerable method would cost a property
 * definition per decoded Stat, and patching `BigInt.prototype.toJSON` is the application's
 * choice, not a library's. Declared fields, so the constructor's stores are the only ones.
 */
export class StatRecord implements Stat {
  declare czxid: bigint;
  declare mzxid: bigint;
  declare ctime: number;
  declare mtime: number;
  declare version: number;
  declare cversion: number;
  declare aversion: number;
  declare ephemeralOwner: bigint;
  declare dataLength: number;
  declare numChildren: number;
  declare pzxid: bigint;

  // The parameters are in wire order: readStat's arguments are evaluated, and read, in this order.
  constructor(czxid: bigint, mzxid: bigint, ctime: number, mtime: number, version: number, cversion: number, aversion: number, ephemeralOwner: bigint, dataLength: number, numChildren: number, pzxid: bigint) {
    this.czxid = czxid;
    this.mzxid = mzxid;
    this.ctime = ctime;
    this.mtime = mtime;
    this.version = version;
    this.cversion = cversion;
    this.aversion = aversion;
    this.ephemeralOwner = ephemeralOwner;
    this.dataLength = dataLength;
    this.numChildren = numChildren;
    this.pzxid = pzxid;
  }

  toJSON(): StatJSON {
    return {
      czxid: this.czxid.toString(),
      mzxid: this.mzxid.toString(),
      ctime: this.ctime,
      mtime: this.mtime,
      version: this.version,
      cversion: this.cversion,
      aversion: this.aversion,
      ephemeralOwner: this.ephemeralOwner.toString(),
      dataLength: this.dataLength,
      numChildren: this.numChildren,
      pzxid: this.pzxid.toString(),
    };
  }
}

// util.inspect and console.log name an object by its constructor: show the type users know.
Object.defineProperty(StatRecord, 'name', { value: 'Stat' });

/** A copy of `s` that serialises (a {@link StatRecord}), for a Stat that may be a plain object. */
export function copyStat(s: Stat): Stat {
  return new StatRecord(s.czxid, s.mzxid, s.ctime, s.mtime, s.version, s.cversion, s.aversion, s.ephemeralOwner, s.dataLength, s.numChildren, s.pzxid);
}

/** Reads a {@link Stat} (hot path: straight-line, one object shape). */
export function readStat(r: JuteReader): Stat {
  return new StatRecord(r.readLong(), r.readLong(), r.readLongAsNumber(), r.readLongAsNumber(), r.readInt(), r.readInt(), r.readInt(), r.readLong(), r.readInt(), r.readInt(), r.readLong());
}

/** Writes a {@link Stat}. */
export function writeStat(w: JuteWriter, v: Stat): void {
  w.writeLong(v.czxid);
  w.writeLong(v.mzxid);
  w.writeLongAsNumber(v.ctime);
  w.writeLongAsNumber(v.mtime);
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

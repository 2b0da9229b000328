/**
 * Bodies of `multi` and `multiRead`: a list of operations (or results), each preceded by a
 * `MultiHeader`, closed by `MultiHeader { type: -1, done: true, err: -1 }`.
 *
 * Checked against the 3.8.0 `zookeeper.jar` with `javap -c`:
 * - `MultiOperationRecord.serialize` writes `MultiHeader { type, false, -1 }` + the request
 *   record for op types 1, 2, 4, 5, 8, 13, 15, 19 and 21, and refuses any other type.
 * - `MultiResponse.deserialize` reads headers until `done`, and by header type: create(1) ->
 *   CreateResponse; create2(15) -> Create2Response; delete(2) and check(13) -> no body;
 *   setData(5) -> SetDataResponse; getChildren(8) -> GetChildrenResponse; getData(4) ->
 *   GetDataResponse; error(-1) -> ErrorResponse; anything else is an error.
 * - The server (`FinalRequestProcessor`) reports createContainer and createTTL results as
 *   `CreateResult(path, stat)`, whose type is create2 (15), and deleteContainer as delete (2).
 *   Java's client would reject a header of type 19 or 21; this reader also accepts them (as
 *   Create2Response, the body the server's `MultiResponse.serialize` pairs with creates that
 *   carry a Stat) so that a server reporting the original op code cannot break a transaction.
 * - When an op fails the server answers every op with type -1 and an ErrorResponse (OK for
 *   the ops before the failure, the error for the failed one, RUNTIMEINCONSISTENCY after), and
 *   the reply header's own `err` stays 0.
 */
import { OpCode } from '../constants.js';
import { DecodeError, InvalidArgumentError } from '../errors.js';
import { readStat, writeStat } from './data.js';
import type { Stat } from './data.js';
import {
  readCheckVersionRequest,
  readCreateRequest,
  readCreateTTLRequest,
  readDeleteRequest,
  readGetChildrenRequest,
  readGetDataRequest,
  readSetDataRequest,
  writeCheckVersionRequest,
  writeCreateRequest,
  writeCreateTTLRequest,
  writeDeleteRequest,
  writeGetChildrenRequest,
  writeGetDataRequest,
  writeSetDataRequest,
} from './proto.js';
import type {
  CheckVersionRequest,
  CreateRequest,
  CreateTTLRequest,
  DeleteRequest,
  GetChildrenRequest,
  GetDataRequest,
  SetDataRequest,
  WriteInput,
} from './proto.js';
import type { JuteReader } from './reader.js';
import type { JuteWriter } from './writer.js';

/**
 * One operation of a `multi` (writes and checks) or `multiRead` (getData, getChildren): the
 * op code in `type` and the fields of the request record that op sends.
 */
export type MultiOp =
  | ({ type: typeof OpCode.create | typeof OpCode.create2 | typeof OpCode.createContainer } & CreateRequest)
  | ({ type: typeof OpCode.createTTL } & CreateTTLRequest)
  | ({ type: typeof OpCode.delete } & DeleteRequest)
  | ({ type: typeof OpCode.setData } & SetDataRequest)
  | ({ type: typeof OpCode.check } & CheckVersionRequest)
  | ({ type: typeof OpCode.getData } & GetDataRequest)
  | ({ type: typeof OpCode.getChildren } & GetChildrenRequest);

/** A {@link MultiOp} as {@link writeMultiRequest} accepts it (any Uint8Array for data, readonly ACL lists). */
export type MultiOpInput =
  | ({ type: typeof OpCode.create | typeof OpCode.create2 | typeof OpCode.createContainer } & WriteInput<CreateRequest>)
  | ({ type: typeof OpCode.createTTL } & WriteInput<CreateTTLRequest>)
  | ({ type: typeof OpCode.delete } & WriteInput<DeleteRequest>)
  | ({ type: typeof OpCode.setData } & WriteInput<SetDataRequest>)
  | ({ type: typeof OpCode.check } & WriteInput<CheckVersionRequest>)
  | ({ type: typeof OpCode.getData } & WriteInput<GetDataRequest>)
  | ({ type: typeof OpCode.getChildren } & WriteInput<GetChildrenRequest>);

/** The result of one operation of a multi, discriminated on the header's `type`. */
export type MultiResult =
  | { type: typeof OpCode.create; path: string | null }
  | { type: typeof OpCode.create2 | typeof OpCode.createContainer | typeof OpCode.createTTL; path: string | null; stat: Stat }
  | { type: typeof OpCode.delete }
  | { type: typeof OpCode.check }
  | { type: typeof OpCode.setData; stat: Stat }
  | { type: typeof OpCode.getData; data: Buffer | null; stat: Stat }
  | { type: typeof OpCode.getChildren; children: (string | null)[] | null }
  | { type: typeof OpCode.error; err: number };

/** A {@link MultiResult} as {@link writeMultiResponse} accepts it. */
export type MultiResultInput =
  | Exclude<MultiResult, { type: typeof OpCode.getData } | { type: typeof OpCode.getChildren }>
  | { type: typeof OpCode.getData; data: Uint8Array | null; stat: Stat }
  | { type: typeof OpCode.getChildren; children: readonly (string | null)[] | null };

/**
 * Writes a multi (or multiRead) request body: each op as `MultiHeader { type, false, -1 }` and
 * its request record, then the closing `MultiHeader { -1, true, -1 }`.
 *
 * @example
 * ```ts
 * writeMultiRequest(w, [
 *   { type: OpCode.check, path: '/lock', version: 3 },
 *   { type: OpCode.setData, path: '/data', data: Buffer.from('x'), version: -1 },
 * ]);
 * ```
 */
export function writeMultiRequest(w: JuteWriter, ops: readonly MultiOpInput[]): void {
  for (let i = 0; i < ops.length; i++) {
    const op = ops[i]!;
    w.writeInt(op.type).writeBool(false).writeInt(-1);
    switch (op.type) {
      case OpCode.create:
      case OpCode.create2:
      case OpCode.createContainer:
        writeCreateRequest(w, op);
        break;
      case OpCode.createTTL:
        writeCreateTTLRequest(w, op);
        break;
      case OpCode.delete:
        writeDeleteRequest(w, op);
        break;
      case OpCode.setData:
        writeSetDataRequest(w, op);
        break;
      case OpCode.check:
        writeCheckVersionRequest(w, op);
        break;
      case OpCode.getData:
        writeGetDataRequest(w, op);
        break;
      case OpCode.getChildren:
        writeGetChildrenRequest(w, op);
        break;
      default:
        throw new InvalidArgumentError('ops', `op type ${String((op as { type: unknown }).type)} cannot be part of a multi`);
    }
  }
  w.writeInt(-1).writeBool(true).writeInt(-1);
}

/**
 * Reads a multi request body (the server's side; used by tests and tools). Stops at the
 * header marked done; an op type a multi cannot carry throws {@link DecodeError}.
 */
export function readMultiRequest(r: JuteReader): MultiOp[] {
  const ops: MultiOp[] = [];
  for (;;) {
    const at = r.offset;
    const type = r.readInt();
    const done = r.readBool();
    r.readInt(); // err: always -1 in a request
    if (done) return ops;
    switch (type) {
      case OpCode.create:
      case OpCode.create2:
      case OpCode.createContainer:
        ops.push({ type, ...readCreateRequest(r) });
        break;
      case OpCode.createTTL:
        ops.push({ type, ...readCreateTTLRequest(r) });
        break;
      case OpCode.delete:
        ops.push({ type, ...readDeleteRequest(r) });
        break;
      case OpCode.setData:
        ops.push({ type, ...readSetDataRequest(r) });
        break;
      case OpCode.check:
        ops.push({ type, ...readCheckVersionRequest(r) });
        break;
      case OpCode.getData:
        ops.push({ type, ...readGetDataRequest(r) });
        break;
      case OpCode.getChildren:
        ops.push({ type, ...readGetChildrenRequest(r) });
        break;
      default:
        throw new DecodeError(`invalid op type ${type} in a multi request at offset ${at}`, { offset: at });
    }
  }
}

/**
 * Reads a multi (or multiRead) reply body, as Java's `MultiResponse.deserialize` does: one
 * result per header until the header marked done. A header type with no known body throws
 * {@link DecodeError}.
 */
export function readMultiResponse(r: JuteReader): MultiResult[] {
  const results: MultiResult[] = [];
  for (;;) {
    const at = r.offset;
    const type = r.readInt();
    const done = r.readBool();
    r.readInt(); // err: Java ignores it too; a failed op's code is in its ErrorResponse
    if (done) return results;
    switch (type) {
      case OpCode.create:
        results.push({ type, path: r.readUString() });
        break;
      case OpCode.create2:
      case OpCode.createContainer:
      case OpCode.createTTL:
        results.push({ type, path: r.readUString(), stat: readStat(r) });
        break;
      case OpCode.delete:
      case OpCode.check:
        results.push({ type });
        break;
      case OpCode.setData:
        results.push({ type, stat: readStat(r) });
        break;
      case OpCode.getData:
        results.push({ type, data: r.readBuffer(), stat: readStat(r) });
        break;
      case OpCode.getChildren:
        results.push({ type, children: r.readStringVector() });
        break;
      case OpCode.error:
        results.push({ type, err: r.readInt() });
        break;
      default:
        throw new DecodeError(`invalid result type ${type} in a multi response at offset ${at}`, { offset: at });
    }
  }
}

/**
 * Writes a multi reply body (the server's side; used by tests and fakes): each result as
 * `MultiHeader { type, false, err }` and its body, then `MultiHeader { -1, true, -1 }`. The
 * header's `err` is the ErrorResponse code for an error result and 0 otherwise, as Java's
 * `MultiResponse.serialize` writes it.
 */
export function writeMultiResponse(w: JuteWriter, results: readonly MultiResultInput[]): void {
  for (let i = 0; i < results.length; i++) {
    const res = results[i]!;
    w.writeInt(res.type).writeBool(false).writeInt(res.type === OpCode.error ? res.err : 0);
    switch (res.type) {
      case OpCode.create:
        w.writeUString(res.path);
        break;
      case OpCode.create2:
      case OpCode.createContainer:
      case OpCode.createTTL:
        w.writeUString(res.path);
        writeStat(w, res.stat);
        break;
      case OpCode.delete:
      case OpCode.check:
        break;
      case OpCode.setData:
        writeStat(w, res.stat);
        break;
      case OpCode.getData:
        w.writeBuffer(res.data);
        writeStat(w, res.stat);
        break;
      case OpCode.getChildren:
        w.writeStringVector(res.children);
        break;
      case OpCode.error:
        w.writeInt(res.err);
        break;
      default:
        throw new InvalidArgumentError('results', `result type ${String((res as { type: unknown }).type)} has no multi encoding`);
    }
  }
  w.writeInt(-1).writeBool(true).writeInt(-1);
}

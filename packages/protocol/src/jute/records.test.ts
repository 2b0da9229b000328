import { describe, expect, it } from 'vitest';
import { OpCode } from '../constants.js';
import { DecodeError, InvalidArgumentError } from '../errors.js';
import { Bytes, bytes } from '../testing/bytes.js';
import { records, type RecordName } from './index.js';
import { readMultiRequest, readMultiResponse, writeMultiRequest, writeMultiResponse, type MultiOp, type MultiResult } from './multi.js';
import { readGetDataResponse, readReplyHeader } from './proto.js';
import { JuteReader } from './reader.js';
import { JuteWriter } from './writer.js';

/*
 * The schema below is written out independently of the codec, from
 * `javap -p -cp /usr/share/java/zookeeper-jute.jar org.apache.zookeeper.{data,proto}.<Name>`
 * (3.8.0). Values are generated from it and encoded with the independent byte builder, so a
 * wrong field order or type in the codec shows up as a byte mismatch.
 */
type FieldType = 'int' | 'long' | 'time' | 'boolean' | 'buffer' | 'ustring' | 'vector<ustring>' | `vector<${string}>` | string;
const schema: Record<string, Array<[string, FieldType]>> = {
  Id: [['scheme', 'ustring'], ['id', 'ustring']],
  ACL: [['perms', 'int'], ['id', 'Id']],
  Stat: [
    ['czxid', 'long'], ['mzxid', 'long'], ['ctime', 'time'], ['mtime', 'time'], ['version', 'int'], ['cversion', 'int'],
    ['aversion', 'int'], ['ephemeralOwner', 'long'], ['dataLength', 'int'], ['numChildren', 'int'], ['pzxid', 'long'],
  ],
  ClientInfo: [['authScheme', 'ustring'], ['user', 'ustring']],
  ConnectRequest: [['protocolVersion', 'int'], ['lastZxidSeen', 'long'], ['timeOut', 'int'], ['sessionId', 'long'], ['passwd', 'buffer']],
  ConnectResponse: [['protocolVersion', 'int'], ['timeOut', 'int'], ['sessionId', 'long'], ['passwd', 'buffer']],
  SetWatches: [['relativeZxid', 'long'], ['dataWatches', 'vector<ustring>'], ['existWatches', 'vector<ustring>'], ['childWatches', 'vector<ustring>']],
  SetWatches2: [
    ['relativeZxid', 'long'], ['dataWatches', 'vector<ustring>'], ['existWatches', 'vector<ustring>'], ['childWatches', 'vector<ustring>'],
    ['persistentWatches', 'vector<ustring>'], ['persistentRecursiveWatches', 'vector<ustring>'],
  ],
  RequestHeader: [['xid', 'int'], ['type', 'int']],
  MultiHeader: [['type', 'int'], ['done', 'boolean'], ['err', 'int']],
  AuthPacket: [['type', 'int'], ['scheme', 'ustring'], ['auth', 'buffer']],
  ReplyHeader: [['xid', 'int'], ['zxid', 'long'], ['err', 'int']],
  GetDataRequest: [['path', 'ustring'], ['watch', 'boolean']],
  SetDataRequest: [['path', 'ustring'], ['data', 'buffer'], ['version', 'int']],
  ReconfigRequest: [['joiningServers', 'ustring'], ['leavingServers', 'ustring'], ['newMembers', 'ustring'], ['curConfigId', 'long']],
  SetDataResponse: [['stat', 'Stat']],
  GetSASLRequest: [['token', 'buffer']],
  SetSASLRequest: [['token', 'buffer']],
  SetSASLResponse: [['token', 'buffer']],
  CreateRequest: [['path', 'ustring'], ['data', 'buffer'], ['acl', 'vector<ACL>'], ['flags', 'int']],
  CreateTTLRequest: [['path', 'ustring'], ['data', 'buffer'], ['acl', 'vector<ACL>'], ['flags', 'int'], ['ttl', 'long']],
  DeleteRequest: [['path', 'ustring'], ['version', 'int']],
  GetChildrenRequest: [['path', 'ustring'], ['watch', 'boolean']],
  GetAllChildrenNumberRequest: [['path', 'ustring']],
  GetChildren2Request: [['path', 'ustring'], ['watch', 'boolean']],
  CheckVersionRequest: [['path', 'ustring'], ['version', 'int']],
  SyncRequest: [['path', 'ustring']],
  SyncResponse: [['path', 'ustring']],
  GetACLRequest: [['path', 'ustring']],
  SetACLRequest: [['path', 'ustring'], ['acl', 'vector<ACL>'], ['version', 'int']],
  SetACLResponse: [['stat', 'Stat']],
  AddWatchRequest: [['path', 'ustring'], ['mode', 'int']],
  WatcherEvent: [['type', 'int'], ['state', 'int'], ['path', 'ustring']],
  ErrorResponse: [['err', 'int']],
  CreateResponse: [['path', 'ustring']],
  Create2Response: [['path', 'ustring'], ['stat', 'Stat']],
  ExistsRequest: [['path', 'ustring'], ['watch', 'boolean']],
  ExistsResponse: [['stat', 'Stat']],
  GetDataResponse: [['data', 'buffer'], ['stat', 'Stat']],
  GetChildrenResponse: [['children', 'vector<ustring>']],
  GetAllChildrenNumberResponse: [['totalNumber', 'int']],
  GetChildren2Response: [['children', 'vector<ustring>'], ['stat', 'Stat']],
  GetACLResponse: [['acl', 'vector<ACL>'], ['stat', 'Stat']],
  CheckWatchesRequest: [['path', 'ustring'], ['type', 'int']],
  RemoveWatchesRequest: [['path', 'ustring'], ['type', 'int']],
  GetEphemeralsRequest: [['prefixPath', 'ustring']],
  GetEphemeralsResponse: [['ephemerals', 'vector<ustring>']],
  WhoAmIResponse: [['clientInfo', 'vector<ClientInfo>']],
};

const samples: Record<string, readonly unknown[]> = {
  int: [-(2 ** 31), 2 ** 31 - 1, 0, -1, 17],
  long: [-(2n ** 63n), 2n ** 63n - 1n, 0n, -1n],
  // A long the codec reads as a number (a Stat's ctime and mtime, ms): its safe-integer range.
  time: [Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER, 0, -1, 1795932004690],
  boolean: [true, false],
  buffer: [null, Buffer.alloc(0), Buffer.from([0, 1, 0x80, 0xff])],
  ustring: [null, '', '/zné€/😀', 'plain'],
  'vector<ustring>': [null, [], ['a', null, '', 'ü😀'], ['/only']],
};

/** Variant `k` of a value of `type`: field `i` takes sample `(k + i) % n`, so fields vary independently. */
function sample(type: FieldType, k: number): unknown {
  const vec = /^vector<(.+)>$/.exec(type);
  if (type !== 'vector<ustring>' && vec) {
    const n = k % 3;
    if (n === 0) return null;
    if (n === 1) return [];
    return [makeRecord(vec[1]!, k + 1), makeRecord(vec[1]!, k + 2)];
  }
  const s = samples[type];
  if (s) return s[k % s.length];
  return makeRecord(type, k);
}

function makeRecord(name: string, k: number): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  schema[name]!.forEach(([field, type], i) => {
    out[field] = sample(type, k + i);
  });
  return out;
}

function encode(b: Bytes, type: FieldType, v: unknown): void {
  const vec = /^vector<(.+)>$/.exec(type);
  if (type === 'int') b.int(v as number);
  else if (type === 'long') b.long(v as bigint);
  else if (type === 'time') b.long(BigInt(v as number));
  else if (type === 'boolean') b.bool(v as boolean);
  else if (type === 'buffer') b.buf(v as Buffer | null);
  else if (type === 'ustring') b.str(v as string | null);
  else if (vec) {
    if (v === null) b.int(-1);
    else {
      const items = v as unknown[];
      b.int(items.length);
      for (const item of items) encode(b, vec[1]!, item);
    }
  } else for (const [field, t] of schema[type]!) encode(b, t, (v as Record<string, unknown>)[field]);
}

const names = Object.keys(schema);
const VARIANTS = 6;

function decodeError(fn: () => unknown): DecodeError {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(DecodeError);
    return e as DecodeError;
  }
  throw new Error('expected a DecodeError');
}

describe('records registry', () => {
  it('registry - has exactly the records of the schema, under the Java simple names', () => {
    expect(Object.keys(records).sort()).toEqual([...names].sort());
  });

  for (const name of names) {
    const codec = records[name as RecordName] as { read(r: JuteReader): unknown; write(w: JuteWriter, v: unknown): void };

    it(`${name} - writes the bytes of the schema and reads them back, for every edge value`, () => {
      for (let k = 0; k < VARIANTS; k++) {
        const value = makeRecord(name, k);
        const expected = bytes();
        encode(expected, name, value);
        const want = expected.build();

        const w = new JuteWriter(1);
        codec.write(w, value);
        const got = w.toBuffer();
        expect(got.toString('hex'), `variant ${k}`).toBe(want.toString('hex'));

        const r = new JuteReader(want);
        expect(codec.read(r)).toEqual(value);
        expect(r.remaining).toBe(0);
      }
    });

    it(`${name} - truncation at every offset throws DecodeError`, () => {
      for (let k = 0; k < 3; k++) {
        const b = bytes();
        encode(b, name, makeRecord(name, k));
        const full = b.build();
        for (let cut = 0; cut < full.length; cut++) {
          // A copy of the prefix alone, so nothing past the cut is reachable.
          const r = new JuteReader(Buffer.from(full.subarray(0, cut)));
          expect(() => codec.read(r), `variant ${k} cut ${cut}/${full.length}`).toThrow(DecodeError);
        }
      }
    });
  }

  it('readers - keep null and empty apart in nested records and vectors', () => {
    const noAcl = bytes().str('/n').buf(null).int(-1).int(0).build();
    const emptyAcl = bytes().str('').buf(Buffer.alloc(0)).int(0).int(0).build();
    expect(records.CreateRequest.read(new JuteReader(noAcl))).toEqual({ path: '/n', data: null, acl: null, flags: 0 });
    const e = records.CreateRequest.read(new JuteReader(emptyAcl));
    expect(e.path).toBe('');
    expect(e.data).toEqual(Buffer.alloc(0));
    expect(e.acl).toEqual([]);
  });

  it('lengths - a buffer length of 0x7fffffff in a 10-byte input throws DecodeError', () => {
    const input = bytes().int(0x7fffffff).raw([1, 2, 3, 4, 5, 6]).build();
    expect(input.length).toBe(10);
    expect(decodeError(() => readGetDataResponse(new JuteReader(input))).offset).toBe(0);
    expect(() => records.GetChildrenResponse.read(new JuteReader(input))).toThrow(DecodeError);
    expect(() => records.GetACLResponse.read(new JuteReader(input))).toThrow(DecodeError);
    expect(() => records.WhoAmIResponse.read(new JuteReader(input))).toThrow(DecodeError);
    expect(() => records.CreateResponse.read(new JuteReader(input))).toThrow(DecodeError);
  });

  it('lengths - a negative length other than -1 throws DecodeError with the offset of the length', () => {
    const input = bytes().int(-5).raw(Buffer.alloc(80)).build();
    expect(decodeError(() => readGetDataResponse(new JuteReader(input))).offset).toBe(0);
    const nested = bytes().str('/p').int(-2).raw(Buffer.alloc(8)).build();
    expect(decodeError(() => records.SetDataRequest.read(new JuteReader(nested))).offset).toBe(6);
  });

  it('ReplyHeader - reads a notification header from a frame window', () => {
    const frame = bytes().int(-1).long(0x1234n).int(0).frame();
    expect(readReplyHeader(new JuteReader(frame, 4))).toEqual({ xid: -1, zxid: 0x1234n, err: 0 });
  });
});

const stat = makeRecord('Stat', 0) as unknown as import('./data.js').Stat;
const stat2 = makeRecord('Stat', 1) as unknown as import('./data.js').Stat;

describe('multi', () => {
  const acl = [{ perms: 31, id: { scheme: 'world', id: 'anyone' } }];
  const ops: MultiOp[] = [
    { type: OpCode.create, path: '/a', data: Buffer.from('x'), acl, flags: 0 },
    { type: OpCode.create2, path: '/b', data: null, acl, flags: 2 },
    { type: OpCode.createContainer, path: '/c', data: Buffer.alloc(0), acl, flags: 4 },
    { type: OpCode.createTTL, path: '/d', data: null, acl, flags: 5, ttl: 1000n },
    { type: OpCode.delete, path: '/e', version: -1 },
    { type: OpCode.setData, path: '/f', data: Buffer.from([1]), version: 3 },
    { type: OpCode.check, path: '/g', version: 7 },
    { type: OpCode.getData, path: '/h', watch: false },
    { type: OpCode.getChildren, path: '/i', watch: false },
  ];

  function header(b: Bytes, type: number, done: boolean, err: number): Bytes {
    return b.int(type).bool(done).int(err);
  }

  it('request - each op is MultiHeader{type,false,-1} + its record, closed by {-1,true,-1}', () => {
    const b = bytes();
    for (const op of ops) {
      header(b, op.type, false, -1);
      const { type: _t, ...fields } = op;
      const recordName =
        op.type === OpCode.createTTL ? 'CreateTTLRequest'
        : op.type === OpCode.delete ? 'DeleteRequest'
        : op.type === OpCode.setData ? 'SetDataRequest'
        : op.type === OpCode.check ? 'CheckVersionRequest'
        : op.type === OpCode.getData ? 'GetDataRequest'
        : op.type === OpCode.getChildren ? 'GetChildrenRequest'
        : 'CreateRequest';
      encode(b, recordName, fields);
    }
    header(b, -1, true, -1);
    const w = new JuteWriter();
    writeMultiRequest(w, ops);
    const got = w.toBuffer();
    expect(got.toString('hex')).toBe(b.build().toString('hex'));
    const r = new JuteReader(got);
    expect(readMultiRequest(r)).toEqual(ops);
    expect(r.remaining).toBe(0);
  });

  it('request - an op type a multi cannot carry is refused', () => {
    expect(() => writeMultiRequest(new JuteWriter(), [{ type: OpCode.sync, path: '/' } as unknown as MultiOp])).toThrow(InvalidArgumentError);
  });

  it('response - reads each result body by header type, as MultiResponse.deserialize does', () => {
    const b = bytes();
    header(b, OpCode.create, false, 0).str('/a');
    header(b, OpCode.create2, false, 0).str('/b');
    encode(b, 'Stat', stat);
    header(b, OpCode.delete, false, 0);
    header(b, OpCode.setData, false, 0);
    encode(b, 'Stat', stat2);
    header(b, OpCode.check, false, 0);
    header(b, OpCode.getData, false, 0).buf(Buffer.from('v'));
    encode(b, 'Stat', stat);
    header(b, OpCode.getChildren, false, 0).strs(['x', 'y']);
    header(b, OpCode.error, false, -101).int(-101);
    header(b, -1, true, -1);
    const input = b.build();
    const r = new JuteReader(input);
    const expected: MultiResult[] = [
      { type: OpCode.create, path: '/a' },
      { type: OpCode.create2, path: '/b', stat },
      { type: OpCode.delete },
      { type: OpCode.setData, stat: stat2 },
      { type: OpCode.check },
      { type: OpCode.getData, data: Buffer.from('v'), stat },
      { type: OpCode.getChildren, children: ['x', 'y'] },
      { type: OpCode.error, err: -101 },
    ];
    expect(readMultiResponse(r)).toEqual(expected);
    expect(r.remaining).toBe(0);

    const w = new JuteWriter();
    writeMultiResponse(w, expected);
    expect(w.toBuffer().toString('hex')).toBe(input.toString('hex'));
  });

  it('response - createContainer and createTTL headers carry a Create2Response', () => {
    const b = bytes();
    header(b, OpCode.createContainer, false, 0).str('/c');
    encode(b, 'Stat', stat);
    header(b, OpCode.createTTL, false, 0).str('/t');
    encode(b, 'Stat', stat2);
    header(b, -1, true, -1);
    expect(readMultiResponse(new JuteReader(b.build()))).toEqual([
      { type: OpCode.createContainer, path: '/c', stat },
      { type: OpCode.createTTL, path: '/t', stat: stat2 },
    ]);
  });

  it('response - an empty list is just the closing header', () => {
    expect(readMultiResponse(new JuteReader(header(bytes(), -1, true, -1).build()))).toEqual([]);
  });

  it('response - an unknown result type throws DecodeError at its header', () => {
    const input = header(header(bytes(), OpCode.delete, false, 0), OpCode.sync, false, 0).str('/').build();
    expect(decodeError(() => readMultiResponse(new JuteReader(input))).offset).toBe(9);
  });

  it('response - truncation at every offset throws DecodeError', () => {
    const w = new JuteWriter();
    writeMultiResponse(w, [
      { type: OpCode.create2, path: '/b', stat },
      { type: OpCode.getChildren, children: ['x'] },
      { type: OpCode.error, err: -110 },
    ]);
    const full = w.toBuffer();
    for (let cut = 0; cut < full.length; cut++) {
      expect(() => readMultiResponse(new JuteReader(Buffer.from(full.subarray(0, cut)))), `cut ${cut}`).toThrow(DecodeError);
    }
  });
});

import { afterEach, describe, expect, it } from 'vitest';
import { OpCode } from '../constants.js';
import { ConnectionLossError, DecodeError, ErrorCode } from '../errors.js';
import type { Stat } from '../jute/data.js';
import { readMultiRequest, writeMultiRequest, writeMultiResponse, type MultiResultInput } from '../jute/multi.js';
import { readGetChildrenResponse, readGetDataResponse, writeGetChildrenRequest, writeGetDataRequest, type GetDataResponse } from '../jute/proto.js';
import { JuteReader } from '../jute/reader.js';
import { JuteWriter } from '../jute/writer.js';
import { FakeServer, type FakeConnection } from '../testing/fake-server.js';
import { MAX_COALESCED_READS, readReadBatch, writeReadBatch, type QueuedRead } from './coalesce.js';
import { Connection } from './connection.js';
import type { Reply } from './pending.js';

const STAT: Stat = { czxid: 5n, mzxid: 6n, ctime: 1700000000000, mtime: 1700000000001, version: 2, cversion: 3, aversion: 0, ephemeralOwner: 0n, dataLength: 3, numChildren: 0, pzxid: 5n };

function queued(type: number, path: string): QueuedRead {
  return {
    type,
    write: (w) => (type === OpCode.getData ? writeGetDataRequest(w, { path, watch: false }) : writeGetChildrenRequest(w, { path, watch: false })),
    read: type === OpCode.getData ? readGetDataResponse : readGetChildrenResponse,
    resolve: () => {},
    reject: () => {},
  };
}

function multiReply(results: readonly MultiResultInput[]): Buffer {
  const w = new JuteWriter();
  writeMultiResponse(w, results);
  return w.toBuffer();
}

describe('coalesced read batches (pure)', () => {
  it('writes the same bytes as a multiRead of the same ops', () => {
    const reads = [queued(OpCode.getData, '/a'), queued(OpCode.getChildren, '/b'), queued(OpCode.getData, '/c/d')];
    const ours = new JuteWriter();
    writeReadBatch(ours, reads);
    const reference = new JuteWriter();
    writeMultiRequest(reference, [
      { type: OpCode.getData, path: '/a', watch: false },
      { type: OpCode.getChildren, path: '/b', watch: false },
      { type: OpCode.getData, path: '/c/d', watch: false },
    ]);
    expect(ours.toBuffer()).toEqual(reference.toBuffer());
  });

  it('gives each read its own result, decoded by its own reader, and each failed read its code', () => {
    const reads = [queued(OpCode.getData, '/a'), queued(OpCode.getData, '/missing'), queued(OpCode.getChildren, '/b')];
    const reply = multiReply([
      { type: OpCode.getData, data: Buffer.from('abc'), stat: STAT },
      { type: OpCode.error, err: ErrorCode.NONODE },
      { type: OpCode.getChildren, children: ['x', 'y'] },
    ]);
    const out = readReadBatch(new JuteReader(reply), reads);
    expect(out).toHaveLength(3);
    expect(out[0]!.err).toBe(0);
    expect((out[0]!.body as GetDataResponse).data).toEqual(Buffer.from('abc'));
    expect((out[0]!.body as GetDataResponse).stat).toEqual(STAT);
    expect(out[1]).toEqual({ err: ErrorCode.NONODE, body: undefined });
    expect(out[2]).toEqual({ err: 0, body: { children: ['x', 'y'] } });
  });

  it('rejects a reply of another shape than the batch asked for', () => {
    const two = [queued(OpCode.getData, '/a'), queued(OpCode.getData, '/b')];
    const data = { type: OpCode.getData, data: Buffer.from('abc'), stat: STAT } as const;
    expect(() => readReadBatch(new JuteReader(multiReply([data])), two)).toThrow(/ended after 1 of 2/);
    expect(() => readReadBatch(new JuteReader(multiReply([data, data, data])), two)).toThrow(/more than the 2 results/);
    expect(() => readReadBatch(new JuteReader(multiReply([data, { type: OpCode.getChildren, children: [] }])), two)).toThrow(/result 1 has type 8, expected 4/);
    expect(() => readReadBatch(new JuteReader(multiReply([data, { type: OpCode.error, err: 0 }])), two)).toThrow(DecodeError);
  });
});

describe('Connection with coalesceReads (fake server)', () => {
  const servers: FakeServer[] = [];
  const connections: Connection[] = [];
  afterEach(async () => {
    for (const c of connections.splice(0)) c.destroy();
    await Promise.all(servers.splice(0).map((s) => s.close()));
  });

  async function open(coalesceReads: boolean, maxFrameSize?: number): Promise<{ conn: Connection; peer: FakeConnection }> {
    const server = await FakeServer.start();
    servers.push(server);
    const conn = await Connection.open({ host: '127.0.0.1', port: server.port, sessionTimeout: 30_000, connectTimeout: 2000, coalesceReads, maxFrameSize }, { notification: () => {}, close: () => {} });
    connections.push(conn);
    return { conn, peer: await server.nextConnection() };
  }

  const getData = (conn: Connection, path: string) =>
    conn.request(OpCode.getData, (w) => writeGetDataRequest(w, { path, watch: false }), readGetDataResponse, { coalesce: true });
  const getChildren = (conn: Connection, path: string) =>
    conn.request(OpCode.getChildren, (w) => writeGetChildrenRequest(w, { path, watch: false }), readGetChildrenResponse, { coalesce: true });

  it('sends the reads of one tick as one multiRead and hands each its own reply', async () => {
    const { conn, peer } = await open(true);
    const a = getData(conn, '/a');
    const b = getData(conn, '/missing');
    const c = getChildren(conn, '/c');
    const req = await peer.nextRequest();
    expect(req.type).toBe(OpCode.multiRead);
    expect(readMultiRequest(new JuteReader(req.body))).toEqual([
      { type: OpCode.getData, path: '/a', watch: false },
      { type: OpCode.getData, path: '/missing', watch: false },
      { type: OpCode.getChildren, path: '/c', watch: false },
    ]);
    peer.reply({
      xid: req.xid,
      zxid: 42n,
      err: 0,
      body: multiReply([{ type: OpCode.getData, data: Buffer.from('abc'), stat: STAT }, { type: OpCode.error, err: ErrorCode.NONODE }, { type: OpCode.getChildren, children: ['k'] }]),
    });
    const [ra, rb, rc] = await Promise.all([a, b, c]);
    expect(ra).toEqual({ zxid: 42n, err: 0, body: { data: Buffer.from('abc'), stat: STAT } });
    expect(rb).toEqual({ zxid: 42n, err: ErrorCode.NONODE, body: undefined });
    expect(rc).toEqual({ zxid: 42n, err: 0, body: { children: ['k'] } });
    expect(conn.lastZxid).toBe(42n);
  });

  it('writes queued reads before a later request, so the server sees the calling order', async () => {
    const { conn, peer } = await open(true);
    const r1 = getData(conn, '/one');
    const w = conn.request(OpCode.setData, (wr) => wr.writeUString('/one').writeBuffer(Buffer.from('new')).writeInt(-1), undefined);
    const r2 = getData(conn, '/two');
    const r3 = getData(conn, '/three');
    const first = await peer.nextRequest();
    const second = await peer.nextRequest();
    const third = await peer.nextRequest();
    // The read made before the write leaves alone, ahead of it; the two after it share a batch.
    expect([first.type, second.type, third.type]).toEqual([OpCode.getData, OpCode.setData, OpCode.multiRead]);
    expect(first.xid).toBeLessThan(second.xid);
    expect(second.xid).toBeLessThan(third.xid);
    expect(readMultiRequest(new JuteReader(third.body)).map((op) => (op as { path: string }).path)).toEqual(['/two', '/three']);
    peer.reply({ xid: first.xid, zxid: 1n, err: ErrorCode.NONODE });
    peer.reply({ xid: second.xid, zxid: 2n, err: ErrorCode.NONODE });
    peer.reply({ xid: third.xid, zxid: 2n, err: 0, body: multiReply([{ type: OpCode.error, err: ErrorCode.NONODE }, { type: OpCode.error, err: ErrorCode.NOAUTH }]) });
    expect((await r1).err).toBe(ErrorCode.NONODE);
    expect((await w).err).toBe(ErrorCode.NONODE);
    expect((await r2).err).toBe(ErrorCode.NONODE);
    expect((await r3).err).toBe(ErrorCode.NOAUTH);
  });

  it('sends each read alone when the connection was opened without coalesceReads', async () => {
    const { conn, peer } = await open(false);
    const reads = [getData(conn, '/a'), getData(conn, '/b')];
    const types = [(await peer.nextRequest()).type, (await peer.nextRequest()).type];
    expect(types).toEqual([OpCode.getData, OpCode.getData]);
    void Promise.allSettled(reads);
  });

  it(`starts a new batch after ${MAX_COALESCED_READS} reads`, async () => {
    const { conn, peer } = await open(true);
    const n = MAX_COALESCED_READS + 3;
    const reads = Array.from({ length: n }, (_, i) => getData(conn, `/n${i}`));
    const first = await peer.nextRequest();
    const second = await peer.nextRequest();
    expect(readMultiRequest(new JuteReader(first.body))).toHaveLength(MAX_COALESCED_READS);
    expect(readMultiRequest(new JuteReader(second.body))).toHaveLength(3);
    void Promise.allSettled(reads);
  });

  it('gives every read of a batch the whole request\'s error code (a server without multiRead)', async () => {
    const { conn, peer } = await open(true);
    const reads = [getData(conn, '/a'), getData(conn, '/b')];
    const req = await peer.nextRequest();
    peer.reply({ xid: req.xid, zxid: 7n, err: ErrorCode.UNIMPLEMENTED });
    const replies: Array<Reply<unknown>> = await Promise.all(reads);
    expect(replies.map((r) => r.err)).toEqual([ErrorCode.UNIMPLEMENTED, ErrorCode.UNIMPLEMENTED]);
  });

  it('accepts a batch reply as large as its reads\' replies together, over one frame\'s limit', async () => {
    const { conn, peer } = await open(true, 1024);
    const reads = [getData(conn, '/a'), getData(conn, '/b')];
    const req = await peer.nextRequest();
    const big = Buffer.alloc(900, 1);
    peer.reply({ xid: req.xid, zxid: 1n, err: 0, body: multiReply([{ type: OpCode.getData, data: big, stat: STAT }, { type: OpCode.getData, data: big, stat: STAT }]) });
    const replies = await Promise.all(reads);
    expect(replies.map((r) => (r.body as GetDataResponse).data?.length)).toEqual([900, 900]);
    expect(conn.closed).toBe(false);
  });

  it('fails queued and outstanding reads with ConnectionLoss when the connection drops', async () => {
    const { conn, peer } = await open(true);
    const sent = [getData(conn, '/a'), getData(conn, '/b')];
    await peer.nextRequest();
    const queuedReads = [getData(conn, '/c'), getData(conn, '/d')];
    conn.destroy();
    const errors = await Promise.all([...sent, ...queuedReads].map((p) => p.then(() => undefined, (e: unknown) => e)));
    for (const e of errors) expect(e).toBeInstanceOf(ConnectionLossError);
  });

  it('closes the connection on a batch reply that does not match the batch', async () => {
    const { conn, peer } = await open(true);
    const reads = [getData(conn, '/a'), getChildren(conn, '/b')];
    const req = await peer.nextRequest();
    peer.reply({ xid: req.xid, zxid: 1n, err: 0, body: multiReply([{ type: OpCode.getData, data: null, stat: STAT }, { type: OpCode.getData, data: null, stat: STAT }]) });
    const errors = await Promise.all(reads.map((p) => p.then(() => undefined, (e: unknown) => e)));
    for (const e of errors) expect(e).toBeInstanceOf(ConnectionLossError);
    expect((errors[0] as ConnectionLossError).message).toMatch(/result 1 has type 4, expected 8/);
    expect(conn.closed).toBe(true);
  });

});

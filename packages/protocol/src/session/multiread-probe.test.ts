import { afterEach, describe, expect, it } from 'vitest';
import { ZooKeeper } from '../client/zookeeper.js';
import { OpCode, Xid } from '../constants.js';
import { ErrorCode } from '../errors.js';
import { readMultiRequest, writeMultiResponse } from '../jute/multi.js';
import { JuteReader } from '../jute/reader.js';
import { JuteWriter } from '../jute/writer.js';
import { FAKE_SESSION_ID, FakeServer, type FakeConnection, type FakeRequest, type FakeServerOptions } from '../testing/fake-server.js';
import { reached } from '../testing/state.js';
import { bytes } from '../testing/bytes.js';

// coalesceReads 'auto' (the default): a multiRead of no ops on every new connection, before any
// request of the application, decides whether that connection batches reads.

const servers: FakeServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
});

const EMPTY_MULTI_READ = bytes().int(-1).bool(true).int(-1).build();

/** A fake that answers pings, and every getData and multiRead of getData with NoNode. */
async function server(options: FakeServerOptions = {}): Promise<FakeServer> {
  const s = await FakeServer.start({
    onRequest: (req, conn) => {
      if (req.xid === Xid.ping) conn.reply({ xid: Xid.ping, zxid: 0n, err: 0 });
      else if (req.type === OpCode.getData) conn.reply({ xid: req.xid, zxid: 7n, err: ErrorCode.NONODE });
      else if (req.type === OpCode.multiRead && options.multiRead !== 'script') {
        const ops = readMultiRequest(new JuteReader(req.body));
        const w = new JuteWriter();
        writeMultiResponse(
          w,
          ops.map(() => ({ type: OpCode.error, err: ErrorCode.NONODE })),
        );
        conn.reply({ xid: req.xid, zxid: 7n, err: 0, body: w.toBuffer() });
      }
    },
    ...options,
  });
  servers.push(s);
  return s;
}

const types = (c: FakeConnection): number[] => c.requests.filter((r) => r.xid !== Xid.ping).map((r) => r.type);

/** Two watch-less reads in one tick; both must fail with NoNode, each exactly once. */
async function twoReads(zk: ZooKeeper): Promise<void> {
  const results = await Promise.allSettled([zk.getData('/a'), zk.getData('/b')]);
  expect(results.map((r) => r.status === 'rejected' && (r.reason as { codeName?: string }).codeName)).toEqual(['NONODE', 'NONODE']);
}

describe('session - multiRead probe (coalesceReads auto, fake servers)', () => {
  it('a 3.6+ server: the probe is the first request on the connection, then the reads of one tick leave as one multiRead', async () => {
    const s = await server();
    await using zk = await ZooKeeper.connect(`127.0.0.1:${s.port}`, { sessionTimeout: 10_000, connectTimeout: 2000 });
    const conn = s.connections[0]!;
    expect(conn.probes).toEqual([0]);
    await twoReads(zk);
    expect(types(conn)).toEqual([OpCode.multiRead]);
    expect(readMultiRequest(new JuteReader(conn.requests[0]!.body))).toHaveLength(2);
    expect(s.connections).toHaveLength(1);

    // A new connection probes again before the session is reported connected.
    conn.socket.destroy();
    await reached(zk, 'suspended');
    await reached(zk, 'connected');
    expect(s.connections).toHaveLength(2);
    expect(s.connections[1]!.probes).toEqual([0]);
    await twoReads(zk);
    expect(types(s.connections[1]!)).toEqual([OpCode.multiRead]);
  });

  it('a new session: the probe leaves in the same write as the handshake; a resumed session waits for the answer to its handshake first', async () => {
    const s = await server();
    const zk = await ZooKeeper.connect(`127.0.0.1:${s.port}`, { sessionTimeout: 6000 });
    try {
      const first = await s.nextConnection();
      expect(first.connectRequest?.sessionId).toBe(0n);
      expect(first.probes).toEqual([0]);
      expect(first.withHandshake).toBe(1);
      first.socket.destroy();
      const second = await s.nextConnection();
      await second.waitFor(() => (second.probes.length > 0 ? true : undefined), 5000, 'probe');
      await reached(zk, 'connected');
      // Bytes behind a presented session's handshake could turn the server's "expired, closing"
      // into a reset that loses the answer.
      expect(second.connectRequest?.sessionId).toBe(FAKE_SESSION_ID);
      expect(second.withHandshake).toBe(0);
      await twoReads(zk);
      expect(types(second)).toEqual([OpCode.multiRead]);
    } finally {
      await zk.close();
    }
  });

  it('a 3.5 server (Unimplemented, then close): connected on a second connection of the same session, each read alone, no request lost or sent twice; not probed again', async () => {
    const s = await server({ multiRead: 'unimplemented' });
    await using zk = await ZooKeeper.connect(`127.0.0.1:${s.port}`, { sessionTimeout: 10_000, connectTimeout: 2000 });
    expect(zk.state).toBe('connected');
    expect(s.connections).toHaveLength(2);
    const [first, second] = s.connections as [FakeConnection, FakeConnection];
    expect(first.probes).toEqual([0]);
    expect(first.requests).toEqual([]); // nothing but the probe went to the connection that refused it
    expect(second.probes).toEqual([]);
    expect(second.connectRequest!.sessionId).toBe(FAKE_SESSION_ID); // the same session, resumed
    expect(zk.sessionId).toBe(FAKE_SESSION_ID);
    await twoReads(zk);
    const reads = second.requests.filter((r: FakeRequest) => r.type === OpCode.getData);
    expect(types(second)).toEqual([OpCode.getData, OpCode.getData]);
    expect(new Set(reads.map((r) => r.xid)).size).toBe(2);

    // The host is remembered for the client's lifetime: a reconnect does not probe it again.
    second.socket.destroy();
    await reached(zk, 'suspended');
    await reached(zk, 'connected');
    expect(s.connections).toHaveLength(3);
    expect(s.connections[2]!.probes).toEqual([]);
    await twoReads(zk);
    expect(types(s.connections[2]!)).toEqual([OpCode.getData, OpCode.getData]);
  });

  it('a request made while reconnecting waits for the probe: nothing of the application is sent before its answer', async () => {
    const s = await server({ multiRead: 'script' });
    const answer = (c: FakeConnection) => c.waitFor(() => c.requests.find((r) => r.type === OpCode.multiRead)).then((p) => c.reply({ xid: p.xid, zxid: 0n, err: 0, body: EMPTY_MULTI_READ }));
    const connecting = ZooKeeper.connect(`127.0.0.1:${s.port}`, { sessionTimeout: 10_000, connectTimeout: 2000, whileDisconnected: 'wait' });
    await answer(await s.nextConnection());
    await using zk = await connecting;
    s.connections[0]!.socket.destroy();
    await reached(zk, 'suspended');
    const read = zk.getData('/a');
    const conn = await s.nextConnection();
    await conn.nextRequest(); // the probe
    await new Promise((r) => setTimeout(r, 100)); // a read sent early would be here by now
    expect(types(conn)).toEqual([OpCode.multiRead]);
    expect(zk.state).toBe('suspended');
    await answer(conn);
    await expect(read).rejects.toMatchObject({ codeName: 'NONODE' });
    expect(types(conn)).toEqual([OpCode.multiRead, OpCode.getData]);
  });

  it('coalesceReads false sends no probe and no multiRead; true sends no probe and batches from the start', async () => {
    const off = await server();
    await using a = await ZooKeeper.connect(`127.0.0.1:${off.port}`, { coalesceReads: false, connectTimeout: 2000 });
    await twoReads(a);
    expect(off.connections[0]!.probes).toEqual([]);
    expect(types(off.connections[0]!)).toEqual([OpCode.getData, OpCode.getData]);

    const on = await server();
    await using b = await ZooKeeper.connect(`127.0.0.1:${on.port}`, { coalesceReads: true, connectTimeout: 2000 });
    await twoReads(b);
    expect(on.connections[0]!.probes).toEqual([]);
    expect(types(on.connections[0]!)).toEqual([OpCode.multiRead]);
  });
});

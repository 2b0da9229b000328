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

// coalesceReads 'auto' (the default): a connection learns whether its server has multiRead at
// its first tick with two watch-less reads, with a multiRead of no ops sent alone once nothing
// else is outstanding; what is asked meanwhile waits for its answer.

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

const sent = (c: FakeConnection): FakeRequest[] => c.requests.filter((r) => r.xid !== Xid.ping);
const types = (c: FakeConnection): number[] => sent(c).map((r) => r.type);
/** Where each probe came among the requests other than pings (a resumed connection's proof is a ping). */
const probesAt = (c: FakeConnection): number[] => c.probes.map((at) => sent({ requests: c.requests.slice(0, at) } as FakeConnection).length);

/** Two watch-less reads in one tick; both must fail with NoNode, each exactly once. */
async function twoReads(zk: ZooKeeper): Promise<void> {
  const results = await Promise.allSettled([zk.getData('/a'), zk.getData('/b')]);
  expect(results.map((r) => r.status === 'rejected' && (r.reason as { codeName?: string }).codeName)).toEqual(['NONODE', 'NONODE']);
}

/** A multiRead response with one NoNode result per op of the request `req`. */
function noNodes(req: FakeRequest): Buffer {
  const w = new JuteWriter();
  writeMultiResponse(
    w,
    readMultiRequest(new JuteReader(req.body)).map(() => ({ type: OpCode.error, err: ErrorCode.NONODE })),
  );
  return w.toBuffer();
}

/** Long enough for a request the client wrongly sent to have reached the fake (absence checks only). */
const settle = () => new Promise((r) => setTimeout(r, 100));

describe('session - multiRead probe (coalesceReads auto, fake servers)', () => {
  it('a 3.6+ server: nothing rides with the handshake, a lone read sends no probe, the first tick with two reads sends it alone and then the batch', async () => {
    const s = await server();
    await using zk = await ZooKeeper.connect(`127.0.0.1:${s.port}`, { sessionTimeout: 10_000, connectTimeout: 2000 });
    const conn = s.connections[0]!;
    expect(conn.withHandshake).toBe(0);
    await expect(zk.getData('/lone')).rejects.toMatchObject({ codeName: 'NONODE' });
    expect(conn.probes).toEqual([]);
    await twoReads(zk);
    expect(probesAt(conn)).toEqual([1]); // after the lone read, before the batch
    expect(types(conn)).toEqual([OpCode.getData, OpCode.multiRead]);
    expect(readMultiRequest(new JuteReader(conn.requests[1]!.body))).toHaveLength(2);
    await twoReads(zk);
    expect(probesAt(conn)).toEqual([1]); // asked once per connection
    expect(types(conn)).toEqual([OpCode.getData, OpCode.multiRead, OpCode.multiRead]);

    // A new connection asks again, at its own first batch.
    conn.socket.destroy();
    await reached(zk, 'suspended');
    await reached(zk, 'connected');
    const second = s.connections[1]!;
    expect(second.withHandshake).toBe(0);
    expect(second.probes).toEqual([]);
    await twoReads(zk);
    expect(probesAt(second)).toEqual([0]);
    expect(types(second)).toEqual([OpCode.multiRead]);
  });

  it('the probe waits until nothing is outstanding, and nothing leaves behind it until it is answered', async () => {
    // exists is left unanswered until the test replies; multiRead (the probe too) is scripted.
    const s = await server({ multiRead: 'script' });
    await using zk = await ZooKeeper.connect(`127.0.0.1:${s.port}`, { sessionTimeout: 10_000, connectTimeout: 2000 });
    const conn = s.connections[0]!;
    const slow = zk.exists('/slow');
    const exists = await conn.nextRequest();
    expect(exists.type).toBe(OpCode.exists);
    const reads = Promise.allSettled([zk.getData('/a'), zk.getData('/b')]);
    await settle();
    expect(types(conn)).toEqual([OpCode.exists]); // no probe while exists is out

    conn.reply({ xid: exists.xid, zxid: 3n, err: ErrorCode.NONODE });
    expect(await slow).toBeNull();
    const probe = await conn.nextRequest();
    expect(probe.type).toBe(OpCode.multiRead);
    expect(readMultiRequest(new JuteReader(probe.body))).toEqual([]);
    const later = zk.exists('/later'); // asked while the probe is out (not a read that batches)
    await settle();
    expect(types(conn)).toEqual([OpCode.exists, OpCode.multiRead]); // nothing behind the probe

    conn.reply({ xid: probe.xid, zxid: 3n, err: 0, body: EMPTY_MULTI_READ });
    const batch = await conn.nextRequest();
    expect(batch.type).toBe(OpCode.multiRead);
    expect(readMultiRequest(new JuteReader(batch.body))).toHaveLength(2);
    const alone = await conn.nextRequest();
    expect(alone.type).toBe(OpCode.exists); // after the batch, as asked
    conn.reply({ xid: batch.xid, zxid: 4n, err: 0, body: noNodes(batch) });
    conn.reply({ xid: alone.xid, zxid: 4n, err: ErrorCode.NONODE });
    expect((await reads).map((r) => r.status === 'rejected' && (r.reason as { codeName?: string }).codeName)).toEqual(['NONODE', 'NONODE']);
    expect(await later).toBeNull();
    expect(new Set(conn.requests.map((r) => r.xid)).size).toBe(conn.requests.length);
  });

  it('a 3.5 server (Unimplemented, then close): the held reads were never sent and go out again, each alone, on the same session; not probed again', async () => {
    const s = await server({ multiRead: 'unimplemented' });
    await using zk = await ZooKeeper.connect(`127.0.0.1:${s.port}`, { sessionTimeout: 10_000, connectTimeout: 2000 });
    const states: string[] = [];
    zk.onStateChange((state) => states.push(state));
    await twoReads(zk); // both answered, each once
    expect(s.connections).toHaveLength(2);
    const [first, second] = s.connections as [FakeConnection, FakeConnection];
    expect(first.probes).toEqual([0]);
    expect(first.requests).toEqual([]); // nothing but the probe went to the server that refused it
    expect(second.probes).toEqual([]);
    expect(second.connectRequest!.sessionId).toBe(FAKE_SESSION_ID); // the same session, resumed
    expect(types(second)).toEqual([OpCode.getData, OpCode.getData]);
    expect(new Set(sent(second).map((r) => r.xid)).size).toBe(2);
    expect(states).toEqual(['suspended', 'connected']);

    // The server is remembered for the client's lifetime: no probe on the next connection either.
    second.socket.destroy();
    await reached(zk, 'suspended');
    await reached(zk, 'connected');
    expect(s.connections).toHaveLength(3);
    await twoReads(zk);
    expect(s.connections[2]!.probes).toEqual([]);
    expect(types(s.connections[2]!)).toEqual([OpCode.getData, OpCode.getData]);
  });

  it('whileDisconnected wait: held reads are sent again on the same session too', async () => {
    const s = await server({ multiRead: 'unimplemented' });
    await using zk = await ZooKeeper.connect(`127.0.0.1:${s.port}`, { sessionTimeout: 10_000, connectTimeout: 2000, whileDisconnected: 'wait' });
    await twoReads(zk);
    expect(s.connections).toHaveLength(2);
    expect(s.connections[0]!.requests).toEqual([]);
    expect(types(s.connections[1]!)).toEqual([OpCode.getData, OpCode.getData]);
  });

  it('a held read whose caller gave up is not sent again', async () => {
    const s = await server({ multiRead: 'unimplemented' });
    await using zk = await ZooKeeper.connect(`127.0.0.1:${s.port}`, { sessionTimeout: 10_000, connectTimeout: 2000 });
    const ac = new AbortController();
    const kept = zk.getData('/kept');
    kept.catch(() => undefined); // its reply may come while the check of `dropped` runs: handled now
    const dropped = zk.getData('/dropped', { signal: ac.signal });
    ac.abort(new Error('gave up'));
    await expect(dropped).rejects.toThrow('gave up');
    await expect(kept).rejects.toMatchObject({ codeName: 'NONODE' });
    expect(s.connections[0]!.probes).toEqual([0]);
    const second = s.connections[1]!;
    expect(types(second)).toEqual([OpCode.getData]);
    await settle();
    expect(types(second)).toEqual([OpCode.getData]);
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

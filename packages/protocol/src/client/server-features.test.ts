import { afterEach, describe, expect, it } from 'vitest';
import { ZooKeeper } from './zookeeper.js';
import { OpCode, Xid } from '../constants.js';
import { ErrorCode, UnimplementedError } from '../errors.js';
import { FakeServer, type FakeRequest } from '../testing/fake-server.js';
import { bytes } from '../testing/bytes.js';

// The 3.9 probe on the wire (server-features.ts), with a fake server answering as 3.8 or 3.9 do.

const servers: FakeServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
});

/** The probe's body as the Java client's CheckWatchesRequest { path: '/', type: Persistent } serializes it. */
const PROBE = bytes().str('/').int(4).build();

async function fake(probeAnswer: number): Promise<FakeServer> {
  const s = await FakeServer.start({
    onRequest: (req, conn) => {
      if (req.xid === Xid.ping || req.type === OpCode.closeSession) conn.reply({ xid: req.xid, zxid: 1n, err: 0 });
      else if (req.type === OpCode.checkWatches) conn.reply({ xid: req.xid, zxid: 1n, err: probeAnswer });
      else if (req.type === OpCode.multi) conn.reply({ xid: req.xid, zxid: 2n, err: 0, body: bytes().int(OpCode.create2).bool(false).int(0).str('/a').long(5n).long(5n).long(0n).long(0n).int(0).int(0).int(0).long(0n).int(0).int(0).long(5n).int(-1).bool(true).int(-1).build() });
      else conn.reply({ xid: req.xid, zxid: 1n, err: ErrorCode.NONODE });
    },
  });
  servers.push(s);
  return s;
}

const ops = (requests: readonly FakeRequest[]) => requests.filter((r) => r.xid !== Xid.ping && r.type !== OpCode.closeSession).map((r) => r.type);

describe('server features - the 3.9 probe', () => {
  it('a server answering MARSHALLINGERROR (3.5-3.8) gets the probe once per connection and never the multi', async () => {
    const s = await fake(ErrorCode.MARSHALLINGERROR);
    await using zk = await ZooKeeper.connect(`127.0.0.1:${s.port}`, { connectTimeout: 2000 });
    const conn = await s.nextConnection();
    await expect(zk.transaction().createWithStat('/a').commit()).rejects.toBeInstanceOf(UnimplementedError);
    await expect(zk.transaction().createWithStat('/b').create('/c').commit()).rejects.toThrow(/needs ZooKeeper 3\.9 or newer; this server is older/);
    expect(ops(conn.requests)).toEqual([OpCode.checkWatches]);
    expect(conn.requests[0]!.body).toEqual(PROBE);
    // A new connection (a restarted server may be another version) asks again.
    conn.socket.destroy();
    const next = await s.nextConnection();
    await expect.poll(() => zk.state).toBe('connected');
    await expect(zk.transaction().createWithStat('/a').commit()).rejects.toBeInstanceOf(UnimplementedError);
    expect(ops(next.requests)).toEqual([OpCode.checkWatches]);
  });

  it('a server answering NOWATCHER (3.9) gets the multi with the create as create2, and its Stat comes back', async () => {
    const s = await fake(ErrorCode.NOWATCHER);
    await using zk = await ZooKeeper.connect(`127.0.0.1:${s.port}`, { connectTimeout: 2000 });
    const conn = await s.nextConnection();
    const results = await zk.transaction().createWithStat('/a').commit();
    expect(results).toEqual([{ type: 'create', path: '/a', stat: expect.objectContaining({ czxid: 5n, pzxid: 5n }) }]);
    expect(ops(conn.requests)).toEqual([OpCode.checkWatches, OpCode.multi]);
    // The multi's op header: type create2, done false, err -1.
    const multi = conn.requests[1]!.body;
    expect([multi.readInt32BE(0), multi[4], multi.readInt32BE(5)]).toEqual([OpCode.create2, 0, -1]);
    await zk.transaction().createWithStat('/a').commit();
    expect(ops(conn.requests)).toEqual([OpCode.checkWatches, OpCode.multi, OpCode.multi]);
  });
});

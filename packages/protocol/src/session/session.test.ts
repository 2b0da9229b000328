import { afterEach, describe, expect, it } from 'vitest';
import { ZooKeeper } from '../client/zookeeper.js';
import { OpCode, Xid } from '../constants.js';
import { FAKE_SESSION_ID, FakeServer } from '../testing/fake-server.js';

const servers: FakeServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
});

async function server(options: Parameters<typeof FakeServer.start>[0]): Promise<FakeServer> {
  const s = await FakeServer.start(options);
  servers.push(s);
  return s;
}

function reached(zk: ZooKeeper, state: string): Promise<void> {
  return new Promise((resolve) => {
    if (zk.state === state) return resolve();
    const off = zk.onStateChange((s) => s === state && (off(), resolve()));
  });
}

describe('session - failover across servers (fake servers)', () => {
  it('presents session and lastZxidSeen to the next server; one that refuses (behind our zxid) is skipped', async () => {
    // "behind" closes every handshake, as a server whose last zxid is below our lastZxidSeen does.
    const behind = await server({ handshake: () => 'close' });
    const good = await server({
      onRequest: (req, conn) => {
        if (req.xid === Xid.ping) return conn.reply({ xid: Xid.ping, zxid: 0n, err: 0 });
        if (req.type === OpCode.exists) conn.reply({ xid: req.xid, zxid: 0x42n, err: -101 });
      },
    });
    await using zk = await ZooKeeper.connect(`127.0.0.1:${behind.port},127.0.0.1:${good.port}`, { sessionTimeout: 10_000, connectTimeout: 1000 });
    expect(zk.server?.port).toBe(good.port);
    expect(zk.sessionId).toBe(FAKE_SESSION_ID);
    expect(await zk.exists('/x')).toBeNull(); // the reply carries zxid 0x42
    const tried = behind.connections.length;

    good.connections.at(-1)!.socket.destroy();
    await reached(zk, 'suspended');
    await reached(zk, 'connected');

    // The refusing server was tried with our session and zxid, then the client moved on.
    expect(behind.connections.length).toBeGreaterThan(tried);
    const presented = behind.connections.at(-1)!.connectRequest!;
    expect(presented.sessionId).toBe(FAKE_SESSION_ID);
    expect(presented.lastZxidSeen).toBe(0x42n);
    expect(zk.server?.port).toBe(good.port);
    expect(good.connections.at(-1)!.connectRequest!.sessionId).toBe(FAKE_SESSION_ID);
    expect(zk.sessionId).toBe(FAKE_SESSION_ID);
  });

  it('reports expired, without starting a new session, when the server says the session is gone', async () => {
    let expire = false;
    const s = await server({ handshake: (req) => (expire ? { timeOut: 0, sessionId: req.sessionId } : { timeOut: req.timeOut, sessionId: FAKE_SESSION_ID }) });
    await using zk = await ZooKeeper.connect(`127.0.0.1:${s.port}`, { sessionTimeout: 10_000, connectTimeout: 1000 });
    expire = true;
    s.connections.at(-1)!.socket.destroy();
    await reached(zk, 'expired');
    expect(zk.sessionId).toBe(FAKE_SESSION_ID);
    const attempts = s.connections.length;
    await new Promise((r) => setTimeout(r, 200));
    expect(s.connections.length).toBe(attempts); // no further attempt: expiry is final
    await expect(zk.exists('/')).rejects.toMatchObject({ codeName: 'SESSIONEXPIRED' });
  });

  it('keeps trying the servers during the initial connect (an election refuses clients) until connectTimeout', async () => {
    let refusals = 2;
    const s = await server({ handshake: (req) => (refusals-- > 0 ? 'close' : { timeOut: req.timeOut, sessionId: FAKE_SESSION_ID }) });
    await using zk = await ZooKeeper.connect(`127.0.0.1:${s.port}`, { sessionTimeout: 10_000, connectTimeout: 5000 });
    expect(zk.sessionId).toBe(FAKE_SESSION_ID);
    expect(s.connections.length).toBe(3);
    const never = await server({ handshake: () => 'close' });
    const started = performance.now();
    await expect(ZooKeeper.connect(`127.0.0.1:${never.port}`, { connectTimeout: 600 })).rejects.toThrow(/could not connect/);
    expect(performance.now() - started).toBeGreaterThanOrEqual(550);
    expect(never.connections.length).toBeGreaterThan(1);
  });
});

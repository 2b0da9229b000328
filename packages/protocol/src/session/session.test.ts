import { afterEach, describe, expect, it } from 'vitest';
import { ZooKeeper } from '../client/zookeeper.js';
import { OpCode, Xid } from '../constants.js';
import { FAKE_SESSION_ID, FakeServer, replyFrame } from '../testing/fake-server.js';
import { reached } from '../testing/state.js';
import { bytes } from '../testing/bytes.js';

/** A multiRead reply with no results: the end marker only. */
const EMPTY_MULTI_READ = bytes().int(-1).bool(true).int(-1).build();

const servers: FakeServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
});

async function server(options: Parameters<typeof FakeServer.start>[0]): Promise<FakeServer> {
  const s = await FakeServer.start(options);
  servers.push(s);
  return s;
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
    // (The last connection may be the client's `srvr` probe of why the handshake was closed.)
    const presented = behind.connections.filter((c) => c.connectRequest).at(-1)!.connectRequest!;
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

  it.each([
    ['a reply with an unknown xid', (xid: number) => replyFrame({ xid: xid + 1000, zxid: 1n, err: 0 })],
    ['garbage too short for a reply header', () => Buffer.from([0, 0, 0, 3, 1, 2, 3])],
    ['a negative frame length', () => Buffer.from([0xff, 0xff, 0xff, 0xfe])],
    ['an oversized frame that never ends', () => Buffer.from([0x7f, 0, 0, 0])],
  ])('a server that sends %s loses the connection; the client fails the request and recovers on the next server', async (_name, bad) => {
    // The evil server takes the first connection only; the good one refuses until then. So the
    // client lands on the evil one first whatever the shuffle, and on the good one after.
    let evilUsed = false;
    const evil = await server({
      handshake: (req) => (evilUsed ? 'close' : ((evilUsed = true), { timeOut: req.timeOut, sessionId: FAKE_SESSION_ID })),
      onRequest: (req, conn) => req.type === OpCode.exists && conn.send(bad(req.xid)),
    });
    const good = await server({
      handshake: (req) => (evilUsed ? { timeOut: req.timeOut, sessionId: req.sessionId || FAKE_SESSION_ID } : 'close'),
      onRequest: (req, conn) => {
        if (req.xid === Xid.ping) conn.reply({ xid: Xid.ping, zxid: 0n, err: 0 });
        else if (req.type === OpCode.exists) conn.reply({ xid: req.xid, zxid: 5n, err: -101 });
      },
    });
    // A short session: an oversized frame's bytes never come, so that connection ends when it is
    // declared dead (2/3 of the timeout without a byte).
    await using zk = await ZooKeeper.connect(`127.0.0.1:${evil.port},127.0.0.1:${good.port}`, { sessionTimeout: 1500, connectTimeout: 1000, maxFrameSize: 1 << 20 });
    expect(zk.server?.port).toBe(evil.port);
    const err = await zk.exists('/x').catch((e: unknown) => e);
    expect((err as Error).name).toMatch(/^(ConnectionLossError|PacketTooLargeError)$/);
    await waitForPort(zk, good.port);
    expect(await zk.exists('/x')).toBeNull();
    expect(zk.sessionId).toBe(FAKE_SESSION_ID);
  });
});

async function waitForPort(zk: ZooKeeper, port: number): Promise<void> {
  while (zk.server?.port !== port || zk.state !== 'connected') await new Promise<void>((resolve) => { const off = zk.onStateChange(() => (off(), resolve())); });
}

describe('session - reconnect storms and loss inference (fake servers)', () => {
  // An undecodable frame: a reply header too short to read.
  const garbage = Buffer.from([0, 0, 0, 3, 1, 2, 3]);

  it.each([
    ['sends an undecodable frame right after the handshake', false],
    ['answers the first ping, then sends an undecodable frame', true],
  ])('a server that %s: reconnects back off instead of storming, and the session is reported lost at the expiry deadline', async (_name, answerOnce) => {
    let storm = false;
    const s = await server({
      handshake: (req) => ({ timeOut: req.timeOut, sessionId: FAKE_SESSION_ID, ...(storm && !answerOnce ? { trailer: garbage } : {}) }),
      onRequest: (req, conn) => {
        if (storm) {
          if (req.xid === Xid.ping && answerOnce) conn.send(replyFrame({ xid: Xid.ping, zxid: 0n, err: 0 }), garbage);
          else conn.send(garbage);
        } else if (req.xid === Xid.ping) conn.reply({ xid: Xid.ping, zxid: 0n, err: 0 });
        else if (req.type === OpCode.exists) conn.reply({ xid: req.xid, zxid: 1n, err: -101 });
        else if (req.type === OpCode.multiRead) conn.reply({ xid: req.xid, zxid: 0n, err: 0, body: EMPTY_MULTI_READ });
      },
      // The storm answers the multiRead probe with garbage too.
      multiRead: 'script',
    });
    const T = 1500;
    await using zk = await ZooKeeper.connect(`127.0.0.1:${s.port}`, { sessionTimeout: T, connectTimeout: 1000 });
    const states: string[] = [];
    zk.onStateChange((state) => states.push(state));
    const heard = performance.now();
    expect(await zk.exists('/x')).toBeNull();
    const lost = reached(zk, 'lost').then(() => performance.now());
    storm = true;
    const first = s.connections.length;
    s.connections.at(-1)!.socket.destroy();

    // `lost` comes no later than one session timeout after the last request the server answered
    // (the earliest moment a real server could expire the session), however many handshakes succeed meanwhile.
    expect((await lost) - heard).toBeLessThanOrEqual(T + 100);
    // Never reported connected on the strength of a handshake alone.
    expect(states.filter((x) => x === 'connected')).toEqual([]);
    // Eight connections take at least the back-off's minimum delays (0, 25, 50, ... 800, 1000 ms),
    // where the storm made thousands a second.
    const started = await s.waitForConnections(first + 1).then(() => performance.now());
    await s.waitForConnections(first + 8, 10_000);
    expect(performance.now() - started).toBeGreaterThanOrEqual(1500);
  }, 15_000);
});

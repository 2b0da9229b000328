import { afterEach, describe, expect, it, vi } from 'vitest';
import { OpCode, Xid } from '../constants.js';
import { InvalidArgumentError } from '../errors.js';
import { FakeServer, type FakeConnection } from '../testing/fake-server.js';
import { ZooKeeper } from './zookeeper.js';

// Input a JavaScript caller (or `any`) may give: refused with InvalidArgumentError before any
// byte is sent, or, for long timeouts, honoured.

const servers: FakeServer[] = [];
afterEach(async () => {
  vi.useRealTimers();
  vi.restoreAllMocks();
  for (const s of servers.splice(0)) await s.close();
});

/** A fake server that answers pings and closeSession, and exists with NONODE unless `hold` is set. */
async function start(options: { hold?: boolean } = {}): Promise<FakeServer> {
  const s = await FakeServer.start({
    onRequest: (req, conn) => {
      if (req.xid === Xid.ping) conn.reply({ xid: Xid.ping, zxid: 0n, err: 0 });
      else if (req.type === OpCode.closeSession) conn.reply({ xid: req.xid, zxid: 0n, err: 0 });
      else if (req.type === OpCode.exists && !options.hold) conn.reply({ xid: req.xid, zxid: 1n, err: -101 });
    },
  });
  servers.push(s);
  return s;
}

/** The request types the server received on `conn` so far, after one exists round trip (so nothing is still in flight). */
async function received(zk: ZooKeeper, conn: FakeConnection): Promise<number[]> {
  expect(await zk.exists('/')).toBeNull();
  return conn.requests.filter((r) => r.xid !== Xid.ping).map((r) => r.type);
}

function refusal(fn: () => unknown): Promise<unknown> {
  return Promise.resolve()
    .then(fn)
    .then(
      () => new Error('accepted'),
      (e: unknown) => e,
    );
}

describe('bad input - timeouts', () => {
  it('bad input - a per-call timeout above 2^31-1 ms waits for the reply instead of firing at once', async () => {
    const s = await start({ hold: true });
    await using zk = await ZooKeeper.connect(`127.0.0.1:${s.port}`, { sessionTimeout: 30_000 });
    const conn = s.connections[0] as FakeConnection;
    // Fake timers emulate Node: a plain setTimeout(fn, 1e10) fires after 1 ms.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const settled = vi.fn();
    const pending = zk.exists('/', { timeout: 1e10 });
    pending.then(settled, settled);
    const req = await conn.nextRequest();
    vi.advanceTimersByTime(1000);
    await Promise.resolve();
    expect(settled).not.toHaveBeenCalled();
    conn.reply({ xid: req.xid, zxid: 1n, err: -101 });
    expect(await pending).toBeNull();
    vi.useRealTimers();
  });

  it('bad input - long connect, request and call timeouts raise no TimeoutOverflowWarning anywhere (dial, handshake, request, wait while disconnected)', async () => {
    const warn = vi.spyOn(process, 'emitWarning');
    const s = await start();
    await using zk = await ZooKeeper.connect(`127.0.0.1:${s.port}`, { connectTimeout: 1e10, requestTimeout: 1e10, whileDisconnected: 'wait' });
    expect(await zk.exists('/a')).toBeNull();
    expect(await zk.exists('/a', { timeout: 2 ** 31 })).toBeNull();
    const suspended = new Promise<void>((r) => zk.onStateChange((state) => state === 'suspended' && r()));
    s.connections[0]?.socket.destroy();
    await suspended;
    expect(await zk.exists('/b', { timeout: 5e9 })).toBeNull(); // held until reconnected, then sent
    expect(warn.mock.calls.filter((c) => String(c[1]).includes('TimeoutOverflowWarning') || String(c[0]).includes('32-bit'))).toEqual([]);
  });

  it.each([[-1], [Number.NaN], [Infinity], ['100']])('bad input - timeout %s is refused before anything is sent, addAuth included', async (timeout) => {
    const s = await start();
    await using zk = await ZooKeeper.connect(`127.0.0.1:${s.port}`);
    const conn = s.connections[0] as FakeConnection;
    for (const call of [() => zk.exists('/', { timeout: timeout as number }), () => zk.addAuth('digest', 'u:p', { timeout: timeout as number })]) {
      const err = await refusal(call);
      expect(err).toBeInstanceOf(InvalidArgumentError);
      expect(err).toMatchObject({ argument: 'timeout' });
    }
    expect(await received(zk, conn)).toEqual([OpCode.exists]);
  });
});

describe('bad input - node data', () => {
  const bad: Array<[string, unknown]> = [
    ['a number', 42],
    ['an object', { a: 1 }],
    ['a boolean', true],
    ['an array', [1, 2]],
    ['an ArrayBuffer', new ArrayBuffer(2)],
  ];

  it.each(bad)('bad input - %s as data is an InvalidArgumentError from create, setData and transactions, nothing sent', async (_name, data) => {
    const s = await start();
    await using zk = await ZooKeeper.connect(`127.0.0.1:${s.port}`);
    const conn = s.connections[0] as FakeConnection;
    const calls = [
      () => zk.create('/a', data as never),
      () => zk.createWithStat('/a', data as never),
      () => zk.setData('/a', data as never),
      () => zk.transaction().create('/a', data as never),
      () => zk.transaction().setData('/a', data as never),
    ];
    for (const call of calls) {
      const err = await refusal(call);
      expect(err).toBeInstanceOf(InvalidArgumentError);
      expect(err).toMatchObject({ argument: 'data' });
      expect((err as Error).message).toMatch(/^data: must be a string or a Uint8Array \(Buffer\) or null, got /);
    }
    expect(await received(zk, conn)).toEqual([OpCode.exists]);
  });

  it('bad input - a transaction setData over maxFrameSize is refused as create and setData are', async () => {
    const s = await start();
    await using zk = await ZooKeeper.connect(`127.0.0.1:${s.port}`, { maxFrameSize: 1024 });
    expect(() => zk.transaction().setData('/a', Buffer.alloc(1025))).toThrow(InvalidArgumentError);
    expect(() => zk.transaction().setData('/a', new Uint8Array(1024))).not.toThrow();
  });

  it('bad input - credentials that are neither a string nor bytes are an InvalidArgumentError', async () => {
    const s = await start();
    await using zk = await ZooKeeper.connect(`127.0.0.1:${s.port}`);
    const conn = s.connections[0] as FakeConnection;
    const err = await refusal(() => zk.addAuth('digest', 42 as never));
    expect(err).toBeInstanceOf(InvalidArgumentError);
    expect(err).toMatchObject({ argument: 'auth' });
    expect(await received(zk, conn)).toEqual([OpCode.exists]);
  });
});

import { afterEach, describe, expect, it } from 'vitest';
import { ZooKeeper } from '../client/zookeeper.js';
import { Xid } from '../constants.js';
import { ClientClosedError, InvalidArgumentError } from '../errors.js';
import { FAKE_SESSION_ID, FakeServer } from '../testing/fake-server.js';
import { reached } from '../testing/state.js';

const servers: FakeServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
});

async function server(): Promise<FakeServer> {
  const s = await FakeServer.start({
    onRequest: (req, conn) => {
      // Pings and closeSession (-11) answered; nothing else is sent here.
      if (req.xid === Xid.ping || req.type === -11) conn.reply({ xid: req.xid, zxid: 0n, err: 0 });
    },
  });
  servers.push(s);
  return s;
}

describe('session - updateServerList (fake servers)', () => {
  it('a client whose server left the list moves and resumes the same session on the new one', async () => {
    const a = await server();
    const b = await server();
    await using zk = await ZooKeeper.connect(`127.0.0.1:${a.port}/app`, { sessionTimeout: 10_000, connectTimeout: 1000 });
    expect(zk.updateServerList(`127.0.0.1:${b.port}`)).toBe(true);
    // The old connection is dropped at once (which makes the check of the next test meaningful).
    expect(zk.state).toBe('suspended');
    await reached(zk, 'connected');
    expect(zk.server?.port).toBe(b.port);
    expect(zk.sessionId).toBe(FAKE_SESSION_ID);
    // The new server was asked to resume the session, not to start one.
    expect(b.connections.at(-1)!.connectRequest!.sessionId).toBe(FAKE_SESSION_ID);
    expect(zk.serverList).toEqual([{ host: '127.0.0.1', port: b.port }]);
  });

  it('a client whose server stays in a list that does not grow keeps its connection', async () => {
    const a = await server();
    const b = await server();
    const c = await server();
    await using zk = await ZooKeeper.connect(`127.0.0.1:${a.port},127.0.0.1:${b.port},127.0.0.1:${c.port}`, { sessionTimeout: 10_000, connectTimeout: 1000 });
    const on = zk.server!.port;
    const states: string[] = [];
    zk.onStateChange((s) => states.push(s));
    const others = [a, b, c].filter((s) => s.port !== on);
    expect(zk.updateServerList(`127.0.0.1:${on},127.0.0.1:${others[0]!.port}`)).toBe(false);
    expect(states).toEqual([]);
    expect(zk.state).toBe('connected');
    expect(zk.server?.port).toBe(on);
    expect(zk.serverList.map((h) => h.port).sort()).toEqual([on, others[0]!.port].sort());
  });

  it('refuses another chroot, an empty list, and a closed client', async () => {
    const a = await server();
    const zk = await ZooKeeper.connect(`127.0.0.1:${a.port}/app`, { sessionTimeout: 10_000, connectTimeout: 1000 });
    expect(() => zk.updateServerList(`127.0.0.1:${a.port}/other`)).toThrow(InvalidArgumentError);
    expect(() => zk.updateServerList([])).toThrow(InvalidArgumentError);
    await zk.close();
    expect(() => zk.updateServerList(`127.0.0.1:${a.port}`)).toThrow(ClientClosedError);
  });
});

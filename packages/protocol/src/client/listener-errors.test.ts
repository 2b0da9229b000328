import { afterEach, describe, expect, it } from 'vitest';
import { EventHub } from '../cache/event-hub.js';
import { OpCode, Xid } from '../constants.js';
import { FakeServer } from '../testing/fake-server.js';
import { reached } from '../testing/state.js';
import { ZooKeeper } from './zookeeper.js';

// A listener that throws: the others still run, the client carries on, and the error is the
// process's 'uncaughtException' on a later tick, as with Node's EventTarget.

const servers: FakeServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
});

/**
 * Runs `body` with the process's 'uncaughtException' listeners (vitest's among them) replaced by
 * one that records; resolves with what it recorded once `body` has settled and a turn has passed.
 */
async function uncaughtDuring(body: () => Promise<void>): Promise<unknown[]> {
  const saved = process.listeners('uncaughtException');
  process.removeAllListeners('uncaughtException');
  const errors: unknown[] = [];
  const record = (err: unknown) => void errors.push(err);
  process.on('uncaughtException', record);
  try {
    await body();
    await new Promise((r) => setImmediate(r));
  } finally {
    process.off('uncaughtException', record);
    for (const l of saved) process.on('uncaughtException', l);
  }
  return errors;
}

async function fakeServer(): Promise<FakeServer> {
  const s = await FakeServer.start({
    onRequest: (req, conn) => {
      if (req.xid === Xid.ping) return conn.reply({ xid: Xid.ping, zxid: 0n, err: 0 });
      if (req.type === OpCode.exists) conn.reply({ xid: req.xid, zxid: 0x10n, err: -101 });
    },
  });
  servers.push(s);
  return s;
}

describe('listener errors - a throwing listener is reported as an uncaught exception, as by EventTarget', () => {
  it('listener errors - watch listener: the next listener still runs, the session carries on, the error is uncaught on a later tick', async () => {
    const s = await fakeServer();
    await using zk = await ZooKeeper.connect(`127.0.0.1:${s.port}`, { sessionTimeout: 10_000, connectTimeout: 1000 });
    const boom = new Error('bug in a watch listener');
    const heard: string[] = [];
    let fired!: () => void;
    const second = new Promise<void>((resolve) => (fired = resolve));
    await zk.exists('/a', {
      watch: () => {
        throw boom;
      },
    });
    await zk.exists('/a', { watch: (e) => (heard.push(e.type), fired()) });
    const errors = await uncaughtDuring(async () => {
      s.connections.at(-1)!.notify({ type: 1, state: 3, path: '/a' }); // NodeCreated
      await second;
    });
    expect(errors).toEqual([boom]);
    expect(heard).toEqual(['NodeCreated']);
    expect(zk.state).toBe('connected');
    expect(await zk.exists('/a')).toBeNull();
  });

  it('listener errors - state listener: the others hear the change, the state holds, the error is uncaught on a later tick', async () => {
    const s = await fakeServer();
    const zk = await ZooKeeper.connect(`127.0.0.1:${s.port}`, { sessionTimeout: 10_000, connectTimeout: 1000 });
    const boom = new Error('bug in a state listener');
    const heard: string[] = [];
    const off = zk.onStateChange(() => {
      throw boom;
    });
    zk.onStateChange((state) => void heard.push(state));
    const errors = await uncaughtDuring(async () => {
      s.connections.at(-1)!.socket.destroy();
      await reached(zk, 'suspended');
      await reached(zk, 'connected');
    });
    off();
    expect(errors).toEqual([boom, boom]); // suspended, then connected
    expect(heard).toEqual(['suspended', 'connected']);
    expect(zk.state).toBe('connected');
    expect(await zk.exists('/a')).toBeNull();
    await zk.close();
  });

  it('listener errors - cache listener (EventHub): the others run and the error is uncaught on a later tick', async () => {
    const hub = new EventHub<number>();
    const boom = new Error('bug in a cache listener');
    const heard: number[] = [];
    hub.listen(() => {
      throw boom;
    });
    hub.listen((n) => void heard.push(n));
    const errors = await uncaughtDuring(async () => hub.emit(7));
    expect(errors).toEqual([boom]);
    expect(heard).toEqual([7]);
  });
});

/**
 * A host list from a DNS SRV record (`dns-srv://`, ZooKeeper 3.10's ZOOKEEPER-4956; issue 39
 * part 3) against a real 3-server ensemble, with a controlled resolver (`resolveSrv`) and names
 * resolved by `lookup`: the record's targets and ports are the servers; the record is asked again
 * on the next round of connection attempts, so a client whose server dies finds the servers the
 * record names by then. The control: a client given the same first server in a plain connect
 * string has no way to them and stays disconnected.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConnectionLossError, ZooKeeper, type LookupFunction, type SrvRecord, type SrvResolver } from '@zk/protocol';
import { startZooKeeper, waitForState, type ZooKeeperEnsemble } from '../../harness/index.js';

const external = process.env.ZK_CONNECT !== undefined;
let ensemble: ZooKeeperEnsemble;

beforeAll(async () => {
  if (!external) ensemble = await startZooKeeper({ servers: 3 });
});

afterAll(async () => {
  await ensemble?.close();
});

/** Server i's name in the record; `lookup` maps every such name to its loopback address. */
const nameOf = (i: number) => `zk${i + 1}.srv.test`;
const lookup: LookupFunction = (name, _options, callback) => {
  if (/^zk\d\.srv\.test$/.test(name)) callback(null, [{ address: '127.0.0.1', family: 4 }]);
  else callback(Object.assign(new Error(`getaddrinfo ENOTFOUND ${name}`), { code: 'ENOTFOUND' }), []);
};

/** A resolver whose answer the test sets, counting the questions. */
function controlled(servers: number[]) {
  const state = { servers, asked: 0 };
  const resolveSrv: SrvResolver = (name, callback) => {
    state.asked++;
    if (name !== '_zookeeper._tcp.srv.test') return callback(Object.assign(new Error(`querySrv ENOTFOUND ${name}`), { code: 'ENOTFOUND' }), []);
    callback(null, state.servers.map((i): SrvRecord => ({ name: `${nameOf(i)}.`, port: ensemble.servers[i]!.port, priority: 0, weight: 0 })));
  };
  return { state, resolveSrv };
}

describe.skipIf(external)('srv - a host list from an SRV record', () => {
  it('connects to the servers the record names, on the ports it gives, with the chroot', async () => {
    const { state, resolveSrv } = controlled([0, 1, 2]);
    await using zk = await ZooKeeper.connect('dns-srv://_zookeeper._tcp.srv.test/srv-app', { resolveSrv, lookup, createChroot: true, connectTimeout: 5000 });
    expect(state.asked).toBe(1);
    const ports = ensemble.servers.map((s) => s.port);
    expect([...zk.serverList].sort((a, b) => a.port - b.port)).toEqual(ensemble.servers.map((s, i) => ({ host: nameOf(i), port: s.port })).sort((a, b) => a.port - b.port));
    expect(ports).toContain(zk.server?.port);
    expect(zk.server?.address).toBe('127.0.0.1');
    await zk.create('/x', 'y');
    expect((await zk.getData('/x')).data.toString()).toBe('y');
    await zk.delete('/x');
  });

  it('fails the connect with ConnectionLoss naming the record when it does not resolve', async () => {
    const { resolveSrv } = controlled([0]);
    const failed = await ZooKeeper.connect('dns-srv://_zookeeper._tcp.nowhere.test', { resolveSrv, lookup, connectTimeout: 2000 }).catch((e: unknown) => e);
    expect(failed).toBeInstanceOf(ConnectionLossError);
    expect((failed as Error).message).toMatch(/^could not resolve SRV _zookeeper\._tcp\.nowhere\.test: querySrv ENOTFOUND/);
  });

  it('asks the record again on the next round: when its server dies the client moves to the servers the record names now; a plain connect string cannot (the control)', async () => {
    const { state, resolveSrv } = controlled([0]);
    const first = ensemble.servers[0]!;
    const options = { sessionTimeout: 10_000, connectTimeout: 2000 };
    await using viaSrv = await ZooKeeper.connect('dns-srv://_zookeeper._tcp.srv.test', { ...options, resolveSrv, lookup });
    await using plain = await ZooKeeper.connect(first.connectString, options);
    expect(viaSrv.server?.port).toBe(first.port);
    expect(state.asked).toBe(1);
    const session = viaSrv.sessionId;
    // The record now names the two others; the client learns it only when it reconnects.
    state.servers = [1, 2];
    await first.kill();
    try {
      await waitForState(viaSrv, 'suspended');
      await waitForState(viaSrv, 'connected');
      expect(viaSrv.sessionId).toBe(session);
      expect([ensemble.servers[1]!.port, ensemble.servers[2]!.port]).toContain(viaSrv.server?.port);
      expect(state.asked).toBeGreaterThanOrEqual(2);
      expect(viaSrv.serverList.map((h) => h.host).sort()).toEqual([nameOf(1), nameOf(2)]);
      await viaSrv.exists('/');
      // The control: the same first server in a plain connect string leaves no way to the others.
      expect(plain.state === 'suspended' || plain.state === 'lost').toBe(true);
    } finally {
      await first.start();
    }
  });
});

import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { CreateMode, SessionExpiredError, ZooKeeper, type SessionState, type WatchedEvent } from '@zk/protocol';
import { startZooKeeper, TcpProxy, timing, waitForState, type ZooKeeperEnsemble } from '../../harness/index.js';

const external = process.env.ZK_CONNECT;

function recordStates(zk: ZooKeeper): SessionState[] {
  const seen: SessionState[] = [];
  zk.onStateChange((s) => seen.push(s));
  return seen;
}

function deleted(admin: ZooKeeper, path: string): Promise<void> {
  return new Promise((resolve, reject) => {
    admin.exists(path, { watch: (e) => e.type === 'NodeDeleted' && resolve() }).then((stat) => stat === null && resolve(), reject);
  });
}

describe.skipIf(external)('session - failover on a 3-node ensemble (skipped on an external ensemble: it kills servers)', () => {
  let ensemble: ZooKeeperEnsemble;
  let proxies: TcpProxy[] = [];
  const clients: ZooKeeper[] = [];

  beforeAll(async () => {
    ensemble = await startZooKeeper({ servers: 3, own: true });
  }, 180_000);

  afterEach(async () => {
    for (const zk of clients.splice(0)) await zk.close();
    for (const p of proxies.splice(0)) await p.close();
    for (const s of ensemble.servers) if ((await s.mode()) === 'down') await s.start();
    await ensemble.waitForQuorum(undefined, { all: true });
  });

  afterAll(async () => {
    await ensemble?.close();
  });

  async function client(connectString: string, sessionTimeout = 8000, whileDisconnected: 'wait' | 'fail' = 'wait'): Promise<ZooKeeper> {
    // Clients ride out a server kill (the admin may be on the killed server): requests wait for the reconnect.
    const zk = await ZooKeeper.connect(connectString, { sessionTimeout, connectTimeout: 2000, whileDisconnected, requestTimeout: timing(20_000) });
    clients.push(zk);
    return zk;
  }

  async function proxied(): Promise<string> {
    proxies = await Promise.all(ensemble.servers.map((s) => TcpProxy.start({ host: s.host, port: s.port })));
    return proxies.map((p) => p.connectString).join(',');
  }

  it('survives a crash of its server: same session, ephemerals kept, a watch fires once for a change made during the outage', async () => {
    const zk = await client(await proxied());
    const admin = await client(ensemble.connectString);
    const base = `/failover-${Date.now()}`;
    await admin.create(base);
    await admin.create(`${base}/w`, 'before');
    await zk.create(`${base}/eph`, null, { mode: CreateMode.EPHEMERAL });
    const events: WatchedEvent[] = [];
    let fired!: () => void;
    const firedOnce = new Promise<void>((r) => (fired = r));
    await zk.getData(`${base}/w`, { watch: (e) => (events.push(e), fired()) });
    const sessionId = zk.sessionId;
    const states = recordStates(zk);

    // Partition the client from every server, crash the one it was on, change the data meanwhile.
    const onPort = proxies.find((p) => p.port === zk.server?.port);
    const victim = ensemble.servers[proxies.indexOf(onPort!)]!;
    for (const p of proxies) p.block();
    await waitForState(zk, 'suspended');
    await victim.kill();
    await ensemble.waitForQuorum();
    // Written through the surviving servers only: a request in flight on the killed server would
    // fail with ConnectionLoss, as it should.
    const survivors = await client(ensemble.servers.filter((s) => s !== victim).map((s) => s.connectString).join(','));
    await survivors.setData(`${base}/w`, 'during');
    expect(events).toHaveLength(0);
    for (const p of proxies) p.unblock();

    expect(await waitForState(zk, 'connected', 'expired')).toBe('connected');
    expect(zk.sessionId).toBe(sessionId);
    expect(zk.server?.port).not.toBe(onPort!.port);
    await firedOnce;
    expect(events).toEqual([expect.objectContaining({ type: 'NodeDataChanged', path: `${base}/w` })]);
    expect(await admin.exists(`${base}/eph`)).not.toBeNull();
    // one-shot: a second change does not reach the listener again
    await survivors.setData(`${base}/w`, 'after');
    await zk.sync('/');
    await new Promise((r) => setImmediate(r));
    expect(events).toHaveLength(1);
    expect(states).toEqual(['suspended', 'connected']);
  });

  it('re-registers 10,000 watches after a reconnect, in batches under the frame limit', async () => {
    const zk = await client(await proxied());
    const admin = await client(ensemble.connectString);
    const base = `/many-${Date.now()}`;
    await admin.create(base);
    const n = 10_000;
    const paths = Array.from({ length: n }, (_, i) => `${base}/some-rather-long-node-name-to-fill-the-batches-${i}`);
    const created = new Map<string, () => void>();
    const waits = [0, n / 2, n - 1].map((i) => new Promise<void>((r) => created.set(paths[i]!, r)));
    await Promise.all(paths.map((p) => zk.exists(p, { watch: (e) => e.type === 'NodeCreated' && created.get(e.path)?.() })));
    expect(zk.watchCount).toBe(n);
    for (const p of proxies) p.cut();
    await waitForState(zk, 'suspended');
    await waitForState(zk, 'connected');
    expect(zk.watchCount).toBe(n);
    for (const i of [0, n / 2, n - 1]) await admin.create(paths[i]!);
    await Promise.all(waits);
    expect(zk.watchCount).toBe(n - 3);
    for (const p of paths) zk.removeLocalWatch('exist', p);
  });

  it('reports lost after a partition longer than the session timeout, then expired on reconnect; its ephemerals are gone', async () => {
    const zk = await client(await proxied(), 2000, 'fail');
    const admin = await client(ensemble.connectString);
    const path = `/lost-${Date.now()}`;
    await zk.create(path, null, { mode: CreateMode.EPHEMERAL });
    const gone = deleted(admin, path);
    const states = recordStates(zk);
    let told: WatchedEvent | undefined;
    await zk.exists('/never', { watch: (e) => (told = e) });
    for (const p of proxies) p.block();
    expect(await waitForState(zk, 'lost')).toBe('lost');
    await gone; // the ensemble expired the session: its ephemeral went
    await expect(zk.getData('/')).rejects.toThrow(/not connected \(lost\)/);
    for (const p of proxies) p.unblock();
    expect(await waitForState(zk, 'expired', 'connected')).toBe('expired');
    expect(states).toEqual(['suspended', 'lost', 'expired']);
    expect(told).toEqual({ type: 'SessionExpired', path: '/never' });
    expect(zk.watchCount).toBe(0);
    await expect(zk.getData('/')).rejects.toBeInstanceOf(SessionExpiredError);
  });

  it('learns of an expiry forced from outside (another connection resumes and closes the session)', async () => {
    const zk = await client(ensemble.connectString);
    const path = `/forced-${Date.now()}`;
    await zk.create(path, null, { mode: CreateMode.EPHEMERAL });
    const thief = await ZooKeeper.connect(ensemble.connectString, { session: { id: zk.sessionId, password: zk.sessionPassword } });
    expect(thief.sessionId).toBe(zk.sessionId);
    await thief.close();
    expect(await waitForState(zk, 'expired')).toBe('expired');
    const admin = await client(ensemble.connectString);
    expect(await admin.exists(path)).toBeNull();
    await expect(ZooKeeper.connect(ensemble.connectString, { session: { id: zk.sessionId, password: zk.sessionPassword } })).rejects.toBeInstanceOf(SessionExpiredError);
  });
});

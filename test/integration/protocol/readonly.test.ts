import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NotReadOnlyError, ZooKeeper } from '@zk/protocol';
import { startZooKeeper, timing, waitFor, waitForState, type ZooKeeperEnsemble } from '../../harness/index.js';

const external = process.env.ZK_CONNECT;

describe.skipIf(external)('read-only mode (own 3-node ensemble with readonlymode.enabled)', () => {
  let ensemble: ZooKeeperEnsemble;

  beforeAll(async () => {
    // A read-only server creates only local sessions (3.5+), so those must be enabled.
    ensemble = await startZooKeeper({ servers: 3, own: true, config: { localSessionsEnabled: 'true', localSessionsUpgradeEnabled: 'true' }, systemProperties: { 'readonlymode.enabled': true } });
  }, 180_000);

  afterAll(async () => {
    await ensemble?.close();
  });

  it('connects read-only to a server cut off from the quorum, then moves to a read-write server', async () => {
    const [survivor, a, b] = ensemble.servers as [typeof ensemble.servers[0], typeof ensemble.servers[0], typeof ensemble.servers[0]];
    const admin = await ZooKeeper.connect(ensemble.connectString);
    const path = await admin.create(`/ro-${Date.now()}`, 'data');
    await admin.close();

    await Promise.all([a!.kill(), b!.kill()]);
    await waitFor('the survivor to serve read-only', async () => ((await survivor!.mode()) === 'read-only' ? true : undefined), timing(60_000), 200);

    await using zk = await ZooKeeper.connect(ensemble.connectString, { canBeReadOnly: true, sessionTimeout: 10_000, connectTimeout: 2000 });
    expect(zk.state).toBe('connectedReadOnly');
    expect(zk.server?.port).toBe(survivor!.port);
    expect((await zk.getData(path)).data.toString()).toBe('data');
    await expect(zk.setData(path, 'x')).rejects.toBeInstanceOf(NotReadOnlyError);

    // a client without canBeReadOnly is refused by the read-only server
    await expect(ZooKeeper.connect(survivor!.connectString, { connectTimeout: 2000 })).rejects.toThrow(/could not connect/);

    await Promise.all([a!.start(), b!.start()]);
    expect(await waitForState(zk, 'connected')).toBe('connected');
    await zk.setData(path, 'written');
    expect((await zk.getData(path)).data.toString()).toBe('written');
  });
});

/**
 * A session the ensemble no longer has: the client's calls say why and what to do, instead of
 * "not connected (lost)" for ever (issue 37, item 4).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { SessionExpiredError, ZooKeeper, type SessionState } from '@zk/protocol';
import { startZooKeeper, waitForState, type ZooKeeperEnsemble } from '../../harness/index.js';

const external = process.env.ZK_CONNECT;

describe.skipIf(external)('session end - a server restarted with its data wiped (own server; skipped on an external ensemble)', () => {
  const ensembles: ZooKeeperEnsemble[] = [];
  const clients: ZooKeeper[] = [];

  afterEach(async () => {
    for (const zk of clients.splice(0)) await zk.close();
    for (const e of ensembles.splice(0)) await e.close();
  });

  it('session end - the client is lost, then expired naming the server behind its zxid; calls say to connect a new client or use RenewingClient', async () => {
    const before = await startZooKeeper({ own: true });
    ensembles.push(before);
    const port = before.servers[0]!.port;
    const zk = await ZooKeeper.connect(before.connectString, { sessionTimeout: 4000, connectTimeout: 2000 });
    clients.push(zk);
    // Writes move the session's last zxid well past what a fresh server has.
    for (let i = 0; i < 10; i++) await zk.create(`/wiped-${i}`);
    const ours = zk.lastZxid;
    const states: SessionState[] = [];
    zk.onStateChange((s) => void states.push(s));

    // Stopped, its data directory removed, and started again on the same port: a fresh server.
    await before.close();
    const after = await startZooKeeper({ own: true, clientPorts: [port] });
    ensembles.push(after);

    // It refuses the session's handshakes (behind our zxid); past the session timeout the client
    // concludes the session is gone instead of staying lost.
    expect(await waitForState(zk, 'expired')).toBe('expired');
    expect(states).toEqual(['suspended', 'lost', 'expired']);
    const err = await zk.getData('/').then(
      () => new Error('getData succeeded'),
      (e: unknown) => e as Error,
    );
    expect(err).toBeInstanceOf(SessionExpiredError);
    expect(err.message).toContain(`session 0x${zk.sessionId.toString(16)} has expired: 127.0.0.1:${port} (standalone) is at zxid 0x`);
    expect(err.message).toContain(`behind this session's last zxid 0x${ours.toString(16)}`);
    expect(err.message).toContain('a server restarted with its data wiped');
    expect(err.message).toMatch(/connect a new client .*, or use RenewingClient from @zk\/locks/);
    expect(err.message).toMatch(/\(getData \/\)$/);

    // What the error advises works: a new client gets a session from the fresh server.
    const fresh = await ZooKeeper.connect(after.connectString, { connectTimeout: 2000 });
    clients.push(fresh);
    expect(await fresh.exists('/wiped-0')).toBeNull();
  });
});

import { afterEach, describe, expect, it } from 'vitest';
import { ZooKeeper } from '../client/zookeeper.js';
import { SessionClosedRequireSaslAuthError } from '../errors.js';
import { OpCode, Xid } from '../constants.js';
import { FakeServer } from '../testing/fake-server.js';
import { reached } from '../testing/state.js';

const servers: FakeServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
});

/**
 * A server that requires SASL, as ZooKeeper 3.6+'s AuthenticationHelper.enforceAuthentication
 * does: the first request of a connection without SASL (a ping too) is answered with
 * SESSIONCLOSEDREQUIRESASLAUTH (-124), and the connection closed; the session stays.
 * `requireSasl` false: a plain server (the control).
 */
async function server(requireSasl: boolean): Promise<FakeServer> {
  const s = await FakeServer.start({
    generation: 'script',
    onRequest: (req, conn) => {
      if (requireSasl) return (conn.reply({ xid: req.xid, zxid: 0n, err: -124 }), conn.end());
      if (req.xid === Xid.ping) return conn.reply({ xid: Xid.ping, zxid: 0n, err: 0 });
      if (req.type === OpCode.exists) conn.reply({ xid: req.xid, zxid: 1n, err: -101 });
    },
  });
  servers.push(s);
  return s;
}

describe('session - a server that requires SASL (fake server)', () => {
  it('require-sasl - the answer -124 ends the client (authFailed, no reconnect): the request and every later call fail with SessionClosedRequireSaslAuthError saying to use the sasl option', async () => {
    const s = await server(true);
    await using zk = await ZooKeeper.connect(`127.0.0.1:${s.port}`, { sessionTimeout: 10_000, connectTimeout: 1000 });
    const failed = reached(zk, 'authFailed');
    const first = await zk.exists('/x').catch((e: unknown) => e);
    await failed;
    expect(first).toBeInstanceOf(SessionClosedRequireSaslAuthError);
    expect((first as Error).message).toMatch(/^the server requires SASL authentication .* connect with the sasl option \(mechanism GSSAPI/);
    const later = await zk.getData('/y').catch((e: unknown) => e);
    expect(later).toBeInstanceOf(SessionClosedRequireSaslAuthError);
    expect((later as Error).message).toMatch(/requires SASL authentication .* \(getData \/y\)$/);
    expect(zk.state).toBe('authFailed');
    // No second connection: another one would be answered the same.
    expect(s.connections).toHaveLength(1);
  });

  it('require-sasl - control: a plain server answers, and a dropped connection is reconnected (the client lives on)', async () => {
    const s = await server(false);
    await using zk = await ZooKeeper.connect(`127.0.0.1:${s.port}`, { sessionTimeout: 10_000, connectTimeout: 1000 });
    expect(await zk.exists('/x')).toBeNull();
    const back = reached(zk, 'suspended').then(() => reached(zk, 'connected'));
    s.connections.at(-1)!.socket.destroy();
    await back;
    expect(s.connections.length).toBeGreaterThan(1);
    expect(await zk.exists('/x')).toBeNull();
  });
});

import { afterEach, describe, expect, it } from 'vitest';
import { ZooKeeper } from '../client/zookeeper.js';
import { ConnectionLossError, SessionExpiredError } from '../errors.js';
import { FAKE_SESSION_ID, FakeServer } from '../testing/fake-server.js';
import { reached } from '../testing/state.js';

// The errors of calls on a session that is lost or expired: why, and what to do.

const servers: FakeServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
});

async function server(options: Parameters<typeof FakeServer.start>[0] = {}): Promise<FakeServer> {
  const s = await FakeServer.start(options);
  servers.push(s);
  return s;
}

async function failure(call: Promise<unknown>): Promise<Error> {
  return call.then(
    () => new Error('the call succeeded'),
    (e: unknown) => e as Error,
  );
}

describe('session end - what a call on a lost or expired session says', () => {
  it('session end - lost: ConnectionLoss saying the ensemble has probably expired the session, the last attempt, and what to do', async () => {
    const s = await FakeServer.start({}); // closed by the test itself
    const port = s.port;
    await using zk = await ZooKeeper.connect(`127.0.0.1:${port}`, { sessionTimeout: 300, connectTimeout: 1000 });
    await s.close(); // nothing listens there any more: every reconnect is refused
    await reached(zk, 'lost');
    const err = await failure(zk.getData('/'));
    expect(err).toBeInstanceOf(ConnectionLossError);
    expect(err.message).toMatch(
      new RegExp(
        `^not connected \\(lost\\): session 0x5eed is lost: no server took it back within its timeout, so the ensemble has probably expired it \\(last attempt: connect ECONNREFUSED 127\\.0\\.0\\.1:${port}\\)\\. ` +
          "The client keeps trying and reports 'connected' if a server takes the session back, 'expired' if one says it is gone; to go on at once, close this client and connect a new one \\(getData /\\)$",
      ),
    );
    // The call's error wraps the session's, whose cause is the attempt's.
    expect(((err.cause as Error).cause as ConnectionLossError).message).toBe(`connect ECONNREFUSED 127.0.0.1:${port}`);
  });

  it('session end - expired (the server said so): SessionExpired saying the ensemble ended it and to connect a new client or use RenewingClient', async () => {
    let expire = false;
    const s = await server({ handshake: (req) => (expire ? { timeOut: 0, sessionId: req.sessionId } : { timeOut: req.timeOut, sessionId: FAKE_SESSION_ID }) });
    await using zk = await ZooKeeper.connect(`127.0.0.1:${s.port}`, { sessionTimeout: 10_000, connectTimeout: 1000 });
    expire = true;
    s.connections.at(-1)!.socket.destroy();
    await reached(zk, 'expired');
    const err = await failure(zk.exists('/a'));
    expect(err).toBeInstanceOf(SessionExpiredError);
    expect(err.message).toBe(
      'session 0x5eed has expired: the ensemble ended it, with its ephemeral nodes and watches (no server heard from it for its timeout). ' +
        'This client cannot be used again: connect a new client (and re-create what the session held: ephemeral nodes, watches, locks), or use RenewingClient from @zk/locks, which opens the next session on every expiry. (exists /a)',
    );
    // How the client learnt it: the handshake's answer.
    expect(((err.cause as Error).cause as SessionExpiredError).message).toBe('session 0x5eed has expired');
  });
});

import { afterEach, describe, expect, it } from 'vitest';
import { ZooKeeper } from './zookeeper.js';
import { OpCode, Xid } from '../constants.js';
import { ErrorCode, NoAuthError, NoNodeError } from '../errors.js';
import { FakeServer } from '../testing/fake-server.js';

// Errors carry the fix where one is known: a create's NoNode names the missing parent and
// `{ parents: true }`; NoAuth names where credentials come from.

const servers: FakeServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
});

/** A fake that answers every create and getData with `err`. */
async function refusing(err: number): Promise<FakeServer> {
  const s = await FakeServer.start({
    onRequest: (req, conn) => {
      if (req.xid === Xid.ping) conn.reply({ xid: Xid.ping, zxid: 0n, err: 0 });
      else if (req.type === OpCode.create || req.type === OpCode.getData) conn.reply({ xid: req.xid, zxid: 1n, err });
      else if (req.type === OpCode.closeSession) conn.reply({ xid: req.xid, zxid: 1n, err: 0 });
    },
  });
  servers.push(s);
  return s;
}

describe('error hints', () => {
  it('a create whose parent is missing names the parent and { parents: true }', async () => {
    const s = await refusing(ErrorCode.NONODE);
    await using zk = await ZooKeeper.connect(`127.0.0.1:${s.port}`, { connectTimeout: 2000 });
    const err = await zk.create('/nope/child', 'x').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NoNodeError);
    expect((err as Error).message).toBe('NONODE (create /nope/child): its parent /nope does not exist (create it first, or pass { parents: true })');
    // Not for other operations: a read of a missing node is just that.
    expect(((await zk.getData('/nope').catch((e: unknown) => e)) as Error).message).toBe('NONODE (getData /nope)');
  });

  it('under a chroot: a create directly below it names the chroot; deeper, the parent and the chroot', async () => {
    const s = await refusing(ErrorCode.NONODE);
    await using zk = await ZooKeeper.connect(`127.0.0.1:${s.port}/app`, { connectTimeout: 2000 });
    expect(((await zk.create('/a').catch((e: unknown) => e)) as Error).message).toBe('NONODE (create /a): the chroot /app does not exist (create it, or connect with { createChroot: true })');
    expect(((await zk.create('/a/b').catch((e: unknown) => e)) as Error).message).toBe('NONODE (create /a/b): its parent /a does not exist under the chroot /app (create it first, or pass { parents: true })');
  });

  it('NoAuth says where credentials come from', async () => {
    const s = await refusing(ErrorCode.NOAUTH);
    await using zk = await ZooKeeper.connect(`127.0.0.1:${s.port}`, { connectTimeout: 2000 });
    const err = await zk.getData('/secret').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NoAuthError);
    expect((err as Error).message).toBe("NOAUTH (getData /secret): the node's ACL does not grant this session (credentials come from the `auth` connect option or zk.addAuth())");
  });
});

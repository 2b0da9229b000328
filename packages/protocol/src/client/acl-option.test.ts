import { afterEach, describe, expect, it } from 'vitest';
import { OpCode, Perm, Xid } from '../constants.js';
import { InvalidArgumentError } from '../errors.js';
import { JuteReader } from '../jute/reader.js';
import type { ACL as WireACL } from '../jute/data.js';
import { readCreateRequest } from '../jute/proto.js';
import { bytes } from '../testing/bytes.js';
import { FakeServer, type FakeConnection } from '../testing/fake-server.js';
import { CREATOR_ALL_ACL, digestACL, OPEN_ACL_UNSAFE, READ_ACL_UNSAFE, type ACL } from './acl.js';
import { ZooKeeper } from './zookeeper.js';

// The `acl` connect option on the wire: which ACL each create carries, and what is refused
// before any byte is sent. Against the real server: test/integration/protocol/acl.test.ts.

const servers: FakeServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
});

/** A fake server that answers pings, closeSession and every plain create (with its path). */
async function start(): Promise<FakeServer> {
  const s = await FakeServer.start({
    onRequest: (req, conn) => {
      if (req.xid === Xid.ping) conn.reply({ xid: Xid.ping, zxid: 0n, err: 0 });
      else if (req.type === OpCode.closeSession) conn.reply({ xid: req.xid, zxid: 0n, err: 0 });
      else if (req.type === OpCode.create) conn.reply({ xid: req.xid, zxid: 1n, err: 0, body: bytes().str(readCreateRequest(new JuteReader(req.body)).path).build() });
    },
  });
  servers.push(s);
  return s;
}

/** Path and ACL of every create `conn` received (as decoded: a wire ACL's scheme may be null). */
function creates(conn: FakeConnection): Array<{ path: string | null; acl: WireACL[] | null }> {
  return conn.requests.filter((r) => r.type === OpCode.create).map((r) => {
    const { path, acl } = readCreateRequest(new JuteReader(r.body));
    return { path, acl };
  });
}

const owner = digestACL('owner', 'secret');

describe('acl option - the ACL of creates that name none', () => {
  it('acl option - without it a create carries OPEN_ACL_UNSAFE; with a list, that list; a create\'s own acl wins', async () => {
    const s = await start();
    await using plain = await ZooKeeper.connect(`127.0.0.1:${s.port}`);
    await plain.create('/a');
    await using secured = await ZooKeeper.connect(`127.0.0.1:${s.port}`, { acl: owner });
    await secured.create('/b');
    await secured.create('/c', null, { acl: READ_ACL_UNSAFE });
    expect(creates(s.connections[0] as FakeConnection)).toEqual([{ path: '/a', acl: OPEN_ACL_UNSAFE }]);
    expect(creates(s.connections[1] as FakeConnection)).toEqual([
      { path: '/b', acl: owner },
      { path: '/c', acl: READ_ACL_UNSAFE },
    ]);
  });

  it('acl option - forPath sees the caller\'s path (chroot-relative, a sequential node\'s prefix); undefined means the default', async () => {
    const s = await start();
    const asked: string[] = [];
    const forPath = (path: string) => {
      asked.push(path);
      return path.startsWith('/public') ? READ_ACL_UNSAFE : undefined;
    };
    await using zk = await ZooKeeper.connect(`127.0.0.1:${s.port}/app`, { acl: { default: CREATOR_ALL_ACL, forPath } });
    await zk.create('/public');
    await zk.create('/private');
    await zk.create('/public/q-', null, { mode: 2 });
    expect(asked).toEqual(['/public', '/private', '/public/q-']);
    expect(creates(s.connections[0] as FakeConnection)).toEqual([
      { path: '/app/public', acl: READ_ACL_UNSAFE },
      { path: '/app/private', acl: CREATOR_ALL_ACL },
      { path: '/app/public/q-', acl: READ_ACL_UNSAFE },
    ]);
  });

  it('acl option - a later change to the array given to connect changes nothing', async () => {
    const s = await start();
    const mine: ACL[] = [...owner];
    await using zk = await ZooKeeper.connect(`127.0.0.1:${s.port}`, { acl: mine });
    mine[0] = { perms: Perm.ALL, id: { scheme: 'world', id: 'anyone' } };
    await zk.create('/a');
    expect(creates(s.connections[0] as FakeConnection)).toEqual([{ path: '/a', acl: owner }]);
  });
});

describe('acl option - bad input is refused before any byte is sent', () => {
  it.each([
    ['an empty list', []],
    ['perms 0', [{ perms: 0, id: { scheme: 'world', id: 'anyone' } }]],
    ['an unknown scheme', [{ perms: Perm.ALL, id: { scheme: 'kerberos', id: 'bob' } }]],
    ['a password in place of the digest', [{ perms: Perm.ALL, id: { scheme: 'digest', id: 'owner:secret' } }]],
    ['a provider without a default', { forPath: () => undefined }],
    ['a forPath that is no function', { default: OPEN_ACL_UNSAFE, forPath: 'yes' }],
  ])('acl option - %s fails connect without dialling', async (_name, acl) => {
    const s = await start();
    await expect(ZooKeeper.connect(`127.0.0.1:${s.port}`, { acl: acl as never })).rejects.toBeInstanceOf(InvalidArgumentError);
    expect(s.connections).toEqual([]);
  });

  it('acl option - a bad answer of forPath fails that create (and a transaction\'s) with InvalidArgumentError; nothing is sent', async () => {
    const s = await start();
    await using zk = await ZooKeeper.connect(`127.0.0.1:${s.port}`, { acl: { default: OPEN_ACL_UNSAFE, forPath: (p) => (p === '/bad' ? ([] as ACL[]) : undefined) } });
    await expect(zk.create('/bad')).rejects.toMatchObject({ name: 'InvalidArgumentError', argument: 'acl.forPath' });
    expect(() => zk.transaction().create('/bad')).toThrow(InvalidArgumentError);
    await zk.create('/good');
    expect(creates(s.connections[0] as FakeConnection).map((c) => c.path)).toEqual(['/good']);
  });
});

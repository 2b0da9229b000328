import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  BadVersionError,
  CREATOR_ALL_ACL,
  CreateMode,
  digestACL,
  ErrorCode,
  InvalidACLError,
  InvalidArgumentError,
  NoAuthError,
  NoChildrenForEphemeralsError,
  NodeExistsError,
  NoNodeError,
  NotEmptyError,
  OPEN_ACL_UNSAFE,
  Perm,
  READ_ACL_UNSAFE,
  ZooKeeper,
  ZooKeeperError,
  type WatchedEvent,
} from '@zk/protocol';
import { connectString, TestSpace } from '../../harness/fixtures.js';

let space: TestSpace;
let zk: ZooKeeper;

beforeEach(async () => {
  space = new TestSpace();
  zk = await space.client();
});

afterEach(async () => {
  const { leakedWatches } = await space.close();
  expect(leakedWatches).toBe(0);
});

function nextEvent(): { listener: (e: WatchedEvent) => void; event: Promise<WatchedEvent> } {
  let listener!: (e: WatchedEvent) => void;
  const event = new Promise<WatchedEvent>((resolve) => (listener = resolve));
  return { listener, event };
}

describe('client - create', () => {
  it('creates persistent nodes and returns the path within the chroot', async () => {
    expect(await zk.create('/a', 'hello')).toBe('/a');
    const { data, stat } = await zk.getData('/a');
    expect(data.toString()).toBe('hello');
    expect(stat.version).toBe(0);
    expect(stat.dataLength).toBe(5);
    expect(stat.ephemeralOwner).toBe(0n);
  });

  it('creates sequential nodes with 10-digit suffixes in order', async () => {
    await zk.create('/q');
    const a = await zk.create('/q/n-', null, { mode: CreateMode.PERSISTENT_SEQUENTIAL });
    const b = await zk.create('/q/n-', null, { mode: CreateMode.EPHEMERAL_SEQUENTIAL });
    expect(a).toMatch(/^\/q\/n-\d{10}$/);
    expect(Number(b.slice(-10))).toBe(Number(a.slice(-10)) + 1);
    expect((await zk.exists(b))?.ephemeralOwner).toBe(zk.sessionId);
  });

  it('returns the Stat with create2, and creates containers', async () => {
    const { path, stat } = await zk.createWithStat('/s', 'x');
    expect(path).toBe('/s');
    expect(stat.czxid).toBeGreaterThan(0n);
    expect(stat.czxid).toBe(stat.mzxid);
    await zk.create('/c', null, { mode: CreateMode.CONTAINER });
    expect(await zk.exists('/c')).not.toBeNull();
  });

  it('refuses TTL nodes on a server without extended types with a typed error', async () => {
    const err = await zk.create('/ttl', null, { mode: CreateMode.PERSISTENT_WITH_TTL, ttl: 10_000 }).catch((e: unknown) => e);
    // The Debian server runs without zookeeper.extendedTypesEnabled: UNIMPLEMENTED or BADARGUMENTS.
    if (err instanceof ZooKeeperError) {
      expect([ErrorCode.UNIMPLEMENTED, ErrorCode.BADARGUMENTS]).toContain(err.code);
      expect(err.path).toBe('/ttl');
    } else {
      expect(err).toBe('/ttl'); // the server has extended types enabled
    }
  });

  it('fails with NodeExists, NoNode and NoChildrenForEphemerals carrying op and path', async () => {
    await zk.create('/dup');
    const exists = await zk.create('/dup').catch((e: unknown) => e);
    expect(exists).toBeInstanceOf(NodeExistsError);
    expect(exists).toMatchObject({ code: ErrorCode.NODEEXISTS, codeName: 'NODEEXISTS', op: 'create', path: '/dup' });
    await expect(zk.create('/missing/child')).rejects.toBeInstanceOf(NoNodeError);
    await zk.create('/eph', null, { mode: CreateMode.EPHEMERAL });
    await expect(zk.create('/eph/child')).rejects.toBeInstanceOf(NoChildrenForEphemeralsError);
  });

  it('round-trips binary data, empty data and non-ASCII paths', async () => {
    const bytes = Buffer.from([0, 255, 1, 254, 0, 0, 128]);
    await zk.create('/bin', bytes);
    expect((await zk.getData('/bin')).data).toEqual(bytes);
    await zk.create('/empty', Buffer.alloc(0));
    expect((await zk.getData('/empty')).data.length).toBe(0);
    const path = '/über-日本-ключ';
    expect(await zk.create(path, 'ü')).toBe(path);
    expect(await zk.getChildren('/')).toContain(path.slice(1));
    expect((await zk.getData(path)).data.toString()).toBe('ü');
  });

  it('round-trips a value of about 1 MiB and refuses one over the frame limit before sending', async () => {
    const big = Buffer.alloc(1024 * 1024 - 4096, 7);
    await zk.create('/big', big);
    expect((await zk.getData('/big')).data.equals(big)).toBe(true);
    const tooBig = Buffer.alloc(1024 * 1024, 1);
    await expect(zk.create('/too-big', tooBig)).rejects.toBeInstanceOf(InvalidArgumentError);
    expect(await zk.exists('/too-big')).toBeNull();
  });
});

describe('client - read, write, delete', () => {
  it('setData checks versions', async () => {
    await zk.create('/v', '1');
    const s1 = await zk.setData('/v', '2', { version: 0 });
    expect(s1.version).toBe(1);
    const err = await zk.setData('/v', '3', { version: 0 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BadVersionError);
    expect(err).toMatchObject({ op: 'setData', path: '/v' });
    expect((await zk.setData('/v', '4')).version).toBe(2);
  });

  it('delete checks versions and emptiness', async () => {
    await zk.create('/d');
    await zk.create('/d/x');
    await expect(zk.delete('/d')).rejects.toBeInstanceOf(NotEmptyError);
    await expect(zk.delete('/d/x', { version: 5 })).rejects.toBeInstanceOf(BadVersionError);
    await zk.delete('/d/x', { version: 0 });
    await zk.delete('/d');
    expect(await zk.exists('/d')).toBeNull();
    await expect(zk.delete('/d')).rejects.toBeInstanceOf(NoNodeError);
    await expect(zk.getData('/d')).rejects.toBeInstanceOf(NoNodeError);
  });

  it('lists children with and without the Stat, and counts all descendants', async () => {
    await zk.create('/p');
    for (const n of ['a', 'b', 'c']) await zk.create(`/p/${n}`);
    await zk.create('/p/a/deep');
    expect((await zk.getChildren('/p')).sort()).toEqual(['a', 'b', 'c']);
    const { children, stat } = await zk.getChildrenWithStat('/p');
    expect(children.sort()).toEqual(['a', 'b', 'c']);
    expect(stat.numChildren).toBe(3);
    expect(await zk.getAllChildrenNumber('/p')).toBe(4);
  });

  it('lists this session’s ephemerals within the chroot', async () => {
    await zk.create('/e1', null, { mode: CreateMode.EPHEMERAL });
    await zk.create('/e2', null, { mode: CreateMode.EPHEMERAL });
    await zk.create('/p1');
    expect((await zk.getEphemerals()).sort()).toEqual(['/e1', '/e2']);
    expect(await zk.getEphemerals('/e1')).toEqual(['/e1']);
  });

  it('syncs', async () => {
    await expect(zk.sync('/')).resolves.toBeUndefined();
  });

  it('a Stat - its times are Dates of now and it goes through JSON.stringify, the 64-bit ids as exact decimal strings', async () => {
    const before = Date.now();
    await zk.create('/t', 'x', { mode: CreateMode.EPHEMERAL });
    const set = await zk.setData('/t', 'y');
    const { stat } = await zk.getData('/t');
    // The server's clock against ours: the same machine here, so a few seconds is generous.
    for (const t of [stat.ctime, stat.mtime]) expect(Math.abs(new Date(t).getTime() - before)).toBeLessThan(5_000);
    expect(stat.mtime).toBeGreaterThanOrEqual(stat.ctime);

    const json = JSON.parse(JSON.stringify({ set, stat })) as { set: Record<string, unknown>; stat: Record<string, unknown> };
    expect(json.stat).toEqual({ ...stat, czxid: String(stat.czxid), mzxid: String(stat.mzxid), ephemeralOwner: String(stat.ephemeralOwner), pzxid: String(stat.pzxid) });
    expect(json.set).toEqual(json.stat);
    expect(BigInt(json.stat.czxid as string)).toBe(stat.czxid);
    expect(BigInt(json.stat.ephemeralOwner as string)).toBe(zk.sessionId);
    expect(new Date(json.stat.mtime as number).getTime()).toBe(stat.mtime);
  });

  it('closeSession removes ephemerals at once', async () => {
    const other = await space.client();
    await other.create('/gone', null, { mode: CreateMode.EPHEMERAL });
    await other.close();
    expect(await zk.exists('/gone')).toBeNull();
  });
});

describe('client - ACLs and auth', () => {
  it('gets and sets ACLs, with aversion checks', async () => {
    await zk.create('/acl');
    expect((await zk.getACL('/acl')).acl).toEqual(OPEN_ACL_UNSAFE);
    await expect(zk.setACL('/acl', READ_ACL_UNSAFE, { version: 3 })).rejects.toBeInstanceOf(BadVersionError);
    const stat = await zk.setACL('/acl', READ_ACL_UNSAFE, { version: 0 });
    expect(stat.aversion).toBe(1);
    expect((await zk.getACL('/acl')).acl).toEqual(READ_ACL_UNSAFE);
    await expect(zk.setData('/acl', 'x')).rejects.toBeInstanceOf(NoAuthError);
    // changing the ACL back needs ADMIN, which the read-only ACL no longer grants
    await expect(zk.setACL('/acl', OPEN_ACL_UNSAFE)).rejects.toBeInstanceOf(NoAuthError);
  });

  it('digest ACLs deny another client and admit the authenticated one', async () => {
    await zk.addAuth('digest', 'alice:secret');
    await zk.create('/private', 'x', { acl: digestACL('alice', 'secret', Perm.ALL) });
    expect((await zk.getData('/private')).data.toString()).toBe('x');
    const stranger = await space.client();
    const err = await stranger.getData('/private').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NoAuthError);
    expect(err).toMatchObject({ op: 'getData', path: '/private' });
    const bob = await space.client({ auth: [{ scheme: 'digest', auth: 'alice:secret' }] });
    expect((await bob.getData('/private')).data.toString()).toBe('x');
  });

  it('CREATOR_ALL_ACL needs an authenticated session', async () => {
    await expect(zk.create('/creator', null, { acl: CREATOR_ALL_ACL })).rejects.toBeInstanceOf(InvalidACLError);
    await zk.addAuth('digest', 'carol:pw');
    await zk.create('/creator', null, { acl: CREATOR_ALL_ACL });
    expect((await zk.getACL('/creator')).acl[0]?.id.scheme).toBe('digest');
  });

  it('whoAmI reports the identities', async () => {
    await zk.addAuth('digest', 'dave:pw');
    const ids = await zk.whoAmI();
    expect(ids).toContainEqual({ authScheme: 'digest', user: 'dave' });
  });
});

describe('client - watches', () => {
  it('fires a data watch once on change', async () => {
    await zk.create('/w', '1');
    const { listener, event } = nextEvent();
    let calls = 0;
    await zk.getData('/w', { watch: (e) => (calls++, listener(e)) });
    await zk.setData('/w', '2');
    expect(await event).toMatchObject({ type: 'NodeDataChanged', path: '/w' });
    await zk.setData('/w', '3');
    await zk.sync('/'); // any later notification would arrive before this reply
    await new Promise((r) => setImmediate(r));
    expect(calls).toBe(1);
  });

  it('fires an exists watch on creation and a child watch on a new child', async () => {
    const created = nextEvent();
    expect(await zk.exists('/later', { watch: created.listener })).toBeNull();
    await zk.create('/later');
    expect(await created.event).toMatchObject({ type: 'NodeCreated', path: '/later' });
    const child = nextEvent();
    await zk.getChildren('/later', { watch: child.listener });
    await zk.create('/later/kid');
    expect(await child.event).toMatchObject({ type: 'NodeChildrenChanged', path: '/later' });
  });

  it('delivers a deletion to data and child watchers of the node', async () => {
    await zk.create('/del');
    const a = nextEvent();
    const b = nextEvent();
    await zk.getData('/del', { watch: a.listener });
    await zk.getChildren('/del', { watch: b.listener });
    await zk.delete('/del');
    expect(await a.event).toMatchObject({ type: 'NodeDeleted', path: '/del' });
    expect(await b.event).toMatchObject({ type: 'NodeDeleted', path: '/del' });
  });
});

describe('client - bad input', () => {
  it('refuses invalid input before sending anything', async () => {
    const sent = zk.pendingRequests;
    await expect(zk.create('no-slash')).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(zk.create('/x/')).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(zk.create('/x', null, { mode: CreateMode.PERSISTENT, ttl: 5 })).rejects.toThrow(/ttl applies only/);
    await expect(zk.create('/x', null, { mode: CreateMode.PERSISTENT_WITH_TTL })).rejects.toThrow(/ttl/);
    await expect(zk.create('/x', null, { acl: [] })).rejects.toThrow(/non-empty/);
    await expect(zk.delete('/x', { version: -2 })).rejects.toThrow(/version/);
    await expect(zk.getData('/x', { timeout: -1 })).rejects.toThrow(/timeout/);
    await expect(zk.create('/x', null, { mode: 9 })).rejects.toThrow(/create mode/);
    expect(zk.pendingRequests).toBe(sent);
    expect(await zk.exists('/x')).toBeNull();
  });

  it('rejects an already aborted call without sending it', async () => {
    const ac = new AbortController();
    ac.abort(new Error('stop'));
    await expect(zk.create('/ab', null, { signal: ac.signal })).rejects.toThrow('stop');
    expect(await zk.exists('/ab')).toBeNull();
  });
});

describe('client - pipelining', () => {
  it('answers 10,000 pipelined requests on one connection in order', async () => {
    await zk.create('/pipe', 'x');
    const n = 10_000;
    const replies = await Promise.all(Array.from({ length: n }, (_, i) => (i % 2 === 0 ? zk.exists('/pipe') : zk.exists(`/none-${i}`))));
    expect(replies.filter((r) => r !== null)).toHaveLength(n / 2);
    expect(replies.every((r, i) => (i % 2 === 0 ? r !== null : r === null))).toBe(true);
  });
});

describe('client - connect', () => {
  it('fails with one clear error when no server answers', async () => {
    await expect(ZooKeeper.connect('127.0.0.1:1', { connectTimeout: 2000 })).rejects.toThrow(/could not connect/);
  });

  it('connects with a chroot and strips it from results', async () => {
    const admin = await space.admin();
    const path = await zk.create('/visible');
    expect(path).toBe('/visible');
    expect(await admin.exists(`${space.root}/visible`)).not.toBeNull();
    expect(connectString()).not.toContain(space.root);
  });
});

/**
 * PersistentNode and PersistentTtlNode (Curator 5.4's recipes.nodes) against the real server:
 * the node re-created after a delete by another session, after session expiry (RenewingClient),
 * after a disconnection through a proxy; sequential and protected names; setData on the node and
 * on re-creations; close deleting the node and leaving no watch; the initial wait's timeout,
 * abort and refusals; the acl option; bad input refused before anything is sent; a TTL node
 * kept alive while touched and gone after close (on a server of its own with a fast container
 * check).
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { CREATOR_ALL_ACL, CreateMode, InvalidArgumentError, NoAuthError, NoNodeError, Perm, READ_ACL_UNSAFE, ZooKeeper } from '@zk/protocol';
import { LockStateError, PersistentNode, PersistentNodeAbortedError, PersistentNodeTimeoutError, PersistentTtlNode, RenewingClient, type PersistentNodeEvent } from '@zk/locks';
import { isZooKeeper34, startZooKeeper, waitFor, type ZooKeeperEnsemble } from '../../harness/index.js';
import { TestSpace } from '../../harness/fixtures.js';
import { behindProxy } from './behind-proxy.js';

let space: TestSpace;

beforeEach(() => {
  space = new TestSpace();
});

afterEach(async () => {
  expect((await space.close()).leakedWatches).toBe(0);
});

/** The node at `path` in the namespace (data and owner), or null. */
async function read(path: string): Promise<{ data: string; owner: bigint; czxid: bigint } | null> {
  const admin = await space.admin();
  try {
    const { data, stat } = await admin.getData(`${space.root}${path}`);
    return { data: data.toString(), owner: stat.ephemeralOwner, czxid: stat.czxid };
  } catch (err) {
    if (err instanceof NoNodeError) return null;
    throw err;
  }
}

/** Waits until the node at `path` exists with a czxid other than `not` (a re-creation). */
function untilRecreated(path: string, not: bigint): Promise<{ data: string; owner: bigint; czxid: bigint }> {
  return waitFor(`${path} re-created`, async () => {
    const n = await read(path);
    return n && n.czxid !== not ? n : undefined;
  }, 10_000, 10);
}

describe('PersistentNode', () => {
  it('an ephemeral node: created with its data, re-created after another session deletes it, setData on the node and on re-creations, close deletes it and its watch', async () => {
    const [zk, other] = await Promise.all([space.client(), space.client()]);
    const events: PersistentNodeEvent[] = [];
    const node = new PersistentNode(zk, '/pn/a/member', { data: 'one' });
    node.onEvent((e) => events.push(e));
    node.start();
    expect(await node.waitForInitialCreate({ timeout: 5_000 })).toBe('/pn/a/member');
    const first = (await read('/pn/a/member'))!;
    expect(first).toMatchObject({ data: 'one', owner: zk.sessionId });
    expect((await (await space.admin()).exists(`${space.root}/pn/a`))!.ephemeralOwner).toBe(0n); // parents are containers
    await node.setData('two');
    expect((await read('/pn/a/member'))!.data).toBe('two');
    await other.delete('/pn/a/member');
    const second = await untilRecreated('/pn/a/member', first.czxid);
    expect(second).toMatchObject({ data: 'two', owner: zk.sessionId });
    // data changed by someone else is left alone (Curator only watches again), and the watch stays
    await other.setData('/pn/a/member', 'theirs');
    await other.delete('/pn/a/member');
    expect((await untilRecreated('/pn/a/member', second.czxid)).data).toBe('two');
    // the node is visible before its creator has set the watch and reported it
    await waitFor('3 created events', () => (events.filter((e) => e.type === 'created').length === 3 ? true : undefined), 5_000, 5);
    expect(zk.watchCount).toBe(1);
    await node.close();
    await node.close();
    expect(await read('/pn/a/member')).toBeNull();
    expect(zk.watchCount).toBe(0);
    if (!isZooKeeper34()) expect(await zk.checkWatches('/pn/a/member')).toBe(false);
    await expect(node.setData('x')).rejects.toBeInstanceOf(LockStateError);
  });

  it('a sequential node: the path carries the sequence, and a re-create keeps that path (Curator re-creates it non-sequentially); protected names carry _c_<uuid>-', async () => {
    const [zk, other] = await Promise.all([space.client(), space.client()]);
    await using plain = new PersistentNode(zk, '/pn/seq/n-', { mode: CreateMode.EPHEMERAL_SEQUENTIAL, data: 'p' });
    await using guarded = new PersistentNode(zk, '/pn/seq/n-', { mode: CreateMode.PERSISTENT_SEQUENTIAL, protection: true, data: 'g' });
    plain.start();
    guarded.start();
    const [p, g] = await Promise.all([plain.waitForInitialCreate({ timeout: 5_000 }), guarded.waitForInitialCreate({ timeout: 5_000 })]);
    expect(p).toMatch(/^\/pn\/seq\/n-\d{10}$/);
    expect(g).toMatch(/^\/pn\/seq\/_c_[0-9a-f-]{36}-n-\d{10}$/);
    expect(plain.actualPath).toBe(p);
    const before = (await read(g))!;
    expect(before.owner).toBe(0n);
    await other.delete(p);
    await other.delete(g);
    expect((await untilRecreated(p, -1n)).owner).toBe(zk.sessionId);
    expect((await untilRecreated(g, before.czxid)).data).toBe('g');
    expect(await space.children('/pn/seq')).toHaveLength(2); // no new sequence numbers
    expect(plain.actualPath).toBe(p);
  });

  it('after session expiry: re-created in the RenewingClient\'s next session (same path, new owner); a plain client ends the node with an event', async () => {
    await using sessions = new RenewingClient(() => space.client());
    await using node = new PersistentNode(sessions, '/pn/exp/node', { data: 'alive' });
    const plainZk = await space.client();
    const ended: PersistentNodeEvent[] = [];
    await using plain = new PersistentNode(plainZk, '/pn/exp/plain');
    plain.onEvent((e) => ended.push(e));
    node.start();
    plain.start();
    await Promise.all([node.waitForInitialCreate({ timeout: 5_000 }), plain.waitForInitialCreate({ timeout: 5_000 })]);
    const first = (await read('/pn/exp/node'))!;
    const firstZk = sessions.current!;
    await space.expire(firstZk);
    const second = await untilRecreated('/pn/exp/node', first.czxid);
    expect(second.owner).not.toBe(first.owner);
    expect(second.owner).toBe(sessions.current!.sessionId);
    expect(second.data).toBe('alive');
    await space.expire(plainZk);
    await waitFor('the ended event', () => ended.find((e) => e.type === 'ended'), 5_000, 10);
    expect(await read('/pn/exp/plain')).toBeNull();
  });

  it('through a proxy: a node deleted while the link is down is re-created after the reconnect, in the same session', async () => {
    await behindProxy(space, async ({ zk, disconnect, reconnect }) => {
      const node = new PersistentNode(zk, '/pn/proxy/node', { data: 'd' });
      node.start();
      await node.waitForInitialCreate({ timeout: 5_000 });
      const first = (await read('/pn/proxy/node'))!;
      await disconnect();
      await (await space.admin()).delete(`${space.root}/pn/proxy/node`);
      await reconnect();
      const second = await untilRecreated('/pn/proxy/node', first.czxid);
      expect(second.owner).toBe(first.owner); // the same session, resumed
      await node.close();
      expect(await read('/pn/proxy/node')).toBeNull();
      expect(zk.watchCount).toBe(0);
    });
  });

  it('the initial wait: timeout and abort reject typed while the link is down; closed before the create, nothing is left', async () => {
    await behindProxy(space, async ({ zk, disconnect, reconnect }) => {
      await disconnect();
      const node = new PersistentNode(zk, '/pn/wait/node');
      await expect(node.waitForInitialCreate()).rejects.toBeInstanceOf(LockStateError); // not started
      node.start();
      await expect(node.waitForInitialCreate({ timeout: 0 })).rejects.toBeInstanceOf(PersistentNodeTimeoutError);
      await expect(node.waitForInitialCreate({ timeout: 300 })).rejects.toBeInstanceOf(PersistentNodeTimeoutError);
      await expect(node.waitForInitialCreate({ signal: AbortSignal.timeout(200) })).rejects.toBeInstanceOf(PersistentNodeAbortedError);
      const pending = node.waitForInitialCreate();
      pending.catch(() => undefined); // it rejects while close() runs, before the check below: handled now
      await node.close();
      await expect(pending).rejects.toBeInstanceOf(LockStateError);
      await reconnect();
      await zk.sync('/');
      expect(await read('/pn/wait/node')).toBeNull();
      expect(zk.watchCount).toBe(0);
    });
  });

  it('a create whose reply is lost: a protected sequential node is found again by its id (one node); an unprotected one is made again (two nodes, an uncertain event)', async () => {
    for (const protection of [true, false]) {
      await behindProxy(space, async ({ zk, proxy }) => {
        const dir = `/lost-${String(protection)}`;
        await zk.create(dir);
        const events: PersistentNodeEvent[] = [];
        const node = new PersistentNode(zk, `${dir}/n-`, { mode: CreateMode.EPHEMERAL_SEQUENTIAL, protection });
        node.onEvent((e) => events.push(e));
        proxy.drop('down'); // the server's answers are lost from here
        node.start();
        await space.untilChildren(dir, 1); // the create was applied
        // ...and its reply lost: the server may send it after another session saw the node, and a
        // reply that came after the undrop went through (CI, 3.9.3 pass at a6a6637: one node, no
        // 'uncertain'). Once any byte is dropped the connection stays black-holed that way.
        await waitFor('a reply dropped', () => (proxy.droppedBytes('down') > 0 ? true : undefined), 10_000, 5);
        proxy.undrop('down');
        proxy.cutHoled(); // the client learns of the loss now, and reconnects
        const path = await node.waitForInitialCreate({ timeout: 10_000 });
        const children = await space.children(dir);
        if (protection) {
          expect(children).toEqual([path.slice(dir.length + 1)]);
          expect(events.map((e) => e.type)).toEqual(['created']);
        } else {
          expect(children).toHaveLength(2); // the stray one lives as long as the session (as with Curator)
          expect(events.map((e) => e.type)).toEqual(['uncertain', 'created']);
        }
        await node.close();
        expect(zk.watchCount).toBe(0);
      });
    }
  });

  it('refusals: NoAuth under a read-only parent and NoNode with parents: false reject the initial wait with the typed server error', async () => {
    const zk = await space.client();
    await zk.create('/ro', null, { acl: READ_ACL_UNSAFE });
    const refused = new PersistentNode(zk, '/ro/node');
    const orphan = new PersistentNode(zk, '/missing/node', { parents: false });
    refused.start();
    orphan.start();
    const noAuth = await refused.waitForInitialCreate({ timeout: 5_000 }).catch((e: unknown) => e);
    expect(noAuth).toBeInstanceOf(NoAuthError);
    expect((noAuth as NoAuthError).path).toBe('/ro/node');
    await expect(orphan.waitForInitialCreate({ timeout: 5_000 })).rejects.toBeInstanceOf(NoNodeError);
    await Promise.all([refused.close(), orphan.close()]);
    expect(await zk.getChildren('/')).toEqual(['ro']);
    expect(zk.watchCount).toBe(0);
  });

  it('the acl option on the node and its container parents', async () => {
    const zk = await space.client();
    await zk.addAuth('digest', 'owner:secret');
    await using node = new PersistentNode(zk, '/pn/acl/node', { acl: CREATOR_ALL_ACL });
    node.start();
    await node.waitForInitialCreate({ timeout: 5_000 });
    for (const p of ['/pn', '/pn/acl', '/pn/acl/node']) {
      const { acl } = await zk.getACL(p);
      expect(acl).toEqual([{ perms: Perm.ALL, id: { scheme: 'digest', id: expect.stringMatching(/^owner:/) } }]);
    }
    await node.close();
    await zk.delete('/pn/acl');
    await zk.delete('/pn');
  });

  it('bad input throws InvalidArgumentError from the constructor, before anything is sent', async () => {
    const zk = await space.client();
    const bad: Array<() => unknown> = [
      () => new PersistentNode(zk, 'relative'),
      () => new PersistentNode(zk, '/'),
      () => new PersistentNode(zk, '/x', { mode: 9 as never }),
      () => new PersistentNode(zk, '/x', { mode: CreateMode.PERSISTENT_WITH_TTL }),
      () => new PersistentNode(zk, '/x', { ttl: 1000 }),
      () => new PersistentNode(zk, '/x', { data: 5 as never }),
      () => new PersistentNode(zk, '/x', { acl: [{ perms: 0, id: { scheme: 'world', id: 'anyone' } }] }),
      () => new PersistentNode({} as never, '/x'),
      () => new PersistentTtlNode(zk, '/x', 0),
      () => new PersistentTtlNode(zk, '/x', 1000, { childName: 'a/b' }),
      () => new RenewingClient(undefined as never),
    ];
    for (const make of bad) expect(make).toThrow(InvalidArgumentError);
    const node = new PersistentNode(zk, '/x');
    await expect(node.setData(7 as never)).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(node.waitForInitialCreate({ timeout: -1 })).rejects.toBeInstanceOf(LockStateError);
    expect(zk.pendingRequests).toBe(0);
    expect(await zk.getChildren('/')).toEqual([]);
  });
});

describe.skipIf(isZooKeeper34())('PersistentTtlNode (a server of its own: extendedTypesEnabled, container check every 100 ms)', () => {
  let server: ZooKeeperEnsemble;
  beforeAll(async () => {
    server = await startZooKeeper({ servers: 1, own: true, systemProperties: { 'znode.container.checkIntervalMs': 100 } });
  }, 60_000);
  afterAll(async () => {
    await server?.close();
  });

  it('kept alive by its touch node past several ttls, gone about a ttl after close; a crashed owner (session closed, touching stopped) too', async () => {
    const ttl = 1_000;
    const [zk, watcher] = await Promise.all([ZooKeeper.connect(server.connectString), ZooKeeper.connect(server.connectString)]);
    try {
      await zk.addAuth('digest', 'owner:secret');
      const node = new PersistentTtlNode(zk, '/ttl/job', ttl, { data: 'owner-1', acl: [...CREATOR_ALL_ACL, ...READ_ACL_UNSAFE] });
      node.start();
      expect(await node.waitForInitialCreate({ timeout: 5_000 })).toBe('/ttl/job');
      const stat = await watcher.exists('/ttl/job');
      expect(stat!.ephemeralOwner).toBe(0n);
      await new Promise((r) => setTimeout(r, 3 * ttl)); // the thing measured is time itself: 3 ttls
      expect(node.touches).toBeGreaterThanOrEqual(4);
      expect((await watcher.getData('/ttl/job')).data.toString()).toBe('owner-1');
      expect(await watcher.getChildren('/ttl/job')).toEqual(['touch']);
      for (const p of ['/ttl', '/ttl/job', '/ttl/job/touch']) expect((await watcher.getACL(p)).acl.map((a) => `${a.id.scheme}:${a.perms}`)).toEqual([`digest:${Perm.ALL}`, `world:${Perm.READ}`]);
      await expect(watcher.delete('/ttl/job/touch')).rejects.toBeInstanceOf(NoAuthError);
      const closedAt = performance.now();
      await node.close();
      await waitFor('the ttl node gone', async () => ((await watcher.exists('/ttl/job')) === null ? true : undefined), 10_000, 50);
      const goneAfter = performance.now() - closedAt;
      console.log(`PersistentTtlNode (ttl ${ttl} ms): gone ${goneAfter.toFixed(0)} ms after close`);
      expect(goneAfter).toBeGreaterThan(ttl * 0.5);

      // A process that dies: its client closes without closing the node, and touches stop.
      const dying = await ZooKeeper.connect(server.connectString);
      const orphan = new PersistentTtlNode(dying, '/crash/job', ttl);
      orphan.start();
      await orphan.waitForInitialCreate({ timeout: 5_000 });
      await waitFor('a first touch', () => (orphan.touches > 0 ? true : undefined), 5_000, 10);
      await dying.close(); // touching stops with the session (the timer finds no connected client)
      await waitFor('the orphan ttl node gone', async () => ((await watcher.exists('/crash/job')) === null ? true : undefined), 10_000, 50);
      await orphan.close();
    } finally {
      await Promise.all([zk.close(), watcher.close()]);
    }
  }, 30_000);
});

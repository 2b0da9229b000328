import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ChannelName, CreateMode, SessionExpiredError, TreeCache, ZooKeeper, type RequestStartMessage, type TreeCacheEvent, type WatchedEvent } from '@zk/protocol';
import { timing, waitFor, waitForState, type TcpProxy } from '../../harness/index.js';
import { proxyToServer, TestSpace } from '../../harness/fixtures.js';

let space: TestSpace;

beforeEach(async () => {
  space = new TestSpace();
  await space.admin();
});

afterEach(async () => {
  expect((await space.close()).leakedWatches).toBe(0);
});

/** Records a cache's events; `until` resolves at the first event matching `match` (from now or already recorded after `from`). */
function record(cache: TreeCache) {
  const events: TreeCacheEvent[] = [];
  const waiters: Array<{ match: (e: TreeCacheEvent) => boolean; from: number; resolve: (i: number) => void }> = [];
  cache.onEvent((e) => {
    events.push(e);
    for (const w of [...waiters]) {
      if (w.match(e)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(events.length - 1);
      }
    }
  });
  return {
    events,
    /** Index of the first event at or after `from` matching `match`. */
    until(match: (e: TreeCacheEvent) => boolean, from = 0): Promise<number> {
      const i = events.findIndex((e, j) => j >= from && match(e));
      if (i >= 0) return Promise.resolve(i);
      return new Promise((resolve) => waiters.push({ match, from, resolve }));
    },
  };
}

const brief = (e: TreeCacheEvent): string => {
  switch (e.type) {
    case 'created':
      return `created ${e.path} ${e.node.data.toString()}`;
    case 'changed':
      return `changed ${e.path} ${e.previous.data.toString()}->${e.node.data.toString()}`;
    case 'deleted':
      return `deleted ${e.path}`;
    default:
      return e.type;
  }
};

/** The server's tree under `root`: path -> data, read node by node. */
async function serverTree(zk: ZooKeeper, root: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  const visit = async (path: string): Promise<void> => {
    const { data } = await zk.getData(path);
    out.set(path, data.toString());
    for (const c of await zk.getChildren(path)) await visit(path === '/' ? `/${c}` : `${path}/${c}`);
  };
  if (await zk.exists(root)) await visit(root);
  return out;
}

/**
 * Replays events onto a snapshot and notes every event that cannot follow from the state before
 * it: a node created twice, deleted while absent, changed from data it did not have, or to data
 * that is not newer.
 */
class HistoryCheck {
  readonly model: Map<string, string>;
  readonly problems: string[] = [];
  constructor(snapshot: Map<string, string>) {
    this.model = new Map(snapshot);
  }
  apply(e: TreeCacheEvent): void {
    if (e.type === 'created') {
      if (this.model.has(e.path)) this.problems.push(`created twice: ${e.path}`);
      this.model.set(e.path, e.node.data.toString());
    } else if (e.type === 'changed') {
      if (this.model.get(e.path) !== e.previous.data.toString()) this.problems.push(`changed from a state not held: ${e.path}`);
      if (e.node.stat.mzxid <= e.previous.stat.mzxid) this.problems.push(`change not newer: ${e.path}`);
      this.model.set(e.path, e.node.data.toString());
    } else if (e.type === 'deleted') {
      if (!this.model.has(e.path)) this.problems.push(`deleted while absent: ${e.path}`);
      this.model.delete(e.path);
    }
  }
}

describe('tree cache - the history check (negative control)', () => {
  const node = (path: string, data: string, mzxid: bigint) => ({ path, data: Buffer.from(data), stat: { mzxid } as never });
  it('flags a duplicated creation, a lost change and a deletion reported twice', () => {
    const check = new HistoryCheck(new Map([['/a', 'v1']]));
    check.apply({ type: 'created', path: '/a', node: node('/a', 'v1', 1n) });
    check.apply({ type: 'changed', path: '/a', node: node('/a', 'v3', 3n), previous: node('/a', 'v2', 2n) }); // v1 -> v2 was lost
    check.apply({ type: 'changed', path: '/a', node: node('/a', 'v3', 3n), previous: node('/a', 'v3', 3n) }); // a duplicate
    check.apply({ type: 'deleted', path: '/a', previous: node('/a', 'v3', 3n) });
    check.apply({ type: 'deleted', path: '/a', previous: node('/a', 'v3', 3n) });
    expect(check.problems).toEqual(['created twice: /a', 'changed from a state not held: /a', 'change not newer: /a', 'deleted while absent: /a']);
  });
});

/** Another client's random creates, writes and deletes on 40 paths under /app (and a child each), until `stop()`. */
function churn(writer: ZooKeeper) {
  const names = Array.from({ length: 40 }, (_, i) => `/app/n${i}`);
  let stopped = false;
  let ops = 0;
  const done = (async () => {
    let i = 0;
    while (!stopped || ops < 600) {
      const p = names[(i * 7919) % names.length] as string;
      i++;
      try {
        switch (i % 5) {
          case 0:
          case 1:
            await writer.setData(p, `v${i}`);
            break;
          case 2:
            await writer.create(p, `c${i}`);
            break;
          case 3:
            await writer.create(`${p}/k`, `k${i}`);
            break;
          case 4:
            await writer.delete(`${p}/k`).catch(() => undefined);
            await writer.delete(p);
            break;
        }
      } catch {
        // NoNode / NodeExists / NotEmpty: the op did nothing
      }
      ops++;
      if (ops > 20_000) break;
    }
  })();
  return {
    names,
    get ops() {
      return ops;
    },
    async stop() {
      stopped = true;
      await done;
    },
  };
}

function cacheTree(cache: TreeCache): Map<string, string> {
  return new Map([...cache.nodes()].map((n) => [n.path, n.data.toString()]));
}

describe('tree cache - load and events', () => {
  it('loads the whole tree: data, exact Stats, children; emits nothing for the load itself', async () => {
    const zk = await space.client();
    await zk.create('/app', 'root');
    await zk.create('/app/a', 'A');
    await zk.create('/app/a/x', 'AX');
    await zk.create('/app/b', '');
    await zk.create('/app/a/x/deep', 'D');
    await zk.create('/elsewhere', 'not cached');
    const cache = await TreeCache.open(zk, '/app');
    const rec = record(cache);
    expect(cache.size).toBe(5);
    expect(cacheTree(cache)).toEqual(await serverTree(zk, '/app'));
    expect(cache.children('/app')).toEqual(['a', 'b']);
    expect(cache.children('/app/a/x')).toEqual(['deep']);
    expect(cache.children('/app/b')).toEqual([]);
    expect(cache.children('/app/nope')).toBeUndefined();
    expect(cache.get('/app/a/x')?.stat).toEqual((await zk.getData('/app/a/x')).stat);
    expect(cache.has('/elsewhere')).toBe(false);
    expect([...cache.nodes()].map((n) => n.path)).toEqual(['/app', '/app/a', '/app/b', '/app/a/x', '/app/a/x/deep']);
    expect(cache.synced).toBe(true);
    // replay: the snapshot as created events, parents first, then initialized
    const replay: string[] = [];
    for await (const e of cache.events({ replay: true })) {
      replay.push(brief(e));
      if (e.type === 'initialized') break;
    }
    expect(replay).toEqual(['created /app root', 'created /app/a A', 'created /app/b ', 'created /app/a/x AX', 'created /app/a/x/deep D', 'initialized']);
    await cache.close();
    expect(rec.events).toEqual([]);
  });

  it('reports each kind of change by another client, once, in order, to listeners and streams alike', async () => {
    const zk = await space.client();
    const other = await space.client();
    await zk.create('/app', '');
    await zk.create('/app/keep', 'k');
    await using cache = await TreeCache.open(zk, '/app');
    const rec = record(cache);
    const stream = cache.events();
    // Each change is awaited in the cache before the next is made. The cache reads a node when
    // told of a change, so a child created and deleted before that read would be seen as
    // nothing: a change the cache never saw, not one it reported wrongly (CI once saw exactly
    // that on 3.9.3, the child's creation and deletion both missed).
    const seen = (type: string, path: string) => rec.until((e) => e.type === type && 'path' in e && e.path === path);
    await other.create('/app/n', 'v1');
    await seen('created', '/app/n');
    await other.create('/app/n/child', 'c');
    await seen('created', '/app/n/child');
    await other.setData('/app/n', 'v2');
    await seen('changed', '/app/n');
    await other.delete('/app/n/child');
    await seen('deleted', '/app/n/child');
    await other.delete('/app/n');
    await other.create('/outside', 'x'); // not under the root: nothing
    await other.setData('/app/keep', 'k2');
    await rec.until((e) => e.type === 'changed' && e.path === '/app/keep');
    const expected = ['created /app/n v1', 'created /app/n/child c', 'changed /app/n v1->v2', 'deleted /app/n/child', 'deleted /app/n', 'changed /app/keep k->k2'];
    expect(rec.events.map(brief)).toEqual(expected);
    const streamed: string[] = [];
    for await (const e of stream) {
      streamed.push(brief(e));
      if (streamed.length === expected.length) break;
    }
    expect(streamed).toEqual(expected);
    // a change event carries the new Stat; the previous node its old one
    const changed = rec.events.find((e) => e.type === 'changed' && e.path === '/app/keep');
    expect(changed?.type === 'changed' && changed.node.stat.version).toBe(1);
    expect(changed?.type === 'changed' && changed.previous.stat.version).toBe(0);
    expect(cacheTree(cache)).toEqual(await serverTree(zk, '/app'));
    await other.delete('/outside');
  });

  it('follows the root being deleted and created again (and is empty while it is missing)', async () => {
    const zk = await space.client();
    const other = await space.client();
    await using cache = await TreeCache.open(zk, '/app'); // the root does not exist yet
    expect(cache.size).toBe(0);
    expect(cache.synced).toBe(true);
    const rec = record(cache);
    await other.create('/app', 'r1');
    await other.create('/app/a', 'a');
    await other.create('/app/a/b', 'b');
    await rec.until((e) => e.type === 'created' && e.path === '/app/a/b');
    expect(cache.size).toBe(3);
    const from = rec.events.length;
    await other.deleteRecursive('/app');
    await rec.until((e) => e.type === 'deleted' && e.path === '/app', from);
    expect(rec.events.slice(from).map(brief)).toEqual(['deleted /app/a/b', 'deleted /app/a', 'deleted /app']);
    expect(cache.size).toBe(0);
    expect(cache.children('/app')).toBeUndefined();
    const again = rec.events.length;
    await other.create('/app', 'r2');
    await other.create('/app/z', 'z');
    await rec.until((e) => e.type === 'created' && e.path === '/app/z', again);
    expect(rec.events.slice(again).map(brief)).toEqual(['created /app r2', 'created /app/z z']);
    expect(cacheTree(cache)).toEqual(new Map([['/app', 'r2'], ['/app/z', 'z']]));
    await other.deleteRecursive('/app');
  });

  it('a node replaced (deleted and created again) within one batch is reported as deleted then created', async () => {
    const zk = await space.client();
    const other = await space.client();
    await zk.create('/app', '');
    await zk.create('/app/n', 'old');
    await zk.create('/app/n/kid', 'oldkid');
    await using cache = await TreeCache.open(zk, '/app');
    const rec = record(cache);
    // one multi: the whole replacement is one server step, so the cache sees only its result
    await other.transaction().delete('/app/n/kid').delete('/app/n').create('/app/n', 'new').create('/app/n/kid', 'newkid').commit();
    await other.setData('/app', 'sentinel');
    await rec.until((e) => e.type === 'changed' && e.path === '/app');
    // (the sentinel's change may come first: the cache reads /app again when its child /app/n goes)
    expect(rec.events.map(brief).filter((e) => e.includes('/app/n'))).toEqual(['deleted /app/n/kid', 'deleted /app/n', 'created /app/n new', 'created /app/n/kid newkid']);
    expect(rec.events.map(brief).filter((e) => !e.includes('/app/n'))).toEqual(['changed /app ->sentinel']);
    expect(cacheTree(cache)).toEqual(await serverTree(zk, '/app'));
  });

  it('changes racing the initial load are neither lost nor reported twice (and the events replay to the final tree)', async () => {
    const zk = await space.client();
    const writer = await space.client();
    await zk.create('/app', '');
    const writes = churn(writer);
    for (const p of writes.names.slice(0, 20)) await zk.create(p, 'seed').catch(() => undefined);
    await waitFor('some writes', () => (writes.ops > 50 ? true : undefined), timing(10_000), 5);
    const cache = await TreeCache.open(zk, '/app');
    // The model: the snapshot at open, then every event applied, checked as it goes.
    const history = new HistoryCheck(cacheTree(cache));
    cache.onEvent((e) => history.apply(e));
    await writes.stop();
    await zk.setData('/app', 'sentinel');
    await waitFor('the sentinel', () => (cache.get('/app')?.data.toString() === 'sentinel' ? true : undefined), timing(10_000), 5);
    expect(history.problems).toEqual([]);
    expect(cacheTree(cache)).toEqual(await serverTree(zk, '/app'));
    expect(history.model).toEqual(cacheTree(cache));
    expect(writes.ops).toBeGreaterThanOrEqual(600);
    await cache.close();
  });
});

describe('tree cache - reconnects and session', () => {
  let proxy: TcpProxy;
  beforeEach(async () => {
    proxy = await proxyToServer();
  });
  afterEach(async () => {
    await proxy.close();
  });
  const viaProxy = (sessionTimeout = 10_000) => ZooKeeper.connect(`${proxy.connectString}${space.root}`, { sessionTimeout, connectTimeout: 2000 });

  it('changes made during an outage are reported exactly once after the reconnect, then resynced, and nothing else', async () => {
    const other = await space.client();
    await other.create('/app', 'root');
    for (const n of ['same', 'edit', 'gone', 'swap', 'tree']) await other.create(`/app/${n}`, n);
    await other.create('/app/tree/leaf', 'leaf');
    await using zk = await viaProxy();
    const cache = await TreeCache.open(zk, '/app');
    const rec = record(cache);
    // Control: a plain recursive watch on the same client sees none of the outage's changes.
    const watched: WatchedEvent[] = [];
    const unwatch = await zk.addWatch('/app', (e) => watched.push(e), { recursive: true });

    proxy.block();
    await waitForState(zk, 'suspended');
    expect(cache.synced).toBe(false);
    await other.setData('/app/edit', 'edit2');
    await other.setData('/app/edit', 'edit3'); // twice: one change to the newest data
    await other.delete('/app/gone');
    await other.delete('/app/swap');
    await other.create('/app/swap', 'swap2'); // a new node at the same path
    await other.create('/app/new', 'new');
    await other.create('/app/new/kid', 'kid');
    await other.deleteRecursive('/app/tree');
    await other.create('/app/tmp', 'tmp');
    await other.delete('/app/tmp'); // created and deleted while away: no trace
    expect(rec.events).toEqual([]);
    proxy.unblock();
    await waitForState(zk, 'connected');
    const resynced = await rec.until((e) => e.type === 'resynced');
    const diff = rec.events.slice(0, resynced).map(brief);
    expect([...diff].sort()).toEqual(
      [
        'changed /app/edit edit->edit3',
        'deleted /app/gone',
        'deleted /app/swap',
        'created /app/swap swap2',
        'created /app/new new',
        'created /app/new/kid kid',
        'deleted /app/tree/leaf',
        'deleted /app/tree',
      ].sort(),
    );
    // within the resync, a parent is created before its child and deleted after it
    expect(diff.indexOf('created /app/new new')).toBeLessThan(diff.indexOf('created /app/new/kid kid'));
    expect(diff.indexOf('deleted /app/tree/leaf')).toBeLessThan(diff.indexOf('deleted /app/tree'));
    expect(diff.indexOf('deleted /app/swap')).toBeLessThan(diff.indexOf('created /app/swap swap2'));
    const ev = rec.events[resynced];
    expect(ev?.type === 'resynced' && ev.changes).toBe(8);
    expect(cache.synced).toBe(true);
    expect(cacheTree(cache)).toEqual(await serverTree(other, '/app'));
    expect(watched.filter((e) => e.path !== '/app/same')).toEqual([]); // the watch alone missed them all

    // Still live after the reconnect, and nothing more came from the outage.
    await other.setData('/app/same', 'same2');
    const last = await rec.until((e) => e.type === 'changed' && e.path === '/app/same');
    expect(last).toBe(resynced + 1);
    expect(watched.map((e) => `${e.type} ${e.path}`)).toEqual(['NodeDataChanged /app/same']);
    await unwatch();
    await cache.close();
    expect(zk.watchCount).toBe(0);
  });

  it('outages in the middle of another client\'s writes: after each resync the cache equals the server, and the events replay to it', async () => {
    const writer = await space.client();
    await writer.create('/app', '');
    await using zk = await viaProxy();
    const writes = churn(writer);
    await waitFor('some writes', () => (writes.ops > 50 ? true : undefined), timing(10_000), 5);
    const cache = await TreeCache.open(zk, '/app');
    const history = new HistoryCheck(cacheTree(cache));
    const rec = record(cache);
    cache.onEvent((e) => history.apply(e));
    for (let round = 0; round < 3; round++) {
      const from = rec.events.length;
      const before = writes.ops;
      proxy.block();
      await waitForState(zk, 'suspended');
      await waitFor('writes while away', () => (writes.ops > before + 30 ? true : undefined), timing(10_000), 5);
      proxy.unblock();
      await rec.until((e) => e.type === 'resynced', from);
    }
    await writes.stop();
    await writer.setData('/app', 'sentinel');
    await waitFor('the sentinel', () => (cache.get('/app')?.data.toString() === 'sentinel' ? true : undefined), timing(10_000), 5);
    expect(history.problems).toEqual([]);
    expect(cacheTree(cache)).toEqual(await serverTree(writer, '/app'));
    expect(history.model).toEqual(cacheTree(cache));
    expect(rec.events.filter((e) => e.type === 'resynced')).toHaveLength(3);
    await cache.close();
  });

  it('a connection lost in the middle of the initial load: open waits for the reconnect, loads again, and resolves with the whole tree', async () => {
    const other = await space.client();
    await other.create('/app', '');
    for (let d = 0; d < 4; d++) {
      const t = other.transaction().create(`/app/d${d}`, `d${d}`);
      for (let j = 0; j < 300; j++) t.create(`/app/d${d}/n${j}`, 'x');
      await t.commit();
    }
    await using zk = await viaProxy();
    // Cut the link as the second level's first read leaves (the root was read and applied).
    let cuts = 0;
    const onStart = (m: unknown) => {
      const { op, path } = m as RequestStartMessage;
      if (op === 22 && path?.startsWith('/app/') && cuts === 0) {
        cuts++;
        queueMicrotask(() => proxy.cut());
      }
    };
    subscribe(ChannelName.requestStart, onStart);
    let cache: TreeCache;
    try {
      cache = await TreeCache.open(zk, '/app');
    } finally {
      unsubscribe(ChannelName.requestStart, onStart);
    }
    expect(cuts).toBe(1);
    expect(cache.size).toBe(1 + 4 + 4 * 300);
    expect(cache.synced).toBe(true);
    expect(cacheTree(cache)).toEqual(await serverTree(other, '/app'));
    await cache.close();
    expect(zk.watchCount).toBe(0);
  });

  it('ends with a SessionExpiredError when the session expires: streams and done fail, no watch left', async () => {
    const other = await space.client();
    await other.create('/app', '');
    const zk = await viaProxy(4000);
    try {
      await zk.create('/app/eph', '', { mode: CreateMode.EPHEMERAL });
      const cache = await TreeCache.open(zk, '/app');
      const stream = cache.events();
      const failed = (async () => {
        for await (const _ of stream) {
          // no events expected
        }
      })();
      failed.catch(() => undefined); // it may fail before the check below is attached: handled now
      proxy.block();
      // wait past the session timeout, then let the client find out
      await waitForState(zk, 'lost');
      // the server expired it: its ephemeral node is gone
      await waitFor('the session to expire on the server', async () => ((await other.exists('/app/eph')) === null ? true : undefined), timing(30_000), 200);
      proxy.unblock();
      await waitForState(zk, 'expired');
      await expect(cache.done).rejects.toBeInstanceOf(SessionExpiredError);
      await expect(failed).rejects.toBeInstanceOf(SessionExpiredError);
      expect(cache.synced).toBe(false);
      expect(zk.watchCount).toBe(0);
      await cache.close(); // idempotent after the end
    } finally {
      await zk.close();
    }
  });
});

describe('tree cache - scale and cleanup', () => {
  it('loads 10,000 nodes', async () => {
    const zk = await space.client();
    await zk.create('/big', '');
    const payload = 'x'.repeat(32);
    for (let i = 0; i < 100; i++) {
      const t = zk.transaction();
      t.create(`/big/d${i}`, payload);
      for (let j = 0; j < 99; j++) t.create(`/big/d${i}/n${j}`, payload);
      await t.commit();
    }
    const started = performance.now();
    const cache = await TreeCache.open(zk, '/big');
    const ms = performance.now() - started;
    console.info(`tree cache: loaded ${cache.size} nodes in ${ms.toFixed(0)} ms`);
    expect(cache.size).toBe(10_001);
    expect(cache.children('/big')).toHaveLength(100);
    expect(cache.children('/big/d42')).toHaveLength(99);
    expect(cache.get('/big/d99/n98')?.data.toString()).toBe(payload);
    await cache.close();
    await zk.deleteRecursive('/big');
  });

  it('close removes the watch on the server and in the client; a closed cache reports nothing more', async () => {
    const zk = await space.client();
    const other = await space.client();
    await zk.create('/app', '');
    const cache = await TreeCache.open(zk, '/app');
    const rec = record(cache);
    expect(await zk.checkWatches('/app')).toBe(true); // control: the watch is there while open
    expect(zk.watchCount).toBe(1);
    const stream = cache.events();
    await cache.close();
    expect(zk.watchCount).toBe(0);
    expect(await zk.checkWatches('/app')).toBe(false);
    expect(await stream.next()).toEqual({ value: undefined, done: true });
    await expect(cache.done).resolves.toBeUndefined();
    await other.create('/app/after', '');
    await other.setData('/app', 'x');
    expect(rec.events).toEqual([]);
    await cache.close();
  });

  it('a signal closes it; open refuses bad input and an aborted signal before sending anything', async () => {
    const zk = await space.client();
    await zk.create('/app', '');
    const ac = new AbortController();
    const cache = await TreeCache.open(zk, '/app', { signal: ac.signal });
    ac.abort();
    await cache.done;
    expect(zk.watchCount).toBe(0);
    await expect(TreeCache.open(zk, 'relative')).rejects.toThrow(/path/);
    await expect(TreeCache.open(zk, '/app', { timeout: -1 })).rejects.toThrow(/timeout/);
    await expect(TreeCache.open(zk, '/app', { signal: AbortSignal.abort() })).rejects.toThrow();
    expect(zk.watchCount).toBe(0);
  });
});

/**
 * PathChildrenCache against the real server: Curator's events in order, the start modes, a child
 * deleted and created again, the parent coming and going, changes made during a disconnection
 * reported once after CONNECTION_RECONNECTED, session expiry, close leaving no watch, and bad input
 * refused before any byte.
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ChannelName, InvalidArgumentError, NodeCache, PathChildrenCache, RequestTimeoutError, SessionExpiredError, ZooKeeper } from '@zk/protocol';
import { isZooKeeper34, timing, waitFor, waitForState, type TcpProxy } from '../../harness/index.js';
import { proxyToServer, TestSpace } from '../../harness/fixtures.js';
import { record } from './recorder.js';

let space: TestSpace;

beforeEach(async () => {
  space = new TestSpace();
  await space.admin();
});

afterEach(async () => {
  expect((await space.close()).leakedWatches).toBe(0);
});

/** The cache's children as name -> data. */
const view = (cache: PathChildrenCache) => Object.fromEntries(cache.currentData().map((c) => [c.path.slice(c.path.lastIndexOf('/') + 1), c.data?.toString()]));

/** The server's children of `path` as name -> data. */
async function serverView(zk: ZooKeeper, path: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const name of (await zk.getChildren(path)).sort()) out[name] = (await zk.getData(`${path}/${name}`)).data.toString();
  return out;
}

describe.skipIf(isZooKeeper34())('path children cache - start modes and events', () => {
  it('NORMAL reports the initial children as CHILD_ADDED; POST_INITIALIZED_EVENT adds INITIALIZED with the set; BUILD_INITIAL_CACHE reports nothing', async () => {
    const zk = await space.client();
    await zk.create('/app', 'parent');
    await zk.create('/app/a', 'A');
    await zk.create('/app/b', 'B');
    await zk.create('/app/a/deep', 'not a child');
    const lines: Record<string, string[]> = {};
    for (const mode of ['NORMAL', 'POST_INITIALIZED_EVENT', 'BUILD_INITIAL_CACHE'] as const) {
      const cache = new PathChildrenCache(zk, '/app');
      const rec = record(cache);
      await cache.start({ mode });
      expect(view(cache)).toEqual({ a: 'A', b: 'B' });
      lines[mode] = rec.lines();
      await cache.close();
    }
    expect([...(lines.NORMAL ?? [])].sort()).toEqual(['CHILD_ADDED a A', 'CHILD_ADDED b B']);
    expect((lines.POST_INITIALIZED_EVENT ?? []).slice(0, 2).sort()).toEqual(['CHILD_ADDED a A', 'CHILD_ADDED b B']);
    expect(lines.POST_INITIALIZED_EVENT?.[2]).toBe('INITIALIZED a,b');
    expect(lines.POST_INITIALIZED_EVENT).toHaveLength(3);
    expect(lines.BUILD_INITIAL_CACHE).toEqual([]);
    expect(zk.watchCount).toBe(0);
  });

  it('another client\'s create, update and delete come as CHILD_ADDED, CHILD_UPDATED, CHILD_REMOVED in order, with data and Stat; deeper nodes and the parent\'s data are not children', async () => {
    const zk = await space.client();
    const other = await space.client();
    await other.create('/app', '');
    await using cache = await PathChildrenCache.open(zk, '/app', { mode: 'BUILD_INITIAL_CACHE' });
    const rec = record(cache);
    const stream = cache.events();
    await other.create('/app/c', 'c1');
    await rec.untilLine('CHILD_ADDED c c1');
    await other.setData('/app/c', 'c2');
    await rec.untilLine('CHILD_UPDATED c c2');
    await other.create('/app/c/grandchild', 'g');
    await other.setData('/app', 'parent data');
    await other.setData('/app/c/grandchild', 'g2');
    await other.delete('/app/c/grandchild');
    await other.delete('/app/c');
    await rec.untilLine('CHILD_REMOVED c c2');
    await other.create('/app/sentinel', 's');
    await rec.untilLine('CHILD_ADDED sentinel s');
    expect(rec.lines()).toEqual(['CHILD_ADDED c c1', 'CHILD_UPDATED c c2', 'CHILD_REMOVED c c2', 'CHILD_ADDED sentinel s']);
    const updated = rec.events[1];
    expect(updated?.type === 'CHILD_UPDATED' && updated.data.stat.version).toBe(1);
    expect(updated?.type === 'CHILD_UPDATED' && updated.data.path).toBe('/app/c');
    // the stream saw the same
    const streamed: string[] = [];
    for await (const e of stream) {
      streamed.push(e.type);
      if (streamed.length === 4) break;
    }
    expect(streamed).toEqual(['CHILD_ADDED', 'CHILD_UPDATED', 'CHILD_REMOVED', 'CHILD_ADDED']);
    expect(cache.get('/app/sentinel')?.stat.numChildren).toBe(0);
  });

  it('a child deleted and created again is CHILD_REMOVED then CHILD_ADDED, also when both happen in one multi', async () => {
    const zk = await space.client();
    const other = await space.client();
    await other.create('/app', '');
    await other.create('/app/x', 'x1');
    await using cache = await PathChildrenCache.open(zk, '/app', { mode: 'BUILD_INITIAL_CACHE' });
    const rec = record(cache);
    await other.delete('/app/x');
    await rec.untilLine('CHILD_REMOVED x x1');
    await other.create('/app/x', 'x2');
    await rec.untilLine('CHILD_ADDED x x2');
    await other.transaction().delete('/app/x').create('/app/x', 'x3').commit();
    await rec.untilLine('CHILD_ADDED x x3');
    expect(rec.lines()).toEqual(['CHILD_REMOVED x x1', 'CHILD_ADDED x x2', 'CHILD_REMOVED x x2', 'CHILD_ADDED x x3']);
    expect(view(cache)).toEqual({ x: 'x3' });
  });

  it('a parent that does not exist yet: empty, then its children as they come; deleting it removes them', async () => {
    const zk = await space.client();
    const other = await space.client();
    await using cache = await PathChildrenCache.open(zk, '/later', { mode: 'POST_INITIALIZED_EVENT' });
    const rec = record(cache);
    expect(cache.currentData()).toEqual([]);
    await other.create('/later', '');
    await other.create('/later/k', 'k');
    await rec.untilLine('CHILD_ADDED k k');
    await other.deleteRecursive('/later');
    await rec.untilLine('CHILD_REMOVED k k');
    expect(cache.currentData()).toEqual([]);
    expect(rec.lines()).toEqual(['CHILD_ADDED k k', 'CHILD_REMOVED k k']);
  });

  it('cacheData false: events and snapshot carry the Stat and no data; an update is still reported', async () => {
    const zk = await space.client();
    await zk.create('/app', '');
    await zk.create('/app/a', 'A');
    await using cache = await PathChildrenCache.open(zk, '/app', { cacheData: false, mode: 'BUILD_INITIAL_CACHE' });
    const rec = record(cache);
    expect(cache.get('/app/a')?.data).toBeUndefined();
    expect(cache.get('/app/a')?.stat.dataLength).toBe(1);
    await zk.setData('/app/a', 'AA');
    await rec.untilLine('CHILD_UPDATED a -');
    expect(cache.get('/app/a')?.stat.dataLength).toBe(2);
  });
});

describe.skipIf(isZooKeeper34())('path children cache - outages, expiry, close, bad input', () => {
  let proxy: TcpProxy;
  beforeEach(async () => {
    proxy = await proxyToServer();
  });
  afterEach(async () => {
    await proxy.close();
  });
  const viaProxy = (sessionTimeout = 10_000) => ZooKeeper.connect(`${proxy.connectString}${space.root}`, { sessionTimeout, connectTimeout: 2000 });

  it('changes made during a disconnection: CONNECTION_SUSPENDED, then CONNECTION_RECONNECTED and each change once, then nothing more', async () => {
    const other = await space.client();
    await other.create('/app', '');
    for (const n of ['same', 'edit', 'gone', 'swap']) await other.create(`/app/${n}`, n);
    await using zk = await viaProxy();
    await using cache = await PathChildrenCache.open(zk, '/app', { mode: 'BUILD_INITIAL_CACHE' });
    const rec = record(cache);
    proxy.block();
    await rec.untilLine('CONNECTION_SUSPENDED');
    await other.setData('/app/edit', 'edit2');
    await other.setData('/app/edit', 'edit3');
    await other.delete('/app/gone');
    await other.delete('/app/swap');
    await other.create('/app/swap', 'swap2');
    await other.create('/app/new', 'new');
    await other.create('/app/tmp', 'tmp');
    await other.delete('/app/tmp');
    expect(rec.lines()).toEqual(['CONNECTION_SUSPENDED']);
    proxy.unblock();
    await waitForState(zk, 'connected');
    await rec.untilLine('CHILD_ADDED new new');
    await rec.untilLine('CHILD_ADDED swap swap2');
    await waitForSynced(cache);
    await other.setData('/app/same', 'same2'); // a sentinel: after it, nothing else from the outage may come
    const last = await rec.untilLine('CHILD_UPDATED same same2');
    const lines = rec.lines();
    expect(lines.slice(0, 2)).toEqual(['CONNECTION_SUSPENDED', 'CONNECTION_RECONNECTED']);
    expect(lines.slice(2, last).sort()).toEqual(['CHILD_ADDED new new', 'CHILD_ADDED swap swap2', 'CHILD_REMOVED gone gone', 'CHILD_REMOVED swap swap', 'CHILD_UPDATED edit edit3'].sort());
    expect(lines.indexOf('CHILD_REMOVED swap swap')).toBeLessThan(lines.indexOf('CHILD_ADDED swap swap2'));
    expect(last).toBe(lines.length - 1);
    expect(view(cache)).toEqual(await serverView(other, '/app'));
  });

  it('session expiry: CONNECTION_LOST, then done and the streams fail with SessionExpiredError; no watch left', async () => {
    const zk = await space.client({ sessionTimeout: 4000 });
    await zk.create('/app', '');
    const cache = await PathChildrenCache.open(zk, '/app');
    const rec = record(cache);
    const stream = cache.events();
    const drained = (async () => {
      for await (const _ of stream) {
        // events until the end
      }
    })();
    // The stream may fail while the expiry is still being made: handled now, checked below (in CI
    // at 3cb7d83 its rejection came before the check below was attached, and vitest failed the run).
    drained.catch(() => undefined);
    await space.expire(zk);
    await expect(cache.done).rejects.toBeInstanceOf(SessionExpiredError);
    await expect(drained).rejects.toBeInstanceOf(SessionExpiredError);
    expect(rec.lines().at(-1)).toBe('CONNECTION_LOST');
    expect(rec.lines().filter((l) => l === 'CONNECTION_LOST')).toHaveLength(1);
    expect(zk.watchCount).toBe(0);
    await cache.close();
  });

  it('close removes the watch on the server and in the client; a closed cache reports nothing more', async () => {
    const zk = await space.client();
    const other = await space.client();
    await zk.create('/app', '');
    const cache = await PathChildrenCache.open(zk, '/app');
    const rec = record(cache);
    expect(await zk.checkWatches('/app')).toBe(true); // control: there while open
    const stream = cache.events();
    await cache.close();
    expect(zk.watchCount).toBe(0);
    expect(await zk.checkWatches('/app')).toBe(false);
    expect(await stream.next()).toEqual({ value: undefined, done: true });
    await expect(cache.done).resolves.toBeUndefined();
    await other.create('/app/after', '');
    await other.create('/app/sentinel', '');
    expect(rec.events).toEqual([]);
    await expect(cache.start()).rejects.toThrow(/only once/);
  });

  it('a start that cannot finish: timeout and abort reject it and leave no watch; a later abort closes a started cache', async () => {
    await using zk = await viaProxy();
    await zk.create('/app', '');
    proxy.pause(); // a network that stalls: the requests wait, the session stays
    const timed = new PathChildrenCache(zk, '/app');
    await expect(timed.start({ timeout: 200 })).rejects.toBeInstanceOf(RequestTimeoutError);
    await expect(timed.done).rejects.toBeInstanceOf(RequestTimeoutError);
    const ac = new AbortController();
    const aborted = new PathChildrenCache(zk, '/app').start({ signal: ac.signal });
    setTimeout(() => ac.abort(new Error('stop')), 50);
    await expect(aborted).rejects.toThrow('stop');
    proxy.resume();
    // The requests sent before the deadline still reach the server: the watch they register is
    // removed once they complete (polled: nothing reports it).
    await waitFor('the late watches removed', async () => (zk.watchCount === 0 && !(await zk.checkWatches('/app')) ? true : undefined), timing(10_000), 20);
    const later = new AbortController();
    const cache = await PathChildrenCache.open(zk, '/app', { signal: later.signal });
    expect(zk.watchCount).toBe(1);
    later.abort();
    await cache.done;
    expect(zk.watchCount).toBe(0);
    expect(await zk.checkWatches('/app')).toBe(false);
  });

  it('bad input gets an InvalidArgumentError before any byte is sent', async () => {
    const zk = await space.client();
    let sent = 0;
    const count = () => sent++;
    subscribe(ChannelName.requestStart, count);
    try {
      expect(() => new PathChildrenCache(zk, 'relative')).toThrow(InvalidArgumentError);
      expect(() => new PathChildrenCache(zk, '/a/')).toThrow(InvalidArgumentError);
      expect(() => new PathChildrenCache({} as ZooKeeper, '/a')).toThrow(InvalidArgumentError);
      expect(() => new PathChildrenCache(zk, '/a', { cacheData: 'yes' as never })).toThrow(InvalidArgumentError);
      await expect(new PathChildrenCache(zk, '/a').start({ mode: 'EAGER' as never })).rejects.toBeInstanceOf(InvalidArgumentError);
      await expect(new PathChildrenCache(zk, '/a').start({ timeout: -1 })).rejects.toBeInstanceOf(InvalidArgumentError);
      await expect(new PathChildrenCache(zk, '/a').start({ signal: 'no' as never })).rejects.toBeInstanceOf(InvalidArgumentError);
      await expect(new PathChildrenCache(zk, '/a').start({ signal: AbortSignal.abort() })).rejects.toThrow();
      expect(() => new PathChildrenCache(zk, '/a').onEvent('no' as never)).toThrow(InvalidArgumentError);
    } finally {
      unsubscribe(ChannelName.requestStart, count);
    }
    expect(sent).toBe(0);
    expect(zk.watchCount).toBe(0);
  });
});

describe.runIf(isZooKeeper34())('path children cache - on ZooKeeper 3.4 (no persistent watches)', () => {
  it('start rejects with the server\'s typed UNIMPLEMENTED error naming 3.6, and leaves no watch', async () => {
    const zk = await space.client();
    await zk.create('/app', '');
    const cache = new PathChildrenCache(zk, '/app');
    await expect(cache.start()).rejects.toMatchObject({ name: 'UnimplementedError', message: expect.stringMatching(/3\.6/) });
    await expect(cache.done).rejects.toMatchObject({ name: 'UnimplementedError' });
    const node = new NodeCache(zk, '/app');
    await expect(node.start()).rejects.toMatchObject({ name: 'UnimplementedError' });
    expect(zk.watchCount).toBe(0);
  });
});

/** Resolves once the cache is current again (it re-reads after a reconnect). */
async function waitForSynced(cache: PathChildrenCache): Promise<void> {
  await waitFor('the cache to resync', () => (cache.synced ? true : undefined), timing(10_000), 5);
}

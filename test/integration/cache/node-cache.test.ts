/**
 * NodeCache against the real server: created/changed/deleted in order, a node deleted and created
 * again, buildInitial, a change made during a disconnection reported once after
 * CONNECTION_RECONNECTED, close leaving no watch, bad input refused before any byte; and the
 * TreeCache's `maxDepth` both caches are built on.
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ChannelName, InvalidArgumentError, NodeCache, TreeCache, ZooKeeper, type TreeCacheEvent } from '@zk/protocol';
import { isZooKeeper34, timing, waitFor, waitForState, zookeeperLine } from '../../harness/index.js';
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

describe.skipIf(isZooKeeper34())('node cache', () => {
  it('buildInitial loads the node silently; without it the node is reported as created', async () => {
    const zk = await space.client();
    await zk.create('/cfg', 'v1');
    const silent = new NodeCache(zk, '/cfg');
    const quiet = record(silent);
    await silent.start({ buildInitial: true });
    expect(silent.currentData()?.data?.toString()).toBe('v1');
    expect(silent.currentData()?.stat.version).toBe(0);
    const loud = new NodeCache(zk, '/cfg');
    const told = record(loud);
    await loud.start();
    expect(told.lines()).toEqual(['created v1']);
    expect(quiet.lines()).toEqual([]);
    await silent.close();
    await loud.close();
    // absent at the start: nothing to report, currentData undefined
    await using absent = await NodeCache.open(zk, '/none');
    expect(absent.currentData()).toBeUndefined();
    expect(zk.watchCount).toBe(1);
  });

  it('another client\'s create, updates and delete come in order; its children and a re-created node too', async () => {
    const zk = await space.client();
    const other = await space.client();
    await using cache = await NodeCache.open(zk, '/cfg', { buildInitial: true });
    const rec = record(cache);
    const stream = cache.events();
    await other.create('/cfg', 'a');
    await rec.untilLine('created a');
    await other.setData('/cfg', 'b');
    await rec.untilLine('changed b');
    await other.create('/cfg/child', 'not the node');
    await other.setData('/cfg/child', 'still not');
    await other.delete('/cfg/child');
    await other.setData('/cfg', 'c');
    await rec.untilLine('changed c');
    await other.delete('/cfg');
    await rec.untilLine('deleted c');
    expect(cache.currentData()).toBeUndefined();
    await other.create('/cfg', 'd');
    await rec.untilLine('created d');
    await other.transaction().delete('/cfg').create('/cfg', 'e').commit(); // replaced at once: its czxid tells
    await rec.untilLine('created e');
    expect(rec.lines()).toEqual(['created a', 'changed b', 'changed c', 'deleted c', 'created d', 'deleted d', 'created e']);
    const changed = rec.events[1];
    expect(changed?.type === 'changed' && changed.previous.data?.toString()).toBe('a');
    const first = await stream.next();
    expect(first.value?.type).toBe('created');
    await stream.return?.();
    expect(cache.currentData()?.data?.toString()).toBe('e');
  });

  it('a change made during a disconnection: CONNECTION_SUSPENDED, CONNECTION_RECONNECTED, then the change once', async () => {
    const proxy = await proxyToServer();
    try {
      const other = await space.client();
      await other.create('/cfg', 'v1');
      await using zk = await ZooKeeper.connect(`${proxy.connectString}${space.root}`, { sessionTimeout: 10_000, connectTimeout: 2000 });
      await using cache = await NodeCache.open(zk, '/cfg', { buildInitial: true });
      const rec = record(cache);
      proxy.block();
      await rec.untilLine('CONNECTION_SUSPENDED');
      await other.setData('/cfg', 'v2');
      await other.setData('/cfg', 'v3');
      proxy.unblock();
      await waitForState(zk, 'connected');
      await rec.untilLine('changed v3');
      await waitFor('the cache to resync', () => (cache.synced ? true : undefined), timing(10_000), 5);
      await other.setData('/cfg', 'v4');
      await rec.untilLine('changed v4');
      expect(rec.lines()).toEqual(['CONNECTION_SUSPENDED', 'CONNECTION_RECONNECTED', 'changed v3', 'changed v4']);
    } finally {
      await proxy.close();
    }
  });

  it('close removes the watch on the server and in the client; bad input gets an InvalidArgumentError before any byte', async () => {
    const zk = await space.client();
    await zk.create('/cfg', '');
    const cache = await NodeCache.open(zk, '/cfg');
    expect(await zk.checkWatches('/cfg')).toBe(true);
    await cache.close();
    expect(zk.watchCount).toBe(0);
    expect(await zk.checkWatches('/cfg')).toBe(false);
    let sent = 0;
    const count = () => sent++;
    subscribe(ChannelName.requestStart, count);
    try {
      expect(() => new NodeCache(zk, 'cfg')).toThrow(InvalidArgumentError);
      expect(() => new NodeCache(null as never, '/cfg')).toThrow(InvalidArgumentError);
      await expect(new NodeCache(zk, '/cfg').start({ buildInitial: 1 as never })).rejects.toBeInstanceOf(InvalidArgumentError);
      await expect(new NodeCache(zk, '/cfg').start({ timeout: Number.NaN })).rejects.toBeInstanceOf(InvalidArgumentError);
      await expect(TreeCache.open(zk, '/cfg', { maxDepth: -1 })).rejects.toBeInstanceOf(InvalidArgumentError);
      await expect(TreeCache.open(zk, '/cfg', { maxDepth: 1.5 })).rejects.toBeInstanceOf(InvalidArgumentError);
    } finally {
      unsubscribe(ChannelName.requestStart, count);
    }
    expect(sent).toBe(0);
  });
});

describe.skipIf(isZooKeeper34())('tree cache - maxDepth (the hook the node caches use)', () => {
  it('maxDepth 1 caches the node and its children, and reports nothing deeper; maxDepth 0 the node alone, on a non-recursive watch', async () => {
    const zk = await space.client();
    const other = await space.client();
    await other.create('/app', 'r');
    await other.create('/app/a', 'A');
    await other.create('/app/a/deep', 'D');
    const one = await TreeCache.open(zk, '/app', { maxDepth: 1 });
    const zero = await TreeCache.open(zk, '/app', { maxDepth: 0 });
    const whole = await TreeCache.open(zk, '/app'); // the control: the default caches every level
    expect([...one.nodes()].map((n) => n.path)).toEqual(['/app', '/app/a']);
    expect([...zero.nodes()].map((n) => n.path)).toEqual(['/app']);
    expect(whole.size).toBe(3);
    const seen = { one: [] as string[], zero: [] as string[], whole: [] as string[] };
    const line = (e: TreeCacheEvent) => ('path' in e ? `${e.type} ${e.path}` : e.type);
    one.onEvent((e) => seen.one.push(line(e)));
    zero.onEvent((e) => seen.zero.push(line(e)));
    whole.onEvent((e) => seen.whole.push(line(e)));
    await other.setData('/app/a/deep', 'D2');
    await other.create('/app/a/deep/deeper', '');
    await other.create('/app/b', 'B');
    await other.setData('/app', 'r2');
    await waitFor('the sentinel', () => (one.get('/app')?.data.toString() === 'r2' && zero.get('/app')?.data.toString() === 'r2' && whole.get('/app')?.data.toString() === 'r2' ? true : undefined), timing(10_000), 5);
    // (sorted: events that arrive together are read parents first, so their order may vary)
    expect(seen.one.sort()).toEqual(['changed /app', 'created /app/b']);
    expect(seen.zero).toEqual(['changed /app']);
    expect(seen.whole.sort()).toEqual(['changed /app', 'changed /app/a/deep', 'created /app/a/deep/deeper', 'created /app/b']);
    // One persistent mode beside the other is asked by its mode on 3.9; a 3.8 server cannot answer that.
    expect(await zk.checkWatches('/app', { kind: zookeeperLine() === '3.9' ? 'persistent' : 'any' })).toBe(true);
    await Promise.all([one.close(), zero.close(), whole.close()]);
    expect(zk.watchCount).toBe(0);
  });
});

import { describe, expect, it } from 'vitest';
import { InvalidArgumentError, NoNodeError, RequestTimeoutError, SessionExpiredError } from '../errors.js';
import type { MultiReadOp, MultiReadResult } from '../client/transaction.js';
import type { SessionState } from '../session/session.js';
import type { Stat } from '../jute/data.js';
import type { WatchListener } from '../session/watches.js';
import type { ZooKeeper } from '../client/zookeeper.js';
import { NodeCache } from './node-cache.js';
import { PathChildrenCache, type PathChildrenCacheEvent } from './path-children-cache.js';

/**
 * An in-memory ZooKeeper with what the caches use: persistent watches (events sent by the test),
 * getData / multiRead answered from a tree, state changes. Counts every call, so that a test can
 * say nothing was sent.
 */
function fakeZk(initial: Record<string, string>) {
  const tree = new Map(Object.entries(initial));
  let zxid = 1n;
  const stats = new Map<string, Stat>();
  const statOf = (path: string): Stat => {
    let s = stats.get(path);
    if (!s) stats.set(path, (s = { czxid: zxid, mzxid: zxid++, ctime: 0, mtime: 0, version: 0, cversion: 0, aversion: 0, ephemeralOwner: 0n, dataLength: 0, numChildren: 0, pzxid: 0n }));
    return s;
  };
  const kids = (path: string) => [...tree.keys()].filter((p) => p.startsWith(`${path}/`) && !p.slice(path.length + 1).includes('/')).map((p) => p.slice(path.length + 1));
  const read = (op: MultiReadOp): MultiReadResult => {
    const data = tree.get(op.path);
    if (data === undefined) return { type: 'error', path: op.path, error: new NoNodeError(undefined, { path: op.path }) };
    return op.type === 'getData' ? { type: 'getData', path: op.path, data: Buffer.from(data), stat: { ...statOf(op.path), dataLength: data.length } } : { type: 'getChildren', path: op.path, children: kids(op.path) };
  };
  const watches = new Map<string, WatchListener>();
  const states = new Set<(s: SessionState) => void>();
  let calls = 0;
  let stall = false;
  const zk = {
    state: 'connected' as SessionState,
    get watchCount() {
      return watches.size;
    },
    onStateChange(l: (s: SessionState) => void) {
      states.add(l);
      return () => states.delete(l);
    },
    async addWatch(path: string, listener: WatchListener) {
      calls++;
      if (stall) await new Promise(() => undefined);
      watches.set(path, listener);
      return async () => void watches.delete(path);
    },
    async removeWatches(path: string) {
      watches.delete(path);
    },
    async getData(path: string) {
      calls++;
      const r = read({ type: 'getData', path });
      if (r.type === 'error') throw r.error;
      return r as { data: Buffer; stat: Stat };
    },
    async multiRead(ops: readonly MultiReadOp[]) {
      calls++;
      return ops.map(read);
    },
  };
  return {
    zk: zk as unknown as ZooKeeper,
    get calls() {
      return calls;
    },
    get watchCount() {
      return watches.size;
    },
    stall() {
      stall = true;
    },
    set(path: string, data: string) {
      const created = !tree.has(path);
      tree.set(path, data);
      if (created) stats.delete(path);
      else stats.set(path, { ...statOf(path), mzxid: zxid++, version: statOf(path).version + 1 });
      for (const [root, l] of watches) if (path === root || path.startsWith(`${root}/`)) l({ type: created ? 'NodeCreated' : 'NodeDataChanged', path });
    },
    remove(path: string) {
      tree.delete(path);
      stats.delete(path);
      for (const [root, l] of watches) if (path === root || path.startsWith(`${root}/`)) l({ type: 'NodeDeleted', path });
    },
    state(s: SessionState) {
      zk.state = s;
      for (const l of [...states]) l(s);
      if (s === 'expired') for (const l of watches.values()) l({ type: 'SessionExpired', path: '' });
    },
  };
}

const settle = () => new Promise((r) => setTimeout(r, 0));
const line = (e: PathChildrenCacheEvent) => (e.type === 'INITIALIZED' ? `INITIALIZED ${e.initialData.length}` : 'data' in e ? `${e.type} ${e.path} ${e.data.data?.toString() ?? '-'}` : e.type);

describe('path children cache - start modes and events (fake client)', () => {
  it.each([
    ['NORMAL', ['CHILD_ADDED /p/a A', 'CHILD_ADDED /p/b B']],
    ['POST_INITIALIZED_EVENT', ['CHILD_ADDED /p/a A', 'CHILD_ADDED /p/b B', 'INITIALIZED 2']],
    ['BUILD_INITIAL_CACHE', []],
  ] as const)('%s reports %j for the initial children', async (mode, expected) => {
    const f = fakeZk({ '/p': '', '/p/a': 'A', '/p/b': 'B', '/p/a/deep': 'D' });
    const cache = new PathChildrenCache(f.zk, '/p');
    const seen: string[] = [];
    cache.onEvent((e) => seen.push(line(e)));
    await cache.start({ mode });
    expect([...seen].sort()).toEqual([...expected].sort());
    if (mode === 'POST_INITIALIZED_EVENT') expect(seen.at(-1)).toBe('INITIALIZED 2');
    expect(cache.currentData().map((c) => c.path)).toEqual(['/p/a', '/p/b']);
    await cache.close();
    expect(f.watchCount).toBe(0);
  });

  it('connection events: each state once per outage, RECONNECTED only after one, LOST on expiry then the end', async () => {
    const f = fakeZk({ '/p': '' });
    const cache = await PathChildrenCache.open(f.zk, '/p', { cacheData: false });
    const seen: string[] = [];
    cache.onEvent((e) => seen.push(line(e)));
    f.state('connected'); // not an outage: nothing
    f.state('suspended');
    f.state('suspended');
    f.state('lost');
    f.set('/p/x', 'X'); // an event during the outage is left to the re-read
    f.state('connected');
    await settle();
    f.state('suspended');
    f.state('expired');
    await expect(cache.done).rejects.toBeInstanceOf(SessionExpiredError);
    expect(seen).toEqual(['CONNECTION_SUSPENDED', 'CONNECTION_LOST', 'CONNECTION_RECONNECTED', 'CHILD_ADDED /p/x -', 'CONNECTION_SUSPENDED', 'CONNECTION_LOST']);
    expect(f.watchCount).toBe(0);
  });

  it('a child updated, deleted, created again; the parent itself and grandchildren are not children', async () => {
    const f = fakeZk({ '/p': '', '/p/a': 'A' });
    const cache = await PathChildrenCache.open(f.zk, '/p', { mode: 'BUILD_INITIAL_CACHE' });
    const seen: string[] = [];
    cache.onEvent((e) => seen.push(line(e)));
    f.set('/p/a', 'A2');
    await settle();
    f.set('/p', 'parent');
    f.set('/p/a/deep', 'D');
    await settle();
    f.remove('/p/a');
    await settle();
    f.set('/p/a', 'A3');
    await settle();
    expect(seen).toEqual(['CHILD_UPDATED /p/a A2', 'CHILD_REMOVED /p/a A2', 'CHILD_ADDED /p/a A3']);
    expect(cache.get('/p/a')?.data?.toString()).toBe('A3');
    await cache.close();
  });
});

describe('node caches - bad input, timeout, close (fake client)', () => {
  it('refuses bad input with an InvalidArgumentError before any call', async () => {
    const f = fakeZk({});
    expect(() => new PathChildrenCache(f.zk, 'p')).toThrow(InvalidArgumentError);
    expect(() => new PathChildrenCache({} as ZooKeeper, '/p')).toThrow(InvalidArgumentError);
    expect(() => new PathChildrenCache(f.zk, '/p', { cacheData: 1 as never })).toThrow(InvalidArgumentError);
    expect(() => new NodeCache(f.zk, '/p/')).toThrow(InvalidArgumentError);
    await expect(new PathChildrenCache(f.zk, '/p').start({ mode: 'LAZY' as never })).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(new PathChildrenCache(f.zk, '/p').start({ timeout: -5 })).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(new PathChildrenCache(f.zk, '/p').start(null as never)).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(new NodeCache(f.zk, '/p').start({ buildInitial: 'yes' as never })).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(new NodeCache(f.zk, '/p').start({ signal: AbortSignal.abort() })).rejects.toThrow();
    expect(f.calls).toBe(0);
  });

  it('a start past its timeout rejects with RequestTimeoutError and ends the cache; a second start is refused', async () => {
    const f = fakeZk({ '/n': 'v' });
    f.stall();
    const cache = new NodeCache(f.zk, '/n');
    await expect(cache.start({ timeout: 20 })).rejects.toBeInstanceOf(RequestTimeoutError);
    await expect(cache.done).rejects.toBeInstanceOf(RequestTimeoutError);
    await expect(cache.start()).rejects.toBeInstanceOf(InvalidArgumentError);
    const events: string[] = [];
    const stream = cache.events();
    await expect(stream.next()).rejects.toBeInstanceOf(RequestTimeoutError);
    expect(events).toEqual([]);
  });

  it('NodeCache: created without buildInitial, then changed and deleted with their previous data', async () => {
    const f = fakeZk({ '/n': 'v1' });
    const cache = new NodeCache(f.zk, '/n');
    const seen: string[] = [];
    cache.onEvent((e) => seen.push(e.type === 'created' ? `created ${e.data.data}` : e.type === 'changed' ? `changed ${e.previous.data}->${e.data.data}` : e.type === 'deleted' ? `deleted ${e.previous.data}` : e.type));
    await cache.start();
    f.set('/n', 'v2');
    await settle();
    f.remove('/n');
    await settle();
    expect(seen).toEqual(['created v1', 'changed v1->v2', 'deleted v2']);
    expect(cache.currentData()).toBeUndefined();
    await cache[Symbol.asyncDispose]();
    expect(f.watchCount).toBe(0);
  });
});

/**
 * PathChildrenCache under another client's continuous writes with outages in the middle: after
 * each reconnect the cache equals the server, and its events, replayed onto the initial view, give
 * the final view with no impossible step (a child added twice, removed while absent, updated from
 * a state not held or to data that is not newer). The replay check has its own negative control.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { PathChildrenCache, ZooKeeper, type PathChildrenCacheEvent } from '@zk/protocol';
import { isZooKeeper34, timing, waitFor, waitForState, type TcpProxy } from '../../harness/index.js';
import { proxyToServer, TestSpace } from '../../harness/fixtures.js';

let space: TestSpace;
let proxy: TcpProxy;

beforeEach(async () => {
  space = new TestSpace();
  await space.admin();
  proxy = await proxyToServer();
});

afterEach(async () => {
  await proxy.close();
  expect((await space.close()).leakedWatches).toBe(0);
});

/** Replays child events onto a view (name -> [data, mzxid]) and notes each one that cannot follow from the view before it. */
class Replay {
  readonly view: Map<string, { data: string; mzxid: bigint }>;
  readonly problems: string[] = [];
  constructor(initial: PathChildrenCache) {
    this.view = new Map(initial.currentData().map((c) => [c.path, { data: c.data?.toString() ?? '', mzxid: c.stat.mzxid }]));
  }
  apply(e: PathChildrenCacheEvent): void {
    if (e.type !== 'CHILD_ADDED' && e.type !== 'CHILD_UPDATED' && e.type !== 'CHILD_REMOVED') return;
    const held = this.view.get(e.path);
    if (e.type === 'CHILD_ADDED' && held) this.problems.push(`added twice: ${e.path}`);
    if (e.type === 'CHILD_REMOVED' && !held) this.problems.push(`removed while absent: ${e.path}`);
    if (e.type === 'CHILD_UPDATED' && (!held || e.data.stat.mzxid <= held.mzxid)) this.problems.push(`update not following: ${e.path}`);
    if (e.type === 'CHILD_REMOVED') this.view.delete(e.path);
    else this.view.set(e.path, { data: e.data.data?.toString() ?? '', mzxid: e.data.stat.mzxid });
  }
  /** The view as path -> data. */
  data(): Map<string, string> {
    return new Map([...this.view].map(([p, v]) => [p, v.data]));
  }
}

/** Another client's creates, writes and deletes on 19 children of /app (one grandchild each, sometimes), until stopped. */
function writes(writer: ZooKeeper) {
  let stopped = false;
  let ops = 0;
  const done = (async () => {
    for (let i = 0; !stopped && ops < 20_000; i++) {
      const p = `/app/c${(i * 7) % 19}`; // 19 children: each gets every kind of step
      const step = [() => writer.setData(p, `v${i}`), () => writer.create(p, `c${i}`), () => writer.create(`${p}/g`, ''), async () => (await writer.delete(`${p}/g`).catch(() => undefined), await writer.delete(p))][i % 4]!;
      await Promise.resolve(step()).catch(() => undefined); // NoNode / NodeExists: the op did nothing
      ops++;
    }
  })();
  return {
    get ops() {
      return ops;
    },
    stop: async () => {
      stopped = true;
      await done;
    },
  };
}

async function serverView(zk: ZooKeeper): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const name of await zk.getChildren('/app')) out.set(`/app/${name}`, (await zk.getData(`/app/${name}`).catch(() => ({ data: Buffer.from('?') }))).data.toString());
  return out;
}

describe.skipIf(isZooKeeper34())('path children cache - outages in the middle of another client\'s writes', () => {
  it('the replay check flags an event that cannot follow (its negative control)', () => {
    const fake = { currentData: () => [{ path: '/app/a', data: Buffer.from('1'), stat: { mzxid: 5n } }] } as unknown as PathChildrenCache;
    const r = new Replay(fake);
    const child = (data: string, mzxid: bigint) => ({ path: '/app/a', data: Buffer.from(data), stat: { mzxid } }) as never;
    r.apply({ type: 'CHILD_ADDED', path: '/app/a', data: child('2', 6n) });
    r.apply({ type: 'CHILD_UPDATED', path: '/app/a', data: child('3', 6n) });
    r.apply({ type: 'CHILD_REMOVED', path: '/app/a', data: child('3', 6n) });
    r.apply({ type: 'CHILD_REMOVED', path: '/app/a', data: child('3', 6n) });
    expect(r.problems).toEqual(['added twice: /app/a', 'update not following: /app/a', 'removed while absent: /app/a']);
  });

  it('3 outages while another client writes: after each the cache equals the server, and the events replay to it', async () => {
    const writer = await space.client();
    await writer.create('/app', '');
    await using zk = await ZooKeeper.connect(`${proxy.connectString}${space.root}`, { sessionTimeout: 10_000, connectTimeout: 2000 });
    const load = writes(writer);
    await waitFor('some writes', () => (load.ops > 40 ? true : undefined), timing(10_000), 5);
    await using cache = await PathChildrenCache.open(zk, '/app', { mode: 'BUILD_INITIAL_CACHE' });
    const replay = new Replay(cache);
    let events = 0;
    let reconnects = 0;
    cache.onEvent((e) => {
      events++;
      if (e.type === 'CONNECTION_RECONNECTED') reconnects++;
      replay.apply(e);
    });
    for (let round = 0; round < 3; round++) {
      const before = load.ops;
      proxy.block();
      await waitForState(zk, 'suspended');
      await waitFor('writes while away', () => (load.ops > before + 30 ? true : undefined), timing(10_000), 5);
      proxy.unblock();
      await waitForState(zk, 'connected');
      await waitFor('the cache to resync', () => (cache.synced ? true : undefined), timing(10_000), 5);
    }
    // and a while connected, where each change is seen live (fewer coalesce)
    const live = { ops: load.ops, events };
    await waitFor('writes while connected', () => (load.ops > live.ops + 200 ? true : undefined), timing(10_000), 5);
    await load.stop();
    const liveEvents = events - live.events;
    await writer.create('/app/sentinel', 's');
    await waitFor('the sentinel', () => (cache.get('/app/sentinel') ? true : undefined), timing(10_000), 5);
    console.log(`path children cache churn: ${load.ops} writes, ${events} events (${liveEvents} in the connected phase of ${load.ops - live.ops} writes), ${reconnects} reconnects, ${cache.currentData().length} children at the end`);
    expect(liveEvents).toBeGreaterThan(50);
    expect(replay.problems).toEqual([]);
    const final = new Map(cache.currentData().map((c) => [c.path, c.data?.toString() ?? '']));
    expect(final).toEqual(await serverView(writer));
    expect(replay.data()).toEqual(final);
    expect(reconnects).toBe(3);
  }, 60_000);
});

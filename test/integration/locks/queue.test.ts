/**
 * Queue, PriorityQueue, DelayQueue and IdQueue (Curator's DistributedQueue family layouts)
 * against the real server: put/take order across sessions, priority order, delays honoured,
 * removal by id, safe mode (an item whose consumer's session ends mid-item goes to another
 * consumer exactly once), timeout and abort leaving no lock node, no watch and no lost item,
 * unreadable nodes, ACLs on every node, and bad input refused before anything is sent.
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ANYONE_ID_UNSAFE, ChannelName, InvalidArgumentError, Perm, type ZooKeeper } from '@zk/protocol';
import { DelayQueue, IdQueue, LeaseLostError, LockTimeoutError, PriorityQueue, Queue, QueueAbortedError, QueueItemError, QueueTimeoutError, encodeItems, jsonSerializer, stringSerializer } from '@zk/locks';
import { timing, waitFor } from '../../harness/index.js';
import { TestSpace } from '../../harness/fixtures.js';

let space: TestSpace;

beforeEach(() => {
  space = new TestSpace();
});

afterEach(async () => {
  expect((await space.close()).leakedWatches).toBe(0);
});

const strings = { serializer: stringSerializer };

describe('queue - DistributedQueue layout', () => {
  it('items come out in put order; nodes are persistent queue-<seq> holding ItemSerializer framing; putMulti is one node', async () => {
    const [producer, consumer] = await Promise.all([space.client(), space.client()]);
    const q = new Queue(producer, '/q/fifo', strings);
    for (let i = 0; i < 10; i++) await q.put(`item ${i}`);
    await q.putMulti(['m1', 'm2']);
    const names = await space.children('/q/fifo');
    expect(names).toHaveLength(11);
    expect(names.every((n) => /^queue-\d{10}$/.test(n))).toBe(true);
    const admin = await space.admin();
    const { data, stat } = await admin.getData(`${space.root}/q/fifo/${names[0]}`);
    expect(data.toString('hex')).toBe(encodeItems([Buffer.from('item 0')]).toString('hex'));
    expect(stat.ephemeralOwner).toBe(0n);
    const taken: string[] = [];
    const c = new Queue(consumer, '/q/fifo', strings);
    for (let i = 0; i < 10; i++) taken.push((await c.take({ timeout: 5_000 })).value);
    expect(taken).toEqual(Array.from({ length: 10 }, (_, i) => `item ${i}`));
    const multi = await c.take({ timeout: 0 });
    expect(multi.values).toEqual(['m1', 'm2']);
    expect(await space.children('/q/fifo')).toEqual([]);
  });

  it('a waiting consumer is woken by the put (no polling); 3 consumers x 60 items: each delivered once', async () => {
    const clients = await Promise.all(Array.from({ length: 4 }, () => space.client()));
    const [producer, ...consumers] = clients;
    const q = new Queue(producer!, '/q/many', strings);
    const controller = new AbortController();
    const got: string[][] = consumers.map(() => []);
    const loops = consumers.map(async (zk, i) => {
      try {
        for await (const item of new Queue(zk, '/q/many', strings).items({ signal: controller.signal })) got[i]!.push(item.value);
      } catch (err) {
        if (!(err instanceof QueueAbortedError)) throw err;
      }
    });
    for (const zk of consumers) await waitFor('consumer watch', () => (zk.watchCount > 0 ? true : undefined), 10_000, 5);
    for (let i = 0; i < 60; i++) await q.put(`n${i}`);
    await waitFor('all 60 taken', () => (got.flat().length === 60 ? true : undefined), 15_000, 10);
    controller.abort();
    await Promise.all(loops);
    expect(new Set(got.flat()).size).toBe(60);
    console.log(`queue: 60 items over 3 consumers: ${got.map((g) => g.length).join(' + ')}`);
  });

  it('an unreadable node (no ItemSerializer framing) is removed and reported with its bytes (QueueItemError)', async () => {
    const zk = await space.client();
    const q = new Queue(zk, '/q/bad', strings);
    await zk.create('/q/bad/queue-', Buffer.from('raw payload'), { mode: 2, parents: true });
    const err = await q.take({ timeout: 1_000 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(QueueItemError);
    expect(Buffer.from((err as QueueItemError).data).toString()).toBe('raw payload');
    expect(await space.children('/q/bad')).toEqual([]);
  });
});

describe('queue - priority, delay, id', () => {
  it('PriorityQueue: lowest priority value first, equal priorities in put order, across int range', async () => {
    const zk = await space.client();
    const q = new PriorityQueue(zk, '/q/prio', strings);
    const puts: [string, number][] = [['c', 5], ['a', -7], ['d', 5], ['e', 2 ** 31 - 1], ['b', 0], ['z', -(2 ** 31)]];
    for (const [v, p] of puts) await q.put(v, p);
    const names = await space.children('/q/prio');
    expect(names).toContain(names.find((n) => n.startsWith('queue-10000000500')));
    const out: string[] = [];
    for (let i = 0; i < puts.length; i++) out.push((await q.take({ timeout: 0 })).value);
    expect(out).toEqual(['z', 'a', 'b', 'c', 'd', 'e']);
  });

  it('DelayQueue: an item is not taken before it is due; the consumer sleeps until then', async () => {
    const zk = await space.client();
    const q = new DelayQueue(zk, '/q/delay', strings);
    const due = Date.now() + 400;
    await q.put('later', due);
    await q.put('now', Date.now() - 1);
    expect((await q.take({ timeout: 0 })).value).toBe('now');
    await expect(q.take({ timeout: 0 })).rejects.toBeInstanceOf(QueueTimeoutError);
    const item = await q.take({ timeout: 5_000 });
    expect(item.value).toBe('later');
    expect(Date.now()).toBeGreaterThanOrEqual(due);
    expect((await space.children('/q/delay'))).toEqual([]);
  });

  it('IdQueue: remove by id (also ids with / and |), the rest in put order; safe mode does not remove a held item', async () => {
    const zk = await space.client();
    const q = new IdQueue(zk, '/q/ids', { serializer: jsonSerializer, lockPath: '/q/ids-locks' });
    await q.put({ n: 1 }, 'a');
    await q.put({ n: 2 }, 'b/x|y');
    await q.put({ n: 3 }, 'a');
    await q.put({ n: 4 }, 'c');
    expect((await space.children('/q/ids')).map((n) => n.slice(0, -10))).toEqual(['queue-|a|', 'queue-|a|', 'queue-|b_x_y|', 'queue-|c|']);
    expect(await q.has('b/x|y')).toBe(true);
    expect(await q.remove('b/x|y')).toBe(1);
    expect(await q.remove('nope')).toBe(0);
    const held = await q.take({ timeout: 0 });
    expect(held.value).toEqual({ n: 1 });
    expect(await q.remove('a')).toBe(1); // n: 3; n: 1 is held
    await held.complete();
    const last = await q.take({ timeout: 0 });
    expect(last.value).toEqual({ n: 4 });
    expect(await q.list()).toEqual(['queue-|c|0000000003']); // held until completed
    await last.complete();
    expect(await q.list()).toEqual([]);
    expect(await space.children('/q/ids-locks')).toEqual([]);
  });
});

describe('queue - safe mode (lockPath)', () => {
  it('a consumer whose session closes mid-item: the item goes to another consumer exactly once, then is deleted with its lock', async () => {
    const [producer, a, b] = await Promise.all([space.client(), space.client(), space.client()]);
    const opts = { ...strings, lockPath: '/q/safe-locks' };
    await new Queue(producer, '/q/safe', opts).put('job');
    const itemA = await new Queue(a, '/q/safe', opts).take({ timeout: 0 });
    const [name] = await space.children('/q/safe');
    expect(await space.children('/q/safe-locks')).toEqual([name]);
    const admin = await space.admin();
    expect((await admin.exists(`${space.root}/q/safe-locks/${name}`))!.ephemeralOwner).toBe(a.sessionId);
    // b waits: the item is held, and it is the only one.
    const qb = new Queue(b, '/q/safe', opts);
    await expect(qb.take({ timeout: 0 })).rejects.toBeInstanceOf(QueueTimeoutError);
    let taken = 0;
    const waiting = qb.take({ timeout: 10_000 }).then((item) => (taken++, item));
    await waitFor('b watching', () => (b.watchCount >= 2 ? true : undefined), 10_000, 5);
    expect(taken).toBe(0);
    await a.close(); // the consumer dies mid-item
    const itemB = await waiting;
    expect(itemB.value).toBe('job');
    expect(itemB.node).toBe(itemA.node);
    await expect(itemA.complete()).rejects.toBeInstanceOf(LeaseLostError); // a's completion is refused
    expect(await space.children('/q/safe')).toEqual([name]); // not deleted by a
    await itemB.complete();
    expect(await space.children('/q/safe')).toEqual([]);
    expect(await space.children('/q/safe-locks')).toEqual([]);
    await expect(qb.take({ timeout: 0 })).rejects.toBeInstanceOf(QueueTimeoutError);
    expect(taken).toBe(1);
  });

  it('a consumer whose session expires mid-item: redelivered once; the iterator completes on next() and releases on break', async () => {
    const [producer, a, b] = await Promise.all([space.client(), space.client(), space.client()]);
    const opts = { ...strings, lockPath: '/q/exp-locks' };
    const q = new Queue(producer, '/q/exp', opts);
    for (const v of ['1', '2', '3']) await q.put(v);
    const itA = new Queue(a, '/q/exp', opts).items();
    const first = (await itA.next()).value!;
    expect(first.value).toBe('1');
    await space.expire(a);
    const seen: string[] = [];
    for await (const item of new Queue(b, '/q/exp', opts).items()) {
      seen.push(item.value);
      if (seen.length === 3) break; // released, not completed
    }
    expect(seen).toEqual(['1', '2', '3']);
    expect((await space.children('/q/exp')).length).toBe(1); // '3' released by the break, still queued
    expect(await space.children('/q/exp-locks')).toEqual([]);
    await expect(itA.next()).rejects.toBeInstanceOf(LeaseLostError);
    expect((await new Queue(b, '/q/exp', opts).take({ timeout: 0 })).value).toBe('3');
  });

  // A consumer finds every item held (the lock create answers NodeExists) and then sets its watch
  // on the lock path. A lock deleted in between is never seen by that watch: the consumer must
  // read it off the listing the watch came with. The wrapped client opens that window on purpose:
  // before the watched listing of the lock path goes out, the holder's session is closed and the
  // consumer's own session sees its lock gone.
  it.each([
    ['Queue', (zk: ZooKeeper, o: SafeOptions) => new Queue(zk, '/q/gap', o), (q: AnyQueue) => (q as Queue<string>).put('job')],
    ['PriorityQueue', (zk: ZooKeeper, o: SafeOptions) => new PriorityQueue(zk, '/q/gap', o), (q: AnyQueue) => (q as PriorityQueue<string>).put('job', 3)],
    ['DelayQueue', (zk: ZooKeeper, o: SafeOptions) => new DelayQueue(zk, '/q/gap', o), (q: AnyQueue) => (q as DelayQueue<string>).put('job', Date.now() - 1)],
    ['IdQueue', (zk: ZooKeeper, o: SafeOptions) => new IdQueue(zk, '/q/gap', o), (q: AnyQueue) => (q as IdQueue<string>).put('job', 'id-1')],
  ] as const)('%s: a lock that goes after the consumer found the item held, before its lock-path watch is set, still lets the consumer take the item', async (_, make, put) => {
    const [producer, holder, consumer] = await Promise.all([space.client(), space.client(), space.client()]);
    const opts = { ...strings, lockPath: '/q/gap-locks' };
    await put(make(producer, opts));
    const held = await make(holder, opts).take({ timeout: 0 });
    const lockNode = `/q/gap-locks/${held.node.slice(held.node.lastIndexOf('/') + 1)}`;
    let paused = 0;
    const gap = beforeWatchedListing(consumer, '/q/gap-locks', async () => {
      paused++;
      await holder.close(); // the holder dies mid-item: its lock goes with its session
      await waitFor('the lock gone, seen by the consumer', async () => ((await consumer.exists(lockNode)) === null ? true : undefined), timing(10_000), 5);
    });
    const item = await make(gap, opts).take({ timeout: timing(5_000) });
    expect(paused).toBe(1);
    expect(item.value).toBe('job');
    expect(item.node).toBe(held.node);
    await item.complete();
    expect(await space.children('/q/gap')).toEqual([]);
    expect(await space.children('/q/gap-locks')).toEqual([]);
  });
});

type SafeOptions = { serializer: typeof stringSerializer; lockPath: string };
type AnyQueue = Queue<string> | PriorityQueue<string> | DelayQueue<string> | IdQueue<string>;

/**
 * `zk`, with `before()` run ahead of its first getChildren of `dir` that sets a watch (the
 * listing goes out once it has settled). A wrapped client, not a hook in the recipe.
 */
function beforeWatchedListing(zk: ZooKeeper, dir: string, before: () => Promise<void>): ZooKeeper {
  let done = false;
  return new Proxy(zk, {
    get(target, prop) {
      if (prop === 'getChildren') {
        return async (path: string, options?: { watch?: unknown }) => {
          if (path === dir && options?.watch !== undefined && !done) {
            done = true;
            await before();
          }
          return target.getChildren(path, options as Parameters<ZooKeeper['getChildren']>[1]);
        };
      }
      const value: unknown = Reflect.get(target, prop, target);
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}

describe('queue - timeout, abort, bad input, ACL', () => {
  it('timeout and abort: typed errors, no lock node, no watch, and the item is not lost', async () => {
    const [zk, other] = await Promise.all([space.client(), space.client()]);
    const opts = { ...strings, lockPath: '/q/t-locks' };
    const q = new Queue(zk, '/q/t', opts);
    const t0 = performance.now();
    const err = await q.take({ timeout: 150 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(QueueTimeoutError);
    expect(err).toBeInstanceOf(LockTimeoutError);
    expect(performance.now() - t0).toBeGreaterThanOrEqual(140);
    const controller = new AbortController();
    const aborted = q.take({ signal: controller.signal });
    await waitFor('watch', () => (zk.watchCount > 0 ? true : undefined), 10_000, 5);
    controller.abort(new Error('shutdown'));
    await expect(aborted).rejects.toMatchObject({ name: 'QueueAbortedError', cause: { message: 'shutdown' } });
    expect(zk.watchCount).toBe(0);
    // An item held by another consumer: timeout 0 rejects, no lock of ours left.
    await q.put('x');
    const held = await new Queue(other, '/q/t', opts).take({ timeout: 0 });
    await expect(q.take({ timeout: 0 })).rejects.toBeInstanceOf(QueueTimeoutError);
    expect(await space.children('/q/t-locks')).toHaveLength(1);
    await held.release();
    expect(await space.children('/q/t-locks')).toEqual([]);
    // An iterator ended by its signal releases the item of its turn.
    const c2 = new AbortController();
    const it = q.items({ signal: c2.signal });
    expect((await it.next()).value!.value).toBe('x');
    c2.abort();
    await expect(it.next()).rejects.toBeInstanceOf(QueueAbortedError); // completes 'x', then stops
    expect(await space.children('/q/t')).toEqual([]);
    await q.put('y');
    const it2 = q.items();
    expect((await it2.next()).value!.value).toBe('y');
    await it2[Symbol.asyncDispose]();
    expect(await space.children('/q/t')).toHaveLength(1); // released, not lost
    expect(await space.children('/q/t-locks')).toEqual([]);
    // A put aborted before it is sent sends nothing.
    await expect(q.put('z', { signal: AbortSignal.abort() })).rejects.toBeInstanceOf(QueueAbortedError);
    expect(await space.children('/q/t')).toHaveLength(1);
  });

  it('maxItems: a put waits for room (woken by a take), times out or aborts with a typed error and puts nothing', async () => {
    const [producer, consumer] = await Promise.all([space.client(), space.client()]);
    const q = new Queue(producer, '/q/max', { ...strings, maxItems: 2 });
    await q.put('a');
    await q.put('b');
    await expect(q.put('c', { timeout: 0 })).rejects.toMatchObject({ name: 'QueueTimeoutError', operation: 'put' });
    await expect(q.put('c', { timeout: 150 })).rejects.toBeInstanceOf(QueueTimeoutError);
    const controller = new AbortController();
    const aborted = q.put('c', { signal: controller.signal });
    await waitFor('the put watching', () => (producer.watchCount > 0 ? true : undefined), 10_000, 5);
    controller.abort();
    await expect(aborted).rejects.toMatchObject({ name: 'QueueAbortedError', operation: 'put' });
    expect(await space.children('/q/max')).toHaveLength(2);
    let put = false;
    const waiting = q.put('d').then(() => (put = true));
    await waitFor('the put watching', () => (producer.watchCount > 0 ? true : undefined), 10_000, 5);
    expect(put).toBe(false);
    expect((await new Queue(consumer, '/q/max', strings).take({ timeout: 0 })).value).toBe('a');
    await waiting;
    const c = new Queue(consumer, '/q/max', strings);
    expect([(await c.take({ timeout: 0 })).value, (await c.take({ timeout: 0 })).value]).toEqual(['b', 'd']);
  });

  it('bad input is refused with InvalidArgumentError before anything is sent', async () => {
    const zk = await space.client();
    const sent: unknown[] = [];
    const onStart = (m: unknown) => sent.push(m);
    subscribe(ChannelName.requestStart, onStart);
    try {
      for (const path of ['relative', '/a//b', '/a/', '']) expect(() => new Queue(zk, path)).toThrow(InvalidArgumentError);
      expect(() => new Queue(zk, '/q/x', { lockPath: '/q/x' })).toThrow(InvalidArgumentError);
      expect(() => new Queue(zk, '/q/x', { lockPath: '/q/x/locks' })).toThrow(InvalidArgumentError);
      expect(() => new Queue(zk, '/q/x', { serializer: {} as never })).toThrow(InvalidArgumentError);
      expect(() => new Queue(zk, '/q/x', { acl: [{ perms: 0, id: ANYONE_ID_UNSAFE }] })).toThrow(InvalidArgumentError);
      for (const maxItems of [0, -1, 1.5, '2']) expect(() => new Queue(zk, '/q/x', { maxItems: maxItems as number })).toThrow(InvalidArgumentError);
      const bytes = new Queue(zk, '/q/x');
      await expect(bytes.put('not bytes' as unknown as Uint8Array)).rejects.toBeInstanceOf(InvalidArgumentError);
      await expect(new Queue(zk, '/q/x', strings).putMulti([])).rejects.toBeInstanceOf(InvalidArgumentError);
      await expect(new Queue<unknown>(zk, '/q/x', { serializer: jsonSerializer }).put(undefined)).rejects.toBeInstanceOf(InvalidArgumentError);
      const prio = new PriorityQueue(zk, '/q/x', strings);
      for (const p of [1.5, 2 ** 31, Number.NaN, '1']) await expect(prio.put('a', p as number)).rejects.toBeInstanceOf(InvalidArgumentError);
      const delay = new DelayQueue(zk, '/q/x', strings);
      for (const d of [-1, 0, 1.5, Number.NaN, '5']) await expect(delay.put('a', d as number)).rejects.toBeInstanceOf(InvalidArgumentError);
      const ids = new IdQueue(zk, '/q/x', strings);
      for (const id of ['', 5, 'a\u0000b']) await expect(ids.put('a', id as string)).rejects.toBeInstanceOf(InvalidArgumentError);
      for (const timeout of [-1, Number.NaN, Number.POSITIVE_INFINITY, '5']) {
        await expect(bytes.take({ timeout: timeout as number })).rejects.toBeInstanceOf(InvalidArgumentError);
        await expect(bytes.put(new Uint8Array(1), { timeout: timeout as number })).rejects.toBeInstanceOf(InvalidArgumentError);
      }
      expect(() => bytes.items({ signal: 'no' as unknown as AbortSignal })).toThrow(InvalidArgumentError);
      await expect(bytes.take({ signal: AbortSignal.abort() })).rejects.toBeInstanceOf(QueueAbortedError);
    } finally {
      unsubscribe(ChannelName.requestStart, onStart);
    }
    expect(sent).toEqual([]);
  });

  it('the acl option is on every node: items, locks, the queue and lock paths and their container parents', async () => {
    const zk = await space.client();
    const acl = [{ perms: Perm.READ | Perm.WRITE | Perm.CREATE | Perm.DELETE, id: ANYONE_ID_UNSAFE }];
    const q = new Queue(zk, '/acl/q', { ...strings, lockPath: '/acl2/locks', acl });
    await q.put('a');
    const item = await q.take({ timeout: 0 });
    const [name] = await space.children('/acl/q');
    const admin = await space.admin();
    for (const p of ['/acl', '/acl/q', `/acl/q/${name}`, '/acl2', '/acl2/locks', `/acl2/locks/${name}`]) {
      expect((await admin.getACL(`${space.root}${p}`)).acl, p).toEqual(acl);
    }
    await item.complete();
  });
});

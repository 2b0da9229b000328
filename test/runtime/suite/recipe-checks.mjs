/**
 * The recipes, each with two or three clients contending as separate processes would: Mutex
 * (with reentrancy, which rides on AsyncLocalStorage), ReadWriteLock, LeaderLatch, Semaphore,
 * and @zk/protocol's TreeCache.
 */
import assert from 'node:assert/strict';
import { TreeCache } from '@zk/protocol';
import { LeaderLatch, LockTimeoutError, Mutex, ReadWriteLock, Semaphore } from '@zk/locks';

/** True when `promise` is still pending after `ms`. */
async function stillPending(promise, ms) {
  const pending = Symbol('pending');
  let timer;
  const result = await Promise.race([promise.then(() => 'settled', () => 'settled'), new Promise((r) => (timer = setTimeout(() => r(pending), ms)))]);
  clearTimeout(timer);
  return result === pending;
}

export const recipeChecks = [
  {
    name: 'Mutex: exclusive, fair hand-over with a growing fencing token, reentrant run()',
    async run(ctx) {
      const [a, b] = await Promise.all([ctx.client(), ctx.client()]);
      const first = await new Mutex(a, '/locks/m').acquire({ timeout: 10_000 });
      assert.equal(first.signal.aborted, false);
      assert.equal(await new Mutex(b, '/locks/m').tryAcquire(), undefined);
      await assert.rejects(new Mutex(b, '/locks/m').acquire({ timeout: 200 }), LockTimeoutError);
      const waiting = new Mutex(b, '/locks/m').acquire({ timeout: 10_000 });
      assert.ok(await stillPending(waiting, 200), 'the second client got the lock while the first held it');
      await first.release();
      assert.equal(first.signal.aborted, true);
      const second = await waiting;
      assert.ok(second.fencingToken > first.fencingToken);
      await second.release();
      const mutex = new Mutex(a, '/locks/m');
      const depth = await mutex.run(async () => mutex.run(async (inner) => (inner.held ? 2 : 0)));
      assert.equal(depth, 2);
    },
  },
  {
    name: 'ReadWriteLock: readers share, a writer waits for them',
    async run(ctx) {
      const [a, b, c] = await Promise.all([ctx.client(), ctx.client(), ctx.client()]);
      const r1 = await new ReadWriteLock(a, '/locks/rw').readLock().acquire({ timeout: 10_000 });
      const r2 = await new ReadWriteLock(b, '/locks/rw').readLock().acquire({ timeout: 10_000 });
      const writer = new ReadWriteLock(c, '/locks/rw').writeLock().acquire({ timeout: 10_000 });
      assert.ok(await stillPending(writer, 200), 'the writer got the lock while readers held it');
      await r1.release();
      assert.ok(await stillPending(writer, 100), 'the writer got the lock while a reader held it');
      await r2.release();
      const w = await writer;
      assert.ok(w.fencingToken > r2.fencingToken);
      assert.equal(await new ReadWriteLock(a, '/locks/rw').readLock().tryAcquire(), undefined);
      await w.release();
    },
  },
  {
    name: 'LeaderLatch: one leader, leadership passes on release and close',
    async run(ctx) {
      const [a, b] = await Promise.all([ctx.client(), ctx.client()]);
      const one = new LeaderLatch(a, '/leader', { id: 'one' });
      one.start();
      const lead = await one.leadership({ timeout: 10_000 });
      const two = new LeaderLatch(b, '/leader', { id: 'two' });
      two.start();
      const next = two.leadership({ timeout: 10_000 });
      assert.ok(await stillPending(next, 200), 'two leaders at once');
      assert.deepEqual((await one.participants()).map((p) => p.id), ['one', 'two']);
      assert.equal(one.hasLeadership, true);
      await lead.release(); // one queues again behind two
      const second = await next;
      assert.ok(second.fencingToken > lead.fencingToken);
      assert.equal((await two.leader())?.id, 'two');
      await two.close();
      await one.leadership({ timeout: 10_000 });
      await one.close();
      assert.equal(one.state, 'closed');
    },
  },
  {
    name: 'Semaphore: at most 2 of 3 holders, the third admitted on a release',
    async run(ctx) {
      const clients = await Promise.all([ctx.client(), ctx.client(), ctx.client()]);
      const [s1, s2, s3] = clients.map((zk) => new Semaphore(zk, '/semaphores/s', { maxLeases: 2 }));
      const l1 = await s1.acquire({ timeout: 10_000 });
      const l2 = await s2.acquire({ timeout: 10_000 });
      assert.equal(await s3.tryAcquire(), undefined);
      const third = s3.acquire({ timeout: 10_000 });
      assert.ok(await stillPending(third, 200), 'three holders of two permits');
      await l1.release();
      const l3 = await third;
      assert.equal(l2.signal.aborted, false);
      await Promise.all([l2.release(), l3.release()]);
      const pair = await s1.acquire(2, { timeout: 10_000 });
      assert.equal(pair.length, 2);
      await pair.release();
    },
  },
  {
    name: 'TreeCache: initial load, then created, changed and deleted events',
    async run(ctx) {
      const zk = await ctx.client();
      const other = await ctx.client();
      await zk.create('/config');
      await zk.create('/config/db', 'v1');
      const cache = await TreeCache.open(zk, '/config');
      try {
        assert.equal(cache.get('/config/db')?.data.toString(), 'v1');
        assert.equal(cache.size, 2);
        const seen = [];
        let waiting;
        cache.onEvent((e) => {
          if (!('path' in e)) return;
          seen.push(`${e.type} ${e.path}`);
          waiting?.();
        });
        // One change at a time, each awaited: a cache reads a node again after its notification,
        // so a change followed at once by a delete may be seen as the delete alone (a loaded run
        // waited 30 s for a 'changed' that could not come).
        const next = (change) => {
          const count = seen.length;
          const arrived = new Promise((resolve) => (waiting = () => seen.length > count && resolve()));
          return change().then(() => arrived);
        };
        await next(() => other.setData('/config/db', 'v2'));
        await next(() => other.create('/config/cache', 'c'));
        await next(() => other.delete('/config/db'));
        assert.deepEqual(seen, ['changed /config/db', 'created /config/cache', 'deleted /config/db']);
        assert.equal(cache.has('/config/db'), false);
        assert.deepEqual(cache.children('/config'), ['cache']);
      } finally {
        await cache.close();
      }
    },
  },
];

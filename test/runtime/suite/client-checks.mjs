/**
 * The client's checks: connect, every operation, one-shot and persistent watches, and the
 * socket paths a runtime can get wrong (a large frame split over many reads, a thousand requests
 * pipelined into one write, a batch over 64 KiB written with cork/uncork).
 */
import assert from 'node:assert/strict';
import {
  BadVersionError,
  CreateMode,
  NoNodeError,
  NodeExistsError,
  NotEmptyError,
  OPEN_ACL_UNSAFE,
  Perm,
  TransactionError,
  ZooKeeper,
  digestACL,
  sequenceOf,
} from '@zk/protocol';

/** Resolves when `zk` reaches `state` (at once if it is there). */
export function reach(zk, state, ms) {
  if (zk.state === state) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      off();
      reject(new Error(`state ${state} not reached within ${ms} ms (now ${zk.state})`));
    }, ms);
    const off = zk.onStateChange((s) => {
      if (s !== state) return;
      clearTimeout(timer);
      off();
      resolve();
    });
  });
}

/** The next event a one-shot watch listener gets, as a promise and a listener to pass. */
export function nextEvent() {
  let listener;
  const event = new Promise((resolve) => (listener = resolve));
  return { listener, event };
}

/** Collects events until `count` arrived. */
export function collect(count) {
  const events = [];
  let done;
  const all = new Promise((resolve) => (done = resolve));
  const listener = (e) => {
    events.push(e);
    if (events.length === count) done([...events]);
  };
  return { listener, all, events };
}

/**
 * Resolves once `zk` has `count` watch registrations. `zk.watch()` registers in the background
 * (a change made by another session before the server registered it would not be seen), and
 * its `return()` removes the registration in the background too.
 */
async function armed(zk, count) {
  for (const deadline = Date.now() + 10_000; zk.watchCount !== count; ) {
    if (Date.now() > deadline) throw new Error(`${count} watch registrations not made within 10 s (${zk.watchCount})`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

export const clientChecks = [
  {
    name: 'connect',
    async run(ctx) {
      const zk = await ctx.client();
      assert.equal(zk.state, 'connected');
      assert.notEqual(zk.sessionId, 0n);
      assert.equal(zk.sessionPassword.length, 16);
      assert.ok(zk.sessionTimeout > 0);
      assert.equal(zk.server?.host, '127.0.0.1');
      const states = [];
      const off = zk.onStateChange((state) => states.push(state));
      await zk.close();
      off();
      assert.deepEqual(states, ['closed']);
    },
  },
  {
    name: 'connect by host name: localhost resolved through node:dns, the address dialed',
    async run(ctx) {
      const port = ctx.config.connect.slice(ctx.config.connect.lastIndexOf(':') + 1);
      const zk = ctx.track(await ZooKeeper.connect(`localhost:${port}${ctx.base}`, { sessionTimeout: 10_000 }));
      assert.equal(zk.server?.host, 'localhost');
      assert.match(zk.server?.address ?? '', /^(127\.0\.0\.1|::1)$/);
      await zk.create('/by-name', 'x');
      assert.equal((await zk.getData('/by-name')).data.toString(), 'x');
    },
  },
  {
    name: 'create, getData, setData, exists, delete and their typed errors',
    async run(ctx) {
      const zk = await ctx.client();
      assert.equal(await zk.create('/a', 'one'), '/a');
      const { data, stat } = await zk.getData('/a');
      assert.equal(data.toString(), 'one');
      assert.equal(stat.version, 0);
      const withStat = await zk.createWithStat('/b', Buffer.from([0, 1, 2, 255]));
      assert.equal(withStat.stat.dataLength, 4);
      assert.deepEqual([...(await zk.getData('/b')).data], [0, 1, 2, 255]);
      assert.equal((await zk.setData('/a', 'two', { version: 0 })).version, 1);
      await assert.rejects(zk.setData('/a', 'three', { version: 0 }), BadVersionError);
      await assert.rejects(zk.create('/a'), NodeExistsError);
      await assert.rejects(zk.getData('/missing'), (err) => err instanceof NoNodeError && err.path === '/missing');
      assert.equal(await zk.exists('/missing'), null);
      assert.equal((await zk.exists('/a'))?.version, 1);
      await zk.create('/a/child', null);
      assert.equal((await zk.getData('/a/child')).data.length, 0);
      await assert.rejects(zk.delete('/a'), NotEmptyError);
      await zk.delete('/a/child');
      await zk.delete('/a', { version: 1 });
      assert.equal(await zk.exists('/a'), null);
      await assert.rejects(zk.create('relative'), (err) => err.name === 'InvalidArgumentError');
    },
  },
  {
    name: 'children, sequential and ephemeral nodes, getEphemerals, getAllChildrenNumber',
    async run(ctx) {
      const zk = await ctx.client();
      await zk.create('/jobs');
      const seq = await zk.create('/jobs/job-', 'x', { mode: CreateMode.PERSISTENT_SEQUENTIAL });
      assert.match(seq, /^\/jobs\/job-\d{10}$/);
      assert.equal(sequenceOf(seq), 0);
      const eph = await zk.create('/jobs/eph-', null, { mode: CreateMode.EPHEMERAL_SEQUENTIAL });
      assert.equal(sequenceOf(eph), 1);
      assert.deepEqual((await zk.getChildren('/jobs')).sort(), [seq, eph].map((p) => p.slice('/jobs/'.length)).sort());
      const { children, stat } = await zk.getChildrenWithStat('/jobs');
      assert.equal(children.length, 2);
      assert.equal(stat.numChildren, 2);
      assert.equal(await zk.getAllChildrenNumber('/jobs'), 2);
      assert.deepEqual(await zk.getEphemerals('/jobs'), [eph]);
      assert.notEqual((await zk.exists(eph))?.ephemeralOwner, 0n);
      await zk.create('/deep/er/path', 'p', { parents: true });
      await zk.ensurePath('/ensured/x');
      await zk.create('/box', null, { mode: CreateMode.CONTAINER });
      assert.ok((await zk.deleteRecursive('/deep')) >= 3);
      assert.equal(await zk.exists('/deep'), null);
    },
  },
  {
    name: 'multi, multiRead, sync, getACL/setACL, addAuth and whoAmI',
    async run(ctx) {
      const zk = await ctx.client();
      const results = await zk.transaction().create('/t', 'a').setData('/t', 'b').check('/t', 1).create('/t/c').commit();
      assert.deepEqual(results.map((r) => r.type), ['create', 'setData', 'check', 'create']);
      const failed = await zk.transaction().setData('/t', 'c').check('/t', 99).commit().catch((err) => err);
      assert.ok(failed instanceof TransactionError, String(failed));
      assert.equal(failed.failedIndex, 1);
      assert.equal((await zk.getData('/t')).data.toString(), 'b');
      const read = await zk.multiRead([
        { type: 'getData', path: '/t' },
        { type: 'getChildren', path: '/t' },
        { type: 'getData', path: '/nope' },
      ]);
      assert.deepEqual(read.map((r) => r.type), ['getData', 'getChildren', 'error']);
      assert.ok(read[2].error instanceof NoNodeError);
      await zk.sync('/t');
      const { acl } = await zk.getACL('/t');
      assert.deepEqual(acl, [...OPEN_ACL_UNSAFE]);
      await zk.addAuth('digest', 'runtime:secret');
      assert.ok((await zk.whoAmI()).some((id) => id.authScheme === 'digest' && id.user === 'runtime'));
      await zk.setACL('/t/c', digestACL('runtime', 'secret', Perm.ALL));
      assert.equal((await zk.getACL('/t/c')).acl[0].id.scheme, 'digest');
      const stranger = await ctx.client();
      await assert.rejects(stranger.getData('/t/c'), (err) => err.name === 'NoAuthError');
    },
  },
  {
    name: 'one-shot watches: data, exists, children; the watch() stream; removeWatches',
    async run(ctx) {
      const zk = await ctx.client();
      const other = await ctx.client();
      await zk.create('/w', 'v0');
      const data = nextEvent();
      await zk.getData('/w', { watch: data.listener });
      const created = nextEvent();
      assert.equal(await zk.exists('/w/kid', { watch: created.listener }), null);
      const children = nextEvent();
      await zk.getChildren('/w', { watch: children.listener });
      await other.setData('/w', 'v1');
      await other.create('/w/kid');
      assert.deepEqual(await data.event, { type: 'NodeDataChanged', path: '/w', zxid: (await data.event).zxid });
      assert.equal((await created.event).type, 'NodeCreated');
      assert.equal((await children.event).type, 'NodeChildrenChanged');
      const stream = zk.watch('/w/kid');
      const first = stream.next();
      await armed(zk, 1);
      await other.setData('/w/kid', 'x');
      assert.equal((await first).value?.type, 'NodeDataChanged');
      await stream.return?.();
      const unwanted = nextEvent();
      await zk.getData('/w', { watch: unwanted.listener });
      assert.equal(await zk.checkWatches('/w', { kind: 'data' }), true);
      await zk.removeWatches('/w', { kind: 'data' });
      assert.equal((await unwanted.event).type, 'DataWatchRemoved');
      assert.equal(zk.watchCount, 0);
    },
  },
  {
    name: 'persistent and persistent recursive watches (addWatch)',
    async run(ctx) {
      // Two watching clients: the server keeps one watch mode per session and path, so a
      // recursive watch added by the same session would replace the flat one.
      const [zk, deepZk, other] = await Promise.all([ctx.client(), ctx.client(), ctx.client()]);
      await zk.create('/p', 'v0');
      const flat = collect(2);
      const offFlat = await zk.addWatch('/p', flat.listener);
      const deep = collect(3);
      const offDeep = await deepZk.addWatch('/p', deep.listener, { recursive: true });
      await other.setData('/p', 'v1');
      await other.create('/p/a');
      await other.create('/p/a/b');
      await other.setData('/p', 'v2');
      assert.deepEqual((await flat.all).map((e) => `${e.type} ${e.path}`), ['NodeDataChanged /p', 'NodeChildrenChanged /p']);
      assert.deepEqual((await deep.all).map((e) => `${e.type} ${e.path}`), ['NodeDataChanged /p', 'NodeCreated /p/a', 'NodeCreated /p/a/b']);
      await offFlat();
      await offDeep();
      assert.equal(deepZk.watchCount, 0);
      const iterator = zk.watch('/p', { recursive: true });
      const next = iterator.next();
      await armed(zk, 1);
      await other.delete('/p/a/b');
      assert.deepEqual((await next).value && { type: (await next).value.type, path: (await next).value.path }, { type: 'NodeDeleted', path: '/p/a/b' });
      await iterator.return?.();
      await armed(zk, 0);
    },
  },
  {
    name: 'large frames and pipelining: 900 KiB data, 1,000 requests in flight, a 1 MiB batch',
    async run(ctx) {
      const zk = await ctx.client();
      const big = Buffer.alloc(900 * 1024);
      for (let i = 0; i < big.length; i++) big[i] = (i * 31) & 0xff;
      await zk.create('/big', big);
      assert.ok((await zk.getData('/big')).data.equals(big));
      await zk.create('/many');
      const paths = await Promise.all(Array.from({ length: 1000 }, (_, i) => zk.create(`/many/n${i}`, String(i))));
      assert.equal(paths.length, 1000);
      const datas = await Promise.all(paths.map((p) => zk.getData(p)));
      assert.ok(datas.every(({ data }, i) => data.toString() === String(i)));
      // 16 writes of 64 KiB queued in one tick: one batch over 64 KiB (cork, write each, uncork).
      const chunk = Buffer.alloc(64 * 1024, 7);
      await Promise.all(Array.from({ length: 16 }, (_, i) => zk.create(`/many/big${i}`, chunk)));
      assert.equal(await zk.getAllChildrenNumber('/many'), 1016);
      assert.equal(zk.pendingRequests, 0);
    },
  },
];

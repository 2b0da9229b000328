/**
 * The runtime's socket handling across connection loss: a connection reset (RST, through the
 * driver's proxy), a connection gone silent (the liveness timer must give up on it and dial
 * again), and the server restarted (refused dials while it is down, then the session resumed
 * with its ephemeral node, its watches re-armed and a TreeCache resynchronised).
 */
import assert from 'node:assert/strict';
import { CreateMode, TreeCache, ZooKeeper } from '@zk/protocol';
import { collect, nextEvent, reach } from './client-checks.mjs';

/** A client through the driver's proxy, with the states it goes through. */
async function proxied(ctx, options = {}) {
  const zk = ctx.track(await ZooKeeper.connect(`${ctx.config.proxy}${ctx.base}`, { sessionTimeout: 10_000, ...options }));
  const states = [];
  zk.onStateChange((s) => states.push(s));
  return { zk, states };
}

export const sessionChecks = [
  {
    name: 'reconnect after the connection is reset: same session, watch kept',
    async run(ctx) {
      const { zk, states } = await proxied(ctx);
      const session = zk.sessionId;
      await zk.create('/n', 'v0');
      const changed = nextEvent();
      await zk.getData('/n', { watch: changed.listener });
      const suspended = reach(zk, 'suspended', 10_000 * ctx.scale);
      await ctx.ask('cut');
      await suspended;
      await reach(zk, 'connected', 10_000 * ctx.scale);
      assert.equal(zk.sessionId, session);
      const other = await ctx.client();
      await other.setData('/n', 'v1');
      assert.equal((await changed.event).type, 'NodeDataChanged');
      assert.deepEqual(states, ['suspended', 'connected']);
    },
  },
  {
    name: 'a silent connection: given up by the liveness timer, the session resumed',
    async run(ctx) {
      const { zk, states } = await proxied(ctx, { sessionTimeout: 8000 });
      const session = zk.sessionId;
      const suspended = reach(zk, 'suspended', 12_000 * ctx.scale);
      await ctx.ask('pause'); // every byte held both ways: pings go unanswered
      await suspended;
      await ctx.ask('resume');
      await reach(zk, 'connected', 10_000 * ctx.scale);
      assert.equal(zk.sessionId, session);
      await zk.create('/alive', null, { mode: CreateMode.EPHEMERAL });
      assert.deepEqual(states, ['suspended', 'connected']);
    },
  },
  {
    name: 'server restart: session resumed with its ephemeral node, watches and TreeCache',
    boundMs: 60_000,
    async run(ctx) {
      const zk = await ctx.client();
      const session = zk.sessionId;
      const states = [];
      zk.onStateChange((s) => states.push(s));
      await zk.create('/e', 'mine', { mode: CreateMode.EPHEMERAL });
      await zk.create('/d', 'v0');
      await zk.create('/r');
      const dataWatch = nextEvent();
      await zk.getData('/d', { watch: dataWatch.listener });
      const recursive = collect(1);
      await zk.addWatch('/r', recursive.listener, { recursive: true });
      const cache = await TreeCache.open(zk, '/r');
      try {
        const suspended = reach(zk, 'suspended', 10_000 * ctx.scale);
        await ctx.ask('restart');
        await suspended;
        await reach(zk, 'connected', 20_000 * ctx.scale);
        assert.equal(zk.sessionId, session, 'a new session after the restart');
        assert.equal((await zk.exists('/e'))?.ephemeralOwner, session);
        const other = await ctx.client();
        const created = new Promise((resolve) => cache.onEvent((e) => e.type === 'created' && resolve(e.path)));
        await other.setData('/d', 'v1');
        await other.create('/r/x', 'x');
        assert.equal((await dataWatch.event).type, 'NodeDataChanged');
        assert.deepEqual((await recursive.all).map((e) => `${e.type} ${e.path}`), ['NodeCreated /r/x']);
        assert.equal(await created, '/r/x');
        assert.equal(cache.get('/r/x')?.data.toString(), 'x');
        assert.equal(states[0], 'suspended');
        assert.equal(states.at(-1), 'connected');
      } finally {
        await cache.close();
      }
    },
  },
];

import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ChannelName, ZooKeeper, type EventMessage } from '@zk/protocol';
import { Mutex, type Lease } from '@zk/locks';
import { waitFor } from '../../harness/index.js';
import { connectString, proxyToServer, type TestSpace } from '../../harness/fixtures.js';
import { holderSuiteHooks, startHolder } from './holder-process.js';

let space: TestSpace;

holderSuiteHooks((s) => (space = s));

describe('locks - holders that die', () => {
  it('a holder killed with SIGKILL hands the lock to the next waiter once its session times out', async () => {
    await space.admin();
    const held = await startHolder(fileURLToPath(new URL('./holder.mjs', import.meta.url)), [`${connectString()}${space.root}`, '/locks/k', '2000'], 'HELD');
    const zk = await space.client();
    const waiting = new Mutex(zk, '/locks/k').acquire({ timeout: 30_000 });
    const killedAt = Date.now();
    await held.kill();
    const lease = await waiting;
    const waited = Date.now() - killedAt;
    expect(lease.fencingToken > held.token).toBe(true);
    // No closeSession was sent: the lock passes only when the server expires the session.
    expect(waited).toBeGreaterThanOrEqual(held.sessionTimeout * 0.8);
    await lease.release();
  });
});

describe('locks - herd', () => {
  it('with 100 waiters, each release wakes exactly one of them', async () => {
    const holder = await space.client();
    const first = await new Mutex(holder, '/locks/herd').acquire();
    const n = 100;
    const clients = await Promise.all(Array.from({ length: n }, () => space.client()));
    const leases = clients.map((zk) => new Mutex(zk, '/locks/herd').acquire());
    const admin = await space.admin();
    await waitFor('every waiter to queue', async () => ((await admin.getChildren(`${space.root}/locks/herd`)).length === n + 1 ? true : undefined));
    // And to watch its predecessor (the first waiter, which will take the lock on the holder's
    // deletion alone, its own node too): a waiter whose predecessor is gone before its watch is
    // set finds it missing and needs no wake-up, which this test would count as a missed one.
    await waitFor('every waiter to watch', () => (clients.reduce((sum, zk) => sum + zk.watchCount, 0) === n + 1 ? true : undefined), 10_000, 5);
    const woken: bigint[] = [];
    const onEvent = (m: unknown) => {
      const e = m as EventMessage;
      if (e.type === 'NodeDeleted' && e.listeners > 0) woken.push(e.sessionId);
    };
    const sessionOf = new Map<Promise<Lease>, bigint>(leases.map((p, i) => [p, clients[i]!.sessionId]));
    subscribe(ChannelName.event, onEvent);
    try {
      let current: Lease = first;
      let releaser = holder.sessionId;
      const remaining = new Set(leases);
      for (let i = 0; i < n; i++) {
        woken.length = 0;
        await current.release();
        const { next } = await Promise.race([...remaining].map((p) => p.then(() => ({ next: p }))));
        remaining.delete(next);
        current = await next;
        // Every NodeDeleted that reached a listener, except the releaser's own node watch, is a wake-up.
        const wakeUps = woken.filter((s) => s !== releaser);
        expect(wakeUps).toEqual([sessionOf.get(next)]);
        releaser = sessionOf.get(next)!;
      }
      await current.release();
    } finally {
      unsubscribe(ChannelName.event, onEvent);
    }
  });
});

describe('locks - protection', () => {
  it('adopts its own node after a create whose reply was lost, leaving no orphan', async () => {
    const admin = await space.admin();
    const proxy = await proxyToServer();
    try {
      await using zk = await ZooKeeper.connect(`${proxy.connectString}${space.root}`, { sessionTimeout: 10_000, connectTimeout: 2000 });
      await (await new Mutex(zk, '/locks/p').acquire()).release(); // parents exist
      proxy.pause('down'); // the create reaches the server; its reply does not come back
      const acquiring = new Mutex(zk, '/locks/p').acquire();
      await waitFor('the create to be applied', async () => ((await admin.getChildren(`${space.root}/locks/p`)).length === 1 ? true : undefined));
      proxy.cut();
      proxy.resume();
      const lease = await acquiring;
      const children = await admin.getChildren(`${space.root}/locks/p`);
      expect(children).toEqual([lease.node.slice(lease.node.lastIndexOf('/') + 1)]);
      expect((await admin.exists(`${space.root}${lease.node}`))?.ephemeralOwner).toBe(zk.sessionId);
      await lease.release();
      expect(await admin.getChildren(`${space.root}/locks/p`)).toEqual([]);
    } finally {
      await proxy.close();
    }
  });
});

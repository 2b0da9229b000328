import { spawn } from 'node:child_process';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ChannelName, ZooKeeper, type EventMessage } from '@zk/protocol';
import { Mutex, type Lease } from '@zk/locks';
import { waitFor } from '../../harness/index.js';
import { connectString, proxyToServer, TestSpace } from '../../harness/fixtures.js';

let space: TestSpace;

beforeEach(() => {
  space = new TestSpace();
});

const children = new Set<import('node:child_process').ChildProcess>();

afterEach(async () => {
  for (const child of children) child.kill('SIGKILL'); // a failed test leaves no holder behind
  children.clear();
  expect((await space.close()).leakedWatches).toBe(0);
});

describe('locks - holders that die', () => {
  it('a holder killed with SIGKILL hands the lock to the next waiter once its session times out', async () => {
    await space.admin();
    const child = spawn(process.execPath, [fileURLToPath(new URL('./holder.mjs', import.meta.url)), `${connectString()}${space.root}`, '/locks/k', '2000'], { stdio: ['ignore', 'pipe', 'inherit'] });
    children.add(child);
    const held = await new Promise<{ token: bigint; timeout: number }>((resolve, reject) => {
      let out = '';
      child.stdout.on('data', (d: Buffer) => {
        out += d.toString();
        const m = /HELD (\d+) (\d+)/.exec(out);
        if (m) resolve({ token: BigInt(m[1]!), timeout: Number(m[2]) });
      });
      child.once('exit', (code) => reject(new Error(`holder exited with ${code} before holding`)));
    });
    const zk = await space.client();
    const waiting = new Mutex(zk, '/locks/k').acquire({ timeout: 30_000 });
    const exited = new Promise((r) => child.once('exit', r));
    const killedAt = Date.now();
    child.kill('SIGKILL');
    await exited;
    const lease = await waiting;
    const waited = Date.now() - killedAt;
    expect(lease.fencingToken > held.token).toBe(true);
    // No closeSession was sent: the lock passes only when the server expires the session.
    expect(waited).toBeGreaterThanOrEqual(held.timeout * 0.8);
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

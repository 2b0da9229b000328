/**
 * LeaderLatch and LeaderSelector against the real server: one leader at a time, growing tokens,
 * one participant woken per change, hand-over after a SIGKILL, the signal before anyone else
 * leads on a cut link, nothing left behind by timeouts, aborts and close, and bad input.
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ChannelName, InvalidArgumentError, ZooKeeper, type EventMessage } from '@zk/protocol';
import { LeaderLatch, LeaderSelector, LeaseLostError, LeaseReleasedError, LockAbortedError, LockStateError, LockTimeoutError, type Leadership, type LeadershipChange } from '@zk/locks';
import { waitFor } from '../../harness/index.js';
import { proxyToServer, connectString, type TestSpace } from '../../harness/fixtures.js';
import { holderSuiteHooks, startHolder } from './holder-process.js';

let space: TestSpace;

holderSuiteHooks((s) => (space = s));

/** A promise with its resolve function outside (Promise.withResolvers is Node 22). */
function deferred<T>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

const UUID = '[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}';

async function nodes(path: string): Promise<string[]> {
  const admin = await space.admin();
  return (await admin.getChildren(`${space.root}${path}`).catch(() => [] as string[])).sort((a, b) => (a.slice(-10) < b.slice(-10) ? -1 : 1));
}

/** Resolves with the latch that leads among `latches` (exactly one must). */
async function theLeader(latches: LeaderLatch[]): Promise<LeaderLatch> {
  return waitFor('one leader', () => {
    const leaders = latches.filter((l) => l.hasLeadership);
    expect(leaders.length).toBeLessThanOrEqual(1);
    return leaders[0];
  }, 20_000, 5);
}

describe('LeaderLatch', () => {
  it('elects one leader in queue order; close hands over with a larger token; participants lists ids, leader first', async () => {
    const clients = await Promise.all([0, 1, 2].map(() => space.client()));
    const latches = clients.map((zk, i) => new LeaderLatch(zk, '/election/a', { id: `p${i}` }));
    // Started one after the other so the queue order is known.
    for (const latch of latches) {
      latch.start();
      await waitFor('queued', async () => (await nodes('/election/a')).length === latches.indexOf(latch) + 1 || undefined);
    }
    const names = await nodes('/election/a');
    for (const n of names) expect(n).toMatch(new RegExp(`^_c_${UUID}-latch-\\d{10}$`));
    const admin = await space.admin();
    expect((await Promise.all(names.map((n) => admin.getData(`${space.root}/election/a/${n}`)))).map((r) => Buffer.from(r.data).toString())).toEqual(['p0', 'p1', 'p2']);

    const first = await latches[0]!.leadership();
    expect(latches.map((l) => l.hasLeadership)).toEqual([true, false, false]);
    expect(await latches[2]!.participants()).toEqual([
      { id: 'p0', isLeader: true, node: names[0] },
      { id: 'p1', isLeader: false, node: names[1] },
      { id: 'p2', isLeader: false, node: names[2] },
    ]);
    expect((await latches[1]!.leader())?.id).toBe('p0');

    const next = latches[1]!.leadership();
    // The term's signal aborts as soon as close() is called, before the node is deleted.
    const closing = latches[0]!.close();
    expect(first.signal.aborted).toBe(true);
    await closing;
    expect(first.held).toBe(false);
    const second = await next;
    expect(second.id).toBe('p1');
    expect(second.fencingToken).toBeGreaterThan(first.fencingToken);
    expect(latches.map((l) => l.hasLeadership)).toEqual([false, true, false]);
    expect(await nodes('/election/a')).toEqual(names.slice(1));
    expect(latches[0]!.state).toBe('closed');
    await expect(latches[0]!.leadership()).rejects.toBeInstanceOf(LockStateError);

    for (const latch of latches) await latch.close();
    expect(await nodes('/election/a')).toEqual([]);
  });

  it('release() ends the term and queues again at the back: leadership rotates with growing tokens', async () => {
    const latches = await Promise.all([0, 1, 2].map(async (i) => new LeaderLatch(await space.client(), '/election/rotate', { id: `p${i}` })));
    for (const latch of latches) latch.start();
    // Three sessions queue in no fixed order: the rotation is checked once all three are queued
    // (a first leader released before the last one queued would queue ahead of it).
    await waitFor('three queued', async () => ((await nodes('/election/rotate')).length === 3 ? true : undefined), 10_000, 10);
    const tokens: bigint[] = [];
    const ids: string[] = [];
    for (let term = 0; term < 9; term++) {
      const leader = await theLeader(latches);
      const leadership = leader.current!;
      tokens.push(leadership.fencingToken);
      ids.push(leadership.id);
      await leadership.release();
      expect(leadership.signal.aborted).toBe(true);
    }
    // Each term's node is new: the tokens grow; and the three take turns.
    for (let i = 1; i < tokens.length; i++) expect(tokens[i]!).toBeGreaterThan(tokens[i - 1]!);
    expect(ids.slice(3, 6).sort()).toEqual(['p0', 'p1', 'p2']);
    expect(ids.slice(3)).toEqual([...ids.slice(0, 3), ...ids.slice(0, 3)]);
    await Promise.all(latches.map((l) => l.close()));
    expect(await nodes('/election/rotate')).toEqual([]);
  });

  it('a change of leader wakes exactly one participant (10 latches, each on its own session)', async () => {
    const clients = await Promise.all(Array.from({ length: 10 }, () => space.client()));
    const latches = clients.map((zk, i) => new LeaderLatch(zk, '/election/herd', { id: `p${i}` }));
    for (const latch of latches) latch.start();
    await waitFor('all queued', async () => (await nodes('/election/herd')).length === 10 || undefined);
    // And watching: each waits on its predecessor (the next in line on its own node too), the
    // leader on its own node (a participant whose predecessor is gone before its watch is set
    // needs no wake-up, which would fail the count).
    await waitFor('all watching', () => clients.reduce((n, zk) => n + zk.watchCount, 0) === 1 + 2 + 8 || undefined, 10_000, 5);
    const sessions = new Set(clients.map((zk) => zk.sessionId));
    for (let change = 0; change < 5; change++) {
      const leader = await theLeader(latches);
      const events: EventMessage[] = [];
      const onEvent = (m: unknown) => {
        const e = m as EventMessage;
        if (sessions.has(e.sessionId)) events.push(e);
      };
      subscribe(ChannelName.event, onEvent);
      try {
        const changes: LeadershipChange[] = [];
        const offs = latches.map((l) => l.onChange((c) => changes.push(c)));
        await leader.current!.release();
        const next = await theLeader(latches.filter((l) => l !== leader));
        // A barrier: a server sends a watch event to a client before the reply to any later
        // request of that client, and the client dispatches events on the turn after the replies
        // read with them; after two round trips every event of the change has been dispatched.
        await Promise.all(clients.map((zk) => zk.exists('/')));
        await Promise.all(clients.map((zk) => zk.exists('/')));
        for (const off of offs) off();
        // The old leader hears of its own deletion (its lease's watch); of the others, exactly one.
        const others = events.filter((e) => e.sessionId !== leader.zk.sessionId);
        expect(others.map((e) => [e.type, e.sessionId, e.listeners])).toEqual([['NodeDeleted', next.zk.sessionId, 1]]);
        // Two changes reported: the old leader's end and the new one's start. (A released term's
        // signal aborts once its node is deleted, so the two may be seen in either order.)
        expect(changes.map((c) => c.isLeader).sort()).toEqual([false, true]);
        expect(next.hasLeadership).toBe(true);
      } finally {
        unsubscribe(ChannelName.event, onEvent);
      }
    }
    await Promise.all(latches.map((l) => l.close()));
  });

  it('leadership() bounds the wait: timeout, abort and timeout 0 reject while the latch stays queued', async () => {
    const [a, b] = [await space.client(), await space.client()];
    const leader = new LeaderLatch(a, '/election/wait', { id: 'a' });
    leader.start();
    await leader.leadership();
    const other = new LeaderLatch(b, '/election/wait', { id: 'b' });
    other.start();
    await waitFor('queued', async () => (await nodes('/election/wait')).length === 2 || undefined);
    const t0 = performance.now();
    const late = await other.leadership({ timeout: 200 }).catch((e: unknown) => e);
    expect(late).toBeInstanceOf(LockTimeoutError);
    expect(performance.now() - t0).toBeGreaterThanOrEqual(195);
    // The messages speak of leadership, not of a lock (issue 37 item 7).
    expect((late as Error).message).toBe('leadership of /election/wait not gained within 200 ms');
    await expect(other.leadership({ timeout: 0 })).rejects.toThrow(new LockTimeoutError('/election/wait', 0, 'leadership of /election/wait is not ours right now'));
    const controller = new AbortController();
    const aborted = other.leadership({ signal: controller.signal });
    controller.abort(new Error('stop'));
    await expect(aborted).rejects.toBeInstanceOf(LockAbortedError);
    await expect(aborted).rejects.toThrow('waiting for leadership of /election/wait was aborted');
    expect((await nodes('/election/wait')).length).toBe(2);
    // Still in the election: it leads once the leader leaves.
    const next = other.leadership({ timeout: 10_000 });
    await leader.close();
    expect((await next).id).toBe('b');
    await other.close();
    expect(await nodes('/election/wait')).toEqual([]);
  });

  it('changes() yields the terms as they come and ends when the latch closes', async () => {
    const [a, b] = [await space.client(), await space.client()];
    const first = new LeaderLatch(a, '/election/iter', { id: 'a' });
    first.start();
    await first.leadership();
    const latch = new LeaderLatch(b, '/election/iter', { id: 'b' });
    latch.start();
    const seen: boolean[] = [];
    const iterating = (async () => {
      for await (const change of latch.changes()) {
        seen.push(change.isLeader);
        if (change.isLeader) void change.leadership.release(); // then queue again: a's turn
      }
    })();
    await waitFor('queued', async () => (await nodes('/election/iter')).length === 2 || undefined);
    await first.close();
    await waitFor('b led once and gave it up', () => seen.length >= 2 || undefined);
    await latch.close();
    await iterating;
    expect(seen.slice(0, 2)).toEqual([true, false]);
  });

  it('a leader killed with SIGKILL hands leadership over once its session times out', async () => {
    await space.admin();
    const leader = await startHolder(fileURLToPath(new URL('./leader-holder.mjs', import.meta.url)), [`${connectString()}${space.root}`, '/election/kill', '2000'], 'LEADS');
    const latch = new LeaderLatch(await space.client(), '/election/kill', { id: 'survivor' });
    latch.start();
    await waitFor('queued', async () => (await nodes('/election/kill')).length === 2 || undefined);
    expect(latch.hasLeadership).toBe(false);
    const t0 = performance.now();
    await leader.kill();
    const leadership = await latch.leadership({ timeout: 30_000 });
    const ms = performance.now() - t0;
    expect(leadership.fencingToken).toBeGreaterThan(leader.token);
    // After the negotiated timeout (the server's tick rounds it up), well before twice that.
    expect(ms).toBeGreaterThan(leader.sessionTimeout * 0.6);
    expect(ms).toBeLessThan(leader.sessionTimeout * 3);
    await latch.close();
  }, 30_000);

  it('on a cut link the leader is told before anyone else can lead; its latch stops when the session expires', async () => {
    const proxy = await proxyToServer();
    try {
      await space.admin();
      const cut = await ZooKeeper.connect(`${proxy.connectString}${space.root}`, { sessionTimeout: 3000, connectTimeout: 1000 });
      const leaderLatch = new LeaderLatch(cut, '/election/cut', { id: 'cut' });
      leaderLatch.start();
      const leadership = await leaderLatch.leadership();
      const other = new LeaderLatch(await space.client(), '/election/cut', { id: 'other' });
      other.start();
      await waitFor('queued', async () => (await nodes('/election/cut')).length === 2 || undefined);
      let signalled = 0;
      leadership.signal.addEventListener('abort', () => (signalled = performance.now()), { once: true });
      const otherLeads = other.leadership({ timeout: 20_000 }).then((l) => ((leadsAt = performance.now()), l));
      let leadsAt = 0;
      proxy.pause('both');
      await otherLeads;
      expect(signalled).toBeGreaterThan(0);
      expect(signalled).toBeLessThan(leadsAt);
      expect(leadership.signal.reason).toBeInstanceOf(LeaseLostError);
      proxy.resume();
      await waitFor('the cut latch stopped', () => leaderLatch.state === 'closed' || undefined, 20_000);
      await expect(leaderLatch.leadership()).rejects.toBeInstanceOf(Error);
      await leaderLatch.close();
      await cut.close();
      await other.close();
    } finally {
      proxy.resume();
      await proxy.close();
    }
  }, 40_000);

  it('rejects bad input and misuse with typed errors before anything is sent', async () => {
    const zk = await space.client();
    expect(() => new LeaderLatch(zk, 'no-slash')).toThrow(InvalidArgumentError);
    expect(() => new LeaderLatch(zk, '/e', { id: 42 as unknown as string })).toThrow(InvalidArgumentError);
    expect(() => new LeaderLatch(zk, '/e', { id: 'a\uD800b' })).toThrow(InvalidArgumentError);
    expect(() => new LeaderLatch(zk, '/e', { id: 'x'.repeat(4097) })).toThrow(InvalidArgumentError);
    const latch = new LeaderLatch(zk, '/election/misuse');
    await expect(latch.leadership()).rejects.toBeInstanceOf(LockStateError);
    latch.start();
    expect(() => latch.start()).toThrow(LockStateError);
    await expect(latch.leadership({ timeout: -1 })).rejects.toBeInstanceOf(InvalidArgumentError);
    await latch.leadership();
    await latch.close();
    await latch.close();
    expect(() => latch.start()).toThrow(LockStateError);
    expect(await nodes('/election/misuse')).toEqual([]);
  });
});

describe('LeaderSelector', () => {
  it('one leader at a time; terms rotate in queue order with autoRequeue; close stops after the running term', async () => {
    const selectors = await Promise.all([0, 1, 2].map(async (i) => new LeaderSelector(await space.client(), '/election/sel', { id: `s${i}` })));
    let inside = 0;
    let maxInside = 0;
    const terms: { id: string; token: bigint }[] = [];
    const enough = deferred<void>();
    for (const s of selectors) {
      s.start(async (leadership) => {
        inside++;
        maxInside = Math.max(maxInside, inside);
        terms.push({ id: leadership.id, token: leadership.fencingToken });
        await new Promise((r) => setImmediate(r));
        inside--;
        if (terms.length >= 30) enough.resolve();
      }, { autoRequeue: true });
    }
    await enough.promise;
    await Promise.all(selectors.map((s) => s.close()));
    expect(maxInside).toBe(1);
    for (let i = 1; i < terms.length; i++) expect(terms[i]!.token).toBeGreaterThan(terms[i - 1]!.token);
    // FIFO: once all three are queued, they take turns.
    const ids = terms.map((t) => t.id);
    expect(new Set(ids.slice(3, 6)).size).toBe(3);
    // The queued selectors' nodes go in the background once their acquires are aborted (a create
    // still in flight is deleted when it answers: on 3.4, create then exists, one round trip later).
    await waitFor('the queued nodes to go', async () => ((await nodes('/election/sel')).length === 0 ? true : undefined), 5000);
  });

  it('the node carries the id; participants() and leader() see it; interruptLeadership aborts the term and leadership passes', async () => {
    const [a, b] = [await space.client(), await space.client()];
    const first = new LeaderSelector(a, '/election/int', { id: 'first' });
    const second = new LeaderSelector(b, '/election/int', { id: 'second' });
    const started = deferred<Leadership>();
    const running = first.run(async (leadership) => {
      started.resolve(leadership);
      await new Promise((resolve) => leadership.signal.addEventListener('abort', resolve, { once: true }));
      return leadership.signal.reason as unknown;
    });
    const leadership = await started.promise;
    const secondRun = second.run(async (l) => l.id);
    await waitFor('queued', async () => (await nodes('/election/int')).length === 2 || undefined);
    expect((await second.participants()).map((p) => [p.id, p.isLeader])).toEqual([
      ['first', true],
      ['second', false],
    ]);
    for (const n of await nodes('/election/int')) expect(n).toMatch(new RegExp(`^_c_${UUID}-lock-\\d{10}$`));
    expect(first.hasLeadership).toBe(true);
    first.interruptLeadership();
    // Ended by this process, not lost: a LeaseReleasedError (issue 37 item 7).
    expect(await running).toBeInstanceOf(LeaseReleasedError);
    expect(await running).toMatchObject({ code: 'released', message: 'leadership of /election/int interrupted (interruptLeadership())' });
    expect(leadership.held).toBe(false);
    expect(await secondRun).toBe('second');
    expect(await nodes('/election/int')).toEqual([]);
  });

  it('run() with a timeout or an aborted signal leaves no node; close() abandons a queued term', async () => {
    const [a, b] = [await space.client(), await space.client()];
    const holder = new LeaderSelector(a, '/election/t', { id: 'holder' });
    const release = deferred<void>();
    const held = deferred<void>();
    const holding = holder.run(async () => {
      held.resolve();
      await release.promise;
    });
    await held.promise;
    const waiter = new LeaderSelector(b, '/election/t', { id: 'waiter' });
    const late = waiter.run(() => 'never', { timeout: 200 });
    await expect(late).rejects.toBeInstanceOf(LockTimeoutError);
    await expect(late).rejects.toThrow('leadership of /election/t not gained within 200 ms'); // not "lock" (issue 37 item 7)
    const controller = new AbortController();
    const aborted = waiter.run(() => 'never', { signal: controller.signal });
    await waitFor('queued', async () => (await nodes('/election/t')).length === 2 || undefined);
    controller.abort();
    await expect(aborted).rejects.toBeInstanceOf(LockAbortedError);
    await expect(aborted).rejects.toThrow('waiting for leadership of /election/t was aborted');
    await waitFor('the aborted node removed', async () => (await nodes('/election/t')).length === 1 || undefined);
    const queued = waiter.run(() => 'never');
    queued.catch(() => undefined); // it rejects while close() runs, before the check below: handled now
    await waitFor('queued', async () => (await nodes('/election/t')).length === 2 || undefined);
    await waiter.close();
    await expect(queued).rejects.toBeInstanceOf(LockAbortedError);
    // A create whose reply had not arrived yet is swept in the background.
    await waitFor('the waiter\'s node removed', async () => (await nodes('/election/t')).length === 1 || undefined);
    release.resolve();
    await holding;
    expect(await nodes('/election/t')).toEqual([]);
  });

  it('rejects misuse: run() entered again, start twice, use after close, bad ids', async () => {
    const zk = await space.client();
    expect(() => new LeaderSelector(zk, '/e', { id: 'a\uDC00' })).toThrow(InvalidArgumentError);
    const selector = new LeaderSelector(zk, '/election/m', { id: 'm' });
    await selector.run(async () => {
      await expect(selector.run(() => undefined)).rejects.toBeInstanceOf(LockStateError);
      expect(() => selector.start(() => undefined)).toThrow(LockStateError);
    });
    const ran = deferred<void>();
    selector.start(() => ran.resolve());
    expect(() => selector.start(() => undefined)).toThrow(LockStateError);
    await ran.promise;
    await selector.close();
    await expect(selector.run(() => undefined)).rejects.toBeInstanceOf(LockStateError);
    expect(selector.requeue()).toBe(false);
    expect(await nodes('/election/m')).toEqual([]);
  });
});

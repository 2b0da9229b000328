/**
 * The recipes' diagnostics channels against the real server: a lock handed between two sessions
 * as two `zk:lock:acquire` traces (queue positions 0 and 1, growing fencing tokens) and their
 * holds on `zk:lock:hold`; a timed-out wait on `error`; a lease lost to session expiry on
 * `zk:lock:lost` (and its hold's end marked lost); a revocation request on `zk:lock:revoke`; a
 * semaphore and a MultiLock wait; LeaderLatch leadership gained and lost on `zk:leadership`.
 */
import { subscribe, tracingChannel, unsubscribe, type TracingChannelSubscribers } from 'node:diagnostics_channel';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LeaderLatch, LeaderSelector, LeaseLostError, LockChannelName, LockTimeoutError, MultiLock, Mutex, revoke, Semaphore, type AcquireTrace, type HoldMessage, type LeadershipMessage, type LeaseLostMessage, type RevocationMessage } from '@zk/locks';
import { waitFor } from '../../harness/index.js';
import { TestSpace } from '../../harness/fixtures.js';

type Event = 'start' | 'end' | 'asyncStart' | 'asyncEnd' | 'error';

/** Records the acquire traces and every plain lock channel until stopped. */
function recordAll() {
  const acquires: { event: Event; ctx: AcquireTrace }[] = [];
  const plain: Record<string, unknown[]> = { hold: [], lost: [], revoke: [], leadership: [] };
  const tc = tracingChannel<unknown, AcquireTrace>(LockChannelName.acquire);
  const handlers = Object.fromEntries((['start', 'end', 'asyncStart', 'asyncEnd', 'error'] as const).map((event) => [event, (ctx: AcquireTrace) => acquires.push({ event, ctx })])) as unknown as TracingChannelSubscribers<AcquireTrace>;
  tc.subscribe(handlers);
  const listeners = (['hold', 'lost', 'revoke', 'leadership'] as const).map((k) => [LockChannelName[k], (m: unknown) => plain[k]!.push(m)] as const);
  for (const [name, fn] of listeners) subscribe(name, fn);
  return {
    acquires,
    holds: plain.hold as HoldMessage[],
    lost: plain.lost as LeaseLostMessage[],
    revokes: plain.revoke as RevocationMessage[],
    leadership: plain.leadership as LeadershipMessage[],
    /** The acquire contexts, in the order they started. */
    traces: () => acquires.filter((e) => e.event === 'start').map((e) => e.ctx),
    eventsOf: (ctx: AcquireTrace) => acquires.filter((e) => e.ctx === ctx).map((e) => e.event),
    stop() {
      tc.unsubscribe(handlers);
      for (const [name, fn] of listeners) unsubscribe(name, fn);
    },
  };
}

let space: TestSpace;
let rec: ReturnType<typeof recordAll>;
beforeEach(() => {
  space = new TestSpace();
  rec = recordAll();
});
afterEach(async () => {
  rec.stop();
  expect((await space.close()).leakedWatches).toBe(0);
});

describe('lock channels', () => {
  it('a lock handed from one session to another: two acquire traces, positions 0 and 1, growing tokens, and their holds', async () => {
    const [a, b] = await Promise.all([space.client(), space.client()]);
    const first = await new Mutex(a, '/job').acquire();
    const waiting = new Mutex(b, '/job').acquire({ timeout: 10_000 });
    await space.untilChildren('/job', 2);
    await first.release();
    const second = await waiting;
    await second.release();
    const [ta, tb] = rec.traces();
    expect(rec.eventsOf(ta!)).toEqual(['start', 'end', 'asyncStart', 'asyncEnd']);
    expect(rec.eventsOf(tb!)).toEqual(['start', 'end', 'asyncStart', 'asyncEnd']);
    expect(ta).toMatchObject({ kind: 'mutex', path: '/job', sessionId: a.sessionId, position: 0, fencingToken: first.fencingToken, node: first.node });
    expect(tb).toMatchObject({ kind: 'mutex', path: '/job', sessionId: b.sessionId, position: 1, fencingToken: second.fencingToken, timeout: 10_000 });
    expect(tb!.fencingToken! > ta!.fencingToken!).toBe(true);
    expect(rec.holds.map((h) => [h.event, h.sessionId, h.fencingToken])).toEqual([
      ['start', a.sessionId, first.fencingToken],
      ['end', a.sessionId, first.fencingToken],
      ['start', b.sessionId, second.fencingToken],
      ['end', b.sessionId, second.fencingToken],
    ]);
    const end = rec.holds[1]!;
    expect(end.lost).toBe(false);
    expect(end.heldMs).toBeGreaterThan(0);
    expect(rec.lost).toEqual([]);
  });

  it('a wait that times out ends on error with LockTimeoutError, and a reentrant acquire is not a wait', async () => {
    const [a, b] = await Promise.all([space.client(), space.client()]);
    const mutex = new Mutex(a, '/busy');
    await mutex.run(async () => {
      await mutex.run(() => undefined); // reentrant: no second trace
      // Long enough for the wait's create and first listing (which tell its position) on a loaded
      // machine: a 50 ms timeout once ran out before the listing came back, and the trace then
      // rightly had no position.
      await expect(new Mutex(b, '/busy').acquire({ timeout: 1500 })).rejects.toBeInstanceOf(LockTimeoutError);
    });
    const [held, timedOut, ...rest] = rec.traces();
    expect(rest).toEqual([]);
    expect(held!.fencingToken).toBeDefined();
    expect(rec.eventsOf(timedOut!)).toEqual(['start', 'end', 'error', 'asyncStart', 'asyncEnd']);
    expect(timedOut!.error).toBeInstanceOf(LockTimeoutError);
    expect(timedOut!.position).toBe(1);
  });

  it('a lease lost to session expiry is published on zk:lock:lost, and its hold ends marked lost', async () => {
    const zk = await space.client();
    const lease = await new Mutex(zk, '/doomed').acquire();
    await space.expire(zk);
    await waitFor('the lost message', () => rec.lost.length > 0 || undefined, 10_000, 5);
    expect(rec.lost[0]).toMatchObject({ kind: 'mutex', path: '/doomed', node: lease.node, fencingToken: lease.fencingToken });
    expect(rec.lost[0]!.reason).toBeInstanceOf(LeaseLostError);
    expect(lease.signal.reason).toBe(rec.lost[0]!.reason);
    await lease.release().catch(() => undefined);
    expect(rec.holds.map((h) => [h.event, h.lost])).toEqual([
      ['start', undefined],
      ['end', true],
    ]);
  });

  it('a revocation request reaches zk:lock:revoke', async () => {
    const [a, b] = await Promise.all([space.client(), space.client()]);
    const lease = await new Mutex(a, '/revocable').acquire({ revocable: true });
    expect(await revoke(b, lease.node)).toBe(true);
    await waitFor('the revocation message', () => rec.revokes.length > 0 || undefined, 10_000, 5);
    expect(rec.revokes[0]).toMatchObject({ kind: 'mutex', path: '/revocable', node: lease.node, fencingToken: lease.fencingToken, sessionId: a.sessionId });
    await lease.release();
  });

  it('a semaphore permit and a MultiLock are traced with their kind', async () => {
    const zk = await space.client();
    const permit = await new Semaphore(zk, '/pool', { maxLeases: 2 }).acquire();
    const multi = await new MultiLock([new Mutex(zk, '/m1'), new Mutex(zk, '/m2')]).acquire();
    await multi.release();
    await permit.release();
    const kinds = rec.traces().map((t) => [t.kind, t.path]);
    // The MultiLock's parts nest inside its own trace.
    expect(kinds).toEqual([
      ['semaphore', '/pool'],
      ['multi', '/m1,/m2'],
      ['mutex', '/m1'],
      ['mutex', '/m2'],
    ]);
    expect(rec.traces()[0]!.fencingToken).toBe(permit.fencingToken);
    expect(rec.holds.filter((h) => h.event === 'start').map((h) => h.kind)).toEqual(['semaphore', 'mutex', 'mutex']);
  });

  it('LeaderSelector: its wait and term are traced as leader-selector, and leadership begins and ends on zk:leadership', async () => {
    const zk = await space.client();
    await using selector = new LeaderSelector(zk, '/selected', { id: 'node-s' });
    const token = await selector.run((leadership) => leadership.fencingToken);
    expect(rec.traces().map((t) => [t.kind, t.path, t.fencingToken])).toEqual([['leader-selector', '/selected', token]]);
    expect(rec.holds.map((h) => [h.event, h.kind])).toEqual([
      ['start', 'leader-selector'],
      ['end', 'leader-selector'],
    ]);
    expect(rec.leadership.map((m) => [m.kind, m.id, m.isLeader, m.fencingToken])).toEqual([
      ['leader-selector', 'node-s', true, token],
      ['leader-selector', 'node-s', false, token],
    ]);
  });

  it('LeaderLatch leadership gained and lost on zk:leadership, its wait traced', async () => {
    const zk = await space.client();
    const latch = new LeaderLatch(zk, '/leader', { id: 'node-a' });
    latch.start();
    const term = await latch.leadership({ timeout: 10_000 });
    await latch.close();
    await waitFor('leadership lost', () => rec.leadership.length >= 2 || undefined, 10_000, 5);
    expect(rec.leadership.map((m) => [m.kind, m.id, m.isLeader, m.fencingToken])).toEqual([
      ['leader-latch', 'node-a', true, term.fencingToken],
      ['leader-latch', 'node-a', false, term.fencingToken],
    ]);
    const wait = rec.traces().find((t) => t.kind === 'leader-latch');
    expect(wait).toMatchObject({ path: '/leader', fencingToken: term.fencingToken });
  });
});

/**
 * Barrier and DoubleBarrier (Curator's DistributedBarrier and DistributedDoubleBarrier layouts)
 * against the real server: several sessions through a barrier and a double barrier, timeout and
 * abort leaving no member node and no watch (local or on the server), a member whose session is
 * closed or expired mid-barrier not holding the others back, a member node deleted by hand, a
 * stale `ready` node, and bad input refused before anything is sent.
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ANYONE_ID_UNSAFE, ChannelName, ClientClosedError, CreateMode, InvalidArgumentError, Perm, type ZooKeeper } from '@zk/protocol';
import { Barrier, BarrierAbortedError, BarrierTimeoutError, DoubleBarrier, LeaseLostError, LockAbortedError, LockStateError, LockTimeoutError } from '@zk/locks';
import { isZooKeeper34, waitFor } from '../../harness/index.js';
import { TestSpace } from '../../harness/fixtures.js';

/** A v4 UUID, as node:crypto's randomUUID() and Java's UUID.randomUUID() make them. */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

let space: TestSpace;

beforeEach(() => {
  space = new TestSpace();
});

afterEach(async () => {
  expect((await space.close()).leakedWatches).toBe(0);
});

/** A wait whose progress the test can observe without awaiting it. */
function track<T>(p: Promise<T>): { result: Promise<T>; done: () => boolean } {
  let done = false;
  const result = p.then(
    (v) => ((done = true), v),
    (e: unknown) => ((done = true), Promise.reject(e)),
  );
  result.catch(() => undefined);
  return { result, done: () => done };
}

/** No watch of this session on `path`, locally or on the server (a 3.4 server has no checkWatches: locally only). */
async function expectNoWatch(zk: ZooKeeper, path: string): Promise<void> {
  expect(zk.watchCount).toBe(0);
  if (!isZooKeeper34()) expect(await zk.checkWatches(path)).toBe(false);
}

describe('barrier - DistributedBarrier layout', () => {
  it('holds waiters of several sessions until removed; the node is persistent', async () => {
    const [coordinator, ...workers] = await Promise.all(Array.from({ length: 4 }, () => space.client()));
    const barrier = new Barrier(coordinator!, '/bar/deploy');
    await barrier.wait({ timeout: 0 }); // never set: open
    await barrier.set();
    await barrier.set(); // idempotent
    expect(await barrier.isSet()).toBe(true);
    const admin = await space.admin();
    expect((await admin.exists(`${space.root}/bar/deploy`))!.ephemeralOwner).toBe(0n);
    const waits = workers.map((zk) => track(new Barrier(zk, '/bar/deploy').wait()));
    for (const zk of workers) await waitFor('the worker watch', () => (zk.watchCount === 1 ? true : undefined), 10_000, 10);
    await expect(new Barrier(workers[0]!, '/bar/deploy').wait({ timeout: 0 })).rejects.toBeInstanceOf(BarrierTimeoutError);
    await coordinator!.setData('/bar/deploy', 'x'); // a change of the node does not open it
    await expect(new Barrier(coordinator!, '/bar/deploy').wait({ timeout: 200 })).rejects.toBeInstanceOf(BarrierTimeoutError);
    expect(waits.map((w) => w.done())).toEqual([false, false, false]);
    await barrier.remove();
    await barrier.remove(); // idempotent
    await Promise.all(waits.map((w) => w.result));
    expect(await barrier.isSet()).toBe(false);
    for (const zk of workers) await expectNoWatch(zk, '/bar/deploy');
  });

  it('a timed-out or aborted wait rejects with a typed error and leaves no watch, locally or on the server', async () => {
    const zk = await space.client();
    const barrier = new Barrier(zk, '/bar/t');
    await barrier.set();
    const timedOut = await barrier.wait({ timeout: 300 }).catch((e: unknown) => e);
    expect(timedOut).toBeInstanceOf(BarrierTimeoutError);
    expect(timedOut).toBeInstanceOf(LockTimeoutError);
    expect(timedOut).toMatchObject({ operation: 'wait', timeout: 300, path: '/bar/t' });
    await expectNoWatch(zk, '/bar/t');
    const controller = new AbortController();
    const aborted = track(barrier.wait({ signal: controller.signal }));
    await waitFor('the watch', () => (zk.watchCount === 1 ? true : undefined), 10_000, 10);
    controller.abort(new Error('shutting down'));
    const err = await aborted.result.catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BarrierAbortedError);
    expect(err).toBeInstanceOf(LockAbortedError);
    expect((err as Error).cause).toMatchObject({ message: 'shutting down' });
    await expectNoWatch(zk, '/bar/t');
    await barrier.remove();
  });

  it("a wait whose client is closed rejects with the client's ClientClosedError", async () => {
    const [a, b] = await Promise.all([space.client(), space.client()]);
    await new Barrier(a, '/bar/c').set();
    const waiting = track(new Barrier(b, '/bar/c').wait());
    await waitFor('the watch', () => (b.watchCount === 1 ? true : undefined), 10_000, 10);
    await b.close();
    await expect(waiting.result).rejects.toBeInstanceOf(ClientClosedError);
    await new Barrier(a, '/bar/c').remove();
  });
});

describe('double barrier - DistributedDoubleBarrier layout', () => {
  it('4 sessions enter together and leave together; ephemeral <uuid> members, a persistent ready, nothing left after', async () => {
    const clients = await Promise.all(Array.from({ length: 4 }, () => space.client()));
    const members = clients.map((zk) => new DoubleBarrier(zk, '/db/a', 4));
    const first = members.slice(0, 3).map((m) => track(m.enter()));
    const names = await space.untilChildren('/db/a', 3);
    for (const n of names) expect(n).toMatch(UUID);
    expect(first.map((e) => e.done())).toEqual([false, false, false]);
    await members[3]!.enter();
    await Promise.all(first.map((e) => e.result));
    const inside = await space.children('/db/a');
    expect(inside).toHaveLength(5);
    expect(inside).toContain('ready');
    const admin = await space.admin();
    expect((await admin.exists(`${space.root}/db/a/ready`))!.ephemeralOwner).toBe(0n);
    for (const [i, m] of members.entries()) {
      expect(m.memberNode).toMatch(/^\/db\/a\//);
      expect((await admin.exists(`${space.root}${m.memberNode!}`))!.ephemeralOwner).toBe(clients[i]!.sessionId);
    }
    for (const zk of clients) expect(zk.watchCount).toBe(0); // enter's ready watch is gone
    const leaving = members.slice(0, 3).map((m) => track(m.leave()));
    await waitFor('three watches', () => (clients.slice(0, 3).every((zk) => zk.watchCount === 1) ? true : undefined), 10_000, 10);
    expect(leaving.map((l) => l.done())).toEqual([false, false, false]);
    await members[3]!.leave();
    await Promise.all(leaving.map((l) => l.result));
    expect(await space.children('/db/a')).toEqual([]);
    for (const m of members) expect(m.memberNode).toBeUndefined();
    // A second round on the same objects.
    await Promise.all(members.map((m) => m.enter({ timeout: 10_000 })));
    await Promise.all(members.map((m) => m.leave({ timeout: 10_000 })));
    expect(await space.children('/db/a')).toEqual([]);
  });

  it('a timed-out or aborted enter removes its member node and its watch', async () => {
    const [zk, other] = await Promise.all([space.client(), space.client()]);
    const member = new DoubleBarrier(zk, '/db/t', 3);
    const timedOut = await member.enter({ timeout: 300 }).catch((e: unknown) => e);
    expect(timedOut).toBeInstanceOf(BarrierTimeoutError);
    expect(timedOut).toMatchObject({ operation: 'enter', timeout: 300 });
    expect(await space.children('/db/t')).toEqual([]);
    expect(member.memberNode).toBeUndefined();
    await expectNoWatch(zk, '/db/t/ready');
    await expect(member.enter({ timeout: 0 })).rejects.toBeInstanceOf(BarrierTimeoutError);
    expect(await space.children('/db/t')).toEqual([]);
    const controller = new AbortController();
    const aborted = track(member.enter({ signal: controller.signal }));
    await space.untilChildren('/db/t', 1);
    await waitFor('the ready watch', () => (zk.watchCount === 1 ? true : undefined), 10_000, 10);
    controller.abort();
    await expect(aborted.result).rejects.toBeInstanceOf(BarrierAbortedError);
    expect(await space.children('/db/t')).toEqual([]);
    await expectNoWatch(zk, '/db/t/ready');
    // The timed-out member was not counted: two more members are not enough for 3.
    const b = new DoubleBarrier(other, '/db/t', 3);
    await expect(b.enter({ timeout: 200 })).rejects.toBeInstanceOf(BarrierTimeoutError);
    expect(await space.children('/db/t')).toEqual([]);
  });

  it('a timed-out leave removes its own node and watch; the others then leave without it', async () => {
    const [a, b] = await Promise.all([space.client(), space.client()]);
    const [ma, mb] = [new DoubleBarrier(a, '/db/l', 2), new DoubleBarrier(b, '/db/l', 2)];
    await Promise.all([ma.enter(), mb.enter()]);
    const err = await ma.leave({ timeout: 300 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BarrierTimeoutError);
    expect(err).toMatchObject({ operation: 'leave' });
    expect(await space.children('/db/l')).toEqual([mb.memberNode!.slice('/db/l/'.length), 'ready'].sort());
    expect(a.watchCount).toBe(0);
    await mb.leave({ timeout: 10_000 });
    expect(await space.children('/db/l')).toEqual([]);
    await expectNoWatch(a, '/db/l');
  });

  it('a member whose session expires or is closed mid-barrier does not hold the others back; its own leave says why', async () => {
    const clients = await Promise.all(Array.from({ length: 4 }, () => space.client()));
    const members = clients.map((zk) => new DoubleBarrier(zk, '/db/k', 4));
    await Promise.all(members.map((m) => m.enter()));
    // Two leave first and wait; then one member's session expires and another's is closed.
    const leaving = members.slice(0, 2).map((m) => track(m.leave()));
    await waitFor('two watches', () => (clients.slice(0, 2).every((zk) => zk.watchCount === 1) ? true : undefined), 10_000, 10);
    // Both wait while the two others are in. (Whether the expiry alone releases them depends on the
    // random member names: when the expired member's node sorts lowest, the leavers were watching
    // it, and one node left that is not theirs ends their leave, as Curator's does.)
    expect(leaving.map((l) => l.done())).toEqual([false, false]);
    await space.expire(clients[2]!);
    await clients[3]!.close();
    await Promise.all(leaving.map((l) => l.result));
    expect(await space.children('/db/k')).toEqual([]);
    const late = await members[2]!.leave().catch((e: unknown) => e);
    expect(late).toBeInstanceOf(LeaseLostError);
    expect((late as Error).message).toMatch(/session expired while leaving/);
    await expect(members[3]!.leave()).rejects.toBeInstanceOf(ClientClosedError); // closed: the client's own error
  });

  it('a member that dies while entering is not counted; one whose node was deleted by hand still leaves (Curator throws "Our path is missing")', async () => {
    const clients = await Promise.all(Array.from({ length: 4 }, () => space.client()));
    const members = clients.map((zk) => new DoubleBarrier(zk, '/db/d', 3));
    const entering = members.slice(0, 2).map((m) => track(m.enter()));
    await space.untilChildren('/db/d', 2);
    await space.expire(clients[1]!);
    await expect(entering[1]!.result).rejects.toBeInstanceOf(LeaseLostError);
    await space.untilChildren('/db/d', 1);
    await members[2]!.enter({ timeout: 0 }).catch(() => undefined); // 2 of 3: not enough
    expect(entering[0]!.done()).toBe(false);
    await Promise.all([members[2]!.enter(), members[3]!.enter(), entering[0]!.result]);
    const admin = await space.admin();
    await admin.delete(`${space.root}${members[0]!.memberNode!}`);
    await Promise.all([members[0]!.leave({ timeout: 10_000 }), members[2]!.leave({ timeout: 10_000 }), members[3]!.leave({ timeout: 10_000 })]);
    expect(await space.children('/db/d')).toEqual([]);
  });

  it('a stale ready node (persistent, left by a round whose members all died) does not let a lone member through', async () => {
    const [zk, other] = await Promise.all([space.client(), space.client()]);
    const admin = await space.admin();
    await admin.create(`${space.root}/db/s/ready`, null, { parents: true });
    const lone = new DoubleBarrier(zk, '/db/s', 2);
    await expect(lone.enter({ timeout: 300 })).rejects.toBeInstanceOf(BarrierTimeoutError);
    expect(await space.children('/db/s')).toEqual([]);
    await Promise.all([lone.enter(), new DoubleBarrier(other, '/db/s', 2).enter()]);
    expect(await space.children('/db/s')).toHaveLength(3);
  });

  it('a ready node made after this member joined lets it through, even when the member that made it has already left again', async () => {
    const zk = await space.client();
    const admin = await space.admin();
    const member = new DoubleBarrier(zk, '/db/r', 2);
    const entering = track(member.enter({ timeout: 10_000 }));
    await space.untilChildren('/db/r', 1);
    // The other member enters, opens the barrier and leaves again in one step, before this one
    // looks at the listing (seen in a CI run: this one then took ready for a stale node, deleted
    // it, and waited out its timeout while the other waited for it to leave).
    const other = `${space.root}/db/r/00000000-0000-4000-8000-000000000000`;
    await admin.transaction().create(other, null, { mode: CreateMode.EPHEMERAL }).create(`${space.root}/db/r/ready`).delete(other).commit();
    await entering.result;
    await member.leave({ timeout: 10_000 });
    expect(await space.children('/db/r')).toEqual([]);
  });
});

describe('barriers - acl option', () => {
  it('puts the acl on the barrier node, the member nodes, ready and the container parents they make', async () => {
    const [a, b] = await Promise.all([space.client(), space.client()]);
    const acl = [{ perms: Perm.ALL & ~Perm.ADMIN, id: ANYONE_ID_UNSAFE }];
    const admin = await space.admin();
    const aclOf = async (path: string) => (await admin.getACL(`${space.root}${path}`)).acl;
    await new Barrier(a, '/acl/bar/x', { acl }).set();
    expect(await aclOf('/acl/bar/x')).toEqual(acl);
    expect(await aclOf('/acl/bar')).toEqual(acl);
    await new Barrier(a, '/acl/bar/x').remove();
    const members = [new DoubleBarrier(a, '/acl/db/y', 2, { acl }), new DoubleBarrier(b, '/acl/db/y', 2, { acl })];
    await Promise.all(members.map((m) => m.enter()));
    expect(await aclOf('/acl/db/y/ready')).toEqual(acl);
    expect(await aclOf(members[0]!.memberNode!)).toEqual(acl);
    expect(await aclOf('/acl/db/y')).toEqual(acl);
    await Promise.all(members.map((m) => m.leave()));
    expect(() => new DoubleBarrier(a, '/acl/db/y', 2, { acl: [{ perms: 99, id: ANYONE_ID_UNSAFE }] })).toThrow(InvalidArgumentError);
  });
});

describe('barriers - bad input and misuse', () => {
  it('refuses bad paths, member counts and options before anything is sent; enter twice and leave outside are LockStateError', async () => {
    const zk = await space.client();
    const sent: unknown[] = [];
    const onStart = (m: unknown) => sent.push(m);
    subscribe(ChannelName.requestStart, onStart);
    try {
      for (const path of ['relative', '/a//b', '/a/', '']) {
        expect(() => new Barrier(zk, path)).toThrow(InvalidArgumentError);
        expect(() => new DoubleBarrier(zk, path, 2)).toThrow(InvalidArgumentError);
      }
      expect(() => new DoubleBarrier(zk, '/', 2)).toThrow(InvalidArgumentError);
      for (const n of [0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 31, '2', null]) {
        expect(() => new DoubleBarrier(zk, '/db/bad', n as number)).toThrow(InvalidArgumentError);
      }
      expect(() => new Barrier(zk, '/bar/bad', { data: 5 as unknown as string })).toThrow(InvalidArgumentError);
      const barrier = new Barrier(zk, '/bar/bad');
      const member = new DoubleBarrier(zk, '/db/bad', 2);
      for (const timeout of [-1, Number.NaN, Number.POSITIVE_INFINITY, '5']) {
        await expect(barrier.wait({ timeout: timeout as number })).rejects.toBeInstanceOf(InvalidArgumentError);
        await expect(member.enter({ timeout: timeout as number })).rejects.toBeInstanceOf(InvalidArgumentError);
      }
      await expect(member.enter({ signal: 'no' as unknown as AbortSignal })).rejects.toBeInstanceOf(InvalidArgumentError);
      await expect(member.enter({ signal: AbortSignal.abort() })).rejects.toBeInstanceOf(BarrierAbortedError);
      await expect(barrier.wait({ signal: AbortSignal.abort() })).rejects.toBeInstanceOf(BarrierAbortedError);
      await expect(member.leave()).rejects.toBeInstanceOf(LockStateError);
    } finally {
      unsubscribe(ChannelName.requestStart, onStart);
    }
    expect(sent).toEqual([]);
    const [a, b] = [new DoubleBarrier(zk, '/db/twice', 1), new DoubleBarrier(zk, '/db/twice', 1)];
    await a.enter();
    await expect(a.enter()).rejects.toBeInstanceOf(LockStateError);
    await b.enter(); // memberCount 1: open at once
    await Promise.all([a.leave(), b.leave()]);
    await expect(a.leave()).rejects.toBeInstanceOf(LockStateError);
    expect(await space.children('/db/twice')).toEqual([]);
  });
});

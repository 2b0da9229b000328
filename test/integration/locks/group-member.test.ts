/**
 * GroupMember (Curator 5.4's recipes.nodes.GroupMember layout) against the real server: members
 * of several sessions see each other with their payloads, joins, payload changes and leaves
 * (closed, expired), a member that re-appears in its RenewingClient's next session, a member list
 * that survives a disconnection, and bad input refused before anything is sent. The list is a
 * TreeCache (a persistent recursive watch) on 3.6+, a listing kept by one-shot watches on 3.4.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CREATOR_ALL_ACL, CreateMode, InvalidArgumentError, NoAuthError, Perm } from '@zk/protocol';
import { GroupMember, LockStateError, RenewingClient, type GroupChange } from '@zk/locks';
import { waitFor } from '../../harness/index.js';
import { TestSpace } from '../../harness/fixtures.js';
import { behindProxy } from './behind-proxy.js';

let space: TestSpace;

beforeEach(() => {
  space = new TestSpace();
});

afterEach(async () => {
  expect((await space.close()).leakedWatches).toBe(0);
});

/** A member's view as id -> payload text, sorted by id. */
function view(member: GroupMember): Record<string, string> {
  return Object.fromEntries([...member.currentMembers()].sort(([a], [b]) => (a < b ? -1 : 1)).map(([id, p]) => [id, p.toString()]));
}

/** Waits until `member` sees exactly `expected`. */
function untilView(member: GroupMember, expected: Record<string, string>): Promise<true> {
  const want = JSON.stringify(expected);
  return waitFor(`${member.id} sees ${want}`, () => (JSON.stringify(view(member)) === want ? true : undefined), 10_000, 10);
}

describe('GroupMember', () => {
  it('three sessions: each sees every member with its payload; a payload change and a leave reach the others as changes', async () => {
    const clients = await Promise.all([1, 2, 3].map(() => space.client()));
    const members = clients.map((zk, i) => new GroupMember(zk, '/groups/g1', `m${i + 1}`, { payload: `p${i + 1}` }));
    const changes: GroupChange[] = [];
    members[0]!.onChange((c) => changes.push(c));
    await Promise.all(members.map((m) => m.start()));
    expect(view(members[0]!)).toMatchObject({ m1: 'p1' }); // its own id at once, as Curator's getCurrentMembers
    await Promise.all(members.map((m) => m.waitForInitialCreate({ timeout: 5_000 })));
    const all = { m1: 'p1', m2: 'p2', m3: 'p3' };
    for (const m of members) await untilView(m, all);
    const node = await (await space.admin()).exists(`${space.root}/groups/g1/m2`);
    expect(node!.ephemeralOwner).toBe(clients[1]!.sessionId);
    await members[1]!.setThisData('p2b');
    for (const m of members) await untilView(m, { ...all, m2: 'p2b' });
    await members[2]!.close();
    for (const m of members.slice(0, 2)) await untilView(m, { m1: 'p1', m2: 'p2b' });
    expect(changes.map((c) => `${c.type} ${c.id} ${c.payload.toString()}`)).toEqual(expect.arrayContaining(['joined m2 p2', 'joined m3 p3', 'changed m2 p2b', 'left m3 p3']));
    expect(await space.children('/groups/g1')).toEqual(['m1', 'm2']);
    const iterated: string[] = [];
    const loop = (async () => {
      for await (const c of members[0]!.changes()) iterated.push(c.id);
      return 'ended';
    })();
    await members[1]!.close();
    await waitFor('m2 left in the loop', () => (iterated.includes('m2') ? true : undefined), 10_000, 10);
    await Promise.all(members.map((m) => m.close()));
    expect(await loop).toBe('ended'); // close() ends the changes() loops
    expect(await space.children('/groups/g1')).toEqual([]);
  });

  it('an expired member leaves every view; with a RenewingClient it re-appears in its next session', async () => {
    const [watcherZk, plainZk] = await Promise.all([space.client(), space.client()]);
    await using sessions = new RenewingClient(() => space.client());
    await using watcher = new GroupMember(watcherZk, '/groups/g2', 'watcher', { payload: 'w' });
    await using plain = new GroupMember(plainZk, '/groups/g2', 'plain', { payload: 'x' });
    await using renewing = new GroupMember(sessions, '/groups/g2', 'renewing', { payload: 'r' });
    await Promise.all([watcher.start(), plain.start(), renewing.start()]);
    await untilView(watcher, { plain: 'x', renewing: 'r', watcher: 'w' });
    const seen: string[] = [];
    const stop = new AbortController();
    const iterating = (async () => {
      for await (const c of watcher.changes({ signal: stop.signal })) seen.push(`${c.type} ${c.id}`);
    })();
    await space.expire(plainZk);
    await untilView(watcher, { renewing: 'r', watcher: 'w' });
    const firstOwner = sessions.current!.sessionId;
    await space.expire(sessions.current!);
    await waitFor('the next session', () => (sessions.current && sessions.current.sessionId !== firstOwner && sessions.current.state === 'connected' ? true : undefined), 10_000, 10);
    await waitFor('renewing back under its new session', async () => {
      const stat = await (await space.admin()).exists(`${space.root}/groups/g2/renewing`);
      return stat && stat.ephemeralOwner === sessions.current!.sessionId ? true : undefined;
    }, 10_000, 10);
    await untilView(watcher, { renewing: 'r', watcher: 'w' });
    await untilView(renewing, { renewing: 'r', watcher: 'w' });
    stop.abort();
    await iterating;
    expect(seen).toContain('left plain');
    // the expiry of `renewing` showed as a leave and a join, or not at all if the re-create came first
    expect(seen.filter((s) => s.endsWith(' renewing')).length % 2).toBe(0);
  });

  it('a member behind a proxy stays in the group across a disconnection, and sees what changed meanwhile', async () => {
    await behindProxy(space, async ({ zk, disconnect, reconnect }) => {
      const other = await space.client();
      const member = new GroupMember(zk, '/groups/g3', 'behind-proxy', { payload: 'a' });
      const peer = new GroupMember(other, '/groups/g3', 'peer', { payload: 'b' });
      await Promise.all([member.start(), peer.start()]);
      await untilView(peer, { 'behind-proxy': 'a', peer: 'b' });
      await disconnect();
      await peer.setThisData('b2');
      await other.create('/groups/g3/late', 'c', { mode: CreateMode.EPHEMERAL });
      await reconnect();
      await untilView(member, { 'behind-proxy': 'a', late: 'c', peer: 'b2' });
      await untilView(peer, { 'behind-proxy': 'a', late: 'c', peer: 'b2' });
      await Promise.all([member.close(), peer.close()]);
      expect(zk.watchCount).toBe(0);
    });
  });

  it('the acl option on the member node and the group\'s container parents; another identity cannot delete the member', async () => {
    const [zk, intruder] = await Promise.all([space.client(), space.client()]);
    await zk.addAuth('digest', 'owner:secret');
    await using member = new GroupMember(zk, '/groups/acl/g', 'm1', { payload: 'p', acl: CREATOR_ALL_ACL });
    await member.start();
    await member.waitForInitialCreate({ timeout: 5_000 });
    for (const p of ['/groups', '/groups/acl', '/groups/acl/g', '/groups/acl/g/m1']) {
      expect((await zk.getACL(p)).acl).toEqual([{ perms: Perm.ALL, id: { scheme: 'digest', id: expect.stringMatching(/^owner:/) } }]);
    }
    await expect(intruder.delete('/groups/acl/g/m1')).rejects.toBeInstanceOf(NoAuthError);
    await member.close();
    for (const p of ['/groups/acl/g', '/groups/acl', '/groups']) await zk.delete(p);
  });

  it('bad input throws InvalidArgumentError before anything is sent; misuse is a LockStateError', async () => {
    const zk = await space.client();
    for (const make of [
      () => new GroupMember(zk, 'groups', 'a'),
      () => new GroupMember(zk, '/groups', ''),
      () => new GroupMember(zk, '/groups', 'a/b'),
      () => new GroupMember(zk, '/groups', '..'),
      () => new GroupMember(zk, '/groups', 'a', { payload: 3 as never }),
      () => new GroupMember(zk, '/groups', 'a', { acl: [] }),
    ]) {
      expect(make).toThrow(InvalidArgumentError);
    }
    expect(await zk.getChildren('/')).toEqual([]);
    const member = new GroupMember(zk, '/groups/g4', 'a');
    await member.start();
    await expect(member.start()).rejects.toBeInstanceOf(LockStateError);
    await member.close();
    await expect(member.setThisData('x')).rejects.toBeInstanceOf(LockStateError);
  });
});

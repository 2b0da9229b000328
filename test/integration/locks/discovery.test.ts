/**
 * Service discovery (Curator's curator-x-discovery layout) against the real server: register,
 * query and unregister; node modes per service type; round-robin order; a cache seeing register,
 * update and unregister; re-registration after a reconnect (node deleted meanwhile) and after
 * session expiry (RenewingClient); close leaving no instance node and no watch; the acl option;
 * waits with timeout and signal; bad input refused before any request.
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ANYONE_ID_UNSAFE, ChannelName, InvalidArgumentError, Perm, ZooKeeper } from '@zk/protocol';
import {
  DiscoveryAbortedError,
  DiscoveryError,
  DiscoveryTimeoutError,
  RandomStrategy,
  RenewingClient,
  RoundRobinStrategy,
  ServiceDiscovery,
  StickyStrategy,
  type ServiceCacheEvent,
} from '@zk/locks';
import { isZooKeeper34, waitFor, waitForState } from '../../harness/index.js';
import { proxyToServer, TestSpace } from '../../harness/fixtures.js';

/** The service cache rests on persistent recursive watches (3.6+). */
const noCache = isZooKeeper34();

let space: TestSpace;

beforeEach(() => {
  space = new TestSpace();
});

afterEach(async () => {
  expect((await space.close()).leakedWatches).toBe(0);
});

async function nodeData(path: string): Promise<{ json: Record<string, unknown>; ephemeralOwner: bigint } | undefined> {
  const admin = await space.admin();
  const found = await admin.getData(`${space.root}${path}`).catch(() => undefined);
  return found && { json: JSON.parse(found.data.toString()) as Record<string, unknown>, ephemeralOwner: found.stat.ephemeralOwner };
}

describe('discovery - register, query, unregister', () => {
  it('writes basePath/name/id with Curator JSON; queries see it; unregister deletes it', async () => {
    const zk = await space.client();
    await using discovery = await ServiceDiscovery.open(zk, { basePath: '/services' });
    const a = await discovery.register({ name: 'api', id: 'a', address: '10.0.0.1', port: 8080, payload: { region: 'eu' }, uriSpec: '{scheme}://{address}:{port}' });
    const b = await discovery.register({ name: 'api', port: 8081, sslPort: 8443 });
    await discovery.register({ name: 'web', id: 'w', port: 80 });
    expect(b.id).toMatch(/^[0-9a-f-]{36}$/);
    const node = await nodeData('/services/api/a');
    expect(node!.ephemeralOwner).toBe(zk.sessionId);
    expect(Object.keys(node!.json)).toEqual(['name', 'id', 'address', 'port', 'sslPort', 'payload', 'registrationTimeUTC', 'serviceType', 'uriSpec']);
    expect(node!.json.payload).toEqual({ '@class': 'java.util.LinkedHashMap', region: 'eu' });
    expect(await discovery.queryForNames()).toEqual(['api', 'web']);
    const all = await discovery.queryForInstances('api');
    expect(all.map((i) => i.id).sort()).toEqual(['a', b.id].sort());
    expect(await discovery.queryForInstance('api', 'a')).toEqual(a);
    expect(await discovery.queryForInstance('api', 'nope')).toBeUndefined();
    expect(await discovery.queryForInstances('none')).toEqual([]);
    expect(discovery.registered.map((i) => i.id).sort()).toEqual(['a', b.id, 'w'].sort());
    await discovery.unregister(a);
    await discovery.unregister('a'); // twice: nothing
    expect(await nodeData('/services/api/a')).toBeUndefined();
    expect((await discovery.queryForInstances('api')).map((i) => i.id)).toEqual([b.id]);
  });

  it('service types: DYNAMIC ephemeral, STATIC/PERMANENT persistent, DYNAMIC_SEQUENTIAL ephemeral with a suffix; registering an id again replaces it', async () => {
    const zk = await space.client();
    const other = await space.client();
    await using discovery = await ServiceDiscovery.open(zk, { basePath: '/s' });
    await discovery.register({ name: 'x', id: 'st', serviceType: 'STATIC' });
    await discovery.register({ name: 'x', id: 'pe', serviceType: 'PERMANENT' });
    await discovery.register({ name: 'x', id: 'sq', serviceType: 'DYNAMIC_SEQUENTIAL' });
    expect((await nodeData('/s/x/st'))!.ephemeralOwner).toBe(0n);
    expect((await nodeData('/s/x/pe'))!.ephemeralOwner).toBe(0n);
    const children = await space.children('/s/x');
    const seq = children.find((c) => c.startsWith('sq'))!;
    expect(seq).toMatch(/^sq\d{10}$/);
    expect((await nodeData(`/s/x/${seq}`))!.ephemeralOwner).toBe(zk.sessionId);
    expect((await discovery.queryForInstance('x', seq))!.id).toBe('sq'); // the JSON keeps the id without suffix
    // Another session registering the same DYNAMIC id deletes ours and creates its own (Curator).
    await discovery.register({ name: 'x', id: 'dup', port: 1 });
    await using second = await ServiceDiscovery.open(other, { basePath: '/s' });
    await second.register({ name: 'x', id: 'dup', port: 2 });
    expect((await nodeData('/s/x/dup'))!.ephemeralOwner).toBe(other.sessionId);
    await discovery.close();
    expect((await space.children('/s/x')).sort()).toEqual(['dup']); // persistent ones deleted too, the other session's kept
  });

  it('update rewrites the node; an unknown id is DiscoveryError not-registered; enabled false needs writeEnabled', async () => {
    const zk = await space.client();
    await using discovery = await ServiceDiscovery.open(zk, { basePath: '/s' });
    const a = await discovery.register({ name: 'x', id: 'a', port: 1, payload: { v: 1 } });
    const updated = await discovery.update({ ...a, payload: { v: 2 } });
    expect((await nodeData('/s/x/a'))!.json.payload).toEqual({ '@class': 'java.util.LinkedHashMap', v: 2 });
    expect(updated.registrationTimeUTC).toBe(a.registrationTimeUTC);
    await expect(discovery.update({ name: 'x', id: 'zz' })).rejects.toSatisfy((e) => e instanceof DiscoveryError && e.kind === 'not-registered');
    await expect(discovery.update({ ...a, name: 'y' })).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(discovery.update({ ...a, enabled: false })).rejects.toBeInstanceOf(InvalidArgumentError);
    await using full = await ServiceDiscovery.open(zk, { basePath: '/s', writeEnabled: true });
    const b = await full.register({ name: 'x', id: 'b' });
    await full.update({ ...b, enabled: false });
    expect((await nodeData('/s/x/b'))!.json.enabled).toBe(false);
    expect((await discovery.queryForInstance('x', 'b'))!.enabled).toBe(false);
  });

  it('a node that is not an instance: queries fail with DiscoveryError not-an-instance naming it', async () => {
    const zk = await space.client();
    await using discovery = await ServiceDiscovery.open(zk, { basePath: '/s' });
    await zk.create('/s/x/junk', '{"name":"x","port":"eighty"}', { parents: true });
    await expect(discovery.queryForInstance('x', 'junk')).rejects.toSatisfy((e) => e instanceof DiscoveryError && e.kind === 'not-an-instance' && e.path === '/s/x/junk');
    await expect(discovery.queryForInstances('x')).rejects.toBeInstanceOf(DiscoveryError);
    await zk.delete('/s/x/junk');
  });

  it('a register aborted or timed out leaves no node behind (its create may still be applied: swept)', async () => {
    const zk = await space.client();
    await using discovery = await ServiceDiscovery.open(zk, { basePath: '/s' });
    await discovery.register({ name: 'x', id: 'first' }); // the parents exist
    const controller = new AbortController();
    const aborted = discovery.register({ name: 'x', id: 'aborted' }, { signal: controller.signal });
    controller.abort(new Error('stop'));
    await expect(aborted).rejects.toThrow();
    // timeout 0: one try with no waiting. Its create may win the race with the deadline (it did
    // once in CI): then it is registered; otherwise it leaves nothing. Either way the two agree.
    const late = await discovery.register({ name: 'x', id: 'late' }, { timeout: 0 }).then(
      () => true,
      () => false,
    );
    await expect(discovery.register({ name: 'x', id: 'pre' }, { signal: AbortSignal.abort() })).rejects.toThrow();
    const expected = late ? ['first', 'late'] : ['first'];
    await space.untilChildren('/s/x', expected.length);
    await zk.sync('/s/x');
    expect(await space.children('/s/x')).toEqual(expected);
    expect(discovery.registered.map((i) => i.id).sort()).toEqual(expected);
  });

  it('acl option: instance nodes and the container parents they make', async () => {
    const zk = await space.client();
    const acl = [{ perms: Perm.ALL & ~Perm.ADMIN, id: ANYONE_ID_UNSAFE }];
    await using discovery = await ServiceDiscovery.open(zk, { basePath: '/acl/services', acl });
    await discovery.register({ name: 'x', id: 'a' });
    const admin = await space.admin();
    for (const p of ['/acl/services/x/a', '/acl/services/x', '/acl/services', '/acl']) expect((await admin.getACL(`${space.root}${p}`)).acl, p).toEqual(acl);
  });
});

describe.skipIf(noCache)(`discovery - cache and provider${noCache ? ' (skipped: ZooKeeper 3.4 has no persistent watches)' : ''}`, () => {
  it('the cache sees register, update and unregister from another session, as listener and stream', async () => {
    const [zk, other] = await Promise.all([space.client(), space.client()]);
    await using discovery = await ServiceDiscovery.open(zk, { basePath: '/s' });
    await using writer = await ServiceDiscovery.open(other, { basePath: '/s' });
    await writer.register({ name: 'x', id: 'pre' });
    await using cache = await discovery.cache('x');
    expect(cache.instances.map((i) => i.id)).toEqual(['pre']);
    const heard: string[] = [];
    cache.onChange((e) => heard.push(`${e.type} ${e.type === 'removed' ? e.previous.id : e.instance.id}`));
    const stream = cache.changes();
    const a = await writer.register({ name: 'x', id: 'a', payload: { v: 1 } });
    await cache.waitFor((l) => l.length === 2, { timeout: 5_000 });
    await writer.update({ ...a, payload: { v: 2 } });
    await cache.waitFor((l) => (l.find((i) => i.id === 'a')?.payload as { v?: number } | null)?.v === 2, { timeout: 5_000 });
    await writer.unregister('a');
    await cache.waitFor((l) => l.length === 1, { timeout: 5_000 });
    expect(heard).toEqual(['added a', 'updated a', 'removed a']);
    const events: ServiceCacheEvent[] = [];
    for await (const e of stream) {
      events.push(e);
      if (events.length === 3) break;
    }
    expect(events.map((e) => e.type)).toEqual(['added', 'updated', 'removed']);
    expect(events[1]!.type === 'updated' && events[1]!.previous.payload).toEqual({ v: 1 });
    // A node that is not an instance is left out and listed as invalid, until it goes.
    await other.create('/s/x/junk', 'not json');
    await waitFor('junk listed invalid', () => (cache.invalid.has('junk') ? true : undefined), 5_000, 10);
    expect(cache.invalid.get('junk')).toBeInstanceOf(DiscoveryError);
    expect(cache.instances.map((i) => i.id)).toEqual(['pre']);
    await other.delete('/s/x/junk');
    await waitFor('junk gone', () => (cache.invalid.size === 0 ? true : undefined), 5_000, 10);
    expect(heard).toEqual(['added a', 'updated a', 'removed a']);
  });

  it('providers: round robin in node-name order, random within the set, sticky until its instance goes; disabled skipped', async () => {
    const zk = await space.client();
    await using discovery = await ServiceDiscovery.open(zk, { basePath: '/s', writeEnabled: true });
    for (const id of ['c', 'a', 'b']) await discovery.register({ name: 'x', id });
    await using rr = await discovery.provider('x', { strategy: new RoundRobinStrategy() });
    await waitFor('3 instances', () => (rr.getAllInstances().length === 3 ? true : undefined), 5_000, 10);
    expect(Array.from({ length: 7 }, () => rr.getInstance()!.id)).toEqual(['a', 'b', 'c', 'a', 'b', 'c', 'a']);
    await using byDefault = await discovery.provider('x'); // round robin too, as Curator's builder
    expect((await byDefault.waitForInstance({ timeout: 5_000 })).id).toBe('a');
    await using random = await discovery.provider('x', { strategy: new RandomStrategy() });
    await waitFor('3 instances', () => (random.getAllInstances().length === 3 ? true : undefined), 5_000, 10);
    const picked = new Set(Array.from({ length: 60 }, () => random.getInstance()!.id));
    expect([...picked].sort()).toEqual(['a', 'b', 'c']);
    await using sticky = await discovery.provider('x', { strategy: new StickyStrategy() });
    await waitFor('3 instances', () => (sticky.getAllInstances().length === 3 ? true : undefined), 5_000, 10);
    const first = sticky.getInstance()!.id;
    expect(Array.from({ length: 5 }, () => sticky.getInstance()!.id)).toEqual(Array(5).fill(first));
    await discovery.unregister(first);
    await waitFor('2 instances', () => (sticky.getAllInstances().length === 2 ? true : undefined), 5_000, 10);
    const second = sticky.getInstance()!.id;
    expect(second).not.toBe(first);
    const b = (await discovery.queryForInstance('x', second))!;
    await discovery.update({ ...b, enabled: false });
    await waitFor('1 enabled', () => (sticky.getAllInstances().length === 1 ? true : undefined), 5_000, 10);
    expect(sticky.getInstance()!.id).not.toBe(second);
    await using filtered = await discovery.provider('x', { filter: () => false });
    expect(filtered.getInstance()).toBeUndefined();
    await expect(filtered.waitForInstance({ timeout: 100 })).rejects.toBeInstanceOf(DiscoveryTimeoutError);
  });

  it('waits: timeout, signal (already aborted and mid-wait), the cache closed; no watch left', async () => {
    const zk = await space.client();
    const discovery = await ServiceDiscovery.open(zk, { basePath: '/s' });
    const cache = await discovery.cache('x');
    await expect(cache.waitFor(undefined, { timeout: 0 })).rejects.toBeInstanceOf(DiscoveryTimeoutError);
    await expect(cache.waitFor(undefined, { timeout: 150 })).rejects.toBeInstanceOf(DiscoveryTimeoutError);
    await expect(cache.waitFor(undefined, { signal: AbortSignal.abort('x') })).rejects.toBeInstanceOf(DiscoveryAbortedError);
    const controller = new AbortController();
    const aborted = cache.waitFor(undefined, { signal: controller.signal });
    controller.abort(new Error('stop'));
    await expect(aborted).rejects.toSatisfy((e) => e instanceof DiscoveryAbortedError && (e.cause as Error).message === 'stop');
    const pending = cache.waitFor();
    pending.catch(() => undefined); // it rejects while close() runs, before the check below: handled now
    const stream = cache.changes();
    await discovery.close();
    await expect(pending).rejects.toSatisfy((e) => e instanceof DiscoveryError && e.kind === 'closed');
    expect((await stream.next()).done).toBe(true);
    expect(cache.closed).toBe(true);
    expect(zk.watchCount).toBe(0);
    await expect(discovery.register({ name: 'x' })).rejects.toSatisfy((e) => e instanceof DiscoveryError && e.kind === 'closed');
  });

  it('close unregisters every instance and removes every watch (locally and on the server)', async () => {
    const zk = await space.client();
    const discovery = await ServiceDiscovery.open(zk, { basePath: '/s' });
    await discovery.register({ name: 'x', id: 'a' });
    await discovery.register({ name: 'y', id: 'b', serviceType: 'STATIC' });
    await discovery.cache('x');
    await discovery.provider('y');
    expect(zk.watchCount).toBeGreaterThan(0);
    await discovery.close();
    await discovery.close(); // idempotent
    expect(await space.children('/s/x')).toEqual([]);
    expect(await space.children('/s/y')).toEqual([]);
    expect(zk.watchCount).toBe(0);
    expect(await zk.checkWatches('/s/x')).toBe(false);
    expect(await zk.checkWatches('/s/y')).toBe(false);
  });
});

describe('discovery - sessions', () => {
  it('after a reconnect a node deleted meanwhile is registered again', async () => {
    await space.admin(); // the namespace
    const proxy = await proxyToServer();
    const zk = await ZooKeeper.connect(`${proxy.connectString}${space.root}`, { sessionTimeout: 10_000, connectTimeout: 2_000 });
    try {
      const discovery = await ServiceDiscovery.open(zk, { basePath: '/s' });
      await discovery.register({ name: 'x', id: 'a' });
      const suspended = waitForState(zk, 'suspended');
      proxy.block(); // the session lives on, the connection is gone
      await suspended;
      const admin = await space.admin();
      await admin.delete(`${space.root}/s/x/a`);
      proxy.unblock();
      await waitFor('re-registered', async () => (await nodeData('/s/x/a'))?.ephemeralOwner === zk.sessionId || undefined, 15_000, 20);
      await discovery.close();
      expect(await space.children('/s/x')).toEqual([]);
    } finally {
      await zk.close();
      await proxy.close();
    }
  });

  it('after session expiry a discovery on a RenewingClient registers its instances on the next session and its cache follows', async () => {
    const clients: ZooKeeper[] = [];
    await using sessions = new RenewingClient(async () => {
      const zk = await space.client();
      clients.push(zk);
      return zk;
    });
    const discovery = await ServiceDiscovery.open(sessions, { basePath: '/s' });
    await discovery.register({ name: 'x', id: 'a', port: 1 });
    await discovery.register({ name: 'x', id: 'p', serviceType: 'PERMANENT' });
    const cache = noCache ? undefined : await discovery.cache('x');
    await cache?.waitFor((l) => l.length === 2, { timeout: 5_000 });
    const removed: string[] = [];
    cache?.onChange((e) => e.type === 'removed' && removed.push(e.previous.id));
    const first = discovery.zk;
    await space.expire(first);
    await waitFor('a new session', () => (discovery.zk !== first ? true : undefined), 10_000, 10);
    const node = await waitFor('a again', async () => {
      const n = await nodeData('/s/x/a');
      return n && n.ephemeralOwner === discovery.zk.sessionId ? n : undefined;
    }, 10_000, 20);
    expect(node.json.port).toBe(1);
    expect((await nodeData('/s/x/p'))!.ephemeralOwner).toBe(0n);
    if (cache) {
      // The instance left with the old session and came back with the new one.
      await cache.waitFor((l) => l.length === 2, { timeout: 10_000 });
      expect(cache.instances.map((i) => i.id)).toEqual(['a', 'p']);
      expect(cache.closed).toBe(false);
    }
    await discovery.close();
    expect(await space.children('/s/x')).toEqual([]);
    expect(clients.length).toBe(2);
    expect(removed.every((id) => id === 'a')).toBe(true);
  });

  it.skipIf(noCache)('without a RenewingClient an expired session ends the cache with SessionExpiredError', async () => {
    const zk = await space.client();
    const discovery = await ServiceDiscovery.open(zk, { basePath: '/s' });
    await discovery.register({ name: 'x', id: 'a' });
    const cache = await discovery.cache('x');
    const wait = cache.waitFor((l) => l.length === 2);
    // It rejects while the expiry is still being made (in CI's 3.9.3 pass at 2adbf14, before the check
    // below was attached, and vitest failed the run): handled now, checked below.
    wait.catch(() => undefined);
    await space.expire(zk);
    await expect(wait).rejects.toMatchObject({ name: 'SessionExpiredError' });
    expect(cache.closed).toBe(true);
    await expect(discovery.register({ name: 'x', id: 'b' })).rejects.toMatchObject({ name: 'SessionExpiredError' });
    await discovery.close(); // the ephemeral instance went with the session: nothing to delete, no error
    expect(await space.children('/s/x')).toEqual([]);
  });
});

describe('discovery - bad input', () => {
  it('refuses bad names, ids, ports, payloads and options before any request', async () => {
    const zk = await space.client();
    const sent: unknown[] = [];
    const onStart = (m: unknown) => sent.push(m);
    await using discovery = await ServiceDiscovery.open(zk, { basePath: '/s' });
    subscribe(ChannelName.requestStart, onStart);
    try {
      await expect(ServiceDiscovery.open(zk, { basePath: 'relative' })).rejects.toBeInstanceOf(InvalidArgumentError);
      await expect(ServiceDiscovery.open(zk, { basePath: '/s', acl: [] })).rejects.toBeInstanceOf(InvalidArgumentError);
      await expect(ServiceDiscovery.open({} as ZooKeeper, { basePath: '/s' })).rejects.toBeInstanceOf(InvalidArgumentError);
      await expect(ServiceDiscovery.open(zk, null as never)).rejects.toBeInstanceOf(InvalidArgumentError);
      for (const bad of [{ name: 'a/b' }, { name: '' }, { name: 'x', id: '..' }, { name: 'x', port: 65536 }, { name: 'x', sslPort: '443' }, { name: 'x', payload: { f: Symbol('s') } }, { name: 'x', serviceType: 'EPHEMERAL' }, { name: 'x', uriSpec: '{' }]) {
        await expect(discovery.register(bad as never), JSON.stringify(bad)).rejects.toBeInstanceOf(InvalidArgumentError);
      }
      await expect(discovery.queryForInstances('a/b')).rejects.toBeInstanceOf(InvalidArgumentError);
      await expect(discovery.queryForInstance('x', '')).rejects.toBeInstanceOf(InvalidArgumentError);
      await expect(discovery.unregister('a/b')).rejects.toBeInstanceOf(InvalidArgumentError);
      await expect(discovery.cache('x', { timeout: -1 })).rejects.toBeInstanceOf(InvalidArgumentError);
      await expect(discovery.provider('x', { strategy: {} as never })).rejects.toBeInstanceOf(InvalidArgumentError);
    } finally {
      unsubscribe(ChannelName.requestStart, onStart);
    }
    expect(sent).toEqual([]);
  });
});

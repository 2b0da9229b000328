import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  ChannelName,
  ConnectionLossError,
  CreateMode,
  digestACL,
  RequestTimeoutError,
  ZooKeeper,
  type RequestFinishMessage,
  type StateChange,
} from '@zk/protocol';
import { waitFor, waitForState, type TcpProxy } from '../../harness/index.js';
import { proxyToServer, TestSpace } from '../../harness/fixtures.js';

let space: TestSpace;
let proxy: TcpProxy;

beforeEach(async () => {
  space = new TestSpace();
  await space.admin();
  proxy = await proxyToServer();
});

afterEach(async () => {
  await proxy.close();
  expect((await space.close()).leakedWatches).toBe(0);
});

function viaProxy(options: Parameters<TestSpace['client']>[0] = {}): Promise<ZooKeeper> {
  return ZooKeeper.connect(`${proxy.connectString}${space.root}`, { sessionTimeout: 10_000, connectTimeout: 2000, ...options });
}

describe('reconnect - requests and credentials', () => {
  it('re-sends digest credentials on every reconnect', async () => {
    await using zk = await viaProxy({ auth: [{ scheme: 'digest', auth: 'erin:pw' }] });
    await zk.create('/secret', 'x', { acl: digestACL('erin', 'pw') });
    proxy.cut();
    await waitForState(zk, 'suspended');
    await waitForState(zk, 'connected');
    expect((await zk.getData('/secret')).data.toString()).toBe('x');
  });

  it('fails in-flight requests with ConnectionLoss and never resends them', async () => {
    await using zk = await viaProxy();
    await zk.create('/q');
    proxy.pause('down'); // the server applies the create, its reply is held
    const create = zk.create('/q/n-', null, { mode: CreateMode.PERSISTENT_SEQUENTIAL });
    const admin = await space.admin();
    await waitFor('the create to be applied', async () => ((await admin.getChildren(`${space.root}/q`)).length === 1 ? true : undefined));
    proxy.cut();
    proxy.resume();
    const err = await create.catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConnectionLossError);
    expect((err as ConnectionLossError).isRetryable).toBe(true);
    await waitForState(zk, 'connected');
    await zk.sync('/');
    expect(await zk.getChildren('/q')).toHaveLength(1);
  });

  it("whileDisconnected 'wait' holds a request until the reconnect; 'fail' rejects at once", async () => {
    await using waiting = await viaProxy({ whileDisconnected: 'wait' });
    await using failing = await viaProxy();
    proxy.block();
    await Promise.all([waitForState(waiting, 'suspended'), waitForState(failing, 'suspended')]);
    await expect(failing.exists('/')).rejects.toBeInstanceOf(ConnectionLossError);
    const held = waiting.exists('/');
    const timedOut = waiting.create('/late', null, { timeout: 200 });
    await expect(timedOut).rejects.toBeInstanceOf(RequestTimeoutError);
    proxy.unblock();
    expect(await held).not.toBeNull();
    // the request whose caller gave up was never sent
    await waiting.sync('/');
    expect(await waiting.exists('/late')).toBeNull();
  });
});

describe('reconnect - observability', () => {
  it('publishes request start/finish and state changes on diagnostics channels', async () => {
    const finished: RequestFinishMessage[] = [];
    const states: string[] = [];
    const onFinish = (m: unknown) => finished.push(m as RequestFinishMessage);
    const onState = (m: unknown) => states.push(`${(m as { from: string }).from}->${(m as { to: string }).to}`);
    subscribe(ChannelName.requestFinish, onFinish);
    subscribe(ChannelName.state, onState);
    try {
      await using zk = await viaProxy();
      await zk.exists('/nope');
      await zk.getData('/nope').catch(() => undefined);
      proxy.cut();
      await waitForState(zk, 'suspended');
      await waitForState(zk, 'connected');
    } finally {
      unsubscribe(ChannelName.requestFinish, onFinish);
      unsubscribe(ChannelName.state, onState);
    }
    expect(finished.map((m) => [m.op, m.path, m.err])).toEqual([
      [3, '/nope', -101],
      [4, '/nope', -101],
    ]);
    expect(finished.every((m) => m.durationMs >= 0)).toBe(true);
    expect(states).toEqual(['connecting->connected', 'connected->suspended', 'suspended->connected', 'connected->closed']);
  });

  it('streams states as an async iterable that ends on close', async () => {
    const zk = await viaProxy();
    const seen: StateChange[] = [];
    const loop = (async () => {
      for await (const change of zk.states()) seen.push(change);
    })();
    proxy.cut();
    await waitForState(zk, 'suspended');
    await waitForState(zk, 'connected');
    await zk.close();
    await loop;
    expect(seen.map((s) => s.state)).toEqual(['connected', 'suspended', 'connected', 'closed']);
    expect(seen[0]?.previous).toBeUndefined();
    expect(seen[1]?.previous).toBe('connected');
  });
});

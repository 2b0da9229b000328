/**
 * The `zk:request` and `zk:connect` tracing channels against the real server: each request's
 * events in tracePromise's order with one context object, what went on the wire (xid, frame
 * sizes to the byte, the server and session), the reply's error code (a failed multi's failing
 * op), a multiRead batch shared by coalesced reads, requests that no reply settled (timeout
 * through a paused link) on `error`, AsyncLocalStorage bound to the start channel, and connect's
 * trace; the deprecated `zk:request:*` channels still publish.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { subscribe, tracingChannel, unsubscribe, type TracingChannelSubscribers } from 'node:diagnostics_channel';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ChannelName, ErrorCode, RequestTimeoutError, ZooKeeper, type ConnectTrace, type RequestTrace } from '@zk/protocol';
import { connectString, proxyToServer, TestSpace } from '../../harness/fixtures.js';

/** ZooKeeper's opcodes (OpCode in ZooDefs.java) of the operations below. */
const OpCode = { exists: 3, getData: 4, multi: 14 } as const;

type Event = 'start' | 'end' | 'asyncStart' | 'asyncEnd' | 'error';
const EVENTS: readonly Event[] = ['start', 'end', 'asyncStart', 'asyncEnd', 'error'];

/** Every event of a tracing channel, in order, with a snapshot of the context at that moment. */
function record<T extends object>(name: string): { events: { event: Event; ctx: T; snapshot: T }[]; stop(): void } {
  const tc = tracingChannel<unknown, T>(name);
  const events: { event: Event; ctx: T; snapshot: T }[] = [];
  const handlers = Object.fromEntries(EVENTS.map((event) => [event, (ctx: T) => events.push({ event, ctx, snapshot: { ...ctx } })])) as unknown as TracingChannelSubscribers<T>;
  tc.subscribe(handlers);
  return { events, stop: () => tc.unsubscribe(handlers) };
}

/** The events of one request context, in order. */
function eventsOf<T>(events: { event: Event; ctx: T }[], ctx: T): Event[] {
  return events.filter((e) => e.ctx === ctx).map((e) => e.event);
}

let space: TestSpace;
beforeEach(() => {
  space = new TestSpace();
});
afterEach(async () => {
  expect((await space.close()).leakedWatches).toBe(0);
});

/** Stat (68 bytes) + header (16) + length prefix (4). */
const STAT = 68;
const HEADER = 16;

describe('tracing - zk:request', () => {
  it('publishes start, end, asyncStart, asyncEnd with the xid, the server, the session and the exact frame sizes', async () => {
    const zk = await space.client();
    await zk.create('/a', Buffer.from('hello'));
    const rec = record<RequestTrace>(ChannelName.request);
    try {
      const { data } = await zk.getData('/a');
      expect(data.toString()).toBe('hello');
      await zk.exists('/missing');
    } finally {
      rec.stop();
    }
    const ctxs = [...new Set(rec.events.map((e) => e.ctx))];
    expect(ctxs.map((c) => c.operation)).toEqual(['getData', 'exists']);
    const [get, exists] = ctxs as [RequestTrace, RequestTrace];
    for (const ctx of ctxs) expect(eventsOf(rec.events, ctx)).toEqual(['start', 'end', 'asyncStart', 'asyncEnd']);
    expect(get).toMatchObject({ op: OpCode.getData, path: '/a', sessionId: zk.sessionId, errorCode: 0 });
    const [host, port] = connectString().split(',')[0]!.split(':');
    expect(get.serverPort).toBe(Number(port));
    expect(get.serverAddress).toBe(host === 'localhost' ? '127.0.0.1' : host);
    expect(exists.xid).toBe(get.xid! + 1);
    // Request: prefix 4 + xid 4 + type 4 + path (4 + chroot and '/a') + watch flag 1.
    const serverPath = Buffer.byteLength(`${space.root}/a`);
    expect(get.requestBytes).toBe(4 + 8 + 4 + serverPath + 1);
    // Reply: prefix + header + data (4 + 5) + stat.
    expect(get.replyBytes).toBe(4 + HEADER + 4 + 5 + STAT);
    // exists on a missing node: a completed request with its code, not an error event.
    expect(exists.errorCode).toBe(ErrorCode.NONODE);
    expect(exists.replyBytes).toBe(4 + HEADER);
    // At start the request has not left yet: no xid; at asyncStart it has its reply.
    const startOfGet = rec.events.find((e) => e.ctx === get && e.event === 'start')!.snapshot;
    expect(startOfGet.xid).toBeUndefined();
    expect(rec.events.find((e) => e.ctx === get && e.event === 'asyncStart')!.snapshot.replyBytes).toBe(get.replyBytes);
  });

  it('a failed multi carries the failing operation’s code and its batch size', async () => {
    const zk = await space.client();
    await zk.create('/taken');
    const rec = record<RequestTrace>(ChannelName.request);
    try {
      await expect(zk.transaction().create('/new').create('/taken').check('/new', -1).commit()).rejects.toThrow();
    } finally {
      rec.stop();
    }
    const multi = rec.events.map((e) => e.ctx).find((c) => c.operation === 'multi')!;
    expect(multi).toMatchObject({ op: OpCode.multi, batchSize: 3, errorCode: ErrorCode.NODEEXISTS });
    expect(eventsOf(rec.events, multi)).toEqual(['start', 'end', 'asyncStart', 'asyncEnd']);
  });

  it('coalesced reads report the multiRead batch they shared', async (ctx) => {
    const zk = await space.client({ coalesceReads: true });
    if (zk.serverGeneration() === 'legacy') return ctx.skip();
    await zk.create('/x', Buffer.from('1'));
    await zk.create('/y', Buffer.from('22'));
    const rec = record<RequestTrace>(ChannelName.request);
    try {
      await Promise.all([zk.getData('/x'), zk.getData('/y')]);
    } finally {
      rec.stop();
    }
    const [x, y] = [...new Set(rec.events.map((e) => e.ctx))] as [RequestTrace, RequestTrace];
    expect(x.batched).toBe(2);
    expect(y.batched).toBe(2);
    expect(x.xid).toBe(y.xid);
    expect(x.requestBytes).toBe(y.requestBytes);
    // One reply for both: each read's share is data + stat + its own result header.
    expect(x.replyBytes).toBe(y.replyBytes);
    expect(x.replyBytes!).toBeGreaterThan(4 + HEADER + 2 * (4 + STAT) + 3);
  });

  it('a request no reply settles is published on error, then asyncStart and asyncEnd', async () => {
    const proxy = await proxyToServer();
    try {
      const zk = await ZooKeeper.connect(`${proxy.connectString}${(await space.admin(), space.root)}`, { sessionTimeout: 10_000 });
      try {
        const rec = record<RequestTrace>(ChannelName.request);
        proxy.pause();
        try {
          await expect(zk.getData('/', { timeout: 100 })).rejects.toBeInstanceOf(RequestTimeoutError);
        } finally {
          rec.stop();
          proxy.resume();
        }
        const ctx = rec.events[0]!.ctx;
        expect(eventsOf(rec.events, ctx)).toEqual(['start', 'end', 'error', 'asyncStart', 'asyncEnd']);
        expect(ctx.error).toBeInstanceOf(RequestTimeoutError);
        expect(ctx.errorCode).toBeUndefined();
        expect(ctx.xid).toBeGreaterThan(0); // it was sent
        expect(ctx.replyBytes).toBeUndefined();
      } finally {
        await zk.close();
      }
    } finally {
      await proxy.close();
    }
  });

  it('an AsyncLocalStorage bound to the start channel is in effect for the request', async () => {
    const zk = await space.client();
    const store = new AsyncLocalStorage<string>();
    const tc = tracingChannel<string, RequestTrace>(ChannelName.request);
    tc.start.bindStore(store, (ctx) => `span for ${ctx.operation}`);
    const seen: (string | undefined)[] = [];
    const handlers = { asyncEnd: () => seen.push(store.getStore()) } as Partial<TracingChannelSubscribers<RequestTrace>>;
    tc.subscribe(handlers as TracingChannelSubscribers<RequestTrace>);
    try {
      await zk.exists('/');
      expect(seen).toEqual(['span for exists']);
    } finally {
      tc.unsubscribe(handlers as TracingChannelSubscribers<RequestTrace>);
      tc.start.unbindStore(store);
    }
  });

  it('the deprecated zk:request:start and finish channels still publish', async () => {
    const zk = await space.client();
    const seen: unknown[] = [];
    const onStart = (m: unknown) => seen.push(['start', m]);
    const onFinish = (m: unknown) => seen.push(['finish', (m as { err: number }).err]);
    subscribe(ChannelName.requestStart, onStart);
    subscribe(ChannelName.requestFinish, onFinish);
    try {
      await zk.exists('/nope');
    } finally {
      unsubscribe(ChannelName.requestStart, onStart);
      unsubscribe(ChannelName.requestFinish, onFinish);
    }
    expect(seen).toEqual([['start', { op: OpCode.exists, path: '/nope' }], ['finish', ErrorCode.NONODE]]);
  });
});

describe('tracing - zk:connect', () => {
  it('traces a connect to the ready client, with its session and server', async () => {
    await space.admin();
    const rec = record<ConnectTrace>(ChannelName.connect);
    let zk: ZooKeeper;
    try {
      zk = await ZooKeeper.connect(`${connectString()}${space.root}`, { sessionTimeout: 8_000 });
    } finally {
      rec.stop();
    }
    try {
      const ctx = rec.events[0]!.ctx;
      expect(eventsOf(rec.events, ctx)).toEqual(['start', 'end', 'asyncStart', 'asyncEnd']);
      expect(ctx).toMatchObject({ chroot: space.root, sessionTimeout: 8_000, sessionId: zk.sessionId, negotiatedTimeout: zk.sessionTimeout });
      expect(ctx.hosts).toBe(connectString().split('/')[0]);
      expect(ctx.result).toBe(zk);
    } finally {
      await zk.close();
    }
  });

  it('a connect that never gets through ends on error with the reason', async () => {
    const proxy = await proxyToServer();
    proxy.block();
    const rec = record<ConnectTrace>(ChannelName.connect);
    try {
      await expect(ZooKeeper.connect(proxy.connectString, { signal: AbortSignal.timeout(300), connectTimeout: 200 })).rejects.toThrow();
    } finally {
      rec.stop();
      await proxy.close();
    }
    const ctx = rec.events[0]!.ctx;
    expect(eventsOf(rec.events, ctx)).toEqual(['start', 'end', 'error', 'asyncStart', 'asyncEnd']);
    expect(ctx.error).toBeDefined();
    expect(ctx.sessionId).toBeUndefined();
  });
});

/**
 * @zk/otel's request and connect spans and the client metrics, against the real server: the
 * attributes of a request span, a failing request's status code and error.type (and the benign
 * NONODE of `exists`), a request with no reply, multi's batch size, low-cardinality names for
 * protected sequential creates, requireParentSpan, ignoreOperations and disable() each changing
 * what is recorded, the connect span, session state events and the metrics.
 */
import { randomUUID } from 'node:crypto';
import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CreateMode, NoNodeError, ZooKeeper, type ConnectTrace, type RequestTrace } from '@zk/protocol';
import { ZooKeeperMetrics, type ConnectContext, type RequestContext } from '@zk/otel';
import { proxyToServer, TestSpace } from '../../harness/fixtures.js';
import { instrumented, total } from './otel.js';

// The packages' own payload types fit what @zk/otel reads (a compile-time check).
export const payloadsFit: [RequestContext, ConnectContext] = [{} as RequestTrace, {} as ConnectTrace];

let space: TestSpace;
let otel: ReturnType<typeof instrumented>;
beforeEach(() => {
  space = new TestSpace();
});
afterEach(async () => {
  await otel?.close();
  expect((await space.close()).leakedWatches).toBe(0);
});

describe('@zk/otel requests', () => {
  it('a request span: name, kind, database attributes and the ZooKeeper ones; a failing one has the code and error.type', async () => {
    otel = instrumented();
    const zk = await space.client();
    await zk.create('/app', 'x');
    await zk.create('/app/config', 'hello');
    otel.reset();
    await zk.getData('/app/config');
    await expect(zk.getData('/app/missing')).rejects.toBeInstanceOf(NoNodeError);
    expect(await zk.exists('/app/missing')).toBeNull();
    await expect(zk.setData('/app/config', 'v', { version: 7 })).rejects.toThrow();
    const [ok, missing, exists, badVersion] = otel.spans();
    expect(ok!.name).toBe('getData /app/config');
    expect(ok!.kind).toBe(SpanKind.CLIENT);
    expect(ok!.status.code).toBe(SpanStatusCode.UNSET);
    const server = zk.server!;
    expect(ok!.attributes).toMatchObject({
      'db.system.name': 'zookeeper',
      'db.operation.name': 'getData',
      'db.query.summary': 'getData /app/config',
      'db.namespace': space.root,
      'server.address': server.address,
      'server.port': server.port,
      'zookeeper.session.id': `0x${zk.sessionId.toString(16)}`,
    });
    expect(ok!.attributes['zookeeper.xid']).toBeGreaterThan(0);
    expect(ok!.attributes['zookeeper.request.bytes']).toBeGreaterThan(16);
    expect(ok!.attributes['zookeeper.reply.bytes']).toBeGreaterThan(16);
    expect(ok!.attributes['db.response.status_code']).toBeUndefined();
    expect(ok!.attributes['error.type']).toBeUndefined();

    expect(missing!.name).toBe('getData /app/missing');
    expect(missing!.status.code).toBe(SpanStatusCode.ERROR);
    expect(missing!.attributes).toMatchObject({ 'db.response.status_code': '-101', 'error.type': 'NONODE' });
    // exists answering NoNode is an answer: the code, no error.
    expect(exists!.status.code).toBe(SpanStatusCode.UNSET);
    expect(exists!.attributes['db.response.status_code']).toBe('-101');
    expect(exists!.attributes['error.type']).toBeUndefined();
    expect(badVersion!.attributes).toMatchObject({ 'db.operation.name': 'setData', 'db.response.status_code': '-103', 'error.type': 'BADVERSION' });
    expect(badVersion!.status.code).toBe(SpanStatusCode.ERROR);

    const durations = await otel.points(ZooKeeperMetrics.OPERATION_DURATION);
    expect(total(durations, { 'db.operation.name': 'getData', 'error.type': 'NONODE' })).toBe(1);
    expect(total(durations, { 'db.operation.name': 'getData' })).toBe(2);
    expect(total(durations, { 'db.operation.name': 'exists', 'db.namespace': space.root })).toBe(1);
    expect(durations.every((p) => p.attributes['db.query.summary'] === undefined)).toBe(true);
    expect(total(await otel.points(ZooKeeperMetrics.OUTSTANDING))).toBe(0);
  });

  it('benignCodes widens what is not an error; a request with no reply gets the error class as error.type', async () => {
    otel = instrumented({ benignCodes: { delete: ['NONODE'] } });
    const proxy = await proxyToServer();
    try {
      await space.admin();
      const zk = await ZooKeeper.connect(`${proxy.connectString}${space.root}`, { sessionTimeout: 10_000 });
      await expect(zk.delete('/gone')).rejects.toBeInstanceOf(NoNodeError);
      proxy.pause();
      await expect(zk.getData('/held', { timeout: 200 })).rejects.toThrow();
      proxy.resume();
      await zk.close();
    } finally {
      await proxy.close();
    }
    const [del] = otel.named('delete');
    expect(del!.status.code).toBe(SpanStatusCode.UNSET);
    expect(del!.attributes['db.response.status_code']).toBe('-101');
    const [held] = otel.named('getData');
    expect(held!.status.code).toBe(SpanStatusCode.ERROR);
    expect(held!.attributes['error.type']).toBe('RequestTimeoutError');
    expect(held!.attributes['db.response.status_code']).toBeUndefined();
    expect(held!.events.map((e) => e.name)).toContain('exception');
  });

  it('multi carries its batch size; two protected sequential creates give one span name', async () => {
    otel = instrumented();
    const zk = await space.client();
    await zk.create('/q');
    await zk.transaction().create('/q/a').create('/q/b').delete('/q/a').commit();
    const made: string[] = [];
    for (let i = 0; i < 2; i++) made.push(await zk.create(`/q/_c_${randomUUID()}-item-`, 'x', { mode: CreateMode.EPHEMERAL_SEQUENTIAL }));
    const [multi] = otel.named('multi');
    expect(multi!.attributes['db.operation.batch.size']).toBe(3);
    const creates = otel.spans().filter((s) => s.attributes['db.operation.name'] === 'create' && String(s.attributes['db.query.summary']).includes('_c_'));
    expect(creates).toHaveLength(2);
    expect(made[0]).not.toBe(made[1]);
    expect(creates.map((s) => s.name)).toEqual(['create /q/_c_*-item-*', 'create /q/_c_*-item-*']);
    expect(creates.map((s) => s.attributes['db.query.summary'])).toEqual(['create /q/_c_*-item-*', 'create /q/_c_*-item-*']);
  });

  it('requireParentSpan: a request outside any span is left out, one inside a span is its child', async () => {
    otel = instrumented({ requireParentSpan: true });
    const zk = await space.client();
    await zk.exists('/outside');
    await otel.tracer.startActiveSpan('job', async (job) => {
      await zk.exists('/inside');
      job.end();
    });
    const existsSpans = otel.named('exists');
    expect(existsSpans.map((s) => s.name)).toEqual(['exists /inside']);
    const job = otel.named('job')[0]!;
    expect(existsSpans[0]!.parentSpanContext?.spanId).toBe(job.spanContext().spanId);
    expect(existsSpans[0]!.spanContext().traceId).toBe(job.spanContext().traceId);
    // Metrics count both.
    expect(total(await otel.points(ZooKeeperMetrics.OPERATION_DURATION), { 'db.operation.name': 'exists' })).toBe(2);
  });

  it('ignoreOperations (names or a predicate) leaves those requests out of tracing only', async () => {
    otel = instrumented({ ignoreOperations: ['exists'] });
    const zk = await space.client();
    otel.reset();
    await zk.create('/n', 'x');
    await zk.exists('/n');
    await zk.getData('/n');
    expect(otel.spans().map((s) => s.name)).toEqual(['create /n', 'getData /n']);
    expect(total(await otel.points(ZooKeeperMetrics.OPERATION_DURATION), { 'db.operation.name': 'exists' })).toBe(1);
    await otel.close();
    otel = instrumented({ ignoreOperations: (r) => r.path?.startsWith('/noise') === true });
    await zk.exists('/noise/a');
    await zk.exists('/signal');
    expect(otel.spans().map((s) => s.name)).toEqual(['exists /signal']);
  });

  it('watch notifications are counted by type', async () => {
    otel = instrumented();
    const zk = await space.client();
    await zk.create('/w', 'a');
    const fired = new Promise<string>((resolve) => void zk.getData('/w', { watch: (e) => resolve(String(e.type)) }));
    await zk.setData('/w', 'b');
    const type = await fired;
    const events = await otel.points(ZooKeeperMetrics.WATCH_EVENTS);
    expect(events.map((p) => [p.attributes['zookeeper.watch.event_type'], p.value])).toEqual([[type, 1]]);
  });

  it('disable() stops recording spans and metrics, enable() resumes', async () => {
    otel = instrumented();
    const zk = await space.client();
    expect(total(await otel.points(ZooKeeperMetrics.SESSIONS))).toBe(2); // admin and zk
    await zk.exists('/one');
    otel.instrumentation.disable();
    expect(otel.instrumentation.enabled).toBe(false);
    await zk.exists('/two');
    await zk.exists('/three');
    expect(total(await otel.points(ZooKeeperMetrics.SESSIONS))).toBe(0); // taken back at disable
    otel.instrumentation.enable();
    await zk.exists('/four');
    expect(otel.named('exists').map((s) => s.name)).toEqual(['exists /one', 'exists /four']);
    const durations = await otel.points(ZooKeeperMetrics.OPERATION_DURATION);
    expect(total(durations, { 'db.operation.name': 'exists' })).toBe(2);
    expect(total(await otel.points(ZooKeeperMetrics.OUTSTANDING))).toBe(0);
  });

  it('connect: a span with the server and session; sessions by state; a reconnect counted; a state change on the active span', async () => {
    otel = instrumented();
    await space.admin();
    otel.reset();
    const connected = async () => total(await otel.points(ZooKeeperMetrics.SESSIONS), { 'zookeeper.session.state': 'connected' });
    expect(await connected()).toBe(1); // the admin client
    const proxy = await proxyToServer();
    try {
      const zk = await ZooKeeper.connect(`${proxy.connectString}${space.root}`, { sessionTimeout: 10_000 });
      const [connect] = otel.named('connect');
      expect(connect!.attributes).toMatchObject({ 'db.system.name': 'zookeeper', 'server.port': proxy.port, 'zookeeper.session.id': `0x${zk.sessionId.toString(16)}`, 'zookeeper.session.timeout_ms': 10_000 });
      expect(connect!.attributes['zookeeper.chroot']).toBe(space.root);
      expect(await connected()).toBe(2);
      // A cut connection: suspended, then connected again.
      const states: string[] = [];
      const off = zk.onStateChange((s) => states.push(s));
      proxy.cut();
      await expect.poll(() => states.includes('connected'), { timeout: 10_000 }).toBe(true);
      off();
      expect(states).toEqual(['suspended', 'connected']);
      expect(total(await otel.points(ZooKeeperMetrics.RECONNECTS))).toBe(1);
      expect(await connected()).toBe(2);
      expect(total(await otel.points(ZooKeeperMetrics.SESSIONS), { 'zookeeper.session.state': 'suspended' })).toBe(0);
      // A state change made by the application lands on its active span.
      await otel.tracer.startActiveSpan('shutdown', async (shutdown) => {
        await zk.close();
        shutdown.end();
      });
      const shutdown = otel.named('shutdown')[0]!;
      expect(shutdown.events.map((e) => [e.name, e.attributes?.['zookeeper.session.state'], e.attributes?.['zookeeper.session.previous_state']])).toEqual([['zookeeper.session.state', 'closed', 'connected']]);
      expect(await connected()).toBe(1);
      expect(total(await otel.points(ZooKeeperMetrics.SESSIONS))).toBe(1);
    } finally {
      await proxy.close();
    }
  });
});

/**
 * @zk/otel's lock spans and metrics against the real server: a lock handed between two
 * processes (each instrumenting itself, printing its spans) shows two acquire spans with growing
 * fencing tokens and positions 0 and 1, each with its requests as children and a hold span linked
 * to it; a lease lost in a partition (the harness's TCP proxy paused past the lease's grace)
 * shows the loss event and the session's state changes on the hold span, and the loss in the
 * metrics; a wait that times out, a try that finds the lock taken, requireParentSpan on waits and
 * holds, a revocation request, and leadership changes.
 */
import { fileURLToPath } from 'node:url';
import { SpanStatusCode } from '@opentelemetry/api';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ZooKeeper } from '@zk/protocol';
import { LeaderLatch, LeaseLostError, LockTimeoutError, Mutex, revoke, type AcquireTrace, type HoldMessage } from '@zk/locks';
import { ZooKeeperMetrics } from '@zk/otel';
import { connectString, proxyToServer, TestSpace } from '../../harness/fixtures.js';
import { killAll, Participant } from '../../interop/participants.js';
import { instrumented, total } from './otel.js';

/** A span as lock-participant.mjs prints it. */
interface PrintedSpan {
  name: string;
  spanId: string;
  traceId: string;
  parentSpanId?: string;
  attributes: Record<string, unknown>;
  status: { code: number; message?: string };
  events: string[];
  links: string[];
}

const SCRIPT = fileURLToPath(new URL('./lock-participant.mjs', import.meta.url));

// What @zk/otel reads of the lock payloads is what @zk/locks publishes (a compile-time check).
export const payloadsFit: [import('../../../packages/otel/src/channels.js').AcquireContext, import('../../../packages/otel/src/channels.js').HoldMessage] = [{} as AcquireTrace, {} as HoldMessage];

let space: TestSpace;
let otel: ReturnType<typeof instrumented> | undefined;
beforeEach(() => {
  space = new TestSpace();
});
afterEach(async () => {
  await killAll();
  await otel?.close();
  otel = undefined;
  expect((await space.close()).leakedWatches).toBe(0);
});

async function spansOf(p: Participant): Promise<PrintedSpan[]> {
  const code = await p.exited;
  if (code !== 0) throw new Error(`participant exited ${code}: ${p.stderr}`);
  return p.lines.filter((l) => l.startsWith('{"span"')).map((l) => (JSON.parse(l) as { span: PrintedSpan }).span);
}

describe('@zk/otel locks', () => {
  it('a lock handed between two processes: two acquire spans, positions 0 and 1, growing fencing tokens, requests as children, holds linked', async () => {
    await space.admin();
    const connect = `${connectString()}${space.root}`;
    const first = Participant.node(SCRIPT, [connect, '/job']);
    await first.untilMatch((l) => l.startsWith('{"held"'));
    const second = Participant.node(SCRIPT, [connect, '/job']);
    await space.untilChildren('/job', 2);
    first.send('release');
    await second.untilMatch((l) => l.startsWith('{"held"'));
    second.send('release');
    const [a, b] = await Promise.all([spansOf(first), spansOf(second)]);
    const acquires = [a, b].map((spans) => spans.filter((s) => s.name === 'lock.acquire mutex /job'));
    expect(acquires.map((x) => x.length)).toEqual([1, 1]);
    const [wa, wb] = acquires.map((x) => x[0]!);
    const tokens = [wa!, wb!].map((w) => BigInt(w.attributes['zookeeper.lock.fencing_token'] as string));
    console.log(`fencing tokens across the hand-off: ${tokens.join(' -> ')}`);
    expect(tokens[1]! > tokens[0]!).toBe(true);
    expect([wa!.attributes['zookeeper.lock.position'], wb!.attributes['zookeeper.lock.position']]).toEqual([0, 1]);
    for (const [spans, wait, token] of [[a, wa!, tokens[0]!], [b, wb!, tokens[1]!]] as const) {
      expect(wait.attributes).toMatchObject({ 'db.system.name': 'zookeeper', 'zookeeper.lock.kind': 'mutex', 'zookeeper.lock.outcome': 'acquired', 'zookeeper.lock.path': '/job', 'zookeeper.lock.timeout_ms': 20_000 });
      expect(wait.status.code).toBe(SpanStatusCode.UNSET);
      const job = spans.find((s) => s.name === 'job')!;
      expect(wait.parentSpanId).toBe(job.spanId);
      // The requests the wait made are its children: its protected sequential create among them.
      const children = spans.filter((s) => s.parentSpanId === wait.spanId).map((s) => s.name);
      expect(children).toContain('create /job/_c_*-lock-*');
      const hold = spans.find((s) => s.name === 'lock.hold mutex /job')!;
      expect(hold.attributes['zookeeper.lock.fencing_token']).toBe(token.toString());
      expect(hold.attributes['zookeeper.lock.lost']).toBe(false);
      expect(hold.parentSpanId).toBe(job.spanId);
      expect(hold.links).toEqual([wait.spanId]);
    }
    // Low cardinality: the second process's span names are all among the first's (which also
    // made the parent, after a create that failed with NONODE and so is not known as sequential).
    const names = (spans: PrintedSpan[]) => [...new Set(spans.map((s) => s.name))].sort();
    expect(names(b)).toEqual(expect.arrayContaining(['connect', 'create /job/_c_*-lock-*', 'delete /job/_c_*-lock-*', 'getChildren /job', 'job']));
    expect(names(b).every((n) => names(a).includes(n))).toBe(true);
  });

  it('a lease lost in a partition: the loss event and the state changes on the hold span, ERROR status, and the metrics', async () => {
    otel = instrumented();
    await space.admin();
    const proxy = await proxyToServer();
    try {
      const zk = await ZooKeeper.connect(`${proxy.connectString}${space.root}`, { sessionTimeout: 2000 });
      const lease = await new Mutex(zk, '/partitioned').acquire();
      proxy.pause();
      await new Promise<void>((resolve) => lease.signal.addEventListener('abort', () => resolve(), { once: true }));
      expect(lease.signal.reason).toBeInstanceOf(LeaseLostError);
      proxy.resume();
      await lease.release().catch(() => undefined);
      await zk.close();
    } finally {
      proxy.resume();
      await proxy.close();
    }
    const [hold] = otel.named('lock.hold mutex /partitioned');
    expect(hold).toBeDefined();
    const events = hold!.events.map((e) => e.name);
    console.log(`hold span events: ${hold!.events.map((e) => `${e.name}${e.attributes?.['zookeeper.session.state'] ? `(${String(e.attributes['zookeeper.session.state'])})` : ''}`).join(', ')}`);
    expect(events).toContain('zookeeper.lock.lost');
    const lost = hold!.events.find((e) => e.name === 'zookeeper.lock.lost')!;
    expect(lost.attributes).toMatchObject({ 'error.type': 'LeaseLostError', 'zookeeper.lock.kind': 'mutex', 'zookeeper.lock.fencing_token': hold!.attributes['zookeeper.lock.fencing_token'] });
    expect(hold!.status.code).toBe(SpanStatusCode.ERROR);
    expect(hold!.status.message).toMatch(/^lease lost/);
    expect(hold!.attributes['zookeeper.lock.lost']).toBe(true);
    expect(events).toContain('zookeeper.session.state');
    expect(total(await otel.points(ZooKeeperMetrics.LEASES_LOST), { 'zookeeper.lock.kind': 'mutex' })).toBe(1);
    const holds = await otel.points(ZooKeeperMetrics.LOCK_HOLD);
    expect(total(holds, { 'zookeeper.lock.lost': true })).toBe(1);
    expect(total(holds, { 'zookeeper.lock.lost': false })).toBe(0);
  });

  it('a wait that times out is an ERROR span with its outcome; a try that finds the lock taken is not; the wait metric has both', async () => {
    otel = instrumented();
    const [a, b] = await Promise.all([space.client(), space.client()]);
    const held = await new Mutex(a, '/busy').acquire();
    // Long enough for the wait's first listing (its position) on a loaded machine.
    await expect(new Mutex(b, '/busy').acquire({ timeout: 1500 })).rejects.toBeInstanceOf(LockTimeoutError);
    expect(await new Mutex(b, '/busy').tryAcquire()).toBeUndefined();
    await held.release();
    const [ok, timedOut, tried] = otel.named('lock.acquire mutex /busy');
    expect(ok!.attributes['zookeeper.lock.outcome']).toBe('acquired');
    expect(timedOut!.attributes).toMatchObject({ 'zookeeper.lock.outcome': 'timeout', 'error.type': 'LockTimeoutError', 'zookeeper.lock.position': 1 });
    expect(timedOut!.status.code).toBe(SpanStatusCode.ERROR);
    expect(tried!.attributes['zookeeper.lock.outcome']).toBe('timeout');
    expect(tried!.status.code).toBe(SpanStatusCode.UNSET);
    const waits = await otel.points(ZooKeeperMetrics.LOCK_WAIT);
    expect(total(waits, { 'zookeeper.lock.kind': 'mutex', 'zookeeper.lock.outcome': 'timeout' })).toBe(2);
    expect(total(waits, { 'zookeeper.lock.kind': 'mutex', 'zookeeper.lock.outcome': 'acquired' })).toBe(1);
    expect(total(await otel.points(ZooKeeperMetrics.LOCK_HOLD), { 'zookeeper.lock.kind': 'mutex', 'zookeeper.lock.lost': false })).toBe(1);
  });

  it('requireParentSpan: a wait and a hold outside any span are left out, inside one they are its children', async () => {
    otel = instrumented({ requireParentSpan: true });
    const zk = await space.client();
    await (await new Mutex(zk, '/quiet').acquire()).release();
    expect(otel.spans()).toEqual([]);
    await otel.tracer.startActiveSpan('job', async (job) => {
      await (await new Mutex(zk, '/traced').acquire()).release();
      job.end();
    });
    const job = otel.named('job')[0]!;
    const [wait] = otel.named('lock.acquire mutex /traced');
    const [hold] = otel.named('lock.hold mutex /traced');
    expect(wait!.parentSpanContext?.spanId).toBe(job.spanContext().spanId);
    expect(hold!.parentSpanContext?.spanId).toBe(job.spanContext().spanId);
    expect(otel.spans().filter((s) => s.parentSpanContext?.spanId === wait!.spanContext().spanId).length).toBeGreaterThan(0);
    expect(otel.spans().some((s) => s.name.includes('/quiet'))).toBe(false);
    // The metrics still count the untraced wait.
    expect(total(await otel.points(ZooKeeperMetrics.LOCK_WAIT), { 'zookeeper.lock.kind': 'mutex' })).toBe(2);
  });

  it('a revocation request is an event on the hold span', async () => {
    otel = instrumented();
    const [a, b] = await Promise.all([space.client(), space.client()]);
    const lease = await new Mutex(a, '/revocable').acquire({ revocable: true });
    const revoked = new Promise<void>((resolve) => lease.revocationRequested.addEventListener('abort', () => resolve(), { once: true }));
    expect(await revoke(b, lease.node)).toBe(true);
    await revoked;
    await lease.release();
    const [hold] = otel.named('lock.hold mutex /revocable');
    expect(hold!.events.map((e) => [e.name, e.attributes?.['zookeeper.lock.fencing_token']])).toEqual([['zookeeper.lock.revoke', lease.fencingToken.toString()]]);
    expect(hold!.status.code).toBe(SpanStatusCode.UNSET);
  });

  it('leadership gained and lost is counted, and its wait traced', async () => {
    otel = instrumented();
    const zk = await space.client();
    const latch = new LeaderLatch(zk, '/leader', { id: 'node-a' });
    latch.start();
    await latch.leadership({ timeout: 10_000 });
    await latch.close();
    await expect.poll(async () => total(await otel!.points(ZooKeeperMetrics.LEADERSHIP_CHANGES)), { timeout: 10_000 }).toBe(2);
    const changes = await otel.points(ZooKeeperMetrics.LEADERSHIP_CHANGES);
    expect(total(changes, { 'zookeeper.leadership.is_leader': true })).toBe(1);
    expect(total(changes, { 'zookeeper.leadership.is_leader': false })).toBe(1);
    expect(otel.named('lock.acquire leader-latch /leader')).toHaveLength(1);
  });
});

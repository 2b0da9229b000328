/**
 * Ours on one repetition of a lock scale point, in a fresh process (bench/workloads/scale.ts
 * starts it with `--expose-gc`; bench/java/ScaleLockDriver.java is the Curator side and speaks
 * the same line), so the heap and resident memory the point adds are its own:
 *
 *   node --expose-gc scale-child.js <connect> waiters <path> <count> <sessions>
 *   node --expose-gc scale-child.js <connect> locks <path> <count> <inFlight>
 *
 * Prints one line: `RESULT {"ops","seconds","cpuUs","heapBytes","rssBytes",...}` or `ERROR <message>`.
 * @module
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { setTimeout as delay } from 'node:timers/promises';
import { ChannelName, ZooKeeper, type EventMessage } from '@zk/protocol';
import { Mutex, type Lease } from '@zk/locks';

/** What one repetition reports (the line after `RESULT`). */
export interface ChildResult {
  readonly ops: number;
  readonly seconds: number;
  readonly cpuUs: number;
  /** V8 heap plus ArrayBuffers after full collections, everything queued (held), less the same before. */
  readonly heapBytes: number;
  /** Resident set after the same collections, less the same before. */
  readonly rssBytes: number;
  /** waiters: every watch notification received per hand-off. */
  readonly notificationsPerRelease?: number;
  /** waiters: the notifications that reached a waiter, per hand-off (see {@link countWakes}). */
  readonly waiterNotificationsPerRelease?: number;
}

/** Memory in use after full collections: [heap + ArrayBuffers, RSS], bytes. */
function memory(): [number, number] {
  for (let i = 0; i < 4; i++) (globalThis as { gc?: () => void }).gc?.();
  const m = process.memoryUsage();
  return [m.heapUsed + m.arrayBuffers, m.rss];
}

const cpuUs = () => {
  const c = process.cpuUsage();
  return c.user + c.system;
};

/**
 * Counts watch notifications while waiters are handed the lock. A lease watches its own node too,
 * so a release also notifies the releasing session of its own node's deletion: that one reaches a
 * waiter only when the next node in the queue is the same session's (one notification serves
 * both). `own` maps each sequential node to its session.
 */
function countWakes(): { own(node: string, session: bigint): void; done(handoffs: number): { notificationsPerRelease: number; waiterNotificationsPerRelease: number } } {
  const events: EventMessage[] = [];
  const owners = new Map<string, bigint>();
  const onEvent = (m: unknown) => void events.push(m as EventMessage);
  subscribe(ChannelName.event, onEvent);
  return {
    own: (node, session) => void owners.set(node, session),
    done(handoffs) {
      unsubscribe(ChannelName.event, onEvent);
      const nodes = [...owners.keys()].sort((a, b) => Number(a.slice(-10)) - Number(b.slice(-10)));
      const successor = new Map(nodes.map((n, i) => [n, nodes[i + 1]]));
      let reached = 0;
      for (const e of events) {
        const next = successor.get(e.path);
        if (owners.get(e.path) !== e.sessionId || (next !== undefined && owners.get(next) === e.sessionId)) reached++;
      }
      return { notificationsPerRelease: events.length / handoffs, waiterNotificationsPerRelease: reached / handoffs };
    },
  };
}

/** Resolves once `path` has `n` children (polled with exists: a listing of 10,000 names per check would load the server). */
async function childrenReach(zk: ZooKeeper, path: string, n: number): Promise<void> {
  while (((await zk.exists(path))?.numChildren ?? 0) < n) await delay(10);
}

/**
 * Waiters are queued this many at a time (the next batch once the previous one's nodes are all
 * there), by ours and by Curator alike. 10,000 queued at once over 10 sessions put 1,000 requests
 * each behind the server's growing listings (each waiter lists the queue when it joins); ours
 * then found no reply dated within 2/3 of the 10 s session timeout and dropped connections,
 * where the Java client, whose read timeout any received byte resets, waited. The protocol's
 * rule is now "no reply arrived for 2/3 T" and the burst passes (bench/README.md), but the curve
 * keeps measuring the queue held, not the burst.
 */
const QUEUE_BATCH = 100;

/**
 * `count` waiters, each its own Mutex, spread over `sessions` sessions and queued behind one
 * holder; then the holder releases and each waiter releases as soon as it holds.
 */
async function waiters(connect: string, path: string, count: number, sessions: number): Promise<ChildResult> {
  const clients = await Promise.all(Array.from({ length: sessions }, () => ZooKeeper.connect(connect, { sessionTimeout: 10_000 })));
  try {
    const holder = await new Mutex(clients[0]!, path).acquire();
    const [heap0, rss0] = memory();
    const wakes = { owners: [] as Array<[string, bigint]> };
    const done: Array<Promise<void>> = [];
    // Queued QUEUE_BATCH at a time (see QUEUE_BATCH); should anything throw, the waiters fail
    // as the sessions close, which is not news.
    for (let queued = 0; queued < count; ) {
      for (const end = Math.min(count, queued + QUEUE_BATCH); queued < end; queued++) {
        const zk = clients[queued % sessions]!;
        const d = (async () => {
          const lease = await new Mutex(zk, path).acquire();
          wakes.owners.push([lease.node, zk.sessionId]);
          await lease.release();
        })();
        d.catch(() => undefined);
        done.push(d);
      }
      await childrenReach(clients[0]!, path, queued + 1);
    }
    const [heap, rss] = memory();
    // Counting starts with the queue complete: the holder's release is the first hand-off.
    const counter = countWakes();
    counter.own(holder.node, clients[0]!.sessionId);
    const c0 = cpuUs();
    const t0 = performance.now();
    await holder.release();
    await Promise.all(done);
    const seconds = (performance.now() - t0) / 1000;
    const cpu = cpuUs() - c0;
    for (const [node, session] of wakes.owners) counter.own(node, session);
    return { ops: count, seconds, cpuUs: cpu, heapBytes: heap - heap0, rssBytes: rss - rss0, ...counter.done(count) };
  } finally {
    await Promise.all(clients.map((c) => c.close()));
  }
}

/** `count` Mutexes on distinct paths under `path`, acquired by one session with `inFlight` acquires at a time, all held at once; then released. */
async function locks(connect: string, path: string, count: number, inFlight: number): Promise<ChildResult> {
  const zk = await ZooKeeper.connect(connect, { sessionTimeout: 10_000 });
  try {
    const [heap0, rss0] = memory();
    const leases: Lease[] = [];
    let next = 0;
    const c0 = cpuUs();
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: inFlight }, async () => {
        while (next < count) leases.push(await new Mutex(zk, `${path}/${next++}`).acquire());
      }),
    );
    const seconds = (performance.now() - t0) / 1000;
    const cpu = cpuUs() - c0;
    const [heap, rss] = memory();
    for (let i = 0; i < leases.length; i += 256) await Promise.all(leases.slice(i, i + 256).map((l) => l.release()));
    return { ops: count, seconds, cpuUs: cpu, heapBytes: heap - heap0, rssBytes: rss - rss0 };
  } finally {
    await zk.close();
  }
}

const [connect, what, path, count, k] = process.argv.slice(2);
try {
  if (!connect || !path || !(Number(count) > 0) || !(Number(k) > 0)) throw new Error('usage: scale-child <connect> waiters|locks <path> <count> <sessions|inFlight>');
  const run = what === 'waiters' ? waiters : what === 'locks' ? locks : undefined;
  if (!run) throw new Error(`unknown command ${String(what)}`);
  process.stdout.write(`RESULT ${JSON.stringify(await run(connect, path, Number(count), Number(k)))}\n`);
} catch (e) {
  process.stdout.write(`ERROR ${String((e as Error).stack ?? e).replaceAll('\n', ' ')}\n`);
  process.exitCode = 1;
}

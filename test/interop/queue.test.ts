/**
 * Wire compatibility of the queues with Curator 5's DistributedQueue and DistributedPriorityQueue:
 * Java processes (java/CuratorQueueParticipant.java: a producer putting in the foreground, or a
 * consumer printing each item) and Node queues of the test process on one queue path, items as
 * UTF-8 strings in Curator's ItemSerializer framing, in safe mode (one lock path for both). Every
 * item must be delivered, and only once; a priority queue written in one language is read in
 * priority order in the other. Negative control: Node items written as the raw payload, without
 * the framing, are dropped by the Java consumer as corrupted, and the delivery count fails.
 */
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { CreateMode, type ZooKeeper } from '@zk/protocol';
import { DelayQueue, IdQueue, PriorityQueue, Queue, QueueAbortedError, stringSerializer } from '@zk/locks';
import { waitFor } from '../harness/index.js';
import { connectString, type TestSpace } from '../harness/fixtures.js';
import { curatorMissing, type CompiledJava } from '../harness/java.js';
import { interopHooks, Participant } from './participants.js';

const JAVA_SOURCE = fileURLToPath(new URL('./java/CuratorQueueParticipant.java', import.meta.url));

const missing = curatorMissing();

let compiled: CompiledJava | undefined;
let space: TestSpace;

/** The Java participant's priorities (CuratorQueueParticipant.priorityOf). */
const priorityOf = (i: number) => ((i * 7919) % 1000) - 500;

function java(args: string[]): Participant {
  return Participant.java(compiled!, 'CuratorQueueParticipant', [`${connectString()}${space.root}`, ...args]);
}

/** A Java consumer, once READY; `items()` is what it consumed so far. */
async function javaConsumer(kind: 'plain' | 'priority' | 'delay' | 'id', path: string, lockPath: string, delayMs = 0) {
  const p = java(['consume', kind, path, lockPath, String(delayMs), 'jc']);
  await p.until('READY');
  const items = () => p.lines.filter((l) => l.startsWith('ITEM ')).map((l) => l.slice(5));
  return {
    items,
    async stop() {
      p.send('stop');
      await p.until('STOPPED');
      await p.exited;
    },
  };
}

/** Runs a Java producer of `count` items to the end; resolves with the time (ms since the epoch) it was told to start. */
async function javaProducer(kind: 'plain' | 'multi' | 'priority' | 'delay' | 'id', path: string, lockPath: string, count: number, prefix: string, dueInMs?: number): Promise<number> {
  const p = java(['produce', kind, path, lockPath, String(count), prefix, ...(dueInMs === undefined ? [] : [String(dueInMs)])]);
  await p.until('READY');
  const started = Date.now();
  p.send('go');
  await p.until('DONE');
  expect(await p.exited).toBe(0);
  return started;
}

/**
 * A Node consumer iterating `queue` until stopped; `items` is what it consumed so far. `workMs`:
 * each item is worked on that long before the next take (in safe mode the item is completed then).
 * Its loop is awaited on every path: `stop()` (idempotent) rejects with the loop's error, `until()`
 * rejects with it as soon as the loop fails, and disposal (`await using`, a test that ended early)
 * stops it and drops its error, which `until()` or `stop()` already reported; so a failure is
 * reported once, as itself, and no take is left running into the space's teardown.
 */
function nodeConsumer(queue: Queue<string> | PriorityQueue<string> | DelayQueue<string> | IdQueue<string>, workMs = 0) {
  const controller = new AbortController();
  const items: string[] = [];
  const loop = (async () => {
    try {
      for await (const item of queue.items({ signal: controller.signal })) {
        items.push(...item.values);
        if (workMs > 0) await new Promise((r) => setTimeout(r, workMs));
      }
    } catch (err) {
      if (!(err instanceof QueueAbortedError)) throw err;
    }
  })();
  loop.catch(() => undefined); // handled: awaited by stop() and until()
  let stopped: Promise<void> | undefined;
  const stop = () => (stopped ??= (controller.abort(), loop));
  return {
    items,
    stop,
    /** Waits until `check()` holds; rejects with the loop's error if the loop ends first. */
    until(what: string, check: () => boolean, ms = 60_000): Promise<unknown> {
      const ended = loop.then(() => Promise.reject(new Error(`the Node consumer ended before ${what}`)));
      return Promise.race([until(what, check, ms), ended]);
    },
    async [Symbol.asyncDispose]() {
      await stop().catch(() => undefined);
    },
  };
}

const until = (what: string, check: () => boolean, ms = 60_000) => waitFor(what, () => (check() ? true : undefined), ms, 20);

function duplicates(items: readonly string[]): number {
  return items.length - new Set(items).size;
}

describe.skipIf(missing !== undefined)(`interop - Curator 5 DistributedQueue and Queue on one queue${missing ? ` (skipped: ${missing})` : ''}`, () => {
  interopHooks([JAVA_SOURCE], { compiled: (c) => (compiled = c), space: (s) => (space = s) });

  it('safe mode, each way: 200 items of a Java producer to a Node consumer, 200 of a Node producer to a Java consumer; none lost, none twice, in put order', async () => {
    const zk = await space.client();
    const opts = { serializer: stringSerializer, lockPath: '/interop/q1-locks' };
    await using consumer = nodeConsumer(new Queue(zk, '/interop/q1', opts));
    await javaProducer('plain', '/interop/q1', '/interop/q1-locks', 200, 'j');
    await consumer.until('200 Java items at the Node consumer', () => consumer.items.length >= 200);
    await consumer.stop();
    expect(consumer.items).toEqual(Array.from({ length: 200 }, (_, i) => `j${i}`));

    const jc = await javaConsumer('plain', '/interop/q1', '/interop/q1-locks');
    const producer = new Queue(zk, '/interop/q1', opts);
    for (let i = 0; i < 200; i++) await producer.put(`n${i}`);
    await until('200 Node items at the Java consumer', () => jc.items().length >= 200);
    await jc.stop();
    expect(jc.items()).toEqual(Array.from({ length: 200 }, (_, i) => `n${i}`));
    console.log(`interop queue: Java->Node ${consumer.items.length}, Node->Java ${jc.items().length}, duplicates ${duplicates(consumer.items) + duplicates(jc.items())}`);
    expect(await space.children('/interop/q1')).toEqual([]);
    expect(await space.children('/interop/q1-locks')).toEqual([]);
  }, 120_000);

  it('safe mode, shared: a Java and a Node consumer on one queue fed by a Java and a Node producer (200 each): all 400 delivered once', async () => {
    const [zk, zk2] = await Promise.all([space.client(), space.client()]);
    const opts = { serializer: stringSerializer, lockPath: '/interop/q2-locks' };
    const jc = await javaConsumer('plain', '/interop/q2', '/interop/q2-locks');
    // Each consumer works a little on each item, as a real one does: without it our consumer,
    // which serves several items from one listing, took all 400 in one CI run (3.9.3, Curator
    // 5.7.1) and the two consumers never competed.
    await using nc = nodeConsumer(new Queue(zk, '/interop/q2', opts), 5);
    const producer = new Queue(zk2, '/interop/q2', opts);
    await Promise.all([
      javaProducer('plain', '/interop/q2', '/interop/q2-locks', 200, 'j'),
      (async () => {
        for (let i = 0; i < 200; i++) await producer.put(`n${i}`);
      })(),
    ]);
    await nc.until('400 items consumed', () => jc.items().length + nc.items.length >= 400);
    await jc.stop();
    await nc.stop();
    const all = [...jc.items(), ...nc.items];
    const crossed = { javaToNode: nc.items.filter((v) => v.startsWith('j')).length, nodeToJava: jc.items().filter((v) => v.startsWith('n')).length };
    console.log(`interop queue shared: Java consumer ${jc.items().length}, Node consumer ${nc.items.length}, crossed ${JSON.stringify(crossed)}, duplicates ${duplicates(all)}`);
    expect(duplicates(all)).toBe(0);
    expect(new Set(all)).toEqual(new Set([...Array.from({ length: 200 }, (_, i) => `j${i}`), ...Array.from({ length: 200 }, (_, i) => `n${i}`)]));
    expect(crossed.javaToNode).toBeGreaterThan(0);
    expect(crossed.nodeToJava).toBeGreaterThan(0);
    expect(await space.children('/interop/q2')).toEqual([]);
    expect(await space.children('/interop/q2-locks')).toEqual([]);
  }, 120_000);

  it('safe mode: a Java consumer stopped mid-item (its session closed) leaves the item to the Node consumer, which gets it exactly once', async () => {
    const zk = await space.client();
    const opts = { serializer: stringSerializer, lockPath: '/interop/q3-locks' };
    const producer = new Queue(zk, '/interop/q3', opts);
    for (let i = 0; i < 20; i++) await producer.put(`n${i}`);
    const jc = await javaConsumer('plain', '/interop/q3', '/interop/q3-locks', 600_000); // never finishes an item
    await until('the Java consumer holding n0', () => jc.items().includes('n0'));
    expect(await space.children('/interop/q3-locks')).toHaveLength(1);
    await using nc = nodeConsumer(new Queue(await space.client(), '/interop/q3', opts));
    await nc.until('19 items at the Node consumer', () => nc.items.length >= 19);
    expect(nc.items).not.toContain('n0'); // held by Java
    await jc.stop(); // Curator interrupts the consumer and closes its session
    await nc.until('n0 at the Node consumer', () => nc.items.includes('n0'));
    await nc.stop();
    console.log(`interop queue: Java consumer stopped holding n0; Node consumer got ${nc.items.length} items, n0 ${nc.items.filter((v) => v === 'n0').length} time(s)`);
    expect(duplicates(nc.items)).toBe(0);
    expect(new Set(nc.items)).toEqual(new Set(Array.from({ length: 20 }, (_, i) => `n${i}`)));
    expect(jc.items()).toEqual(['n0']);
    expect(await space.children('/interop/q3')).toEqual([]);
    expect(await space.children('/interop/q3-locks')).toEqual([]);
  }, 120_000);

  it('safe mode: a Node consumer whose session closes mid-item leaves the item to the Java consumer, which gets it exactly once (at its next look at the queue)', async () => {
    const [zk, holder] = await Promise.all([space.client(), space.client()]);
    const opts = { serializer: stringSerializer, lockPath: '/interop/q4-locks' };
    const producer = new Queue(zk, '/interop/q4', opts);
    for (let i = 0; i < 20; i++) await producer.put(`n${i}`);
    const held = await new Queue(holder, '/interop/q4', opts).take({ timeout: 0 });
    expect(held.value).toBe('n0');
    const jc = await javaConsumer('plain', '/interop/q4', '/interop/q4-locks');
    await until('19 items at the Java consumer', () => jc.items().length >= 19);
    expect(jc.items()).not.toContain('n0');
    await holder.close(); // the Node consumer dies mid-item
    await space.untilChildren('/interop/q4-locks', 0);
    // Curator's consumer looks at the queue again only when its children change (it does not
    // watch the lock path, as ours does): without a put it may sleep on n0 indefinitely.
    await producer.put('wake');
    await until('n0 at the Java consumer', () => jc.items().includes('n0') && jc.items().includes('wake'));
    await jc.stop();
    console.log(`interop queue: Node consumer closed holding n0; Java consumer got ${jc.items().length} items, n0 ${jc.items().filter((v) => v === 'n0').length} time(s)`);
    expect(duplicates(jc.items())).toBe(0);
    expect(new Set(jc.items())).toEqual(new Set([...Array.from({ length: 20 }, (_, i) => `n${i}`), 'wake']));
    expect(await space.children('/interop/q4')).toEqual([]);
    expect(await space.children('/interop/q4-locks')).toEqual([]);
  }, 120_000);

  it('priority queue: 100 items put by Java are taken by Node in priority order, and 100 put by Node by Java', async () => {
    const zk = await space.client();
    await javaProducer('priority', '/interop/p', '-', 100, 'j');
    const expected = (prefix: string) =>
      Array.from({ length: 100 }, (_, i) => ({ i, p: priorityOf(i) }))
        .sort((a, b) => a.p - b.p || a.i - b.i)
        .map(({ i, p }) => `${prefix}${i}:${p}`);
    const q = new PriorityQueue(zk, '/interop/p', { serializer: stringSerializer });
    const taken: string[] = [];
    for (let i = 0; i < 100; i++) taken.push((await q.take({ timeout: 5_000 })).value);
    expect(taken).toEqual(expected('j'));
    for (let i = 0; i < 100; i++) await q.put(`n${i}:${priorityOf(i)}`, priorityOf(i));
    const jc = await javaConsumer('priority', '/interop/p', '-');
    await until('100 items at the Java consumer', () => jc.items().length >= 100);
    await jc.stop();
    expect(jc.items()).toEqual(expected('n'));
    console.log(`interop priority queue: Java->Node ${taken.length} in priority order, Node->Java ${jc.items().length} in priority order`);
  }, 120_000);

  it('delay queue, id queue and putMulti across languages: due times honoured, removal by id, multi-item nodes', async () => {
    const zk = await space.client();
    // Delay: Java items due 500 ms after the start are not taken by Node before then; Node items likewise by Java.
    const t0 = await javaProducer('delay', '/interop/d', '-', 5, 'j', 500);
    const names = await space.children('/interop/d');
    expect(names.map((n) => Number.parseInt(n.split('|')[1]!, 16)).every((at) => at >= t0 + 500)).toBe(true);
    const delayed = new DelayQueue(zk, '/interop/d', { serializer: stringSerializer });
    const takenAt: number[] = [];
    for (let i = 0; i < 5; i++) {
      (await delayed.take({ timeout: 5_000 })).value;
      takenAt.push(Date.now());
    }
    expect(Math.min(...takenAt)).toBeGreaterThanOrEqual(t0 + 500);
    const jd = await javaConsumer('delay', '/interop/d', '-');
    const due = Date.now() + 500;
    for (let i = 0; i < 5; i++) await delayed.put(`n${i}`, due);
    await delayed.put('now', Date.now());
    await until('6 items at the Java delay consumer', () => jd.items().length >= 6);
    await jd.stop();
    const javaTimes = jd.items().map((l) => ({ v: l.split('@')[0], at: Number(l.split('@')[1]) }));
    expect(javaTimes[0]!.v).toBe('now');
    expect(Math.min(...javaTimes.slice(1).map((e) => e.at))).toBeGreaterThanOrEqual(due);
    // Id: 10 Java items under id-0..id-4; Node removes id-3 (2 items) and takes the other 8 in put order.
    await javaProducer('id', '/interop/i', '-', 10, 'j');
    const ids = new IdQueue(zk, '/interop/i', { serializer: stringSerializer });
    expect(await ids.remove('id-3')).toBe(2);
    const idTaken: string[] = [];
    for (let i = 0; i < 8; i++) idTaken.push((await ids.take({ timeout: 0 })).value);
    expect(idTaken).toEqual(['j0', 'j1', 'j2', 'j4', 'j5', 'j6', 'j7', 'j9']);
    for (let i = 0; i < 4; i++) await ids.put(`n${i}`, `node/${i}`);
    const ji = await javaConsumer('id', '/interop/i', '-');
    await until('4 id items at Java', () => ji.items().length >= 4);
    await ji.stop();
    expect(ji.items()).toEqual(['n0', 'n1', 'n2', 'n3']);
    // putMulti: 3 Java nodes of 2 items each reach Node as 3 items with 2 values; 3 Node nodes reach Java as 6 items.
    await javaProducer('multi', '/interop/m', '-', 3, 'j');
    const multi = new Queue(zk, '/interop/m', { serializer: stringSerializer });
    const values: (readonly string[])[] = [];
    for (let i = 0; i < 3; i++) values.push((await multi.take({ timeout: 0 })).values);
    expect(values).toEqual([['j0a', 'j0b'], ['j1a', 'j1b'], ['j2a', 'j2b']]);
    for (let i = 0; i < 3; i++) await multi.putMulti([`n${i}a`, `n${i}b`]);
    const jm = await javaConsumer('plain', '/interop/m', '-');
    await until('6 multi items at Java', () => jm.items().length >= 6);
    await jm.stop();
    expect(jm.items()).toEqual(['n0a', 'n0b', 'n1a', 'n1b', 'n2a', 'n2b']);
    console.log(`interop queue: delay 5 Java->Node (first taken ${Math.min(...takenAt) - t0} ms after the start, due at 500) and 6 Node->Java; id 10 Java items, 2 removed by id from Node, 8 taken in order, 4 Node->Java; multi 3 nodes each way (6 items)`);
  }, 120_000);

  it('negative control: 50 Node items written without the ItemSerializer framing never reach the Java consumer, and the delivery check fails', async () => {
    const zk: ZooKeeper = await space.client();
    await zk.create('/interop/raw', null, { parents: true });
    const jc = await javaConsumer('plain', '/interop/raw', '/interop/raw-locks');
    for (let i = 0; i < 50; i++) await zk.create('/interop/raw/queue-', Buffer.from(`n${i}`), { mode: CreateMode.PERSISTENT_SEQUENTIAL });
    // Curator logs "Corrupted queue item" and deletes each one.
    await waitFor('raw items consumed', async () => ((await space.children('/interop/raw')).length === 0 ? true : undefined), 30_000, 20);
    await jc.stop();
    console.log(`interop queue control: 50 raw items written, ${jc.items().length} delivered to the Java consumer, ${50 - jc.items().length} lost`);
    const delivered = jc.items().length;
    expect(delivered === 50).toBe(false); // the check the real runs pass
    expect(delivered).toBe(0);
  }, 120_000);
});

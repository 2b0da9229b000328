/**
 * Wire compatibility with Apache Curator 5: Java processes (InterProcessMutex,
 * InterProcessReadWriteLock from Debian's libcurator-recipes-java) and Node processes (@zk/locks)
 * take the same lock paths. Exclusion is checked without clocks by marker files created with
 * exclusive create inside every critical section (see java/CuratorParticipant.java); the shared
 * queue order is checked by handing a lock from Node to Java to Node and back.
 */
import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { Mutex, ReadWriteLock, type Lease } from '@zk/locks';
import { connectString, type TestSpace } from '../harness/fixtures.js';
import { curatorMissing, type CompiledJava } from '../harness/java.js';
import { contend as contendOn, handOvers, holdsById, interopHooks, Participant, queue, queued, UUID } from './participants.js';

const JAVA_SOURCE = fileURLToPath(new URL('./java/CuratorParticipant.java', import.meta.url));
const NODE_PARTICIPANT = fileURLToPath(new URL('./node-participant.mjs', import.meta.url));

const missing = curatorMissing();

const nodeName = (lockName: string) => new RegExp(`^_c_${UUID}-${lockName}\\d{10}$`);

type Mode = 'mutex' | 'read' | 'write' | 'rw-mixed' | 'none';

let compiled: CompiledJava | undefined;
let space: TestSpace;

/** A participant of this suite: Java (ids starting with `j`) or Node, with the shared arguments. */
function participant(lang: 'java' | 'node', args: string[]): Participant {
  return lang === 'java' ? Participant.java(compiled!, 'CuratorParticipant', args) : Participant.node(NODE_PARTICIPANT, args);
}

/** Starts every participant on `path`, releases them at once when all are connected; the holds come from the shared log. */
function contend(path: string, specs: { id: string; mode: Mode; iterations: number }[]) {
  const connect = `${connectString()}${space.root}`;
  return contendOn(
    (markers) => specs.map((s) => participant(s.id.startsWith('j') ? 'java' : 'node', [connect, path, s.mode, String(s.iterations), markers, s.id])),
    (id, kind) => ({ id, kind: kind as 'r' | 'w' }),
  );
}

/** A Java participant that takes `mode` on `path` once and holds it until told to release. */
function javaHolder(path: string, mode: 'mutex' | 'read' | 'write'): Participant {
  return participant('java', [`${connectString()}${space.root}`, path, mode, 'hold', tmpdir(), `j-${mode}`]);
}

/** An acquire whose progress the test can observe without awaiting it. */
function track(attempt: Promise<Lease>): { lease: Promise<Lease>; held: () => boolean } {
  let held = false;
  const lease = attempt.then((l) => ((held = true), l));
  return { lease, held: () => held };
}

describe.skipIf(missing !== undefined)(`interop - Curator 5 and @zk/locks on the same paths${missing ? ` (skipped: ${missing})` : ''}`, () => {
  interopHooks([JAVA_SOURCE], { compiled: (c) => (compiled = c), space: (s) => (space = s) });

  it('mutex - InterProcessMutex and Mutex exclude each other: 3 Java + 3 Node processes, 100 holds each', async () => {
    const ids = ['j1', 'j2', 'j3', 'n1', 'n2', 'n3'];
    const run = await contend('/interop/mutex', ids.map((id) => ({ id, mode: 'mutex', iterations: 100 })));
    const crossings = handOvers(run.holds);
    console.log(`interop mutex: ${run.holds.length} holds by ${ids.length} processes in ${run.ms} ms, hand-overs ${JSON.stringify(crossings)}, ${JSON.stringify(run.results)}`);
    expect(run.results.map((r) => [r.id, r.acquisitions])).toEqual(ids.map((id) => [id, 100]));
    expect(run.results.map((r) => r.violations)).toEqual(ids.map(() => 0));
    expect(holdsById(run.holds)).toEqual(Object.fromEntries(ids.map((id) => [id, 100])));
    // The lock really passed between the languages, both ways.
    expect(crossings.javaToNode).toBeGreaterThan(0);
    expect(crossings.nodeToJava).toBeGreaterThan(0);
    expect(await queue(space, '/interop/mutex')).toEqual([]);
  }, 120_000);

  it('read-write - InterProcessReadWriteLock and ReadWriteLock keep readers and writers apart: 2 Java + 2 Node, mixed holds', async () => {
    const ids = ['j1', 'j2', 'n1', 'n2'];
    const run = await contend('/interop/rw', ids.map((id) => ({ id, mode: 'rw-mixed', iterations: 100 })));
    const crossings = handOvers(run.holds);
    const kinds = (lang: string, kind: string) => run.holds.filter((h) => h.id.startsWith(lang) && h.kind === kind).length;
    console.log(
      `interop read-write: ${run.holds.length} holds (java r/w ${kinds('j', 'r')}/${kinds('j', 'w')}, node r/w ${kinds('n', 'r')}/${kinds('n', 'w')}) in ${run.ms} ms, hand-overs ${JSON.stringify(crossings)}, ${JSON.stringify(run.results)}`,
    );
    expect(run.results.map((r) => [r.id, r.acquisitions])).toEqual(ids.map((id) => [id, 100]));
    expect(run.results.map((r) => r.violations)).toEqual(ids.map(() => 0));
    expect(holdsById(run.holds)).toEqual(Object.fromEntries(ids.map((id) => [id, 100])));
    for (const lang of ['j', 'n']) for (const kind of ['r', 'w']) expect(kinds(lang, kind)).toBeGreaterThan(0);
    expect(crossings.javaToNode).toBeGreaterThan(0);
    expect(crossings.nodeToJava).toBeGreaterThan(0);
    expect(await queue(space, '/interop/rw')).toEqual([]);
  }, 120_000);

  it('marker check - catches overlapping holders when no lock is taken (negative control)', async () => {
    const ids = ['j1', 'n1'];
    const run = await contend('/interop/none', ids.map((id) => ({ id, mode: 'none', iterations: 200 })));
    console.log(`interop control: ${JSON.stringify(run.results)} in ${run.ms} ms`);
    expect(run.results.reduce((n, r) => n + r.violations, 0)).toBeGreaterThan(0);
  }, 60_000);

  it('mutex - one queue across languages: Node holds, Java then Node wait; the lock goes to Java, then to Node', async () => {
    const [a, b] = [await space.client(), await space.client()];
    const path = '/interop/order-node-first';
    const first = await new Mutex(a, path).acquire();
    const java = javaHolder(path, 'mutex');
    const [ours, javas] = await queued(space, path, 2);
    const second = track(new Mutex(b, path).acquire());
    const names = await queued(space, path, 3);
    expect(names.slice(0, 2)).toEqual([ours, javas]);
    for (const n of names) expect(n).toMatch(nodeName('lock-'));

    await first.release();
    await java.until('ACQUIRED');
    expect(second.held()).toBe(false);
    expect(await queue(space, path)).toEqual(names.slice(1));
    java.send('release');
    const lease = await second.lease;
    expect(await queue(space, path)).toEqual(names.slice(2));
    await lease.release();
    expect(await java.exited).toBe(0);
    expect(await queue(space, path)).toEqual([]);
  });

  it('mutex - one queue across languages: Java holds, Node then Java wait; the lock goes to Node, then to Java', async () => {
    const zk = await space.client();
    const path = '/interop/order-java-first';
    const first = javaHolder(path, 'mutex');
    await first.until('ACQUIRED');
    const waiter = track(new Mutex(zk, path).acquire());
    await queued(space, path, 2);
    const last = javaHolder(path, 'mutex');
    const names = await queued(space, path, 3);
    for (const n of names) expect(n).toMatch(nodeName('lock-'));

    first.send('release');
    const lease = await waiter.lease;
    expect(await first.exited).toBe(0);
    expect(await queue(space, path)).toEqual(names.slice(1));
    expect(last.lines).not.toContain('ACQUIRED');
    await lease.release();
    await last.until('ACQUIRED');
    last.send('release');
    expect(await last.exited).toBe(0);
    expect(await queue(space, path)).toEqual([]);
  });

  it('read-write - readers share across languages, and a reader queued behind a writer of the other language waits for it', async () => {
    const [a, b] = [await space.client(), await space.client()];
    const path = '/interop/order-rw';
    const nodeRead = await new ReadWriteLock(a, path).readLock().acquire();
    const javaRead = javaHolder(path, 'read');
    await javaRead.until('ACQUIRED'); // two readers, one from each language, hold at once
    const javaWrite = javaHolder(path, 'write');
    await queued(space, path, 3);
    const lateRead = track(new ReadWriteLock(b, path).readLock().acquire());
    const names = await queued(space, path, 4);
    expect(names.map((n) => (nodeName('__READ__').test(n) ? 'read' : nodeName('__WRIT__').test(n) ? 'write' : n))).toEqual(['read', 'read', 'write', 'read']);

    await nodeRead.release();
    javaRead.send('release');
    expect(await javaRead.exited).toBe(0);
    await javaWrite.until('ACQUIRED');
    // The Node reader came after the Java writer, so it must still be waiting.
    expect(lateRead.held()).toBe(false);
    javaWrite.send('release');
    const lease = await lateRead.lease;
    expect(await javaWrite.exited).toBe(0);
    await lease.release();
    expect(await queue(space, path)).toEqual([]);
  });

  it('read-write - a Java reader queued behind a Node writer waits for it', async () => {
    const [a, b] = [await space.client(), await space.client()];
    const path = '/interop/order-rw-node-writer';
    const javaRead = javaHolder(path, 'read');
    await javaRead.until('ACQUIRED');
    const nodeWrite = track(new ReadWriteLock(a, path).writeLock().acquire());
    await queued(space, path, 2);
    const lateRead = javaHolder(path, 'read');
    const names = await queued(space, path, 3);
    expect(names.map((n) => (nodeName('__READ__').test(n) ? 'read' : nodeName('__WRIT__').test(n) ? 'write' : n))).toEqual(['read', 'write', 'read']);

    javaRead.send('release');
    const lease = await nodeWrite.lease;
    expect(await javaRead.exited).toBe(0);
    expect(lateRead.lines).not.toContain('ACQUIRED');
    // A Node reader arriving now queues behind the Java reader, which is behind nothing but the writer.
    const nodeRead = track(new ReadWriteLock(b, path).readLock().acquire());
    await queued(space, path, 3);
    expect(nodeRead.held()).toBe(false);
    await lease.release();
    await lateRead.until('ACQUIRED');
    await (await nodeRead.lease).release();
    lateRead.send('release');
    expect(await lateRead.exited).toBe(0);
    expect(await queue(space, path)).toEqual([]);
  });
});

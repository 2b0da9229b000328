/**
 * Wire compatibility of the semaphores with Apache Curator 5: Java processes
 * (InterProcessSemaphoreV2 with a fixed count or a SharedCount, InterProcessSemaphoreMutex, from
 * Debian's libcurator-recipes-java) and Node processes (@zk/locks Semaphore, SharedCount,
 * SemaphoreMutex) share the permits of one path. The limit is checked without clocks by marker
 * files: each holder creates one marker per permit, then counts the markers present (see
 * java/CuratorSemaphoreParticipant.java); hand-overs between the languages are counted from a
 * shared append-only log.
 */
import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { encodeCount, Semaphore, SharedCount } from '@zk/locks';
import { connectString, type TestSpace } from '../harness/fixtures.js';
import { curatorMissing, type CompiledJava } from '../harness/java.js';
import { contend as contendOn, handOvers, holdsById, interopHooks, Participant, queue, queued, UUID, type Contention } from './participants.js';

const JAVA_SOURCE = fileURLToPath(new URL('./java/CuratorSemaphoreParticipant.java', import.meta.url));
const NODE_PARTICIPANT = fileURLToPath(new URL('./semaphore-participant.mjs', import.meta.url));

const missing = curatorMissing();

type Kind = 'fixed' | 'count' | 'mutex' | 'none';

let compiled: CompiledJava | undefined;
let space: TestSpace;

/** A participant of this suite: Java for ids starting with `j`, else Node; the shared arguments. */
function participant(id: string, args: string[]): Participant {
  return id.startsWith('j') ? Participant.java(compiled!, 'CuratorSemaphoreParticipant', args) : Participant.node(NODE_PARTICIPANT, args);
}

/** A counted run; each hold of the shared log says who held how many permits. */
type Run = Contention<{ id: string; permits: number }>;

/** Starts every participant on `path`, releases them at once when all are connected; the holds come from the shared log. */
function contend(path: string, kind: Kind, limit: number, countPath: string, specs: { id: string; iterations: number }[]): Promise<Run> {
  const connect = `${connectString()}${space.root}`;
  return contendOn(
    (markers) => specs.map((s) => participant(s.id, [connect, path, kind, String(limit), countPath, String(s.iterations), markers, s.id])),
    (id, permits) => ({ id, permits: Number(permits) }),
  );
}

/** A participant that takes one permit of `path` once and holds it until told to release. */
function holder(id: string, path: string, kind: Kind, limit: number, countPath = '-'): Participant {
  return participant(id, [`${connectString()}${space.root}`, path, kind, String(limit), countPath, 'hold', tmpdir(), id]);
}

/** Checks a counted run: every hold logged, no violation, hand-overs both ways, nothing left on the server. */
async function expectClean(run: Run, path: string, ids: string[], iterations: number): Promise<void> {
  expect(run.results.map((r) => [r.id, r.acquisitions])).toEqual(ids.map((id) => [id, iterations]));
  expect(run.results.map((r) => r.violations)).toEqual(ids.map(() => 0));
  expect(holdsById(run.holds)).toEqual(Object.fromEntries(ids.map((id) => [id, iterations])));
  const crossings = handOvers(run.holds);
  expect(crossings.javaToNode).toBeGreaterThan(0);
  expect(crossings.nodeToJava).toBeGreaterThan(0);
  expect(await queue(space, `${path}/leases`)).toEqual([]);
  await queued(space, `${path}/locks`, 0);
}

function summary(name: string, run: Run): string {
  const permits = run.holds.reduce((n, h) => n + h.permits, 0);
  return `interop ${name}: ${run.holds.length} holds (${permits} permits) in ${run.ms} ms, hand-overs ${JSON.stringify(handOvers(run.holds))}, ${JSON.stringify(run.results)}`;
}

describe.skipIf(missing !== undefined)(`interop - Curator 5 semaphores and @zk/locks on the same paths${missing ? ` (skipped: ${missing})` : ''}`, () => {
  interopHooks([JAVA_SOURCE], { compiled: (c) => (compiled = c), space: (s) => (space = s) });

  it('InterProcessSemaphoreV2 and Semaphore share 3 permits: 2 Java + 2 Node processes, 100 holds each (Node takes 2 permits in some)', async () => {
    const ids = ['j1', 'j2', 'n1', 'n2'];
    const run = await contend('/interop/sem', 'fixed', 3, '-', ids.map((id) => ({ id, iterations: 100 })));
    console.log(summary('semaphore (3 permits)', run));
    await expectClean(run, '/interop/sem', ids, 100);
    expect(run.holds.some((h) => h.permits === 2)).toBe(true);
  }, 60_000);

  it('with a SharedCount of 2 read by both languages: 2 Java + 2 Node processes, 60 holds each', async () => {
    const admin = await space.admin();
    await admin.create(`${space.root}/interop-count`, encodeCount(2));
    const ids = ['j1', 'j2', 'n1', 'n2'];
    const run = await contend('/interop/sem-count', 'count', 2, '/interop-count', ids.map((id) => ({ id, iterations: 60 })));
    console.log(summary('semaphore (shared count 2)', run));
    await expectClean(run, '/interop/sem-count', ids, 60);
  }, 60_000);

  it('InterProcessSemaphoreMutex and SemaphoreMutex exclude each other: 2 Java + 2 Node processes, 60 holds each', async () => {
    const ids = ['j1', 'j2', 'n1', 'n2'];
    const run = await contend('/interop/sem-mutex', 'mutex', 1, '-', ids.map((id) => ({ id, iterations: 60 })));
    console.log(summary('semaphore mutex', run));
    await expectClean(run, '/interop/sem-mutex', ids, 60);
  }, 60_000);

  it('marker check - catches too many holders when no semaphore is taken (negative control)', async () => {
    const ids = ['j1', 'n1'];
    const run = await contend('/interop/sem-none', 'none', 1, '-', ids.map((id) => ({ id, iterations: 150 })));
    console.log(`interop semaphore control: ${JSON.stringify(run.results)} in ${run.ms} ms`);
    expect(run.results.reduce((n, r) => n + r.violations, 0)).toBeGreaterThan(0);
  }, 60_000);

  it('a count change made from Node admits a waiting Java process; a count node seeded by Java is read by Node', async () => {
    const zk = await space.client();
    // Java creates the count node (4 bytes, its seed) and takes the only permit.
    const javaFirst = holder('j-first', '/interop/sem-order', 'count', 1, '/interop-order-count');
    await javaFirst.until('ACQUIRED');
    await using count = new SharedCount(zk, '/interop-order-count', 7);
    await count.start();
    expect(count.count).toBe(1); // Java's seed, not ours
    const semaphore = new Semaphore(zk, '/interop/sem-order', { maxLeases: count });
    expect(await semaphore.tryAcquire()).toBeUndefined();
    // Node waits for Java's permit and gets it when Java returns it.
    const waiting = semaphore.acquire({ timeout: 30_000 });
    await queued(space, '/interop/sem-order/leases', 2);
    javaFirst.send('release');
    const lease = await waiting;
    expect(await javaFirst.exited).toBe(0);
    // Now Java waits behind Node; raising the count from Node lets it in while Node still holds.
    const javaSecond = holder('j-second', '/interop/sem-order', 'count', 1, '/interop-order-count');
    await queued(space, '/interop/sem-order/leases', 2);
    expect(javaSecond.lines).not.toContain('ACQUIRED');
    const names = await queue(space, '/interop/sem-order/leases');
    for (const n of names) expect(n).toMatch(new RegExp(`^_c_${UUID}-lease-\\d{10}$`));
    for (const n of await queue(space, '/interop/sem-order/locks')) expect(n).toMatch(new RegExp(`^_c_${UUID}-lock-\\d{10}$`));
    await count.setCount(2);
    await javaSecond.until('ACQUIRED');
    expect(lease.held).toBe(true);
    javaSecond.send('release');
    expect(await javaSecond.exited).toBe(0);
    await lease.release();
    expect(await queue(space, '/interop/sem-order/leases')).toEqual([]);
  }, 60_000);
});

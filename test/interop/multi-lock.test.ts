/**
 * MultiLock and revocation against Apache Curator 5 processes (Debian's libcurator-recipes-java):
 * InterProcessMultiLock of InterProcessMutexes and our MultiLock of Mutexes on the same paths
 * exclude each other and plain InterProcessMutexes on each path (marker files created with
 * exclusive create inside every hold, see java/MultiLockParticipant.java), with a negative
 * control; Curator's Revoker reaches our revocable holders, and ours reaches a Curator holder
 * that made itself revocable.
 */
import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { MultiLock, Mutex, RevocationRequestedError, revokeHolders, type Lease } from '@zk/locks';
import { connectString, type TestSpace } from '../harness/fixtures.js';
import { curatorMissing, type CompiledJava } from '../harness/java.js';
import { contend as contendOn, handOvers, holdsById, interopHooks, Participant, queue, queued } from './participants.js';

const JAVA_SOURCES = ['./java/MultiLockParticipant.java', './java/RevocParticipant.java'].map((p) => fileURLToPath(new URL(p, import.meta.url)));
const NODE_PARTICIPANT = fileURLToPath(new URL('./MultiLockParticipant.mjs', import.meta.url));

const missing = curatorMissing();

const P1 = '/interop/multi/p1';
const P2 = '/interop/multi/p2';

let compiled: CompiledJava | undefined;
let space: TestSpace;

interface Spec {
  /** `j…` runs Curator, `n…` runs @zk/locks. */
  id: string;
  paths: string[];
  mode: 'multi' | 'mutex' | 'none';
  iterations: number;
}

function participant(id: string, args: string[]): Participant {
  return id.startsWith('j') ? Participant.java(compiled!, 'MultiLockParticipant', args) : Participant.node(NODE_PARTICIPANT, args);
}

/** Starts every participant, releases them at once when all are connected; the holds come from the shared log. */
function contend(specs: Spec[]) {
  const connect = `${connectString()}${space.root}`;
  return contendOn(
    (markers) => specs.map((s) => participant(s.id, [connect, s.paths.join(','), s.mode, String(s.iterations), markers, s.id])),
    (id, mode) => ({ id, mode }),
  );
}

function aborted(signal: AbortSignal): Promise<unknown> {
  return new Promise((resolve) => (signal.aborted ? resolve(signal.reason) : signal.addEventListener('abort', () => resolve(signal.reason), { once: true })));
}

describe.skipIf(missing !== undefined)(`interop - MultiLock and revocation with Curator 5${missing ? ` (skipped: ${missing})` : ''}`, () => {
  interopHooks(JAVA_SOURCES, { compiled: (c) => (compiled = c), space: (s) => (space = s) });

  it('InterProcessMultiLock and MultiLock over [P1, P2] exclude each other and a plain InterProcessMutex on each path', async () => {
    const specs: Spec[] = [
      { id: 'jm1', paths: [P1, P2], mode: 'multi', iterations: 100 },
      { id: 'jm2', paths: [P1, P2], mode: 'multi', iterations: 100 },
      // Given in the other order: ours sorts, so it takes P1 first, as Curator's list does.
      { id: 'nm1', paths: [P2, P1], mode: 'multi', iterations: 100 },
      { id: 'nm2', paths: [P2, P1], mode: 'multi', iterations: 100 },
      { id: 'js1', paths: [P1], mode: 'mutex', iterations: 100 },
      { id: 'js2', paths: [P2], mode: 'mutex', iterations: 100 },
    ];
    const run = await contend(specs);
    const multiHolds = run.holds.filter((h) => h.mode === 'multi');
    const crossings = handOvers(multiHolds);
    console.log(`interop multi-lock: ${run.holds.length} holds by ${specs.length} processes in ${run.ms} ms, MultiLock hand-overs between the languages ${JSON.stringify(crossings)}, ${JSON.stringify(run.results)}`);
    expect(run.results.map((r) => [r.id, r.acquisitions, r.violations])).toEqual(specs.map((s) => [s.id, 100, 0]));
    expect(holdsById(run.holds)).toEqual(Object.fromEntries(specs.map((s) => [s.id, 100])));
    expect(crossings.javaToNode).toBeGreaterThan(0);
    expect(crossings.nodeToJava).toBeGreaterThan(0);
    expect(await queue(space, P1)).toEqual([]);
    expect(await queue(space, P2)).toEqual([]);
  }, 60_000);

  it('marker check - catches overlapping holders of P1 and P2 when no lock is taken (negative control)', async () => {
    const run = await contend([
      { id: 'jm1', paths: [P1, P2], mode: 'none', iterations: 200 },
      { id: 'nm1', paths: [P1, P2], mode: 'none', iterations: 200 },
    ]);
    console.log(`interop multi-lock control: ${JSON.stringify(run.results)} in ${run.ms} ms`);
    expect(run.results.reduce((n, r) => n + r.violations, 0)).toBeGreaterThan(0);
  }, 60_000);

  it('a Curator InterProcessMultiLock waits for our MultiLock and takes over on release; ours then finds it held and leaves nothing', async () => {
    const zk = await space.client();
    const ours = new MultiLock([new Mutex(zk, P2), new Mutex(zk, P1)]);
    const lease = await ours.acquire();
    const java = participant('j-hold', [`${connectString()}${space.root}`, `${P1},${P2}`, 'multi', 'hold', tmpdir(), 'j-hold']);
    await queued(space, P1, 2); // Curator queues on its first path
    expect(java.lines).not.toContain('ACQUIRED');
    await lease.release();
    await java.until('ACQUIRED');
    expect((await queue(space, P1)).length).toBe(1);
    expect((await queue(space, P2)).length).toBe(1);
    expect(await ours.tryAcquire()).toBeUndefined();
    expect((await queue(space, P1)).length).toBe(1);
    expect((await queue(space, P2)).length).toBe(1);
    java.send('release');
    expect(await java.exited).toBe(0);
    const again = await ours.acquire({ timeout: 10_000 });
    await again.release();
    expect(await queue(space, P1)).toEqual([]);
    expect(await queue(space, P2)).toEqual([]);
  });

  it('revocation - Curator\'s Revoker reaches our revocable holder (a Mutex, and a part of a MultiLock)', async () => {
    const zk = await space.client();
    const connect = `${connectString()}${space.root}`;
    const lease = await new Mutex(zk, '/interop/rv/m').acquire({ revocable: true });
    const revoker = Participant.java(compiled!, 'RevocParticipant', [connect, 'revoke', lease.node]);
    await revoker.until('REVOKED');
    expect(await aborted(lease.revocationRequested)).toBeInstanceOf(RevocationRequestedError);
    expect(lease.held).toBe(true);
    expect(await revoker.exited).toBe(0);
    await lease.release();

    const multi = await new MultiLock([new Mutex(zk, P1), new Mutex(zk, P2)]).acquire({ revocable: true });
    const second = Participant.java(compiled!, 'RevocParticipant', [connect, 'revoke', multi.nodes[1]!]);
    expect(((await aborted(multi.revocationRequested)) as RevocationRequestedError).node).toBe(multi.nodes[1]);
    expect(await second.exited).toBe(0);
    await multi.release();
  });

  it('revocation - ours reaches a Curator holder that made itself revocable: it releases and our waiter takes over', async () => {
    const [zk, asker] = await Promise.all([space.client(), space.client()]);
    const path = '/interop/rv/curator';
    const java = Participant.java(compiled!, 'RevocParticipant', [`${connectString()}${space.root}`, 'holder', path]);
    await java.until('ACQUIRED');
    const [javaNode] = await queued(space, path, 1);
    // Curator creates a revocable lock's node with no data.
    expect((await asker.getData(`${path}/${javaNode}`)).data.length).toBe(0);
    let lease: Lease | undefined;
    const waiting = new Mutex(zk, path).acquire({ timeout: 20_000 }).then((l) => (lease = l));
    await queued(space, path, 2);
    expect(await revokeHolders(asker, path)).toEqual([`${path}/${javaNode}`]);
    await java.until('RELEASED');
    await waiting;
    expect(lease!.held).toBe(true);
    expect(java.lines).toEqual(['ACQUIRED', 'REVOCATION_REQUESTED', 'RELEASED']);
    expect(await java.exited).toBe(0);
    await lease!.release();
    expect(await queue(space, path)).toEqual([]);
  });
});

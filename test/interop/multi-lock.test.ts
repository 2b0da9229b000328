/**
 * MultiLock and revocation against Apache Curator 5 processes (Debian's libcurator-recipes-java):
 * InterProcessMultiLock of InterProcessMutexes and our MultiLock of Mutexes on the same paths
 * exclude each other and plain InterProcessMutexes on each path (marker files created with
 * exclusive create inside every hold, see java/MultiLockParticipant.java), with a negative
 * control; Curator's Revoker reaches our revocable holders, and ours reaches a Curator holder
 * that made itself revocable.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { MultiLock, Mutex, RevocationRequestedError, revokeHolders, type Lease } from '@zk/locks';
import { waitFor } from '../harness/index.js';
import { connectString, type TestSpace } from '../harness/fixtures.js';
import { curatorMissing, type CompiledJava } from '../harness/java.js';
import { handOvers, holdsById, interopHooks, Participant, type Result } from './participants.js';

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

/** Starts every participant, releases them at once when all are connected, and reads the shared hold log. */
async function contend(specs: Spec[]): Promise<{ results: Result[]; holds: { id: string; mode: string }[]; ms: number }> {
  const markers = mkdtempSync(join(tmpdir(), 'zk-interop-multi-'));
  try {
    const connect = `${connectString()}${space.root}`;
    const ps = specs.map((s) => participant(s.id, [connect, s.paths.join(','), s.mode, String(s.iterations), markers, s.id]));
    await Promise.all(ps.map((p) => p.until('READY')));
    const t0 = performance.now();
    for (const p of ps) p.send('go');
    const results = await Promise.all(ps.map((p) => p.result()));
    const ms = Math.round(performance.now() - t0);
    const holds = readFileSync(join(markers, 'log'), 'utf8')
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => {
        const [id = '', mode = ''] = l.split(' ');
        return { id, mode };
      });
    return { results, holds, ms };
  } finally {
    rmSync(markers, { recursive: true, force: true });
  }
}

async function queue(path: string): Promise<string[]> {
  const admin = await space.admin();
  const children = await admin.getChildren(`${space.root}${path}`).catch(() => [] as string[]);
  return children.sort((a, b) => (a.slice(-10) < b.slice(-10) ? -1 : 1));
}

function queued(path: string, n: number): Promise<string[]> {
  return waitFor(`${n} nodes under ${path}`, async () => {
    const q = await queue(path);
    return q.length === n ? q : undefined;
  }, 30_000, 20);
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
    expect(await queue(P1)).toEqual([]);
    expect(await queue(P2)).toEqual([]);
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
    await queued(P1, 2); // Curator queues on its first path
    expect(java.lines).not.toContain('ACQUIRED');
    await lease.release();
    await java.until('ACQUIRED');
    expect((await queue(P1)).length).toBe(1);
    expect((await queue(P2)).length).toBe(1);
    expect(await ours.tryAcquire()).toBeUndefined();
    expect((await queue(P1)).length).toBe(1);
    expect((await queue(P2)).length).toBe(1);
    java.send('release');
    expect(await java.exited).toBe(0);
    const again = await ours.acquire({ timeout: 10_000 });
    await again.release();
    expect(await queue(P1)).toEqual([]);
    expect(await queue(P2)).toEqual([]);
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
    const [javaNode] = await queued(path, 1);
    // Curator creates a revocable lock's node with no data.
    expect((await asker.getData(`${path}/${javaNode}`)).data.length).toBe(0);
    let lease: Lease | undefined;
    const waiting = new Mutex(zk, path).acquire({ timeout: 20_000 }).then((l) => (lease = l));
    await queued(path, 2);
    expect(await revokeHolders(asker, path)).toEqual([`${path}/${javaNode}`]);
    await java.until('RELEASED');
    await waiting;
    expect(lease!.held).toBe(true);
    expect(java.lines).toEqual(['ACQUIRED', 'REVOCATION_REQUESTED', 'RELEASED']);
    expect(await java.exited).toBe(0);
    await lease!.release();
    expect(await queue(path)).toEqual([]);
  });
});

/**
 * Observing leadership without joining (issue 39 part 4): `observeLeader` follows a Curator 5
 * election held by real Java processes (java/CuratorLeaderParticipant.java, "hold" mode) on a
 * LeaderLatch and on a LeaderSelector path. It yields the leader at each change and nothing else,
 * and it never takes part: Curator's own participant listing never shows it, where a @zk/locks
 * LeaderLatch that joins is listed at once (the negative control of that check).
 */
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { LeaderLatch, observeLeader } from '@zk/locks';
import type { ZooKeeper } from '@zk/protocol';
import { waitFor } from '../harness/index.js';
import { connectString, type TestSpace } from '../harness/fixtures.js';
import { curatorMissing, type CompiledJava } from '../harness/java.js';
import { interopHooks, Participant, queue, queued } from './participants.js';

const JAVA_SOURCE = fileURLToPath(new URL('./java/CuratorLeaderParticipant.java', import.meta.url));
const missing = curatorMissing();
let compiled: CompiledJava | undefined;
let space: TestSpace;

/** A Curator participant that leads once and holds until told to leave. */
function java(id: string, path: string, mode: 'latch' | 'selector'): Participant {
  return Participant.java(compiled!, 'CuratorLeaderParticipant', [`${connectString()}${space.root}`, path, mode, 'hold', '/tmp', id]);
}

/** Curator's own view of the election, asked of a Java participant. */
async function view(p: Participant): Promise<string> {
  const before = p.lines.filter((l) => l.startsWith('PARTICIPANTS ')).length;
  p.send('participants');
  await waitFor('participants line', () => p.lines.filter((l) => l.startsWith('PARTICIPANTS ')).length > before || undefined, 20_000, 5);
  return p.lines.filter((l) => l.startsWith('PARTICIPANTS ')).at(-1)!.slice('PARTICIPANTS '.length);
}

/** Starts observing; `seen` gets each yield (the id, or '-' for no leader). */
function observe(zk: ZooKeeper, path: string, recipe: 'latch' | 'selector') {
  const ac = new AbortController();
  const seen: string[] = [];
  const done = (async () => {
    for await (const leader of observeLeader(zk, path, { recipe, signal: ac.signal })) seen.push(leader ? leader.id : '-');
  })();
  const count = (n: number) => waitFor(`${n} leaders observed (seen ${seen.join(',')})`, () => (seen.length >= n ? [...seen] : undefined), 20_000, 5);
  return { seen, count, stop: async () => (ac.abort(), await done) };
}

describe.skipIf(missing !== undefined)(`interop - observing a Curator 5 election without joining${missing ? ` (skipped: ${missing})` : ''}`, () => {
  interopHooks([JAVA_SOURCE], { compiled: (c) => (compiled = c), space: (s) => (space = s) });

  it('latch - follows the leader through joins and leaves: none, j1, (j2 queues: nothing), j2, none; Curator never lists the observer', async () => {
    const path = '/interop/observe-latch';
    const zk = await space.client();
    const o = observe(zk, path, 'latch');
    expect(await o.count(1)).toEqual(['-']);
    const j1 = java('j1', path, 'latch');
    await j1.until('LEADER');
    expect(await o.count(2)).toEqual(['-', 'j1']);
    const j2 = java('j2', path, 'latch');
    await queued(space, path, 2);
    expect(await view(j1)).toBe('j1:true,j2:false');
    j1.send('leave');
    expect(await j1.exited).toBe(0);
    await j2.until('LEADER');
    // j2 queuing behind j1 yielded nothing: the next yield is the hand-over.
    expect(await o.count(3)).toEqual(['-', 'j1', 'j2']);
    expect(await view(j2)).toBe('j2:true');
    j2.send('leave');
    expect(await j2.exited).toBe(0);
    expect(await o.count(4)).toEqual(['-', 'j1', 'j2', '-']);
    await o.stop();
    expect(o.seen).toEqual(['-', 'j1', 'j2', '-']);
    expect(zk.watchCount).toBe(0);
    expect(await queue(space, path)).toEqual([]);
  });

  it('selector - follows a Curator LeaderSelector (its mutex nodes) to the end of the term', async () => {
    const path = '/interop/observe-selector';
    const zk = await space.client();
    const j1 = java('j1', path, 'selector');
    await j1.until('LEADER');
    const o = observe(zk, path, 'selector');
    expect(await o.count(1)).toEqual(['j1']);
    const j2 = java('j2', path, 'selector');
    await queued(space, path, 2);
    j1.send('leave');
    expect(await j1.exited).toBe(0);
    await j2.until('LEADER');
    expect(await o.count(2)).toEqual(['j1', 'j2']);
    j2.send('leave');
    expect(await j2.exited).toBe(0);
    expect(await o.count(3)).toEqual(['j1', 'j2', '-']);
    await o.stop();
    expect(zk.watchCount).toBe(0);
  });

  it('negative control - a LeaderLatch that joins is listed by Curator at once; the observer beside it never is', async () => {
    const path = '/interop/observe-control';
    const j1 = java('j1', path, 'latch');
    await j1.until('LEADER');
    const o = observe(await space.client(), path, 'latch');
    expect(await o.count(1)).toEqual(['j1']);
    expect(await view(j1)).toBe('j1:true');
    const latch = new LeaderLatch(await space.client(), path, { id: 'n1' });
    latch.start();
    await queued(space, path, 2);
    expect(await view(j1)).toBe('j1:true,n1:false');
    await latch.close();
    expect(await view(j1)).toBe('j1:true');
    j1.send('leave');
    expect(await j1.exited).toBe(0);
    expect(await o.count(2)).toEqual(['j1', '-']);
    await o.stop();
    expect(await queue(space, path)).toEqual([]);
  });
});

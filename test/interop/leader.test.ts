/**
 * Leader election across languages: Curator 5's LeaderLatch and LeaderSelector (Debian's
 * libcurator-recipes-java) and @zk/locks' LeaderLatch and LeaderSelector on the same paths. At
 * most one leader acts at a time, checked without clocks by a marker file each leader creates
 * with exclusive create (java/CuratorLeaderParticipant.java documents the protocol); leadership
 * passes between the languages both ways; each side lists the other's participants with their
 * ids and agrees on the leader.
 */
import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { LeaderLatch, LeaderSelector } from '@zk/locks';
import { waitFor } from '../harness/index.js';
import { connectString, type TestSpace } from '../harness/fixtures.js';
import { curatorMissing, type CompiledJava } from '../harness/java.js';
import { contend as contendOn, handOvers, holdsById, interopHooks, Participant, queue, queued, UUID } from './participants.js';

const JAVA_SOURCE = fileURLToPath(new URL('./java/CuratorLeaderParticipant.java', import.meta.url));
const NODE_PARTICIPANT = fileURLToPath(new URL('./leader-participant.mjs', import.meta.url));
const missing = curatorMissing();

type Mode = 'latch' | 'selector' | 'none';
let compiled: CompiledJava | undefined;
let space: TestSpace;

/** A participant: Java when the id starts with `j`, else Node. */
function participant(id: string, path: string, mode: Mode, terms: number | 'hold', markers = tmpdir()): Participant {
  const args = [`${connectString()}${space.root}`, path, mode, String(terms), markers, id];
  return id.startsWith('j') ? Participant.java(compiled!, 'CuratorLeaderParticipant', args) : Participant.node(NODE_PARTICIPANT, args);
}

/** Runs counted participants from one start line; the terms come from the shared log. */
function contend(path: string, mode: Mode, ids: string[], terms: number) {
  return contendOn((markers) => ids.map((id) => participant(id, path, mode, terms, markers)), (id) => ({ id }));
}

/** Asks a holding participant for its view of the participants. */
async function view(p: Participant): Promise<string> {
  const before = p.lines.filter((l) => l.startsWith('PARTICIPANTS ')).length;
  p.send('participants');
  await waitFor('participants line', () => p.lines.filter((l) => l.startsWith('PARTICIPANTS ')).length > before || undefined, 20_000, 5);
  return p.lines.filter((l) => l.startsWith('PARTICIPANTS ')).at(-1)!.slice('PARTICIPANTS '.length);
}

describe.skipIf(missing !== undefined)(`interop - Curator 5 leader election and @zk/locks on the same paths${missing ? ` (skipped: ${missing})` : ''}`, () => {
  interopHooks([JAVA_SOURCE], { compiled: (c) => (compiled = c), space: (s) => (space = s) });

  for (const mode of ['latch', 'selector'] as const) {
    it(`${mode} - one leader at a time across 2 Java + 2 Node processes, 60 terms each, leadership passing both ways`, async () => {
      const ids = ['j1', 'j2', 'n1', 'n2'];
      const run = await contend(`/interop/${mode}`, mode, ids, 60);
      const crossings = handOvers(run.holds);
      console.log(`interop ${mode}: ${run.holds.length} terms by ${ids.length} processes in ${run.ms} ms, hand-overs ${JSON.stringify(crossings)}`);
      expect(run.results.map((r) => [r.id, r.acquisitions, r.violations])).toEqual(ids.map((id) => [id, 60, 0]));
      expect(holdsById(run.holds)).toEqual(Object.fromEntries(ids.map((id) => [id, 60])));
      expect(crossings.javaToNode).toBeGreaterThan(0);
      expect(crossings.nodeToJava).toBeGreaterThan(0);
      expect(await queue(space, `/interop/${mode}`)).toEqual([]);
    }, 120_000);
  }

  it('marker check - catches two acting leaders when no election is held (negative control)', async () => {
    const run = await contend('/interop/leader-none', 'none', ['j1', 'n1'], 300);
    console.log(`interop leader control: ${JSON.stringify(run.results)} in ${run.ms} ms`);
    expect(run.results.reduce((n, r) => n + r.violations, 0)).toBeGreaterThan(0);
  }, 60_000);

  it('latch - one queue: Java leads, Node and Java wait; both list the same participants; leadership goes Java -> Node -> Java', async () => {
    const path = '/interop/latch-order';
    const java1 = participant('j-first', path, 'latch', 'hold');
    await java1.until('LEADER');
    const latch = new LeaderLatch(await space.client(), path, { id: 'n-second' });
    latch.start();
    await queued(space, path, 2);
    const java2 = participant('j-third', path, 'latch', 'hold');
    const names = await queued(space, path, 3);
    for (const n of names) expect(n).toMatch(new RegExp(`^_c_${UUID}-latch-\\d{10}$`));
    const expected = 'j-first:true,n-second:false,j-third:false';
    expect((await latch.participants()).map((p) => `${p.id}:${p.isLeader}`).join(',')).toBe(expected);
    expect(await view(java1)).toBe(expected);
    expect((await latch.leader())?.id).toBe('j-first');

    const next = latch.leadership({ timeout: 20_000 });
    java1.send('leave');
    const leadership = await next;
    expect(await java1.exited).toBe(0);
    expect(java2.lines).not.toContain('LEADER');
    expect(await view(java2)).toBe('n-second:true,j-third:false');
    await latch.close();
    expect(leadership.signal.aborted).toBe(true);
    await java2.until('LEADER');
    java2.send('leave');
    expect(await java2.exited).toBe(0);
    expect(await queue(space, path)).toEqual([]);
  });

  it('selector - one queue: Node leads, Java waits and sees the Node id as leader; leadership goes to Java when Node gives it up', async () => {
    const path = '/interop/selector-order';
    const selector = new LeaderSelector(await space.client(), path, { id: 'n-first' });
    let giveUp!: () => void;
    const leading = new Promise<void>((resolve) => {
      selector.start(async () => {
        resolve();
        await new Promise<void>((r) => (giveUp = r));
      });
    });
    await leading;
    const java = participant('j-second', path, 'selector', 'hold');
    const names = await queued(space, path, 2);
    for (const n of names) expect(n).toMatch(new RegExp(`^_c_${UUID}-lock-\\d{10}$`));
    expect(await view(java)).toBe('n-first:true,j-second:false');
    expect((await selector.participants()).map((p) => `${p.id}:${p.isLeader}`).join(',')).toBe('n-first:true,j-second:false');
    expect(java.lines).not.toContain('LEADER');
    giveUp();
    await java.until('LEADER');
    await selector.close();
    expect(await queue(space, path)).toEqual(names.slice(1));
    java.send('leave');
    expect(await java.exited).toBe(0);
    expect(await queue(space, path)).toEqual([]);
  });
});

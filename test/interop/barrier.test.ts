/**
 * Wire compatibility of the barriers with Apache Curator 5: Java processes
 * (DistributedDoubleBarrier and DistributedBarrier from Debian's libcurator-recipes-java, driven
 * by java/CuratorBarrierParticipant.java) and Node members (@zk/locks DoubleBarrier and Barrier,
 * on sessions of the test process) share one barrier path.
 *
 * Checked without clocks: every member, right after its enter returned, lists the barrier and
 * must see all `memberCount` member nodes (nobody passed early); right after its leave returned,
 * it must see none (nobody left before the others). Negative controls: Node members whose nodes
 * are not where Curator looks (another parent) are not counted, and the same check fails; a
 * barrier Node sets where Curator does not look does not hold a Java waiter.
 */
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { Barrier, BarrierTimeoutError, DoubleBarrier } from '@zk/locks';
import { waitFor } from '../harness/index.js';
import { connectString, type TestSpace } from '../harness/fixtures.js';
import { curatorMissing, type CompiledJava } from '../harness/java.js';
import { interopHooks, Participant, UUID } from './participants.js';

const JAVA_SOURCE = fileURLToPath(new URL('./java/CuratorBarrierParticipant.java', import.meta.url));

const missing = curatorMissing();

let compiled: CompiledJava | undefined;
let space: TestSpace;

/** A Curator participant on `path` (a double barrier of `memberCount`, and a barrier), once READY. */
async function java(path: string, memberCount: number): Promise<Participant> {
  const p = Participant.java(compiled!, 'CuratorBarrierParticipant', [`${connectString()}${space.root}`, path, String(memberCount)]);
  await p.until('READY');
  return p;
}

/** Sends `command` and resolves with the participant's next line. */
async function reply(p: Participant, command: string): Promise<string> {
  const n = p.lines.length;
  p.send(command);
  return waitFor(`the answer to ${command}`, () => {
    if (p.proc.exitCode !== null) throw new Error(`java participant exited ${p.proc.exitCode}: ${p.stderr}`);
    return p.lines.length > n ? p.lines[n] : undefined;
  }, 60_000, 10);
}

/** The member nodes (children but `ready`) of `path`, sorted. */
async function members(path: string): Promise<string[]> {
  const admin = await space.admin();
  return (await admin.getChildren(`${space.root}${path}`).catch(() => [] as string[])).filter((c) => c !== 'ready').sort();
}

/** Waits until `path` has `n` member nodes. */
function until(path: string, n: number): Promise<string[]> {
  return waitFor(`${n} members of ${path}`, async () => {
    const m = await members(path);
    return m.length === n ? m : undefined;
  }, 30_000, 10);
}

/** What each member said after entering or leaving: `ENTERED <n>` / `LEFT <n>` (n: the members it saw), or the timeout. */
type Outcome = string;

/** A Node member's outcome, in the Java participant's words. */
async function nodeStep(member: DoubleBarrier, path: string, step: 'enter' | 'leave', timeout: number): Promise<Outcome> {
  try {
    await member[step]({ timeout });
    return `${step === 'enter' ? 'ENTERED' : 'LEFT'} ${(await members(path)).length}`;
  } catch (err) {
    if (err instanceof BarrierTimeoutError) return step === 'enter' ? 'ENTER_TIMEOUT' : 'LEAVE_TIMEOUT';
    throw err;
  }
}

/**
 * One step (enter or leave) of every member: each in turn, the last one only once the others'
 * calls are under way (their nodes created, or for leave sent), so every member but the last
 * waits for it. Java members are `Participant`s, Node members `DoubleBarrier`s.
 */
async function step(path: string, order: (Participant | DoubleBarrier)[], what: 'enter' | 'leave', timeout: number, barrierPath = path): Promise<Outcome[]> {
  const outcomes: Promise<Outcome>[] = [];
  for (const [i, m] of order.entries()) {
    outcomes.push(m instanceof Participant ? reply(m, `${what} ${timeout}`) : nodeStep(m, path, what, timeout));
    if (what === 'enter') await until(barrierPath, i + 1).catch(() => undefined);
  }
  return Promise.all(outcomes);
}

/** The check of a round: everyone entered seeing all `n` members and left seeing none. */
function expectRound(entered: Outcome[], left: Outcome[], n: number): void {
  expect(entered).toEqual(entered.map(() => `ENTERED ${n}`));
  expect(left).toEqual(left.map(() => 'LEFT 0'));
}

describe.skipIf(missing !== undefined)(`interop - Curator 5 barriers and @zk/locks on the same paths${missing ? ` (skipped: ${missing})` : ''}`, () => {
  interopHooks([JAVA_SOURCE], { compiled: (c) => (compiled = c), space: (s) => (space = s) });

  it('DistributedDoubleBarrier and DoubleBarrier: 2 Java + 2 Node members enter and leave together, two rounds (a Node member last, then a Java one)', async () => {
    const path = '/interop/db';
    const [j1, j2] = await Promise.all([java(path, 4), java(path, 4)]);
    const [z1, z2] = await Promise.all([space.client(), space.client()]);
    const [n1, n2] = [new DoubleBarrier(z1, path, 4), new DoubleBarrier(z2, path, 4)];
    const entered = await step(path, [j1!, n1, j2!, n2], 'enter', 30_000);
    const names = await members(path);
    expect(names).toHaveLength(4);
    for (const name of names) expect(name).toMatch(new RegExp(`^${UUID}$`));
    expect(names).toContain(n1.memberNode!.slice(path.length + 1));
    expect((await space.admin().then((a) => a.exists(`${space.root}${path}/ready`)))!.ephemeralOwner).toBe(0n);
    const left = await step(path, [n1, j1!, j2!, n2], 'leave', 30_000);
    console.log(`interop double barrier, round 1 (Node last): ${JSON.stringify({ entered, left })}`);
    expectRound(entered, left, 4);
    expect(await space.admin().then((a) => a.getChildren(`${space.root}${path}`))).toEqual([]);
    const entered2 = await step(path, [n2, j1!, n1, j2!], 'enter', 30_000);
    const left2 = await step(path, [n2, n1, j2!, j1!], 'leave', 30_000);
    console.log(`interop double barrier, round 2 (Java last): ${JSON.stringify({ entered: entered2, left: left2 })}`);
    expectRound(entered2, left2, 4);
    expect(await space.admin().then((a) => a.getChildren(`${space.root}${path}`))).toEqual([]);
    expect(z1.watchCount + z2.watchCount).toBe(0);
  }, 120_000);

  it('a Node member whose session expires mid-barrier: the Curator members and the other Node member still leave', async () => {
    const path = '/interop/db-dead';
    const [j1, j2] = await Promise.all([java(path, 4), java(path, 4)]);
    const [z1, z2] = await Promise.all([space.client(), space.client()]);
    const [n1, n2] = [new DoubleBarrier(z1, path, 4), new DoubleBarrier(z2, path, 4)];
    expect(await step(path, [j1!, n1, j2!, n2], 'enter', 30_000)).toEqual(Array(4).fill('ENTERED 4'));
    const leaving = [reply(j1!, 'leave 30000'), reply(j2!, 'leave 30000'), nodeStep(n1, path, 'leave', 30_000)];
    // The members that are not the lowest delete theirs at once; whoever is left waits for n2.
    await waitFor('the leavers under way', async () => ((await members(path)).length <= 2 ? true : undefined), 30_000, 10);
    await space.expire(z2);
    expect(await Promise.all(leaving)).toEqual(['LEFT 0', 'LEFT 0', 'LEFT 0']);
    expect(await members(path)).toEqual([]);
  }, 120_000);

  it('DistributedBarrier and Barrier: set by Java, waited on by both, removed from Node; set by Node, held Java, removed by Java', async () => {
    const path = '/interop/bar';
    const [j1, j2] = await Promise.all([java(path, 1), java(path, 1)]);
    const zk = await space.client();
    const barrier = new Barrier(zk, path);
    expect(await reply(j1!, 'set')).toBe('SET');
    expect(await barrier.isSet()).toBe(true);
    await expect(barrier.wait({ timeout: 300 })).rejects.toBeInstanceOf(BarrierTimeoutError);
    const javaWaits = reply(j2!, 'wait 30000');
    const nodeWaits = barrier.wait({ timeout: 30_000 });
    await barrier.remove();
    expect(await javaWaits).toBe('OPEN 0');
    await nodeWaits;
    // The reverse: Node sets; Java is held until Java removes it, Node waits through it too.
    await barrier.set();
    expect(await reply(j2!, 'wait 500')).toBe('TIMEOUT');
    const javaWaits2 = reply(j2!, 'wait 30000');
    const nodeWaits2 = barrier.wait({ timeout: 30_000 });
    expect(await reply(j1!, 'remove')).toBe('REMOVED');
    expect(await javaWaits2).toBe('OPEN 0');
    await nodeWaits2;
    expect(await barrier.isSet()).toBe(false);
    expect(zk.watchCount).toBe(0);
  }, 60_000);

  it('negative controls: Node members whose nodes Curator does not see are not counted (nobody enters); a barrier Node sets where Curator does not look does not hold Java', async () => {
    const path = '/interop/db-control';
    const [j1, j2] = await Promise.all([java(path, 4), java(path, 4)]);
    const [z1, z2] = await Promise.all([space.client(), space.client()]);
    // The layout mistake: member nodes under another parent than the one Curator lists.
    const [n1, n2] = [new DoubleBarrier(z1, `${path}-elsewhere`, 4), new DoubleBarrier(z2, `${path}-elsewhere`, 4)];
    const entered = await Promise.all([reply(j1!, 'enter 2000'), reply(j2!, 'enter 2000'), nodeStep(n1, `${path}-elsewhere`, 'enter', 2000), nodeStep(n2, `${path}-elsewhere`, 'enter', 2000)]);
    console.log(`interop double barrier, control: ${JSON.stringify(entered)}`);
    expect(() => expectRound(entered, [], 4)).toThrow();
    expect(entered).toEqual(['ENTER_TIMEOUT', 'ENTER_TIMEOUT', 'ENTER_TIMEOUT', 'ENTER_TIMEOUT']);
    // Curator's enter(timeout) leaves its node behind when it returns false (CURATOR-80); ours does not.
    expect(await members(path)).toHaveLength(2);
    expect(await members(`${path}-elsewhere`)).toEqual([]);
    const j3 = await java('/interop/bar-control', 1);
    const misplaced = new Barrier(z1, '/interop/bar-control-elsewhere');
    await misplaced.set();
    expect(await reply(j3, 'wait 500')).toBe('OPEN 0'); // Java passes a barrier Node believes is set
    await misplaced.remove();
  }, 60_000);
});

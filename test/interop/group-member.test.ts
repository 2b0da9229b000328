/**
 * Wire compatibility of GroupMember with Curator 5's GroupMember: Java processes
 * (java/CuratorGroupParticipant.java) and Node members (sessions of the test process) join one
 * group; every member, of either language, must see every member with its payload, payload
 * changes must cross in both directions, and a Java member whose process is killed must leave
 * every Node view (its session expiring), and a Node member on a RenewingClient is back in Java's
 * view after its session expires. Negative control: a Node member written the way a
 * hand-rolled membership often is (an ephemeral-sequential `<id>-<seq>` node) is not the member
 * Java sees, and the same view check fails.
 */
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { CreateMode } from '@zk/protocol';
import { GroupMember, RenewingClient } from '@zk/locks';
import { connectString, type TestSpace } from '../harness/fixtures.js';
import { curatorMissing, type CompiledJava } from '../harness/java.js';
import { waitFor } from '../harness/index.js';
import { interopHooks, Participant } from './participants.js';

const JAVA_SOURCE = fileURLToPath(new URL('./java/CuratorGroupParticipant.java', import.meta.url));
const GROUP = '/interop/group';
/** The Java members' session timeout: a killed one leaves within about this long. */
const JAVA_SESSION_MS = 4_000;

const missing = curatorMissing();

let compiled: CompiledJava | undefined;
let space: TestSpace;
/** The RenewingClients of the running test (closed after it, before the space's teardown checks). */
const renewing = new Set<RenewingClient>();

type View = Record<string, string>; // id -> payload as hex

const hex = (s: string) => Buffer.from(s, 'utf8').toString('hex');

/** A Java member, once READY. */
async function java(id: string, payload: string): Promise<Participant> {
  const p = Participant.java(compiled!, 'CuratorGroupParticipant', [`${connectString()}${space.root}`, String(JAVA_SESSION_MS), GROUP, id, payload]);
  await p.until('READY');
  return p;
}

/** A Java member's view once it has exactly `ids` (or its view at its 30 s timeout). */
async function javaView(p: Participant, ids: readonly string[], command = `until ${[...ids].sort().join(',')}`): Promise<View> {
  const before = p.lines.length;
  p.send(command);
  const line = await p.untilMatch((l) => l.includes('MEMBERS ') && p.lines.indexOf(l, before) >= before, 'MEMBERS');
  return JSON.parse(line.slice(line.indexOf('{'))) as View;
}

function nodeView(member: GroupMember): View {
  return Object.fromEntries([...member.currentMembers()].map(([id, payload]) => [id, payload.toString('hex')]));
}

/** A Node member's view once it has exactly `ids`, or only as many members with `sizeOnly` (or after 10 s). */
async function untilNodeView(member: GroupMember, ids: readonly string[], sizeOnly = false): Promise<View> {
  const want = [...ids].sort().join(',');
  const ready = (v: View) => (sizeOnly ? Object.keys(v).length === ids.length : Object.keys(v).sort().join(',') === want);
  await waitFor(`${member.id} sees ${want}`, () => (ready(nodeView(member)) ? true : undefined), 10_000, 10).catch(() => undefined);
  return nodeView(member);
}

/** Every view must be exactly `expected` (ids and payloads): the mismatches, as text. */
function mismatches(views: Record<string, View>, expected: View): string[] {
  const want = JSON.stringify(Object.fromEntries(Object.entries(expected).sort()));
  return Object.entries(views)
    .map(([who, v]) => [who, JSON.stringify(Object.fromEntries(Object.entries(v).sort()))] as const)
    .filter(([, got]) => got !== want)
    .map(([who, got]) => `${who} sees ${got}`);
}

/**
 * Views of 3 Java + 3 Node members (the third Node one on a RenewingClient); `naiveThird` writes
 * the third Node member as a hand-rolled sequential node instead.
 */
async function sixMembers(naiveThird: boolean) {
  const javas = await Promise.all(['j1', 'j2', 'j3'].map((id) => java(id, `java ${id}`)));
  const clients = await Promise.all([1, 2].map(() => space.client()));
  const nodes = [0, 1].map((i) => new GroupMember(clients[i]!, GROUP, `n${i + 1}`, { payload: `node n${i + 1}` }));
  const sessions = new RenewingClient(() => space.client());
  renewing.add(sessions);
  if (naiveThird) await (await sessions.client()).create(`${GROUP}/n3-`, 'node n3', { mode: CreateMode.EPHEMERAL_SEQUENTIAL });
  else nodes.push(new GroupMember(sessions, GROUP, 'n3', { payload: 'node n3' }));
  await Promise.all(nodes.map((m) => m.start()));
  const ids = ['j1', 'j2', 'j3', 'n1', 'n2', 'n3'];
  const expected: View = Object.fromEntries(ids.map((id) => [id, hex(`${id[0] === 'j' ? 'java' : 'node'} ${id}`)]));
  const views: Record<string, View> = {};
  await Promise.all([
    // the control waits for 6 members, whoever they are, so that only the check below decides
    ...javas.map(async (p, i) => (views[`j${i + 1}`] = await javaView(p, ids, naiveThird ? `until-size ${ids.length}` : undefined))),
    ...nodes.map(async (m) => (views[m.id] = await untilNodeView(m, ids, naiveThird))),
  ]);
  return { javas, nodes, sessions, expected, views, ids };
}

describe.skipIf(missing !== undefined)(`interop - Curator 5 GroupMember and GroupMember in one group${missing ? ` (skipped: ${missing})` : ''}`, () => {
  interopHooks([JAVA_SOURCE], { compiled: (c) => (compiled = c), space: (s) => (space = s) });
  afterEach(async () => {
    for (const sessions of renewing) await sessions.close();
    renewing.clear();
  });

  it('3 Java + 3 Node members: every view has all 6 with their payloads; payload changes cross both ways; a killed Java member leaves every Node view', async () => {
    const { javas, nodes, sessions, expected, views, ids } = await sixMembers(false);
    const entries = Object.values(views).reduce((n, v) => n + Object.keys(v).length, 0);
    console.log(`interop group: ${Object.keys(views).filter((w) => w.startsWith('j')).length} Java views + ${Object.keys(views).filter((w) => w.startsWith('n')).length} Node views, ${ids.length} members each = ${entries} entries`);
    expect(mismatches(views, expected)).toEqual([]);
    expect(entries).toBe(36);

    // a Node payload change reaches Java; a Java one reaches Node
    await nodes[0]!.setThisData('node n1 v2');
    const j1 = await javaView(javas[0]!, ids, `until-payload n1 ${hex('node n1 v2')}`);
    expect(j1['n1']).toBe(hex('node n1 v2'));
    javas[1]!.send('set java j2 v2');
    await javas[1]!.until('SET');
    await waitFor('n2 sees j2 v2', () => (nodeView(nodes[1]!)['j2'] === hex('java j2 v2') ? true : undefined), 10_000, 10);

    // kill -9 a Java member: its session expires and it leaves every view
    const killedAt = performance.now();
    javas[2]!.proc.kill('SIGKILL');
    await javas[2]!.exited;
    const remaining = ids.filter((id) => id !== 'j3');
    const after = await Promise.all(nodes.map((m) => untilNodeView(m, remaining)));
    console.log(`interop group: killed j3 left the Node views after ${(performance.now() - killedAt).toFixed(0)} ms (session timeout ${JAVA_SESSION_MS})`);
    for (const v of after) expect(Object.keys(v).sort()).toEqual(remaining);
    expect(Object.keys(await javaView(javas[0]!, remaining)).sort()).toEqual(remaining);

    // a Node member whose session expires is back, under its next session, in Java's view
    const expiredOwner = sessions.current!.sessionId;
    await space.expire(sessions.current!);
    const back = await waitFor('n3 back under a new session', async () => {
      const stat = await (await space.admin()).exists(`${space.root}${GROUP}/n3`);
      return stat && stat.ephemeralOwner !== expiredOwner ? stat : undefined;
    }, 10_000, 10);
    expect(back.ephemeralOwner).toBe(sessions.current!.sessionId);
    expect((await javaView(javas[0]!, remaining))['n3']).toBe(hex('node n3'));

    for (const p of javas.slice(0, 2)) p.send('quit');
    await Promise.all(javas.slice(0, 2).map((p) => p.exited));
    await Promise.all(nodes.map((m) => m.close()));
    const admin = await space.admin();
    expect(await admin.getChildren(`${space.root}${GROUP}`)).toEqual([]);
  }, 90_000);

  it('negative control: a Node member written as a hand-rolled ephemeral-sequential node is not member n3 in Java\'s view, and the same check fails', async () => {
    const { javas, nodes, expected, views } = await sixMembers(true);
    const found = mismatches(views, expected);
    console.log(`interop group control: ${found.length} of ${Object.keys(views).length} views differ, e.g. ${found[0]}`);
    expect(found.length).toBeGreaterThan(0);
    expect(found.some((m) => m.startsWith('j'))).toBe(true);
    for (const p of javas) p.send('quit');
    await Promise.all(javas.map((p) => p.exited));
    await Promise.all(nodes.map((m) => m.close()));
  }, 90_000);
});

/**
 * Wire compatibility of PersistentNode and PersistentTtlNode with Curator 5's (recipes.nodes):
 * a Java process (java/CuratorPersistentParticipant.java) and sessions of the test process keep
 * nodes side by side and read each other's.
 *
 * - Layout: the same configuration (ephemeral or ephemeral-sequential, protected or not) from both
 *   libraries gives the same name shape, owner, data, ACL and parents, and both read every node the
 *   same way; a TTL node from each is a container with a `touch` child.
 * - Recovery: a node deleted by the other language's session is re-created by its owner at the
 *   same path; after the owner's session expires it is back under the owner's next session; a path
 *   shared by both is adopted by the second and re-created by it when the first closes.
 * - TTL (a server of its own whose container check runs every 100 ms, as the shared server's runs
 *   every 60 s): each side's touches keep the other side's reader seeing the touch node alive; a
 *   SIGKILLed Java owner's touch node is reaped about ttl after its last touch, as ours is after close.
 * Negative control: a touch node made PERSISTENT instead of PERSISTENT_WITH_TTL reads the same
 * (the server shows ephemeralOwner 0 for TTL and container nodes too) but is never reaped: the
 * same reap check fails.
 */
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CreateMode, NoNodeError, SessionExpiredError, ZooKeeper } from '@zk/protocol';
import { PersistentNode, PersistentTtlNode, RenewingClient } from '@zk/locks';
import { connectString, type TestSpace } from '../harness/fixtures.js';
import { curatorMissing, type CompiledJava } from '../harness/java.js';
import { isZooKeeper34, startZooKeeper, waitFor, type ZooKeeperEnsemble } from '../harness/index.js';
import { interopHooks, Participant, UUID } from './participants.js';

const JAVA_SOURCE = fileURLToPath(new URL('./java/CuratorPersistentParticipant.java', import.meta.url));
/** The Java client's session timeout, and how long a Java process may live at most. */
const JAVA_SESSION_MS = 6_000;
const JAVA_LIFETIME_MS = 60_000;
/** The TTL nodes' ttl, and the own server's container (and TTL) check interval. */
const TTL_MS = 1_000;
const CHECK_INTERVAL_MS = 100;

const missing = curatorMissing();

let compiled: CompiledJava | undefined;
let space: TestSpace;

/** A Curator process connected to `connect`, once READY. */
async function curator(connect: string): Promise<Participant> {
  const p = Participant.java(compiled!, 'CuratorPersistentParticipant', [connect, String(JAVA_SESSION_MS), String(JAVA_LIFETIME_MS)]);
  await p.until('READY');
  return p;
}

/** The index of the first line printed from line `from` on that is, or starts with, one of `words` (within `ms`). */
function lineAfter(p: Participant, from: number, words: readonly string[], ms = 25_000): Promise<number> {
  return waitFor(`${words.join('|')} from Java`, () => {
    if (p.proc.exitCode !== null) throw new Error(`java participant exited ${p.proc.exitCode}: ${p.stderr}`);
    const i = p.lines.findIndex((l, n) => n >= from && words.some((w) => l.startsWith(`${w} `) || l === w));
    return i < 0 ? undefined : i;
  }, ms, 5);
}

/** Sends `command` and resolves with its answer: the next line starting with one of `words`. */
async function ask(p: Participant, command: string, ...words: string[]): Promise<string> {
  const from = p.lines.length;
  p.send(command);
  const i = await lineAfter(p, from, words);
  return p.lines[i]!;
}

/** A node as one line, in the Java participant's `read` format: data, owner, czxid, mtime, children, ACL. */
async function read(zk: ZooKeeper, path: string): Promise<string> {
  try {
    const { data, stat } = await zk.getData(path);
    const { acl } = await zk.getACL(path);
    const acls = acl.map((a) => `${a.id.scheme}:${a.id.id}:${a.perms}`).join(',');
    return `NODE ${path} ${data.length > 0 ? data.toString('hex') : '-'} ${BigInt.asUintN(64, stat.ephemeralOwner).toString(16)} ${stat.czxid} ${stat.mtime} ${stat.numChildren} ${acls}`;
  } catch (err) {
    if (err instanceof NoNodeError) return `NONODE ${path}`;
    throw err;
  }
}

/** The fields of a `read` line. */
function fields(line: string): { path: string; data: string; owner: string; czxid: bigint; mtime: number; children: number; acl: string } {
  const [word, path = '', data = '', owner = '', czxid = '0', mtime = '0', children = '0', acl = ''] = line.split(' ');
  if (word !== 'NODE') throw new Error(`not a node: ${line}`);
  return { path, data, owner, czxid: BigInt(czxid), mtime: Number(mtime), children: Number(children), acl };
}

const hex = (s: string) => Buffer.from(s, 'utf8').toString('hex');
const OPEN = 'world:anyone:31';

/** Waits until `path` exists with a czxid other than `not` (a re-creation); its `read` line. */
function untilRecreated(zk: ZooKeeper, path: string, not: bigint): Promise<string> {
  return waitFor(`${path} re-created`, async () => {
    const line = await read(zk, path);
    return line.startsWith('NODE ') && fields(line).czxid !== not ? line : undefined;
  }, 20_000, 10);
}

/** The Java client's session (from `session`). */
async function javaSession(p: Participant): Promise<{ id: bigint; password: Buffer }> {
  const [, id = '', password = ''] = (await ask(p, 'session', 'SESSION')).split(' ');
  return { id: BigInt(`0x${id}`), password: Buffer.from(password, 'hex') };
}

/**
 * Expires the Java client's session from outside, as space.expire does for ours: another
 * connection resumes the session and closes it (again, should Java win it back first), until
 * Java reports LOST (Curator's expiry). Resolves with the index of that line.
 */
async function expireJava(p: Participant, connect: string): Promise<number> {
  const session = await javaSession(p);
  const from = p.lines.length;
  for (let attempt = 0; attempt < 5; attempt++) {
    const thief = await ZooKeeper.connect(connect, { session }).catch((e: unknown) => (e instanceof SessionExpiredError ? undefined : Promise.reject(e)));
    await thief?.close();
    const lost = await lineAfter(p, from, ['STATE LOST'], 5_000).catch(() => undefined);
    if (lost !== undefined) return lost;
  }
  throw new Error('the Java session did not expire');
}

describe.skipIf(missing !== undefined)(`interop - Curator 5 PersistentNode / PersistentTtlNode and ours${missing ? ` (skipped: ${missing})` : ''}`, () => {
  interopHooks([JAVA_SOURCE], { compiled: (c) => (compiled = c), space: (s) => (space = s) });

  it('layout: ephemeral and ephemeral-sequential nodes, protected or not, from both libraries have the same name shape, owner, data, ACL and parents, and both read each one the same', async () => {
    const [java, zk] = await Promise.all([curator(`${connectString()}${space.root}`), space.client()]);
    const javaId = (await javaSession(java)).id;
    /** The four configurations (Curator's name for the mode, protection), and the name each must give. */
    const configs = [
      { mode: 'EPHEMERAL_SEQUENTIAL', protection: true, base: '/layout/es/member-', name: (_: string) => `_c_${UUID}-member-\\d{10}` },
      { mode: 'EPHEMERAL_SEQUENTIAL', protection: false, base: '/layout/es/member-', name: (_: string) => 'member-\\d{10}' },
      { mode: 'EPHEMERAL', protection: true, base: '/layout/e/', name: (who: string) => `_c_${UUID}-${who}` },
      { mode: 'EPHEMERAL', protection: false, base: '/layout/e/', name: (who: string) => who },
    ] as const;
    // Ours first: it makes /layout/es and /layout/e, Curator only the nodes (parents made by ours, read by both).
    const made: { who: 'java' | 'node'; path: string; owner: bigint; config: (typeof configs)[number] }[] = [];
    const nodes: PersistentNode[] = [];
    for (const config of configs) {
      const base = config.mode === 'EPHEMERAL' ? `${config.base}node` : config.base;
      const node = new PersistentNode(zk, base, { mode: CreateMode[config.mode], protection: config.protection, data: 'payload' });
      nodes.push(node);
      node.start();
      made.push({ who: 'node', path: await node.waitForInitialCreate({ timeout: 10_000 }), owner: zk.sessionId, config });
    }
    for (const [i, config] of configs.entries()) {
      const base = config.mode === 'EPHEMERAL' ? `${config.base}java` : config.base;
      const created = await ask(java, `node j${i} ${base} ${config.mode} ${String(config.protection)} payload`, 'CREATED', 'TIMEOUT');
      made.push({ who: 'java', path: created.split(' ')[2]!, owner: javaId, config });
    }
    try {
      let compared = 0;
      for (const { who, path, owner, config } of made) {
        expect(path).toMatch(new RegExp(`^${config.base.slice(0, config.base.lastIndexOf('/') + 1)}${config.name(who)}$`));
        const [byJava, byNode] = [await ask(java, `read ${path}`, 'NODE', 'NONODE'), await read(zk, path)];
        expect(byNode).toBe(byJava); // the same bytes, stat and ACL seen from both libraries
        expect(fields(byNode)).toMatchObject({ owner: owner.toString(16), data: hex('payload'), acl: OPEN, children: 0 });
        compared++;
      }
      for (const [path, children] of [['/layout', 2], ['/layout/es', 4], ['/layout/e', 4]] as const) {
        const [byJava, byNode] = [await ask(java, `read ${path}`, 'NODE', 'NONODE'), await read(zk, path)];
        expect(byNode).toBe(byJava);
        // no data, no owner (that they are containers shows in the TTL test, which sees them reaped)
        expect(fields(byNode)).toMatchObject({ owner: '0', data: '-', acl: OPEN, children });
      }
      console.log(`interop persistent layout: ${compared} nodes (4 configurations x Curator and ours) and 3 parents read the same by both libraries: ${made.map((m) => m.path.slice(m.path.lastIndexOf('/') + 1)).join(' ')}`);
      expect(compared).toBe(8);
      // Closed, each side deletes its own.
      for (const i of configs.keys()) expect(await ask(java, `close j${i}`, 'CLOSED')).toBe(`CLOSED j${i}`);
      expect((await space.children('/layout/es')).length + (await space.children('/layout/e')).length).toBe(4);
    } finally {
      await Promise.all(nodes.map((n) => n.close()));
    }
    expect((await space.children('/layout/es')).length + (await space.children('/layout/e')).length).toBe(0);
    java.send('quit');
    expect(await java.exited).toBe(0);
  }, 60_000);

  it('recovery: each side re-creates its nodes at the same path after the other language deletes them, and after its own session expires, under its new session', async () => {
    const connect = `${connectString()}${space.root}`;
    const [java, reader] = await Promise.all([curator(connect), space.client()]);
    await using sessions = new RenewingClient(() => space.client());
    const jes = (await ask(java, 'node jes /rec/j-member- EPHEMERAL_SEQUENTIAL true java', 'CREATED')).split(' ')[2]!;
    const jeph = (await ask(java, 'node jeph /rec/java EPHEMERAL false java', 'CREATED')).split(' ')[2]!;
    await using nes = new PersistentNode(sessions, '/rec/n-member-', { mode: CreateMode.EPHEMERAL_SEQUENTIAL, protection: true, data: 'node' });
    await using neph = new PersistentNode(sessions, '/rec/node', { data: 'node' });
    nes.start();
    neph.start();
    const ours = [await nes.waitForInitialCreate({ timeout: 10_000 }), await neph.waitForInitialCreate({ timeout: 10_000 })];
    const javas = [jes, jeph];
    let recreations = 0;

    // Ours deletes Curator's nodes; Curator makes them again at the same paths, in the same session.
    let javaOwner = (await javaSession(java)).id;
    for (const path of javas) {
      const before = fields(await read(reader, path));
      await reader.delete(path);
      const after = fields(await untilRecreated(reader, path, before.czxid));
      expect(after).toMatchObject({ owner: javaOwner.toString(16), data: hex('java') });
      recreations++;
    }
    // Curator deletes ours; ours makes them again, and Curator reads them back.
    for (const path of ours) {
      const before = fields(await read(reader, path));
      expect(await ask(java, `delete ${path}`, 'DELETED', 'NONODE')).toBe(`DELETED ${path}`);
      const after = fields(await ask(java, `until ${path} ${before.czxid}`, 'NODE', 'TIMEOUT'));
      expect(after).toMatchObject({ owner: sessions.current!.sessionId.toString(16), data: hex('node') });
      recreations++;
    }

    // Curator's session expires: LOST, then RECONNECTED on a new session, and its nodes come back under it.
    const expired = javaOwner;
    const czxids = await Promise.all(javas.map(async (p) => fields(await read(reader, p)).czxid));
    const javaExpiry = performance.now();
    const lost = await expireJava(java, connectString());
    await lineAfter(java, lost, ['STATE RECONNECTED']);
    javaOwner = (await javaSession(java)).id;
    expect(javaOwner).not.toBe(expired);
    for (const [i, path] of javas.entries()) {
      expect(fields(await untilRecreated(reader, path, czxids[i]!))).toMatchObject({ owner: javaOwner.toString(16), data: hex('java') });
      recreations++;
    }
    const javaBackMs = performance.now() - javaExpiry;
    // Ours expires: the RenewingClient's next session re-creates them, and Curator reads them there.
    const ourCzxids = await Promise.all(ours.map(async (p) => fields(await read(reader, p)).czxid));
    const ourExpired = sessions.current!.sessionId;
    const ourExpiry = performance.now();
    await space.expire(sessions.current!);
    for (const [i, path] of ours.entries()) {
      const back = fields(await ask(java, `until ${path} ${ourCzxids[i]}`, 'NODE', 'TIMEOUT'));
      expect(back).toMatchObject({ owner: sessions.current!.sessionId.toString(16), data: hex('node') });
      expect(back.owner).not.toBe(ourExpired.toString(16));
      recreations++;
    }
    const ourBackMs = performance.now() - ourExpiry;
    const javaEvents = java.lines.filter((l) => l.startsWith('EVENT ')).length;
    console.log(`interop persistent recovery: ${recreations} re-creations seen across languages (Curator's listener reported ${javaEvents} creates for its 2 nodes); from the start of an expiry made from outside, Curator's 2 nodes were back ${javaBackMs.toFixed(0)} ms later (its lines: ${java.lines.filter((l) => l.startsWith('STATE')).join(', ')}), ours ${ourBackMs.toFixed(0)} ms later; paths kept: ${[...javas, ...ours].join(' ')}`);
    expect(recreations).toBe(8);
    expect(javaEvents).toBe(6); // 2 first creates, 2 after the deletes, 2 after the expiry
    expect([nes.actualPath, neph.actualPath]).toEqual(ours);
    expect((await ask(java, 'path jes', 'PATH')).split(' ')[2]).toBe(jes);

    await Promise.all([nes.close(), neph.close()]);
    java.send('quit');
    expect(await java.exited).toBe(0);
    expect(await space.children('/rec')).toEqual([]);
  }, 60_000);

  it('a path shared by both: the second to start adopts the first one\'s node and gives it its data; when the first closes, the second re-creates it', async () => {
    const [java, zk, reader] = await Promise.all([curator(`${connectString()}${space.root}`), space.client(), space.client()]);
    const javaOwner = (await javaSession(java)).id.toString(16);
    // Curator first, ours adopts.
    await ask(java, 'node j1 /shared/a EPHEMERAL false java', 'CREATED');
    await using n1 = new PersistentNode(zk, '/shared/a', { data: 'node' });
    n1.start();
    expect(await n1.waitForInitialCreate({ timeout: 10_000 })).toBe('/shared/a');
    const adopted = await waitFor('our data on Curator\'s node', async () => {
      const n = fields(await read(reader, '/shared/a'));
      return n.data === hex('node') ? n : undefined;
    }, 10_000, 10);
    expect(adopted.owner).toBe(javaOwner);
    await ask(java, 'close j1', 'CLOSED');
    expect(fields(await untilRecreated(reader, '/shared/a', adopted.czxid))).toMatchObject({ owner: zk.sessionId.toString(16), data: hex('node') });
    // Ours first, Curator adopts.
    await using n2 = new PersistentNode(zk, '/shared/b', { data: 'node' });
    n2.start();
    await n2.waitForInitialCreate({ timeout: 10_000 });
    expect(await ask(java, 'node j2 /shared/b EPHEMERAL false java', 'CREATED')).toBe('CREATED j2 /shared/b');
    const taken = fields(await ask(java, 'read /shared/b', 'NODE'));
    expect(taken).toMatchObject({ owner: zk.sessionId.toString(16), data: hex('java') });
    await n2.close();
    expect(fields(await ask(java, `until /shared/b ${taken.czxid}`, 'NODE', 'TIMEOUT'))).toMatchObject({ owner: javaOwner, data: hex('java') });
    await n1.close();
    java.send('quit');
    expect(await java.exited).toBe(0);
  }, 60_000);

  describe.skipIf(isZooKeeper34())(`PersistentTtlNode (a server of its own: container check every ${CHECK_INTERVAL_MS} ms)`, () => {
    let server: ZooKeeperEnsemble;
    beforeAll(async () => {
      server = await startZooKeeper({ servers: 1, own: true, systemProperties: { 'znode.container.checkIntervalMs': CHECK_INTERVAL_MS } });
    }, 60_000);
    afterAll(async () => {
      await server?.close();
    });

    it('each side\'s touches keep the other\'s reader seeing it alive; a SIGKILLed Curator owner\'s touch node is reaped about ttl after its last touch, as ours after close; control: a PERSISTENT touch node is never reaped', async () => {
      const root = `/ttl-${randomUUID()}`;
      const [java, zk] = await Promise.all([curator(server.connectString), ZooKeeper.connect(server.connectString)]);
      try {
        expect(await ask(java, `ttl jt ${root}/java/job ${TTL_MS} java-owner`, 'CREATED')).toBe(`CREATED jt ${root}/java/job`);
        const ours = new PersistentTtlNode(zk, `${root}/node/job`, TTL_MS, { data: 'node-owner' });
        ours.start();
        await ours.waitForInitialCreate({ timeout: 10_000 });
        // The control: the same layout by hand, the touch node PERSISTENT, touched as often.
        await zk.create(`${root}/naive/job/touch`, null, { mode: CreateMode.PERSISTENT, parents: 'container' });
        const naiveTouch = setInterval(() => void zk.setData(`${root}/naive/job/touch`, null).catch(() => undefined), TTL_MS / 2);
        try {
          const touches = [`${root}/java/job/touch`, `${root}/node/job/touch`];
          await Promise.all(touches.map((p) => waitFor(`${p} touched`, async () => ((await zk.exists(p)) ? true : undefined), 5_000, 20)));

          // Each side reads the other's nodes the same way: a container with its data, a touch child.
          for (const [path, data] of [[`${root}/java/job`, 'java-owner'], [`${root}/node/job`, 'node-owner']] as const) {
            const [byJava, byNode] = [fields(await ask(java, `read ${path}`, 'NODE')), fields(await read(zk, path))];
            expect(byNode).toEqual(byJava);
            expect(byNode).toMatchObject({ data: hex(data), owner: '0', children: 1, acl: OPEN });
            expect(await ask(java, `children ${path}`, 'CHILDREN')).toBe(`CHILDREN ${path} touch`);
          }
          const [javaTouch, nodeTouch, naive] = [fields(await read(zk, touches[0]!)), fields(await read(zk, touches[1]!)), fields(await read(zk, `${root}/naive/job/touch`))];
          // The server shows ephemeralOwner 0 for TTL nodes (DataNode.copyStat hides the TTL encoding), as for the PERSISTENT control.
          for (const t of [javaTouch, nodeTouch, naive]) expect(t).toMatchObject({ owner: '0', children: 0, acl: OPEN });
          // Curator touches with its framework's default data (the host's address, as text); ours with none.
          expect(Buffer.from(javaTouch.data, 'hex').toString()).toMatch(/^[0-9a-f.:]*$/);
          expect(nodeTouch.data).toBe('-');

          // Kept alive: each side's reader watches the other's touch node for 3 ttls.
          const window = 3 * TTL_MS;
          const [javaSees, nodeSees] = await Promise.all([ask(java, `alive ${touches[1]} ${window}`, 'ALIVE'), alive(zk, touches[0]!, window)]);
          const [, , reads = 0, missing, czxids, mtimes = 0] = javaSees.split(' ').map(Number);
          console.log(`interop persistent ttl: Curator read ours ${reads} times over ${window} ms (missing ${missing}, ${czxids} czxid, ${mtimes} mtimes); ours read Curator's ${nodeSees.reads} times (missing ${nodeSees.missing}, ${nodeSees.czxids} czxid, ${nodeSees.mtimes} mtimes)`);
          for (const seen of [{ reads, missing, czxids, mtimes }, nodeSees]) expect(seen).toMatchObject({ missing: 0, czxids: 1, mtimes: expect.any(Number) as number });
          expect(Math.min(mtimes, nodeSees.mtimes)).toBeGreaterThanOrEqual(4); // a touch every ttl / 2

          // The Curator process dies, ours closes, the control stops touching: all at once.
          java.proc.kill('SIGKILL');
          await java.exited;
          clearInterval(naiveTouch);
          await ours.close();
          const limit = TTL_MS + 3_000;
          const [javaReap, nodeReap, naiveReap] = await Promise.all([...touches, `${root}/naive/job/touch`].map((p) => untilReaped(zk, p, limit)));
          console.log(`interop persistent ttl: touch nodes reaped ${javaReap?.toFixed(0)} ms (Curator, SIGKILLed) and ${nodeReap?.toFixed(0)} ms (ours, closed) after their last touch (ttl ${TTL_MS}, check every ${CHECK_INTERVAL_MS} ms); control (PERSISTENT) ${naiveReap === undefined ? `still there ${limit} ms after its last touch` : `reaped after ${naiveReap} ms`}`);
          // The same check on all three: the control fails it (never reaped).
          expect([javaReap, nodeReap, naiveReap].map(reapedAboutTtl)).toEqual([true, true, false]);
          // Then the emptied containers, up to the root the recipes created.
          await waitFor('the containers reaped', async () => ((await zk.getChildren(root).catch(() => [])).join() === 'naive' ? true : undefined), 10_000, 50);
        } finally {
          clearInterval(naiveTouch);
          await ours.close();
          await zk.delete(`${root}/naive/job/touch`).catch(() => undefined);
        }
        expect(zk.watchCount).toBe(0);
      } finally {
        await zk.close();
      }
    }, 60_000);

    it('one path, both libraries: ours keeps the touch node Curator shared with it alive after the Curator process is SIGKILLed, and lets it go about a ttl after its own close', async () => {
      const path = `/ttl-${randomUUID()}/shared/job`;
      const [java, zk] = await Promise.all([curator(server.connectString), ZooKeeper.connect(server.connectString)]);
      try {
        await ask(java, `ttl jt ${path} ${TTL_MS} java-owner`, 'CREATED');
        const ours = new PersistentTtlNode(zk, path, TTL_MS, { data: 'node-owner' });
        ours.start();
        await ours.waitForInitialCreate({ timeout: 10_000 }); // adopted: the container was there
        await waitFor('both touching', () => (ours.touches >= 2 ? true : undefined), 5_000, 20);
        expect(fields(await ask(java, `read ${path}`, 'NODE'))).toMatchObject({ data: hex('node-owner'), children: 1 }); // the adopter's data, as Curator's setData after NodeExists
        const touch = fields(await read(zk, `${path}/touch`));
        java.proc.kill('SIGKILL');
        await java.exited;
        const after = await alive(zk, `${path}/touch`, 3 * TTL_MS);
        console.log(`interop persistent ttl shared: after the SIGKILL, ours kept the shared touch node alive over ${3 * TTL_MS} ms (${after.reads} reads, missing ${after.missing}, ${after.czxids} czxid, ${after.mtimes} mtimes)`);
        expect(after).toMatchObject({ missing: 0, czxids: 1 });
        expect(after.mtimes).toBeGreaterThanOrEqual(4);
        expect(fields(await read(zk, `${path}/touch`)).czxid).toBe(touch.czxid); // the same node, never reaped
        await ours.close();
        const reap = await untilReaped(zk, `${path}/touch`, TTL_MS + 3_000);
        console.log(`interop persistent ttl shared: reaped ${reap?.toFixed(0)} ms after ours' last touch`);
        expect(reapedAboutTtl(reap)).toBe(true);
        expect(zk.watchCount).toBe(0);
      } finally {
        await zk.close();
      }
    }, 60_000);
  });
});

/** Whether a touch node went about a ttl after its last touch (mtime has ms resolution, the check runs every CHECK_INTERVAL_MS on the server's clock). */
function reapedAboutTtl(reap: number | undefined): boolean {
  return reap !== undefined && reap >= TTL_MS - 50 && reap < TTL_MS + 1_500;
}

/** Reads `path` every 20 ms for `ms`: reads, missing reads, distinct czxids and mtimes. */
async function alive(zk: ZooKeeper, path: string, ms: number): Promise<{ reads: number; missing: number; czxids: number; mtimes: number }> {
  const czxids = new Set<bigint>();
  const mtimes = new Set<number>();
  let reads = 0;
  let missing = 0;
  for (const end = performance.now() + ms; performance.now() < end; await new Promise((r) => setTimeout(r, 20))) {
    const stat = await zk.exists(path);
    reads++;
    if (!stat) missing++;
    else (czxids.add(stat.czxid), mtimes.add(stat.mtime));
  }
  return { reads, missing, czxids: czxids.size, mtimes: mtimes.size };
}

/**
 * Polls `path` every 10 ms until it is gone: how long after its last touch (its last mtime, on the
 * server's clock, this machine's) it went; undefined when still there `limit` ms after that touch.
 */
async function untilReaped(zk: ZooKeeper, path: string, limit: number): Promise<number | undefined> {
  let last = 0;
  for (;;) {
    const stat = await zk.exists(path);
    const now = Date.now();
    if (!stat) return now - last;
    last = stat.mtime;
    if (now - last > limit) return undefined;
    await new Promise((r) => setTimeout(r, 10));
  }
}

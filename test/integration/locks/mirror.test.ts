/**
 * The lock directory mirror on the real server (issue 26, groundwork of an acquire that sends its
 * create alone; internal/mirror.ts): what the server sends a persistent recursive watch, in the
 * order it sends it, is enough to know the directory at our own create without listing it.
 */
import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CreateMode, UnimplementedError, ZooKeeper } from '@zk/protocol';
import { DirectoryMirror } from '../../../packages/locks/src/internal/mirror.js';
import { isZooKeeper34, waitFor } from '../../harness/index.js';
import { proxyToServer, TestSpace } from '../../harness/fixtures.js';

const legacy = isZooKeeper34();
const seq = (name: string) => Number(name.slice(-10));

let space: TestSpace;
beforeEach(async () => {
  space = new TestSpace();
  await space.admin();
});
afterEach(async () => {
  expect((await space.close()).leakedWatches).toBe(0);
});

/**
 * `loops` concurrent loops of one session, each creating a protected sequential node, reading the
 * children through `read`, and deleting the node; every reading is checked against what the
 * session knows must be there: its node, the nodes of the other loops created before it (a lower
 * sequence number) and not yet being deleted; and must not be: the nodes whose delete was answered
 * before its create was sent. Returns the violations and the number of readings.
 */
async function churn(zk: ZooKeeper, mirror: DirectoryMirror, loops: number, rounds: number, read: (name: string) => Promise<string[] | undefined>): Promise<{ violations: string[]; readings: number }> {
  const live = new Set<string>();
  const gone = new Set<string>();
  const violations: string[] = [];
  let readings = 0;
  await Promise.all(
    Array.from({ length: loops }, async () => {
      for (let i = 0; i < rounds; i++) {
        const id = randomUUID();
        mirror.claim(id);
        const goneBefore = [...gone];
        const { path } = await zk.createWithStat(`/dir/_c_${id}-lock-`, null, { mode: CreateMode.EPHEMERAL_SEQUENTIAL });
        const name = path.slice('/dir/'.length);
        live.add(name);
        const children = await read(name);
        readings++;
        if (children === undefined) violations.push(`no reading for ${name}: ${mirror.ended ?? ''}`);
        else {
          if (!children.includes(name)) violations.push(`${name} missing from its own reading`);
          for (const other of live) if (seq(other) < seq(name) && !children.includes(other)) violations.push(`${other} missing from the reading of ${name}`);
          for (const other of goneBefore) if (children.includes(other)) violations.push(`${other}, deleted, in the reading of ${name}`);
        }
        live.delete(name);
        await zk.delete(path);
        gone.add(name);
      }
    }),
  );
  return { violations, readings };
}

describe.skipIf(legacy)('lock directory mirror (3.6+)', () => {
  it('knows the directory at each of its session\'s creates without listing it: 8 loops x 40 creates and deletes; control: reading it at the reply, before the event is delivered, misses nodes', async () => {
    const zk = await space.client();
    await zk.create('/dir');
    const mirror = await DirectoryMirror.open(zk, '/dir');
    const exact = await churn(zk, mirror, 8, 40, (name) => mirror.childrenWith(name));
    expect(exact.readings).toBe(320);
    expect(exact.violations).toEqual([]);
    expect(mirror.ended).toBeUndefined();
    // Once a later reply is handled, the events of the last deletes have been delivered too.
    const listing = await zk.getChildren('/dir');
    expect(mirror.children.sort()).toEqual(listing.sort());

    // The control: the same loops reading the mirror as it stands when the create's reply is
    // handled. The event of the create was sent first but is delivered in the client's next drain.
    const early = await churn(zk, mirror, 8, 40, async () => mirror.children);
    expect(early.violations.length).toBeGreaterThan(0);
    expect(early.violations.some((v) => v.includes('missing'))).toBe(true);
    console.log(`mirror: ${exact.readings} readings at our creates, ${exact.violations.length} wrong; read at the reply instead (control): ${early.violations.length} wrong in ${early.readings}`);
    await mirror.close();
    expect(zk.watchCount).toBe(0);
  });

  it("ends at the first node of another session, removing its watch; a node already there ends it at once", async () => {
    const [zk, other] = await Promise.all([space.client(), space.client()]);
    await zk.create('/dir');
    const mirror = await DirectoryMirror.open(zk, '/dir');
    const theirs = await other.create(`/dir/_c_${randomUUID()}-lock-`, null, { mode: CreateMode.EPHEMERAL_SEQUENTIAL });
    await waitFor('the mirror to end', () => mirror.ended);
    expect(mirror.ended).toBe(`${theirs.slice('/dir/'.length)} appeared, not ours`);
    await waitFor('its watch to go', () => (zk.watchCount === 0 ? true : undefined));

    const second = await DirectoryMirror.open(zk, '/dir');
    expect(second.ended).toMatch(/the directory holds _c_.*, not ours/);
    expect(zk.watchCount).toBe(0);
  });

  it('ends when the connection drops, and its watch is not registered again on the next connection', async () => {
    const proxy = await proxyToServer();
    const zk = await ZooKeeper.connect(`${proxy.connectString}${space.root}`, { sessionTimeout: 10_000 });
    try {
      await zk.create('/dir');
      const mirror = await DirectoryMirror.open(zk, '/dir');
      proxy.cut();
      await waitFor('the mirror to end', () => mirror.ended);
      expect(mirror.ended).toMatch(/session was suspended/);
      await waitFor('the session back', () => (zk.state === 'connected' ? true : undefined));
      expect(zk.watchCount).toBe(0);
      expect(await mirror.childrenWith('anything')).toBeUndefined();
    } finally {
      await zk.close();
      await proxy.close();
    }
  });
});

describe.skipIf(!legacy)('lock directory mirror on 3.4', () => {
  it('cannot be opened (no persistent watches): a typed error, no watch left', async () => {
    const zk = await space.client();
    await zk.create('/dir');
    await expect(DirectoryMirror.open(zk, '/dir')).rejects.toBeInstanceOf(UnimplementedError);
    expect(zk.watchCount).toBe(0);
  });
});

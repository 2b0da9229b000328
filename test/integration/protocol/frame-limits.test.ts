/**
 * Frame limits, both sides: a reply over the client's maxFrameSize (a parent whose child list
 * is larger than 1 MiB) fails that one call with a PacketTooLargeError that names the call and
 * the option, and the connection stays up; the tree cache lists such a node in `unreadable`. A
 * request over the server's jute.maxbuffer makes the server close the connection: the
 * ConnectionLoss says so.
 */
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ConnectionLossError, PacketTooLargeError, TreeCache, ZooKeeper } from '@zk/protocol';
import { connectString, TestSpace } from '../../harness/fixtures.js';
import { waitForState } from '../../harness/index.js';

let space: TestSpace;
/** Children with 240-character names: about 1.1 MiB of names in all. */
const CHILDREN = 4_600;
const name = (i: number) => `${String(i).padStart(8, '0')}-${'x'.repeat(231)}`;

beforeAll(async () => {
  space = new TestSpace();
  const admin = await space.admin();
  await admin.create(`${space.root}/big`);
  for (let i = 0; i < CHILDREN; i += 500) {
    await Promise.all(Array.from({ length: Math.min(500, CHILDREN - i) }, (_, j) => admin.create(`${space.root}/big/${name(i + j)}`)));
  }
  return async () => {
    await space.close();
  };
});

const clients: ZooKeeper[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
});
async function client(maxFrameSize?: number): Promise<ZooKeeper> {
  const zk = await ZooKeeper.connect(`${connectString()}${space.root}`, maxFrameSize === undefined ? {} : { maxFrameSize });
  clients.push(zk);
  return zk;
}

describe('frame limits', () => {
  it("a child list over the client's maxFrameSize fails that call, naming it and a size that would do; the session goes on; a larger maxFrameSize reads it (control)", async () => {
    const zk = await client();
    const session = zk.sessionId;
    const err = await zk.getChildren('/big').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PacketTooLargeError);
    const e = err as PacketTooLargeError;
    expect(e.direction).toBe('reply');
    expect(e.op).toBe('getChildren');
    expect(e.path).toBe('/big');
    expect(e.size).toBeGreaterThan(1_048_575);
    expect(e.limit).toBe(1_048_575);
    expect(e.message).toMatch(/^getChildren \/big: the reply of \d+ bytes exceeds the client's maxFrameSize of 1048575 bytes .*\{ maxFrameSize: (\d+) \}/);
    const suggested = Number(/maxFrameSize: (\d+) \}/.exec(e.message)![1]);
    expect(suggested).toBeGreaterThanOrEqual(e.size);
    // The connection stayed up: the same session answers the next call.
    expect(zk.state).toBe('connected');
    expect(zk.sessionId).toBe(session);
    expect((await zk.exists('/big'))?.numChildren).toBe(CHILDREN);
    expect(await zk.getAllChildrenNumber('/big')).toBe(CHILDREN);

    const larger = await client(suggested);
    expect((await larger.getChildren('/big')).length).toBe(CHILDREN);
  });

  it('the tree cache lists a parent it could not read in `unreadable`, with the error; with a larger maxFrameSize it caches every child (control)', async () => {
    const small = await client();
    await using cache = await TreeCache.open(small, '/big');
    expect(cache.unreadable.get('/big')).toBeInstanceOf(PacketTooLargeError);
    expect(cache.size).toBe(0);

    const large = await client(4 * 1024 * 1024);
    await using full = await TreeCache.open(large, '/big');
    expect(full.unreadable.size).toBe(0);
    expect(full.size).toBe(CHILDREN + 1);
  });

  it("a request over the server's jute.maxbuffer: the server closes the connection, and the ConnectionLoss says why; a request under it passes (control)", async () => {
    const zk = await client(4 * 1024 * 1024);
    const err = await zk.create('/too-big', Buffer.alloc(2 * 1024 * 1024)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConnectionLossError);
    expect((err as Error).message).toMatch(/closed by the server, after a request of \d+ bytes that is still unanswered: a server closes the connection on a request longer than its jute\.maxbuffer/);
    await waitForState(zk, 'connected');
    expect(await zk.exists('/too-big')).toBeNull(); // the session resumed on a new connection

    const fits = await zk.create('/fits', Buffer.alloc(900 * 1024));
    expect(fits).toBe('/fits');
    await zk.delete('/fits');
  });

  it("a request over the client's own maxFrameSize is refused before sending, naming both limits", async () => {
    const zk = await client();
    // Each setData fits (a single one over the limit is an InvalidArgumentError before any
    // encoding); the multi carrying both does not.
    const half = Buffer.alloc(600 * 1024);
    const err = await zk.transaction().setData('/big', half).setData('/big', half).commit().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PacketTooLargeError);
    expect((err as PacketTooLargeError).direction).toBe('request');
    expect((err as Error).message).toMatch(/^multi \/big: the request of \d+ bytes exceeds the client's maxFrameSize .*jute\.maxbuffer \(default 1048575\) must allow/);
    const single = await zk.setData('/big', Buffer.alloc(1_100_000)).catch((e: unknown) => e);
    expect((single as Error).message).toMatch(/maxFrameSize/);
  });
});

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BadVersionError, CreateMode, ErrorCode, NoAuthError, NodeExistsError, NoNodeError, Perm, TransactionError, ZooKeeper } from '@zk/protocol';
import { TestSpace } from '../../harness/fixtures.js';
import { fourLetter } from '../../harness/fourletter.js';

let space: TestSpace;
let zk: ZooKeeper;

beforeEach(async () => {
  space = new TestSpace();
  zk = await space.client();
});

afterEach(async () => {
  expect((await space.close()).leakedWatches).toBe(0);
});

describe('multi - transactions', () => {
  it('applies every operation and returns typed results with the chroot stripped', async () => {
    await zk.create('/m', 'a');
    const results = await zk
      .transaction()
      .check('/m', 0)
      .create('/m/x', 'x')
      .create('/m/seq-', null, { mode: CreateMode.EPHEMERAL_SEQUENTIAL })
      .create('/m/s2', null, { mode: CreateMode.CONTAINER })
      .setData('/m', 'b', 0)
      .delete('/m/x')
      .commit();
    expect(results.map((r) => r.type)).toEqual(['check', 'create', 'create', 'create', 'setData', 'delete']);
    expect(results[1]).toEqual({ type: 'create', path: '/m/x' });
    expect(results[2]?.type === 'create' && results[2].path).toMatch(/^\/m\/seq-\d{10}$/);
    expect(results[3]?.type === 'create' && results[3].stat?.czxid).toBeGreaterThan(0n);
    expect(results[4]?.type === 'setData' && results[4].stat.version).toBe(1);
    expect((await zk.getData('/m')).data.toString()).toBe('b');
    expect(await zk.exists('/m/x')).toBeNull();
  });

  it('fails atomically, naming the failing operation and every outcome', async () => {
    await zk.create('/t', 'a');
    const err = await zk.transaction().create('/t/new').setData('/t', 'b', 7).create('/t/other').commit().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TransactionError);
    const te = err as TransactionError;
    expect(te.code).toBe(ErrorCode.BADVERSION);
    expect(te.failedIndex).toBe(1);
    expect(te.path).toBe('/t');
    expect(te.opError).toBeInstanceOf(BadVersionError);
    expect(te.results.map((r) => r.code)).toEqual([ErrorCode.OK, ErrorCode.BADVERSION, ErrorCode.RUNTIMEINCONSISTENCY]);
    // nothing applied
    expect(await zk.exists('/t/new')).toBeNull();
    expect((await zk.getData('/t')).data.toString()).toBe('a');
  });

  it('reports a create of an existing node inside a transaction', async () => {
    await zk.create('/dup');
    const err = (await zk.transaction().create('/dup').commit().catch((e: unknown) => e)) as TransactionError;
    expect(err.opError).toBeInstanceOf(NodeExistsError);
  });

  it('refuses an empty or reused transaction before sending', async () => {
    await expect(zk.transaction().commit()).rejects.toThrow(/no operations/);
    const tx = zk.transaction().create('/once');
    await tx.commit();
    await expect(tx.commit()).rejects.toThrow(/already committed/);
    expect(() => zk.transaction().delete('bad')).toThrow(/must start with/);
  });
});

describe('multi - multiRead', () => {
  it('reads several nodes in one request, with per-op errors', async () => {
    await zk.create('/r', 'root');
    await zk.create('/r/a', 'A');
    const results = await zk.multiRead([
      { type: 'getData', path: '/r/a' },
      { type: 'getChildren', path: '/r' },
      { type: 'getData', path: '/r/missing' },
    ]);
    expect(results[0]).toMatchObject({ type: 'getData', path: '/r/a' });
    expect(results[0]?.type === 'getData' && results[0].data.toString()).toBe('A');
    expect(results[1]).toEqual({ type: 'getChildren', path: '/r', children: ['a'] });
    expect(results[2]?.type).toBe('error');
    expect(results[2]?.type === 'error' && results[2].error).toBeInstanceOf(NoNodeError);
  });
});

/** Requests the server has received on this client's connection (`cons`: recved of its session). */
async function received(client: ZooKeeper): Promise<number> {
  const server = client.server!;
  const sid = `sid=0x${client.sessionId.toString(16)}`;
  const line = (await fourLetter(server.host, server.port, 'cons')).split('\n').find((l) => l.includes(sid));
  const m = line && /recved=(\d+)/.exec(line);
  if (!m) throw new Error(`no cons line for ${sid}`);
  return Number(m[1]);
}

describe('multi - coalesceReads', () => {
  it('sends the reads of one tick as one request, each call with its own result or typed error', async () => {
    const zc = await space.client({ coalesceReads: true });
    await zk.create('/c', 'root');
    for (let i = 0; i < 10; i++) await zk.create(`/c/n${i}`, `v${i}`);
    const before = await received(zc);
    const [datas, children, missing] = await Promise.all([
      Promise.all(Array.from({ length: 10 }, (_, i) => zc.getData(`/c/n${i}`))),
      zc.getChildren('/c'),
      zc.getData('/c/missing').catch((e: unknown) => e),
    ]);
    const after = await received(zc);
    expect(datas.map((d) => d.data.toString())).toEqual(Array.from({ length: 10 }, (_, i) => `v${i}`));
    expect(datas[3]!.stat.version).toBe(0);
    expect(datas[3]!.stat.dataLength).toBe(2);
    expect(children.sort()).toEqual(Array.from({ length: 10 }, (_, i) => `n${i}`).sort());
    expect(missing).toBeInstanceOf(NoNodeError);
    expect((missing as NoNodeError).path).toBe('/c/missing');
    // 12 calls, one request (a ping may fall in between); the same reads without coalescing are 12.
    expect(after - before).toBeLessThanOrEqual(2);
    // The control: coalescing off (the default, 'auto', coalesces on this 3.8 server too).
    const plain = await space.client({ coalesceReads: false });
    const b2 = await received(plain);
    await Promise.all(Array.from({ length: 10 }, (_, i) => plain.getData(`/c/n${i}`)));
    expect((await received(plain)) - b2).toBeGreaterThanOrEqual(10);
    // The default asks the server once per connection, at its first tick with reads to batch
    // (the probe, then the batch), and on 3.6+ coalesces the same way (a ping may fall in between).
    const b3 = await received(zk);
    await Promise.all(Array.from({ length: 10 }, (_, i) => zk.getData(`/c/n${i}`)));
    expect((await received(zk)) - b3).toBeLessThanOrEqual(3);
    const b4 = await received(zk);
    await Promise.all(Array.from({ length: 10 }, (_, i) => zk.getData(`/c/n${i}`)));
    expect((await received(zk)) - b4).toBeLessThanOrEqual(2);
  });

  it('keeps the calling order with writes made in the same tick', async () => {
    const zc = await space.client({ coalesceReads: true });
    await zc.create('/o', 'old');
    const [before1, before2, , after1, after2] = await Promise.all([
      zc.getData('/o'),
      zc.getData('/o'),
      zc.setData('/o', 'new'),
      zc.getData('/o'),
      zc.getData('/o'),
    ]);
    expect([before1, before2].map((r) => r.data.toString())).toEqual(['old', 'old']);
    expect([after1, after2].map((r) => r.data.toString())).toEqual(['new', 'new']);
    expect(after1.stat.version).toBe(1);
  });

  it('sends a read with a watch alone, and its watch fires', async () => {
    const zc = await space.client({ coalesceReads: true });
    await zc.create('/w', 'a');
    let fired!: (type: string) => void;
    const event = new Promise<string>((r) => (fired = r));
    const [watched, plain] = await Promise.all([zc.getData('/w', { watch: (e) => fired(e.type) }), zc.getData('/w')]);
    expect(watched.data.toString()).toBe('a');
    expect(plain.data.toString()).toBe('a');
    await zk.setData('/w', 'b');
    expect(await event).toBe('NodeDataChanged');
  });

  it('fails only the read the ACL forbids', async () => {
    const zc = await space.client({ coalesceReads: true });
    await zk.create('/open', 'o');
    await zk.create('/closed', 'c', { acl: [{ perms: Perm.ALL, id: { scheme: 'digest', id: 'nobody:Vy1hvv8eHfZjSqxLHLaCF/gfbN0=' } }] });
    const [open, closed] = await Promise.all([zc.getData('/open'), zc.getData('/closed').catch((e: unknown) => e)]);
    expect(open.data.toString()).toBe('o');
    expect(closed).toBeInstanceOf(NoAuthError);
  });
});

describe('watches - persistent and removal', () => {
  it('a recursive watch sees changes at every depth until removed', async () => {
    await zk.create('/tree');
    const events: string[] = [];
    let seen!: () => void;
    let wanted = 3;
    const done = new Promise<void>((r) => (seen = r));
    const remove = await zk.addWatch('/tree', (e) => {
      events.push(`${e.type} ${e.path}`);
      if (--wanted === 0) seen();
    }, { recursive: true });
    await zk.create('/tree/a');
    await zk.create('/tree/a/b');
    await zk.setData('/tree/a/b', 'x');
    await done;
    expect(events).toEqual(['NodeCreated /tree/a', 'NodeCreated /tree/a/b', 'NodeDataChanged /tree/a/b']);
    expect(await zk.checkWatches('/tree', { kind: 'persistentRecursive' })).toBe(true);
    await remove();
    expect(zk.watchCount).toBe(0);
    expect(await zk.checkWatches('/tree', { kind: 'persistentRecursive' })).toBe(false);
  });

  it('watch() is an async iterable that unregisters when the loop ends', async () => {
    await zk.create('/it', '0');
    const seen: string[] = [];
    const loop = (async () => {
      for await (const e of zk.watch('/it')) {
        seen.push(e.type);
        if (seen.length === 2) break;
      }
    })();
    // the watch is registered once the server answered addWatch
    while (zk.watchCount === 0) await new Promise((r) => setImmediate(r));
    await zk.setData('/it', '1');
    await zk.setData('/it', '2');
    await loop;
    expect(seen).toEqual(['NodeDataChanged', 'NodeDataChanged']);
    while (zk.watchCount !== 0) await new Promise((r) => setImmediate(r));
    expect(await zk.checkWatches('/it', { kind: 'persistent' })).toBe(false);
  });

  it('removeWatches drops a one-shot watch on the server and tells its listener', async () => {
    await zk.create('/rw');
    const events: string[] = [];
    await zk.getData('/rw', { watch: (e) => events.push(e.type) });
    expect(await zk.checkWatches('/rw', { kind: 'data' })).toBe(true);
    await zk.removeWatches('/rw', { kind: 'data' });
    expect(events).toEqual(['DataWatchRemoved']);
    expect(await zk.checkWatches('/rw', { kind: 'data' })).toBe(false);
    await expect(zk.removeWatches('/rw', { kind: 'data' })).rejects.toMatchObject({ code: ErrorCode.NOWATCHER });
  });

  it('keeps the server watch while another local listener needs it', async () => {
    await zk.create('/two');
    const a: string[] = [];
    const b: string[] = [];
    const la = (e: { type: string }) => a.push(e.type);
    let fired!: () => void;
    const bFired = new Promise<void>((r) => (fired = r));
    await zk.getData('/two', { watch: la });
    await zk.getData('/two', { watch: (e) => (b.push(e.type), fired()) });
    await zk.removeWatches('/two', { kind: 'data', listener: la });
    expect(a).toEqual(['DataWatchRemoved']);
    await zk.setData('/two', 'x');
    await bFired;
    expect(b).toEqual(['NodeDataChanged']);
  });

  it('removing a persistent watch keeps one-shot watches of the same path working (3.8 has no per-kind removal)', async () => {
    await zk.create('/mix');
    let fired!: (t: string) => void;
    const oneShot = new Promise<string>((r) => (fired = r));
    await zk.getData('/mix', { watch: (e) => fired(e.type) });
    const remove = await zk.addWatch('/mix', () => {});
    await remove();
    await zk.setData('/mix', 'x');
    expect(await oneShot).toBe('NodeDataChanged');
  });
});

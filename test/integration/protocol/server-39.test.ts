/**
 * ZooKeeper 3.9's client features (issue 39 part 3): a create's Stat inside a multi
 * (ZOOKEEPER-4026) and watch removal by mode (ZOOKEEPER-4472). On 3.9 they work, checked on the
 * wire; on 3.8 and 3.4 a create's Stat in a transaction and a check of one persistent mode beside
 * other watches fail with UnimplementedError naming 3.9 before the operation is sent (a 3.8 server
 * would apply the create and answer without the Stat, and cannot tell one mode from the others),
 * and so does a removal by mode, except through the remover addWatch returns, which leaves the
 * server its watch (removing it there would drop the others).
 * CI runs this file in the 3.9 pass; the refusals run in the 3.8 pass (3.4: the transaction's
 * refusal; 3.4 has no persistent watches at all).
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ChannelName, CreateMode, UnimplementedError, type WatchedEvent, type ZooKeeper } from '@zk/protocol';
import { OpCode } from '../../../packages/protocol/src/constants.js';
import { JuteReader, JuteWriter, readMultiResponse, writeMultiRequest } from '../../../packages/protocol/src/jute/index.js';
import { isZooKeeper34, zookeeperLine } from '../../harness/index.js';
import { TestSpace } from '../../harness/fixtures.js';

const line = zookeeperLine();
const is39 = line === '3.9';
const NEEDS_39 = `needs a ZooKeeper 3.9 server (ZK_VERSION=3.9); this pass runs ${line}`;
const NEEDS_OLDER = `the refusal is for servers older than 3.9; this pass runs ${line}`;

let space: TestSpace;
let zk: ZooKeeper;

beforeEach(async () => {
  space = new TestSpace();
  zk = await space.client();
});

afterEach(async () => {
  await space.close();
});

/** The op codes of the requests sent while `body` runs. */
async function opsSentDuring(body: () => Promise<void>): Promise<number[]> {
  const ops: number[] = [];
  const record = (m: unknown) => ops.push((m as { op: number }).op);
  subscribe(ChannelName.requestStart, record);
  try {
    await body();
  } finally {
    unsubscribe(ChannelName.requestStart, record);
  }
  return ops;
}

/** A multi of one create sent as `type` (create 1 or create2 15), decoded as it came back. */
async function rawCreateMulti(path: string, type: typeof OpCode.create | typeof OpCode.create2) {
  const ops = [{ type, path: `${space.root}${path}`, data: Buffer.from('x'), acl: zk.defaultACL(path) as never, flags: CreateMode.PERSISTENT }];
  const reply = await zk.rawRequest(OpCode.multi, 'multi', path, (w: JuteWriter) => writeMultiRequest(w, ops), (r: JuteReader) => readMultiResponse(r), {});
  expect(reply.err).toBe(0);
  return reply.body;
}

describe('server 3.9 - a create\'s Stat inside a transaction (ZOOKEEPER-4026)', () => {
  it('on the wire: a create2 op is answered with type create2 and the Stat on 3.9, with type create and no Stat before', async (ctx) => {
    if (isZooKeeper34()) ctx.skip('a 3.4 server drops the connection on a create2 inside a multi');
    const results = await rawCreateMulti('/wire', OpCode.create2);
    if (is39) {
      expect(results).toEqual([{ type: OpCode.create2, path: `${space.root}/wire`, stat: expect.objectContaining({ version: 0, dataLength: 1 }) }]);
    } else {
      // The reason for the refusal below: the create was applied and its Stat is not in the answer.
      expect(results).toEqual([{ type: OpCode.create, path: `${space.root}/wire` }]);
    }
    // The control: a plain create op gets no Stat on any server.
    expect(await rawCreateMulti('/plain', OpCode.create)).toEqual([{ type: OpCode.create, path: `${space.root}/plain` }]);
  });

  it('createWithStat in a transaction returns the new nodes\' Stats; plain creates none', async (ctx) => {
    if (!is39) ctx.skip(NEEDS_39);
    await zk.create('/jobs');
    const results = await zk
      .transaction()
      .createWithStat('/jobs/a', 'aa')
      .create('/jobs/b', 'b')
      .createWithStat('/jobs/job-', 'seq', { mode: CreateMode.PERSISTENT_SEQUENTIAL })
      .setData('/jobs/a', 'a2')
      .commit();
    const [a, b, seq, set] = results;
    expect(a).toMatchObject({ type: 'create', path: '/jobs/a', stat: { version: 0, dataLength: 2, numChildren: 0 } });
    expect(b).toEqual({ type: 'create', path: '/jobs/b' });
    expect(seq).toMatchObject({ type: 'create', path: '/jobs/job-0000000002', stat: { dataLength: 3 } });
    // The Stat is the one the node got: the same creation zxid as a later read, one zxid for the whole multi.
    const read = await zk.exists('/jobs/a');
    expect(a?.type === 'create' && a.stat?.czxid).toBe(read?.czxid);
    expect(seq?.type === 'create' && seq.stat?.czxid).toBe(read?.czxid);
    expect(set).toMatchObject({ type: 'setData', stat: { version: 1 } });
  });

  it('createWithStat in a transaction fails with UnimplementedError before the multi is sent', async (ctx) => {
    if (is39) ctx.skip(NEEDS_OLDER);
    const sent = await opsSentDuring(async () => {
      const failed = await zk.transaction().createWithStat('/refused', 'x').create('/other').commit().catch((e: unknown) => e);
      expect(failed).toBeInstanceOf(UnimplementedError);
      expect((failed as Error).message).toMatch(/^UNIMPLEMENTED \(createWithStat \/refused\): a create's Stat inside a transaction needs ZooKeeper 3\.9 or newer; this server is (older|3\.4)$/);
    });
    expect(sent).not.toContain(OpCode.multi);
    // On 3.5-3.8 the one probe (checkWatches, type Persistent) was sent; a 3.4 server gets nothing.
    expect(sent).toEqual(isZooKeeper34() ? [] : [OpCode.checkWatches]);
    expect(await zk.exists('/refused')).toBeNull();
    expect(await zk.exists('/other')).toBeNull();
    // The client is still usable, and the answer is kept for the connection: no second probe.
    const again = await opsSentDuring(async () => {
      await expect(zk.transaction().createWithStat('/refused').commit()).rejects.toBeInstanceOf(UnimplementedError);
    });
    expect(again).toEqual([]);
    expect(zk.state).toBe('connected');
  });
});

describe('server 3.9 - watches removed and checked by their mode (ZOOKEEPER-4472)', () => {
  it('a persistent watch is removed while a data watch on the same path stays, and the reverse for a recursive one', async (ctx) => {
    if (!is39) ctx.skip(NEEDS_39);
    await zk.create('/p', '0');
    const persistent: string[] = [];
    const data: string[] = [];
    await zk.addWatch('/p', (e: WatchedEvent) => persistent.push(e.type));
    await zk.getData('/p', { watch: (e) => data.push(e.type) });
    // By mode, asked of the server: the persistent one is there (and so is the data one).
    expect(await zk.checkWatches('/p', { kind: 'persistent' })).toBe(true);
    expect(await zk.checkWatches('/p', { kind: 'persistentRecursive' })).toBe(false);
    const sent = await opsSentDuring(() => zk.removeWatches('/p', { kind: 'persistent' }));
    expect(sent).toEqual([OpCode.removeWatches]);
    expect(persistent).toEqual(['PersistentWatchRemoved']);
    expect(await zk.checkWatches('/p', { kind: 'persistent' })).toBe(false);
    expect(await zk.checkWatches('/p', { kind: 'data' })).toBe(true);
    // The data watch still fires; the removed persistent one does not.
    await zk.setData('/p', '1');
    await expect.poll(() => data).toEqual(['NodeDataChanged']);
    await zk.sync('/');
    expect(persistent).toEqual(['PersistentWatchRemoved']);

    // Two persistent modes on one path (3.9 keeps both, ZOOKEEPER-4466): the recursive one goes.
    await zk.create('/q');
    const flat: string[] = [];
    const deep: string[] = [];
    await zk.addWatch('/q', (e) => flat.push(`${e.type} ${e.path}`));
    await zk.addWatch('/q', (e) => deep.push(`${e.type} ${e.path}`), { recursive: true });
    await zk.removeWatches('/q', { kind: 'persistentRecursive' });
    expect(await zk.checkWatches('/q', { kind: 'persistentRecursive' })).toBe(false);
    expect(await zk.checkWatches('/q', { kind: 'persistent' })).toBe(true);
    await zk.create('/q/c');
    await zk.setData('/q', 'x');
    await expect.poll(() => flat).toEqual(['NodeChildrenChanged /q', 'NodeDataChanged /q']);
    expect(deep).toEqual(['PersistentWatchRemoved /q']);
    await zk.removeWatches('/q');
    expect(zk.watchCount).toBe(0);
  });

  it('checking or removing one persistent mode beside other watches fails with UnimplementedError before it is sent; addWatch\'s remover leaves the server its watch', async (ctx) => {
    if (is39) ctx.skip(NEEDS_OLDER);
    if (isZooKeeper34()) ctx.skip('a 3.4 server has no persistent watches (addWatch is 3.6)');
    await zk.create('/p', '0');
    const persistent: string[] = [];
    const data: string[] = [];
    const remove = await zk.addWatch('/p', (e) => persistent.push(e.type));
    await zk.getData('/p', { watch: (e) => data.push(e.type) });
    const sent = await opsSentDuring(async () => {
      const check = await zk.checkWatches('/p', { kind: 'persistent' }).catch((e: unknown) => e);
      expect(check).toBeInstanceOf(UnimplementedError);
      expect((check as Error).message).toMatch(/^UNIMPLEMENTED \(checkWatches \/p\): checking one persistent watch mode beside other watches on the path needs ZooKeeper 3\.9 or newer; this server is older$/);
      // A 3.8 server's Any would drop the data watch too: refused, and nothing removed.
      const removal = await zk.removeWatches('/p', { kind: 'persistent' }).catch((e: unknown) => e);
      expect(removal).toBeInstanceOf(UnimplementedError);
      expect((removal as Error).message).toMatch(/^UNIMPLEMENTED \(removeWatches \/p\): removing one persistent watch mode beside other watches on the path needs ZooKeeper 3\.9 or newer; this server is older$/);
      expect(zk.watchCount).toBe(2);
      expect(persistent).toEqual([]);
      // The remover a watch stream or a cache ends with drops the listener; the server keeps its watch.
      await remove();
    });
    // Only the probe (checkWatches of type Persistent on '/', answered MARSHALLINGERROR).
    expect(sent).toEqual([OpCode.checkWatches]);
    expect(persistent).toEqual(['PersistentWatchRemoved']);
    expect(zk.watchCount).toBe(1);
    await zk.setData('/p', '1');
    await expect.poll(() => data).toEqual(['NodeDataChanged']);
    expect(persistent).toEqual(['PersistentWatchRemoved']);
    // The control: alone on its path, a persistent watch is removed and checked (sent as Any) on 3.5-3.8 too.
    await zk.create('/alone');
    await zk.addWatch('/alone', () => undefined);
    expect(await zk.checkWatches('/alone', { kind: 'persistent' })).toBe(true);
    await zk.removeWatches('/alone', { kind: 'persistent' });
    expect(await zk.checkWatches('/alone', { kind: 'persistent' })).toBe(false);
    expect(zk.watchCount).toBe(0);
  });
});

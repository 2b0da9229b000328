/**
 * Read consistency and causal tokens against a real server (issue 39, parts 1 and 2): the
 * fenced reads share one proof request per tick (counted on `zk:proof`, where the fence's no-op
 * write or sync is published), plain reads send none (the control); bad input is refused before
 * anything is sent; a token names a state, a read or a connect given one never goes below it.
 * The partitions these exist for are in test/faults/register.test.ts.
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ChannelName, InvalidArgumentError, parseCausalToken, StaleServerError, ZooKeeper, causalTokenOf, type ProofMessage } from '@zk/protocol';
import { connectString, TestSpace } from '../../harness/fixtures.js';

let space: TestSpace;
let proofs: ProofMessage[];
let requests: number;
const onProof = (m: unknown) => void proofs.push(m as ProofMessage);
const onRequest = () => void requests++;

beforeEach(async () => {
  space = new TestSpace();
  await space.admin();
  proofs = [];
  requests = 0;
  subscribe(ChannelName.proof, onProof);
  subscribe(ChannelName.requestStart, onRequest);
});
afterEach(async () => {
  unsubscribe(ChannelName.proof, onProof);
  unsubscribe(ChannelName.requestStart, onRequest);
  await space.close();
});

describe('consistency - linearizable and sync reads', () => {
  it('64 linearizable reads made in one tick share one no-op write; 64 plain reads send none (control)', async () => {
    const zk = await space.client();
    await zk.create('/k', 'v1');
    const before = proofs.length;
    const plain = await Promise.all(Array.from({ length: 64 }, () => zk.getData('/k')));
    expect(plain.every((r) => r.data.toString() === 'v1')).toBe(true);
    expect(proofs.length).toBe(before);
    const lin = await Promise.all(Array.from({ length: 64 }, () => zk.getData('/k', { consistency: 'linearizable' })));
    expect(lin.every((r) => r.data.toString() === 'v1')).toBe(true);
    const fences = proofs.slice(before);
    expect(fences.map((p) => [p.kind, p.err])).toEqual([['write', 0]]);
  });

  it('every read takes it: exists, getChildren, getChildrenWithStat, multiRead; and sees a write another client completed just before', async () => {
    const zk = await space.client();
    const writer = await space.client();
    await writer.create('/p');
    await writer.create('/p/c', 'x');
    const o = { consistency: 'linearizable' } as const;
    const [stat, children, withStat, multi] = await Promise.all([zk.exists('/p/c', o), zk.getChildren('/p', o), zk.getChildrenWithStat('/p', o), zk.multiRead([{ type: 'getData', path: '/p/c' }], o)]);
    expect(stat?.dataLength).toBe(1);
    expect(children).toEqual(['c']);
    expect(withStat.children).toEqual(['c']);
    expect(multi[0]).toMatchObject({ type: 'getData' });
    expect(proofs.filter((p) => p.kind === 'write').length).toBe(1);
    await writer.setData('/p/c', 'y');
    expect((await zk.getData('/p/c', o)).data.toString()).toBe('y');
  });

  it("'sync' reads share one sync; the client-wide readConsistency applies to reads that name none, and a read may override it", async () => {
    const zk = await space.client({ readConsistency: 'linearizable' });
    await zk.create('/k', 'v');
    const before = proofs.length;
    await Promise.all([zk.getData('/k', { consistency: 'sync' }), zk.getChildren('/', { consistency: 'sync' })]);
    expect(proofs.slice(before).map((p) => p.kind)).toEqual(['sync']);
    await zk.getData('/k');
    expect(proofs.slice(before).map((p) => p.kind)).toEqual(['sync', 'write']);
    await zk.getData('/k', { consistency: 'plain' });
    expect(proofs.length - before).toBe(2);
  });

  it('reads made in later ticks each get their own fence (a fence is never reused for a read made after it was sent)', async () => {
    const zk = await space.client();
    await zk.create('/k', 'v');
    const before = proofs.length;
    for (let i = 0; i < 3; i++) await zk.getData('/k', { consistency: 'linearizable' });
    expect(proofs.length - before).toBe(3);
  });

  it('bad consistency or token: InvalidArgumentError before anything is sent', async () => {
    const zk = await space.client();
    const sent = requests;
    await expect(zk.getData('/k', { consistency: 'strong' as never })).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(zk.exists('/k', { after: 'zxid:12' })).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(zk.multiRead([{ type: 'getData', path: '/k' }], { after: 42 as never })).rejects.toBeInstanceOf(InvalidArgumentError);
    expect(requests).toBe(sent);
    expect(proofs).toEqual([]);
    await expect(ZooKeeper.connect(connectString(), { readConsistency: 'eventual' as never })).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(ZooKeeper.connect(connectString(), { after: 'yesterday' })).rejects.toBeInstanceOf(InvalidArgumentError);
  });
});

describe('consistency - causal tokens', () => {
  it('lastZxid and causalToken follow the replies; a token round-trips as a string', async () => {
    const zk = await space.client();
    const first = zk.lastZxid;
    await zk.create('/k', 'v');
    expect(zk.lastZxid).toBeGreaterThan(first);
    expect(zk.causalToken).toMatch(/^zxid:[0-9a-f]{16}$/);
    expect(parseCausalToken(zk.causalToken)).toBe(zk.lastZxid);
    expect(causalTokenOf(zk.lastZxid)).toBe(zk.causalToken);
  });

  it('getData and getChildrenWithStat carry the reply zxid: at least the data read, at most what the client has seen', async () => {
    const zk = await space.client();
    await zk.create('/k', 'v');
    const stat = await zk.setData('/k', 'w');
    const read = await zk.getData('/k');
    if (read.zxid === undefined) throw new Error('getData returned no zxid');
    expect(read.zxid).toBeGreaterThanOrEqual(stat.mzxid);
    expect(read.zxid).toBeLessThanOrEqual(zk.lastZxid);
    const kids = await zk.getChildrenWithStat('/');
    expect(kids.zxid).toBeGreaterThanOrEqual(read.zxid);
    // A token from a result, handed on: the other client's read is at least as new.
    const other = await space.client();
    expect((await other.getData('/k', { after: causalTokenOf(read.zxid) })).data.toString()).toBe('w');
  });

  it('a read after a token this client has already seen sends no sync; after a newer one, one sync first, and the data is at least that new', async () => {
    const reader = await space.client();
    const writer = await space.client();
    await writer.create('/k', 'v1');
    await reader.getData('/k', { after: reader.causalToken });
    expect(proofs).toEqual([]);
    await writer.setData('/k', 'v2');
    const token = writer.causalToken;
    expect(parseCausalToken(token)).toBeGreaterThan(reader.lastZxid);
    const { data } = await reader.getData('/k', { after: token });
    expect(data.toString()).toBe('v2');
    expect(proofs.map((p) => p.kind)).toEqual(['sync']);
    expect(reader.lastZxid).toBeGreaterThanOrEqual(parseCausalToken(token));
  });

  it('a token no server has reached: the read fails with StaleServerError (nothing returned), the connect finds no server', async () => {
    const zk = await space.client();
    const future = causalTokenOf(zk.lastZxid + (1n << 40n));
    const err = await zk.getData('/', { after: future }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StaleServerError);
    expect((err as StaleServerError).serverZxid).toBeLessThan(parseCausalToken(future));
    await expect(ZooKeeper.connect(`${connectString()}${space.root}`, { after: future, connectTimeout: 1500 })).rejects.toThrow();
    // Control: the token of a state the server has reached is accepted.
    const ok = await space.client({ after: zk.causalToken });
    expect(ok.lastZxid).toBeGreaterThanOrEqual(zk.lastZxid);
  });
});

import { describe, expect, it } from 'vitest';
import type { Stat } from '../jute/data.js';
import { prng } from '../testing/random.js';
import { NodeTable, type NodeChange } from './node-table.js';

function stat(czxid: number, mzxid = czxid, pzxid = czxid): Stat {
  return {
    czxid: BigInt(czxid),
    mzxid: BigInt(mzxid),
    ctime: 0,
    mtime: 0,
    version: mzxid - czxid,
    cversion: 0,
    aversion: 0,
    ephemeralOwner: 0n,
    dataLength: 1,
    numChildren: 0,
    pzxid: BigInt(pzxid),
  };
}

const data = (s: string) => Buffer.from(s);
const brief = (changes: NodeChange[]) => changes.map((c) => `${c.type} ${c.path}`);

describe('tree cache table - observations to changes', () => {
  it('a first read creates; a newer mzxid changes; the same or an older one changes nothing', () => {
    const t = new NodeTable('/r');
    expect(brief(t.found('/r', data('a'), stat(10)))).toEqual(['created /r']);
    expect(t.found('/r', data('a'), stat(10))).toEqual([]);
    const changed = t.found('/r', data('b'), stat(10, 12));
    expect(brief(changed)).toEqual(['changed /r']);
    expect(changed[0]?.type === 'changed' && changed[0].previous.data.toString()).toBe('a');
    expect(t.found('/r', data('a'), stat(10, 11))).toEqual([]); // a stale read
    expect(t.get('/r')?.data.toString()).toBe('b');
  });

  it('a cached Stat keeps its times exact and serialises like a decoded one, in snapshots and in changes', () => {
    const t = new NodeTable('/r');
    const mtime = Date.UTC(2026, 10, 29, 6, 0, 4, 690);
    const big = { ...stat(10), czxid: 2n ** 62n + 1n, mzxid: 2n ** 62n + 7n, ctime: mtime - 4_567, mtime, ephemeralOwner: -(2n ** 63n) };
    const [created] = t.found('/r', data('a'), big);
    const cached = t.get('/r')!.stat;
    expect(cached).toEqual(big);
    expect(new Date(cached.mtime).toISOString()).toBe('2026-11-29T06:00:04.690Z');
    const json = JSON.parse(JSON.stringify(cached)) as Record<string, unknown>;
    expect(json).toMatchObject({ czxid: '4611686018427387905', mzxid: '4611686018427387911', ctime: mtime - 4_567, mtime, ephemeralOwner: '-9223372036854775808' });
    expect(JSON.stringify(created?.type === 'created' && created.node.stat)).toBe(JSON.stringify(cached));
    const changed = t.found('/r', data('b'), { ...big, mzxid: big.mzxid + 1n });
    expect(JSON.parse(JSON.stringify(changed)).map((c: { previous: { stat: { mzxid: string } } }) => c.previous.stat.mzxid)).toEqual(['4611686018427387911']);
  });

  it('the same data with a newer pzxid refreshes the Stat silently', () => {
    const t = new NodeTable('/r');
    t.found('/r', data('a'), stat(10));
    expect(t.found('/r', data('a'), stat(10, 10, 20))).toEqual([]);
    expect(t.get('/r')?.stat.pzxid).toBe(20n);
  });

  it('a missing node is deleted with its subtree, deepest first; children are indexed by name, sorted', () => {
    const t = new NodeTable('/r');
    t.found('/r', data(''), stat(1));
    t.found('/r/b', data(''), stat(2));
    t.found('/r/a', data(''), stat(3));
    t.found('/r/a/x', data(''), stat(4));
    expect(t.children('/r')).toEqual(['a', 'b']);
    expect([...t.nodes()].map((n) => n.path)).toEqual(['/r', '/r/b', '/r/a', '/r/a/x']);
    expect(brief(t.missing('/r/a'))).toEqual(['deleted /r/a/x', 'deleted /r/a']);
    expect(t.children('/r')).toEqual(['b']);
    expect(brief(t.missing('/r'))).toEqual(['deleted /r/b', 'deleted /r']);
    expect(t.size).toBe(0);
    expect(t.missing('/r')).toEqual([]);
  });

  it('a listing deletes the cached children it does not name', () => {
    const t = new NodeTable('/r');
    t.found('/r', data(''), stat(1));
    t.found('/r/a', data(''), stat(2));
    t.found('/r/b', data(''), stat(3));
    t.found('/r/b/c', data(''), stat(4));
    expect(brief(t.listed('/r', ['a', 'new']))).toEqual(['deleted /r/b/c', 'deleted /r/b']);
    expect(t.children('/r')).toEqual(['a']);
  });

  it('another czxid at a cached path: the old node and its older subtree are deleted, then the new one created', () => {
    const t = new NodeTable('/r');
    t.found('/r', data(''), stat(1));
    t.found('/r/n', data('old'), stat(2));
    t.found('/r/n/old', data(''), stat(3));
    // the new node's own child, read before the new node itself (events held during a walk)
    t.found('/r/n/mine', data(''), stat(9));
    expect(brief(t.found('/r/n', data('new'), stat(8)))).toEqual(['deleted /r/n/old', 'deleted /r/n', 'created /r/n']);
    expect(t.children('/r/n')).toEqual(['mine']);
    expect(t.get('/r/n')?.data.toString()).toBe('new');
    // a child created in the same transaction as its new parent (the same zxid) is the new one's
    t.found('/r/n/same', data(''), stat(12));
    expect(brief(t.found('/r/n', data('newer'), stat(12)))).toEqual(['deleted /r/n/mine', 'deleted /r/n', 'created /r/n']);
    expect(t.children('/r/n')).toEqual(['same']);
    // and a read of the older incarnation afterwards is stale
    expect(t.found('/r/n', data('old'), stat(2, 5))).toEqual([]);
  });

  it('covers only the root and paths below it (not siblings sharing its prefix)', () => {
    const t = new NodeTable('/app');
    expect(t.covers('/app')).toBe(true);
    expect(t.covers('/app/x')).toBe(true);
    expect(t.covers('/apple')).toBe(false);
    expect(new NodeTable('/').covers('/anything')).toBe(true);
  });
});

describe('tree cache table - the compact store', () => {
  it('a node read before its parent stays below it, and goes with it when an ancestor is deleted', () => {
    const t = new NodeTable('/r');
    t.found('/r', data(''), stat(1));
    t.found('/r/a/x', data('orphan'), stat(5)); // /r/a not read yet
    t.found('/r/b', data(''), stat(6));
    expect(t.size).toBe(3);
    expect(t.children('/r')).toEqual(['b']); // /r/a is not cached
    expect(t.get('/r/a')).toBeUndefined();
    expect(t.get('/r/a/x')?.data.toString()).toBe('orphan');
    expect(brief(t.found('/r/a', data(''), stat(4)))).toEqual(['created /r/a']);
    expect(t.children('/r/a')).toEqual(['x']);
    expect([...t.nodes()].map((n) => n.path)).toEqual(['/r', '/r/b', '/r/a', '/r/a/x']); // in the order read
    t.found('/r/c/y', data(''), stat(7));
    // The Map-based table left /r/c/y behind (its parent was never cached); it goes too.
    expect(brief(t.missing('/r'))).toEqual(['deleted /r/b', 'deleted /r/a/x', 'deleted /r/a', 'deleted /r/c/y', 'deleted /r']);
    expect(t.size).toBe(0);
  });

  it('names in any script, empty and large data, the root "/", and nodes kept as they were when made', () => {
    const t = new NodeTable('/');
    t.found('/', data(''), stat(1));
    const big = Buffer.alloc(5000, 7);
    t.found('/ünï/日本', big, stat(3));
    t.found('/ünï', data(''), stat(2));
    expect(t.children('/')).toEqual(['ünï']);
    expect(t.children('/ünï')).toEqual(['日本']);
    const before = t.get('/ünï/日本');
    expect(before?.data.equals(big)).toBe(true);
    expect(before?.stat).toEqual(stat(3));
    const change = t.found('/ünï/日本', data('small'), stat(3, 9));
    expect(change[0]?.type === 'changed' && change[0].previous.data.equals(big)).toBe(true);
    expect(t.get('/ünï/日本')?.data.toString()).toBe('small');
    expect(t.get('/ünï')?.data.length).toBe(0);
    expect(t.get('/missing')).toBeUndefined();
    expect(t.has('/ünï')).toBe(true);
    expect([...t.nodes()].map((n) => n.path)).toEqual(['/', '/ünï', '/ünï/日本']);
  });

  it('20,000 nodes: deletes, re-creates and data changes keep every lookup right (rows, hash slots and bytes reused)', () => {
    const t = new NodeTable('/r');
    const name = (d: number, i: number) => `/r/directory-${d}/a-rather-long-node-name-${i}`;
    let zxid = 1;
    t.found('/r', data(''), stat(zxid++));
    for (let d = 0; d < 100; d++) {
      t.found(`/r/directory-${d}`, data(''), stat(zxid++));
      for (let i = 0; i < 199; i++) t.found(name(d, i), data(`value-${d}-${i}`), stat(zxid++));
    }
    expect(t.size).toBe(1 + 100 + 100 * 199);
    // Three directories in four go (15,000 nodes: their names and data become garbage, more than
    // the live bytes, so both are compacted; rows and hash slots are freed).
    const gone = (d: number) => d % 4 !== 0;
    for (let d = 0; d < 100; d++) if (gone(d)) expect(t.missing(`/r/directory-${d}`)).toHaveLength(200);
    expect(t.size).toBe(1 + 25 * 200);
    for (let d = 0; d < 100; d++) for (let i = 0; i < 199; i += 3) expect(t.get(name(d, i))?.data.toString()).toBe(gone(d) ? undefined : `value-${d}-${i}`);
    // Back again, with data of other lengths everywhere (the data bytes are compacted on the way).
    for (let d = 0; d < 100; d++) {
      if (gone(d)) t.found(`/r/directory-${d}`, data(''), stat(zxid++));
      for (let i = 0; i < 199; i++) {
        const path = name(d, i);
        const c = zxid++;
        t.found(path, data(`v${d}.${i}`.repeat(1 + (i % 5))), gone(d) ? stat(c) : stat(t.get(path)?.stat.czxid === undefined ? c : Number(t.get(path)?.stat.czxid), c));
      }
    }
    expect(t.size).toBe(1 + 100 + 100 * 199);
    for (let d = 0; d < 100; d++) for (let i = 0; i < 199; i++) expect(t.get(name(d, i))?.data.toString()).toBe(`v${d}.${i}`.repeat(1 + (i % 5)));
    expect(t.children('/r/directory-7')).toHaveLength(199);
    expect([...t.nodes()]).toHaveLength(t.size);
  });

  it('random creates and deletes among 3,000 siblings agree with a Map, through rehashes, slot shifts and compactions', () => {
    const random = prng(7);
    const t = new NodeTable('/r');
    const oracle = new Map<string, string>();
    t.found('/r', data(''), stat(1));
    let zxid = 2;
    for (let step = 0; step < 40_000; step++) {
      const name = `member-${Math.floor(random() * 3000).toString(36).padStart(40, '.')}`;
      const path = `/r/${name}`;
      if (random() < 0.55) {
        const value = 'v'.repeat(Math.floor(random() * 64)) + step;
        const known = t.get(path);
        t.found(path, data(value), known ? stat(Number(known.stat.czxid), zxid++) : stat(zxid++));
        oracle.set(name, value);
      } else {
        expect(t.missing(path)).toHaveLength(oracle.has(name) ? 1 : 0);
        oracle.delete(name);
      }
    }
    expect(t.size).toBe(oracle.size + 1);
    expect(t.children('/r')).toEqual([...oracle.keys()].sort());
    for (const [name, value] of oracle) expect(t.get(`/r/${name}`)?.data.toString()).toBe(value);
  });
});

import { describe, expect, it } from 'vitest';
import type { Stat } from '../index.js';
import { NodeTable, type NodeChange } from './node-table.js';

function stat(czxid: number, mzxid = czxid, pzxid = czxid): Stat {
  return {
    czxid: BigInt(czxid),
    mzxid: BigInt(mzxid),
    ctime: 0n,
    mtime: 0n,
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

import { describe, expect, it } from 'vitest';
import type { Stat } from '../jute/data.js';
import type { CachedNode } from './node-table.js';
import { differences, isSessionSource } from './sessions.js';

const node = (path: string, czxid: number, mzxid = czxid): CachedNode => ({ path, data: Buffer.from(`${path}@${mzxid}`), stat: { czxid: BigInt(czxid), mzxid: BigInt(mzxid) } as Stat });
const brief = (c: ReturnType<typeof differences>[number]) => `${c.type} ${c.path}`;

describe('node caches - the differences between two sessions\' snapshots', () => {
  it('deleted (deepest first), replaced (deleted then created), changed, created (parents first); the same node unchanged is not reported', () => {
    const held = new Map([node('/p', 1), node('/p/same', 2), node('/p/edit', 3), node('/p/gone', 4), node('/p/gone/kid', 5), node('/p/swap', 6)].map((n) => [n.path, n]));
    const found = [node('/p', 1), node('/p/same', 2), node('/p/edit', 3, 9), node('/p/swap', 10), node('/p/new', 11), node('/p/new/kid', 12)];
    expect(differences(held, found).map(brief)).toEqual(['deleted /p/gone/kid', 'deleted /p/gone', 'deleted /p/swap', 'changed /p/edit', 'created /p/swap', 'created /p/new', 'created /p/new/kid']);
    const changed = differences(held, found).find((c) => c.type === 'changed');
    expect(changed?.type === 'changed' && changed.previous.stat.mzxid).toBe(3n);
  });

  it('everything gone, or nothing held', () => {
    const held = new Map([node('/p', 1), node('/p/a', 2)].map((n) => [n.path, n]));
    expect(differences(held, []).map(brief)).toEqual(['deleted /p/a', 'deleted /p']);
    expect(differences(new Map(), [node('/p', 1), node('/p/a', 2)]).map(brief)).toEqual(['created /p', 'created /p/a']);
    expect(differences(held, [node('/p', 1), node('/p/a', 2)])).toEqual([]);
  });

  it('a session source is told apart from a client', () => {
    expect(isSessionSource({ client: async () => undefined, onRenew: () => () => undefined })).toBe(true);
    expect(isSessionSource({ addWatch: () => undefined, client: () => undefined, onRenew: () => undefined })).toBe(false);
    expect(isSessionSource(null)).toBe(false);
    expect(isSessionSource({ client: () => undefined })).toBe(false);
  });
});

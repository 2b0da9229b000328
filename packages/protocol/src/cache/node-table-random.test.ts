import { describe, expect, it } from 'vitest';
import type { Stat } from '../jute/data.js';
import { MapNodeTable } from '../testing/node-table-model.js';
import { prng } from '../testing/random.js';
import { NodeTable, type CachedNode, type NodeChange } from './node-table.js';

const ROOT = '/r';
const NAMES = ['a', 'b', 'ç', 'a-much-longer-name-of-a-node'];
/** Every path up to three levels below the root from NAMES: 1 + 4 + 16 + 64. */
const PATHS = [ROOT];
for (let i = 0; PATHS.length < 85; i++) for (const n of NAMES) PATHS.push(`${PATHS[i]}/${n}`);

const parentOf = (path: string) => path.slice(0, path.lastIndexOf('/')) || '/';
const plain = (n: CachedNode | undefined) => n && { path: n.path, data: n.data.toString('hex'), stat: n.stat };
const plainChanges = (changes: NodeChange[]) =>
  changes.map((c) => ({ type: c.type, path: c.path, node: 'node' in c ? plain(c.node) : undefined, previous: 'previous' in c ? plain(c.previous) : undefined }));

describe('tree cache table - the compact store against the Map-based table it replaced', () => {
  for (const seed of [1, 2, 3, 4, 5, 6]) {
    it(`3,000 random observations (seed ${seed}): the same changes, snapshots and child lists`, () => {
      const random = prng(seed);
      const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
      const model = new MapNodeTable(ROOT);
      const table = new NodeTable(ROOT);
      let zxid = 1;
      const stat = (czxid: bigint, mzxid: bigint, pzxid: bigint): Stat => ({
        czxid,
        mzxid,
        ctime: Number(czxid) * 1000,
        mtime: Number(mzxid) * 1000,
        version: Number(mzxid - czxid),
        cversion: 0,
        aversion: 0,
        ephemeralOwner: random() < 0.2 ? 0x1234_5678_9abc_def0n : 0n,
        dataLength: 0,
        numChildren: 0,
        pzxid,
      });
      const payload = () => (random() < 0.05 ? Buffer.alloc(1500 + Math.floor(random() * 1000), zxid & 0xff) : Buffer.from('x'.repeat(Math.floor(random() * 40)) + String(zxid)));
      for (let step = 0; step < 3000; step++) {
        const path = pick(PATHS);
        const r = random();
        let expected: NodeChange[];
        let actual: NodeChange[];
        if (r < 0.6) {
          // Reads only where the parent is cached (the cache reads parents first): no orphans,
          // whose removal the compact table does better than the model (it leaves them behind).
          if (path !== ROOT && !model.get(parentOf(path))) continue;
          const cached = model.get(path);
          const kind = random();
          let s: Stat;
          if (!cached || kind < 0.2) s = stat(BigInt(zxid), BigInt(zxid), BigInt(zxid)); // new, or replaced
          else if (kind < 0.6) s = stat(cached.stat.czxid, BigInt(zxid), cached.stat.pzxid); // newer data
          else if (kind < 0.8) s = stat(cached.stat.czxid, cached.stat.mzxid, BigInt(zxid)); // newer children only
          else s = stat(cached.stat.czxid - (kind < 0.9 ? 1n : 0n), cached.stat.mzxid - 1n, cached.stat.pzxid); // stale
          zxid++;
          const d = payload();
          expected = model.found(path, d, s);
          actual = table.found(path, d, s);
        } else if (r < 0.75) {
          expected = model.missing(path);
          actual = table.missing(path);
        } else {
          const names = NAMES.filter(() => random() < 0.6);
          expected = model.listed(path, names);
          actual = table.listed(path, names);
        }
        expect(plainChanges(actual)).toEqual(plainChanges(expected));
        expect(table.size).toBe(model.size);
        if (step % 50 === 0 || step === 2999) {
          expect([...table.nodes()].map(plain)).toEqual([...model.nodes()].map(plain));
          for (const p of PATHS) {
            expect(plain(table.get(p))).toEqual(plain(model.get(p)));
            expect(table.children(p)).toEqual(model.children(p));
          }
        }
      }
    });
  }
});

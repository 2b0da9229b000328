/**
 * The locks' `mirror` option on the real server (issue 26): after two uncontended acquires the
 * lock directory is kept by a persistent recursive watch and each acquire sends its create alone;
 * mutual exclusion holds among contenders of the mirroring session and of others.
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ChannelName, InvalidArgumentError, type RequestStartMessage } from '@zk/protocol';
import { Mutex, ReadWriteLock } from '@zk/locks';
import { DirectoryMirror } from '../../../packages/locks/src/internal/mirror.js';
import { isZooKeeper34 } from '../../harness/index.js';
import { TestSpace } from '../../harness/fixtures.js';

const legacy = isZooKeeper34();
let space: TestSpace;
beforeEach(() => {
  space = new TestSpace();
});
afterEach(async () => {
  expect((await space.close()).leakedWatches).toBe(0);
});

/** The operations sent while `fn` runs (op codes; the tests of this file run one at a time, and the channel is the process's). */
async function opsOf<T>(fn: () => Promise<T>): Promise<{ result: T; ops: number[] }> {
  const ops: number[] = [];
  const onStart = (m: unknown) => void ops.push((m as RequestStartMessage).op);
  subscribe(ChannelName.requestStart, onStart);
  try {
    return { result: await fn(), ops };
  } finally {
    unsubscribe(ChannelName.requestStart, onStart);
  }
}

/**
 * `loops` contenders per lock, each `rounds` times: acquire, check nobody else is inside, stay a
 * turn of the event loop, leave, release. Returns how often two were inside at once.
 */
async function contend(locks: Mutex[], loops: number, rounds: number): Promise<{ overlaps: number; holds: number }> {
  let inside = 0;
  let overlaps = 0;
  let holds = 0;
  await Promise.all(
    locks.flatMap((lock) =>
      Array.from({ length: loops }, async () => {
        for (let i = 0; i < rounds; i++) {
          const lease = await lock.acquire();
          if (++inside > 1) overlaps++;
          holds++;
          await new Promise((r) => setImmediate(r));
          inside--;
          await lease.release();
        }
      }),
    ),
  );
  return { overlaps, holds };
}

const CREATE2 = 15;

describe.skipIf(legacy)('mirror option (3.6+)', () => {
  it('after two uncontended acquires, each acquire sends its create alone; without the option, the create and the listing', async () => {
    const zk = await space.client();
    const mirrored = new Mutex(zk, '/m/lock', { mirror: true });
    const plain = new Mutex(zk, '/p/lock');
    const sent: Record<string, number[][]> = { mirrored: [], plain: [] };
    for (let i = 0; i < 5; i++) {
      for (const [name, lock] of [['mirrored', mirrored], ['plain', plain]] as const) {
        const { result: lease, ops } = await opsOf(() => lock.acquire());
        sent[name]!.push(ops);
        await lease.release();
      }
    }
    // The third and later: create2 alone (the second one opened the mirror: addWatch, getChildren).
    expect(sent.mirrored!.slice(2)).toEqual([[CREATE2], [CREATE2], [CREATE2]]);
    expect(sent.plain!.slice(2)).toEqual([[CREATE2, 8], [CREATE2, 8], [CREATE2, 8]]);
    expect(zk.watchCount).toBe(1); // the mirror's watch, until it ends
    await zk.close();
  });

  it("one session's contenders exclude each other on the mirror alone: 4 x 25 holds, no overlap; control, a mirror that missed the others' creates: overlaps", async () => {
    const zk = await space.client();
    const lock = new Mutex(zk, '/x/lock', { mirror: true });
    for (let i = 0; i < 2; i++) await (await lock.acquire()).release();
    await new Promise((r) => setTimeout(r, 50)); // the mirror opens in the background
    const { result: run, ops } = await opsOf(() => contend([lock], 4, 25));
    expect(run).toEqual({ overlaps: 0, holds: 100 });
    // Mirrored acquires list only when a watch fires (a predecessor gone), never right after the create.
    expect(ops.filter((op) => op === CREATE2).length).toBe(100);

    const real = DirectoryMirror.prototype.childrenWith;
    // A mirror that missed the other contenders' events (as one read before the events of the
    // creates ahead of ours were delivered could): it answers our node alone.
    DirectoryMirror.prototype.childrenWith = function (this: DirectoryMirror, name: string) {
      return Promise.resolve([name]);
    };
    try {
      const second = new Mutex(zk, '/y/lock', { mirror: true });
      for (let i = 0; i < 2; i++) await (await second.acquire()).release();
      await new Promise((r) => setTimeout(r, 50));
      const broken = await contend([second], 4, 25);
      console.log(`mirror option: 100 holds by 4 contenders of one session, ${run.overlaps} overlaps; a mirror missing the others' creates (control): ${broken.overlaps} overlaps in ${broken.holds}`);
      expect(broken.overlaps).toBeGreaterThan(0);
    } finally {
      DirectoryMirror.prototype.childrenWith = real;
    }
    await zk.close();
  });

  it('a contender of another session ends the mirror; exclusion holds throughout (2 sessions x 3 contenders x 15 holds, plus a ReadWriteLock writer)', async () => {
    const [a, b] = await Promise.all([space.client(), space.client()]);
    const lockA = new Mutex(a, '/z/lock', { mirror: true });
    for (let i = 0; i < 2; i++) await (await lockA.acquire()).release();
    await new Promise((r) => setTimeout(r, 50));
    expect(a.watchCount).toBe(1);
    const lockB = new Mutex(b, '/z/lock', { mirror: true });
    const run = await contend([lockA, lockB], 3, 15);
    expect(run).toEqual({ overlaps: 0, holds: 90 });
    // B's first node ended A's mirror, and neither found the directory alone twice while both ran.
    expect(a.watchCount).toBe(0);
    const writer = await new ReadWriteLock(b, '/z/lock', { mirror: true }).writeLock().acquire();
    const { ops } = await opsOf(async () => {
      const waiting = lockA.acquire();
      await writer.release();
      await (await waiting).release();
    });
    expect(ops.slice(0, 2)).toEqual([CREATE2, 8]); // listed again: no mirror
    await a.close();
    await b.close();
  });

  it('bad input: a non-boolean mirror option is refused before any request', async () => {
    const zk = await space.client();
    expect(() => new Mutex(zk, '/bad', { mirror: 'yes' as unknown as boolean })).toThrow(InvalidArgumentError);
  });
});

describe.skipIf(!legacy)('mirror option on 3.4', () => {
  it('acquires as without it (create and listing), and opens no watch', async () => {
    const zk = await space.client();
    const lock = new Mutex(zk, '/m/lock', { mirror: true });
    const sent: number[][] = [];
    for (let i = 0; i < 4; i++) {
      const { result: lease, ops } = await opsOf(() => lock.acquire());
      sent.push(ops);
      await lease.release();
    }
    expect(sent.slice(2).every((ops) => ops.includes(8))).toBe(true);
    expect(zk.watchCount).toBe(0);
  });
});

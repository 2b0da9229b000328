import { describe, expect, it } from 'vitest';
import { PendingQueue, type PendingRequest } from './pending.js';

/** A request that records every settle call. */
function req(xid: number, type = 4) {
  const settled: Array<{ err: unknown; value: unknown }> = [];
  const r: PendingRequest = {
    xid,
    type,
    read: undefined,
    sentAt: 0,
    resolve: (value) => settled.push({ err: undefined, value }),
    reject: (err) => settled.push({ err, value: undefined }),
  };
  return { r, settled };
}

describe('pending - xid allocation', () => {
  it('pending - xids start at 1 and increase by one', () => {
    const q = new PendingQueue();
    expect([q.nextXid(), q.nextXid(), q.nextXid()]).toEqual([1, 2, 3]);
  });

  it('pending - each queue allocates independently', () => {
    const a = new PendingQueue();
    const b = new PendingQueue();
    a.nextXid();
    a.nextXid();
    expect(b.nextXid()).toBe(1);
  });

  // 2^31 - 1 calls: the only way to reach the wrap without reaching into private state (~3 s).
  it('pending - after 2^31 - 1 the next xid is 1, never 0 or negative', { timeout: 60_000 }, () => {
    const q = new PendingQueue();
    let last = 0;
    let min = Infinity;
    for (let i = 0; i < 2 ** 31 - 1; i++) {
      last = q.nextXid();
      if (last < min) min = last;
    }
    expect(min).toBe(1);
    expect(last).toBe(2 ** 31 - 1);
    expect(q.nextXid()).toBe(1);
    expect(q.nextXid()).toBe(2);
  });
});

describe('pending - FIFO and side queues', () => {
  it('pending - peek and shift return requests in push order', () => {
    const q = new PendingQueue();
    const items = [req(1), req(2), req(3)];
    for (const { r } of items) q.push(r);
    expect(q.size).toBe(3);
    expect(q.peek()).toBe(items[0]!.r);
    expect(q.peek()).toBe(items[0]!.r);
    expect(q.shift()).toBe(items[0]!.r);
    expect(q.shift()).toBe(items[1]!.r);
    expect(q.size).toBe(1);
    expect(q.shift()).toBe(items[2]!.r);
    expect(q.shift()).toBeUndefined();
    expect(q.peek()).toBeUndefined();
    expect(q.size).toBe(0);
  });

  it('pending - ping (-2) and auth (-4) wait in side queues, out of the FIFO', () => {
    const q = new PendingQueue();
    const ping1 = req(-2, 11);
    const a = req(1);
    const auth1 = req(-4, 100);
    const ping2 = req(-2, 11);
    const auth2 = req(-4, 100);
    for (const x of [ping1, a, auth1, ping2, auth2]) q.push(x.r);
    expect(q.size).toBe(5);
    // The FIFO holds only the ordinary request.
    expect(q.peek()).toBe(a.r);
    expect(q.shiftSide(-2)).toBe(ping1.r);
    expect(q.shiftSide(-4)).toBe(auth1.r);
    expect(q.shiftSide(-4)).toBe(auth2.r);
    expect(q.shiftSide(-4)).toBeUndefined();
    expect(q.size).toBe(2);
    expect(q.shift()).toBe(a.r);
    expect(q.shift()).toBeUndefined();
    expect(q.shiftSide(-2)).toBe(ping2.r);
    expect(q.shiftSide(-2)).toBeUndefined();
    expect(q.size).toBe(0);
  });

  it('pending - shiftSide of a xid with no side queue returns undefined', () => {
    const q = new PendingQueue();
    q.push(req(1).r);
    expect(q.shiftSide(-2)).toBeUndefined();
    expect(q.shiftSide(1)).toBeUndefined();
    expect(q.size).toBe(1);
  });
});

describe('pending - failAll', () => {
  it('pending - failAll settles every request exactly once with its error, FIFO and side queues alike', () => {
    const q = new PendingQueue();
    const all = [req(1), req(-2, 11), req(2), req(-4, 100), req(3)];
    for (const x of all) q.push(x.r);
    // One already answered: it must not be settled again.
    const first = q.shift();
    expect(first).toBe(all[0]!.r);
    const errs = new Map<number, Error>();
    q.failAll((r) => {
      const e = new Error(`fail ${r.xid}`);
      errs.set(r.xid, e);
      return e;
    });
    expect(all[0]!.settled).toEqual([]);
    for (const x of all.slice(1)) {
      expect(x.settled).toHaveLength(1);
      expect(x.settled[0]?.err).toBe(errs.get(x.r.xid));
    }
    expect(q.size).toBe(0);
    expect(q.peek()).toBeUndefined();
    expect(q.shiftSide(-2)).toBeUndefined();
    // A second failAll finds nothing.
    q.failAll(() => new Error('again'));
    for (const x of all.slice(1)) expect(x.settled).toHaveLength(1);
  });

  it('pending - failAll settles the FIFO in order', () => {
    const q = new PendingQueue();
    const order: number[] = [];
    for (let xid = 1; xid <= 5; xid++) q.push({ xid, type: 4, read: undefined, sentAt: 0, resolve: () => order.push(xid), reject: () => order.push(xid) });
    q.shift();
    q.failAll(() => new Error('x'));
    expect(order).toEqual([2, 3, 4, 5]);
  });

  it('pending - a request pushed while failAll settles is kept for later, not lost nor settled twice', () => {
    const q = new PendingQueue();
    const late = req(9);
    const a: PendingRequest = { xid: 1, type: 4, read: undefined, sentAt: 0, resolve: () => q.push(late.r), reject: () => q.push(late.r) };
    q.push(a);
    q.push(req(2).r);
    q.failAll(() => new Error('x'));
    expect(late.settled).toEqual([]);
    expect(q.size).toBe(1);
    expect(q.shift()).toBe(late.r);
  });

  it('pending - the queue works normally after failAll', () => {
    const q = new PendingQueue();
    q.push(req(1).r);
    q.failAll(() => new Error('x'));
    const b = req(2);
    q.push(b.r);
    expect(q.peek()).toBe(b.r);
    expect(q.shift()).toBe(b.r);
    expect(q.size).toBe(0);
  });
});

describe('pending - compaction with large queues', () => {
  it('pending - order and size survive compaction with more than 10,000 entries', () => {
    const q = new PendingQueue();
    const model: number[] = [];
    let nextXid = 1;
    const push = (n: number) => {
      for (let i = 0; i < n; i++) {
        const xid = nextXid++;
        q.push({ xid, type: 4, read: undefined, sentAt: 0, resolve: () => {}, reject: () => {} });
        model.push(xid);
      }
    };
    const shift = (n: number) => {
      for (let i = 0; i < n; i++) {
        const want = model.shift();
        const peeked = q.peek();
        const got = q.shift();
        // Plain checks: expect() per entry would dominate the run time.
        if (peeked !== got || got?.xid !== want) throw new Error(`shift ${i}: peeked ${peeked?.xid}, got ${got?.xid}, want ${want}`);
      }
      expect(q.size).toBe(model.length);
    };
    push(12_000);
    // Past the point where the consumed head is over half the array (compaction).
    shift(7_000);
    push(5_000);
    shift(9_000);
    push(20_000);
    // A pseudo-random interleaving (fixed seed) of pushes and shifts.
    let seed = 12345;
    const rand = (n: number) => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff), seed % n);
    for (let round = 0; round < 200; round++) {
      push(rand(300));
      shift(Math.min(model.length, rand(400)));
    }
    expect(q.size).toBe(model.length);
    shift(model.length);
    expect(q.shift()).toBeUndefined();
    expect(q.size).toBe(0);
  });

  it('pending - failAll after compaction settles exactly the outstanding requests', () => {
    const q = new PendingQueue();
    const settled = new Map<number, number>();
    for (let xid = 1; xid <= 15_000; xid++) {
      q.push({ xid, type: 4, read: undefined, sentAt: 0, resolve: () => {}, reject: () => settled.set(xid, (settled.get(xid) ?? 0) + 1) });
    }
    for (let i = 0; i < 9_000; i++) q.shift();
    q.failAll(() => new Error('lost'));
    expect(settled.size).toBe(6_000);
    expect(Math.min(...settled.keys())).toBe(9_001);
    expect(Math.max(...settled.keys())).toBe(15_000);
    expect([...settled.values()].every((n) => n === 1)).toBe(true);
    expect(q.size).toBe(0);
  });
});

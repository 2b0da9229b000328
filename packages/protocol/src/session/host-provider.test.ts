import { describe, expect, it } from 'vitest';
import type { HostAddress } from './hosts.js';
import { planServerList } from './host-provider.js';

const h = (n: number): HostAddress => ({ host: '10.0.0.1', port: 2180 + n });
const list = (...ns: number[]) => ns.map(h);
const key = (a: HostAddress) => a.port - 2180;

/** A seeded Park-Miller generator in [0, 1). */
function seeded(seed: number): () => number {
  let s = seed;
  return () => (s = (s * 16807) % 2147483647) / 2147483647;
}

/**
 * `perServer` clients on each server of `before`, all told about `after`: the server each ends
 * on (the first of its order when it moves, else its own), counted per server.
 */
function simulate(before: HostAddress[], after: HostAddress[], perServer: number, plan = planServerList): { counts: Map<number, number>; moved: number } {
  const random = seeded(42);
  const counts = new Map<number, number>(after.map((a) => [key(a), 0]));
  let moved = 0;
  for (const current of before) {
    for (let i = 0; i < perServer; i++) {
      const p = plan(before, after, current, random);
      const target = p.move ? (p.order[0] as HostAddress) : current;
      if (p.move) moved++;
      counts.set(key(target), (counts.get(key(target)) ?? 0) + 1);
    }
  }
  return { counts, moved };
}

/** Every server within `tolerance` of the mean. */
function even(counts: Map<number, number>, tolerance = 0.05): boolean {
  const values = [...counts.values()];
  const mean = values.reduce((a, b) => a + b, 0) / values.length;
  return values.every((v) => Math.abs(v - mean) <= mean * tolerance);
}

/** A naive rule for the negative control: move only when our server is gone, to any server. */
const naive: typeof planServerList = (_previous, next, current, random = Math.random) => {
  const stays = next.some((n) => current && n.port === current.port);
  const order = [next[Math.floor(random() * next.length)] as HostAddress];
  return { hosts: next.slice(), move: !stays, order: stays ? [] : order, nextIndex: 0 };
};

describe('host provider - rebalancing (Java StaticHostProvider rule)', () => {
  it('3 -> 5: 2/5 of the clients move, only to the new servers, and all five end even', () => {
    const { counts, moved } = simulate(list(1, 2, 3), list(1, 2, 3, 4, 5), 10_000);
    expect(even(counts)).toBe(true);
    expect(moved / 30_000).toBeCloseTo(0.4, 1);
  });

  it('5 -> 3 (two removed): only the removed servers’ clients move, and the three end even', () => {
    const { counts, moved } = simulate(list(1, 2, 3, 4, 5), list(1, 2, 3), 10_000);
    expect(moved).toBe(20_000);
    expect(even(counts)).toBe(true);
  });

  it('5 -> 5 with two replaced, and 3 -> 2 new servers: even', () => {
    expect(even(simulate(list(1, 2, 3, 4, 5), list(3, 4, 5, 6, 7), 10_000).counts)).toBe(true);
    const off = simulate(list(1, 2, 3), list(4, 5), 10_000);
    expect(off.moved).toBe(30_000);
    expect(even(off.counts)).toBe(true);
  });

  it('5 -> 4 with one replaced: the removed servers’ clients split between old and new servers', () => {
    // Old servers 2..4 must each grow from 10000 to 12500, the new one from 0 to 12500.
    expect(even(simulate(list(1, 2, 3, 4, 5), list(2, 3, 4, 6), 10_000).counts)).toBe(true);
  });

  it('negative control: moving only off removed servers leaves the new ones empty (the check fails)', () => {
    const { counts } = simulate(list(1, 2, 3), list(1, 2, 3, 4, 5), 10_000, naive);
    expect(counts.get(4)).toBe(0);
    expect(even(counts)).toBe(false);
  });

  it('a client that stays dials the server after its own next; the list is the new one, shuffled', () => {
    for (let seed = 1; seed < 50; seed++) {
      const p = planServerList(list(1, 2, 3), list(1, 2), h(2), seeded(seed));
      expect(p.move).toBe(false);
      expect(p.order).toEqual([]);
      expect(p.hosts.map(key).sort()).toEqual([1, 2]);
      const mine = p.hosts.findIndex((x) => key(x) === 2);
      expect(p.nextIndex).toBe((mine + 1) % 2);
    }
  });

  it('a client that moves tries every server of the new list once, new ones first when growing', () => {
    const p = planServerList(list(1, 2), list(1, 2, 3, 4), h(9), seeded(3));
    expect(p.move).toBe(true);
    expect(p.order.map(key).slice(0, 2).sort()).toEqual([3, 4]);
    expect(p.order.map(key).sort()).toEqual([1, 2, 3, 4]);
  });

  it('before any connection the first previous server counts as the current one', () => {
    expect(planServerList(list(1, 2), list(1, 2), undefined, seeded(1)).move).toBe(false);
    expect(planServerList(list(1, 2), list(3), undefined, seeded(1)).move).toBe(true);
  });
});

/**
 * The register linearizability checker (linearizability.ts) on hand-made histories: it accepts
 * what some order explains (concurrent operations either way, a write of unknown outcome that may
 * or may not have happened) and rejects what none does: a stale read, a value never written, two
 * readers seeing two writes in opposite orders, a read of a failed write's value before... The
 * register workload (register.test.ts) relies on both directions.
 */
import { describe, expect, it } from 'vitest';
import { checkRegisters, staleReads, type RegisterOp } from './linearizability.js';

const t = (ms: number) => BigInt(Math.round(ms * 1e6));
const w = (value: string, call: number, ret: number | undefined, key = 'k'): RegisterOp => ({ key, kind: 'write', value, call: t(call), ret: ret === undefined ? undefined : t(ret) });
const r = (value: string | null, call: number, ret: number, key = 'k'): RegisterOp => ({ key, kind: 'read', value, call: t(call), ret: t(ret) });

describe('faults - register linearizability checker', () => {
  it('accepts sequential histories and concurrent ones some order explains', () => {
    expect(checkRegisters([r(null, 0, 1), w('a', 2, 3), r('a', 4, 5), w('b', 6, 7), r('b', 8, 9)]).ok).toBe(true);
    // A read concurrent with a write may see either value; two concurrent writes in either order.
    expect(checkRegisters([w('a', 0, 1), w('b', 2, 6), r('a', 3, 4), r('b', 5, 7)]).ok).toBe(true);
    expect(checkRegisters([w('a', 0, 10), w('b', 1, 9), r('a', 11, 12)]).ok).toBe(true);
    expect(checkRegisters([w('a', 0, 10), w('b', 1, 9), r('b', 11, 12)]).ok).toBe(true);
  });

  it('a write of unknown outcome may take effect late, or never', () => {
    expect(checkRegisters([w('a', 0, 1), w('x', 2, undefined), r('a', 3, 4), r('x', 20, 21)]).ok).toBe(true);
    expect(checkRegisters([w('a', 0, 1), w('x', 2, undefined), r('a', 3, 4), r('a', 20, 21)]).ok).toBe(true);
  });

  it('rejects a stale read: the old value after a write completed before the read began', () => {
    const v = checkRegisters([w('a', 0, 1), w('b', 2, 3), r('a', 4, 5)]);
    expect(v.ok).toBe(false);
    expect(v.violations.map((k) => k.key)).toEqual(['k']);
    expect(v.violations[0]!.witness?.length).toBeGreaterThan(0);
    expect(staleReads([w('a', 0, 1), w('b', 2, 3), r('a', 4, 5)])).toBe(1);
  });

  it('rejects the initial value read after a completed write, and a value nobody wrote', () => {
    expect(checkRegisters([w('a', 0, 1), r(null, 2, 3)]).ok).toBe(false);
    expect(checkRegisters([w('a', 0, 1), r('zz', 2, 3)]).ok).toBe(false);
  });

  it('rejects a new-old inversion: one reader sees b, a later reader sees a again', () => {
    // Both writes overlap both reads' start, so each read alone is fine; together no order fits.
    const h = [w('a', 0, 1), w('b', 2, 10), r('b', 3, 4), r('a', 5, 6)];
    expect(checkRegisters(h).ok).toBe(false);
    expect(staleReads(h)).toBe(0); // the simple stale count misses it: the checker does not
  });

  it('checks each key on its own: a violation on one key is reported for that key alone', () => {
    const v = checkRegisters([w('a', 0, 1, 'x'), r('a', 2, 3, 'x'), w('a', 0, 1, 'y'), w('b', 2, 3, 'y'), r('a', 4, 5, 'y')]);
    expect(v.keys.map((k) => [k.key, k.linearizable])).toEqual([
      ['x', true],
      ['y', false],
    ]);
  });

  it('a longer history of many concurrent clients: a valid one passes, the same with one stale read fails', () => {
    // Four writers, each write overlapping its neighbours; readers read the newest completed value.
    const ops: RegisterOp[] = [];
    for (let i = 0; i < 400; i++) ops.push(w(`v${i}`, i * 10, i * 10 + 15));
    for (let i = 1; i < 400; i++) ops.push(r(`v${i}`, i * 10 + 16, i * 10 + 18));
    expect(checkRegisters(ops).ok).toBe(true);
    ops.push(r('v100', 3000, 3001));
    expect(checkRegisters(ops).ok).toBe(false);
  });
});

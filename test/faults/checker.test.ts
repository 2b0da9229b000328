import { describe, expect, it } from 'vitest';
import { checkFenced, checkHistory, interleavedWriters, type HistoryEvent } from './checker.js';

const ms = (n: number) => BigInt(Math.round(n * 1e6));

describe('faults - history checker', () => {
  it('accepts a clean hand-over chain with growing tokens', () => {
    const h: HistoryEvent[] = [
      { kind: 'acquired', who: 'a', t: ms(0), token: 10n },
      { kind: 'released', who: 'a', t: ms(5) },
      { kind: 'acquired', who: 'b', t: ms(6), token: 12n },
      { kind: 'released', who: 'b', t: ms(9) },
    ];
    expect(checkHistory(h)).toEqual({ acquisitions: 2, violations: [], longestLostDetectionMs: 0 });
  });

  it('catches overlapping holders (a participant that skipped the lock)', () => {
    const h: HistoryEvent[] = [
      { kind: 'acquired', who: 'a', t: ms(0), token: 10n },
      { kind: 'acquired', who: 'cheat', t: ms(2), token: 11n },
      { kind: 'released', who: 'a', t: ms(5) },
      { kind: 'released', who: 'cheat', t: ms(6) },
    ];
    const v = checkHistory(h);
    expect(v.violations).toHaveLength(1);
    expect(v.violations[0]).toMatch(/a \(token 10\) and cheat \(token 11\) held the lock together for 3\.0 ms/);
  });

  it('catches a fencing token that does not grow', () => {
    const h: HistoryEvent[] = [
      { kind: 'acquired', who: 'a', t: ms(0), token: 10n },
      { kind: 'released', who: 'a', t: ms(1) },
      { kind: 'acquired', who: 'b', t: ms(2), token: 9n },
      { kind: 'released', who: 'b', t: ms(3) },
    ];
    expect(checkHistory(h).violations).toEqual(['fencing token did not grow: a had 10, then b got 9']);
  });

  it('lets readers share but not overlap a writer', () => {
    const h: HistoryEvent[] = [
      { kind: 'acquired', who: 'r1', t: ms(0), token: 1n, mode: 'read' },
      { kind: 'acquired', who: 'r2', t: ms(1), token: 2n, mode: 'read' },
      { kind: 'acquired', who: 'w', t: ms(2), token: 3n, mode: 'write' },
      { kind: 'released', who: 'r1', t: ms(3) },
      { kind: 'released', who: 'r2', t: ms(4) },
      { kind: 'released', who: 'w', t: ms(5) },
    ];
    expect(checkHistory(h).violations).toHaveLength(2);
  });

  it('treats a killed holder as gone, and measures the detection window of a paused one', () => {
    const killed: HistoryEvent[] = [
      { kind: 'acquired', who: 'a', t: ms(0), token: 1n },
      { kind: 'killed', who: 'a', t: ms(1) },
      { kind: 'acquired', who: 'b', t: ms(3000), token: 2n },
      { kind: 'released', who: 'b', t: ms(3001) },
    ];
    expect(checkHistory(killed).violations).toEqual([]);
    const paused: HistoryEvent[] = [
      { kind: 'acquired', who: 'a', t: ms(0), token: 1n },
      { kind: 'acquired', who: 'b', t: ms(3000), token: 2n },
      { kind: 'lost', who: 'a', t: ms(5200) },
      { kind: 'released', who: 'a', t: ms(5201) },
      { kind: 'released', who: 'b', t: ms(6000) },
    ];
    const v = checkHistory(paused);
    expect(v.violations).toEqual([]);
    expect(v.longestLostDetectionMs).toBeCloseTo(2200, 0);
  });

  it('checks a fenced resource and counts interleaved writers on an unfenced one', () => {
    const writes = [
      { who: 'b', t: ms(1), token: 5n, accepted: true },
      { who: 'a', t: ms(2), token: 4n, accepted: true },
      { who: 'b', t: ms(3), token: 5n, accepted: true },
    ];
    expect(checkFenced(writes)).toEqual(['accepted a stale write from a with token 4 after token 5']);
    expect(checkFenced(writes.map((w) => ({ ...w, accepted: w.token >= 5n })))).toEqual([]);
    expect(interleavedWriters(writes)).toBe(1);
  });
});

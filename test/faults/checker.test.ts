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
    expect(checkHistory(h)).toEqual({ acquisitions: 2, violations: [], longestLostDetectionMs: 0, pausedOverlaps: 0, errors: 0 });
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

  it('treats a killed holder as gone once its session could have expired', () => {
    const killed: HistoryEvent[] = [
      { kind: 'acquired', who: 'a', t: ms(0), token: 1n },
      { kind: 'killed', who: 'a', t: ms(1) },
      { kind: 'acquired', who: 'b', t: ms(3000), token: 2n },
      { kind: 'released', who: 'b', t: ms(3001) },
    ];
    expect(checkHistory(killed, { sessionTimeoutMs: 2000 })).toEqual({ acquisitions: 2, violations: [], longestLostDetectionMs: 0, pausedOverlaps: 0, errors: 0 });
  });

  it('fails a hand-over sooner after a SIGKILL than the session could expire', () => {
    const early: HistoryEvent[] = [
      { kind: 'acquired', who: 'a', t: ms(0), token: 1n },
      { kind: 'killed', who: 'a', t: ms(1) },
      { kind: 'acquired', who: 'b', t: ms(101), token: 2n },
      { kind: 'released', who: 'b', t: ms(102) },
    ];
    expect(checkHistory(early, { sessionTimeoutMs: 2000 }).violations).toEqual([
      'b (token 2) acquired 100.0 ms after a (token 1) was killed holding the lock, before its session (timeout 2000 ms) could expire',
    ]);
    // Acquired while the victim was still running (before the kill): a plain overlap.
    const before: HistoryEvent[] = [
      { kind: 'acquired', who: 'a', t: ms(0), token: 1n },
      { kind: 'acquired', who: 'b', t: ms(5), token: 2n },
      { kind: 'killed', who: 'a', t: ms(6) },
      { kind: 'released', who: 'b', t: ms(9) },
    ];
    expect(checkHistory(before, { sessionTimeoutMs: 2000 }).violations).toEqual([
      "a (token 1) and b (token 2) held the lock together for 1.0 ms, and a's lease signal never aborted",
    ]);
  });

  it('fails an overlap whose old holder learned of the loss only after the next acquire (a late signal)', () => {
    const late: HistoryEvent[] = [
      { kind: 'acquired', who: 'a', t: ms(0), token: 1n },
      { kind: 'acquired', who: 'b', t: ms(3000), token: 2n },
      { kind: 'lost', who: 'a', t: ms(3040) },
      { kind: 'released', who: 'a', t: ms(3050) },
      { kind: 'released', who: 'b', t: ms(4000) },
    ];
    const v = checkHistory(late);
    expect(v.violations).toEqual(["a (token 1) and b (token 2) held the lock together for 50.0 ms, and a's lease signal aborted only 40.0 ms later"]);
    expect(v.pausedOverlaps).toBe(0);
    // The same overlap with the signal aborted first is fine: a knew before b acquired.
    const early = late.map((e) => (e.kind === 'lost' ? { ...e, t: ms(2990) } : e));
    expect(checkHistory(early).violations).toEqual([]);
  });

  it('excuses an overlap with a paused old holder only when the pause is logged and covers the new acquire', () => {
    const overlap: HistoryEvent[] = [
      { kind: 'acquired', who: 'a', t: ms(0), token: 1n },
      { kind: 'acquired', who: 'b', t: ms(3000), token: 2n },
      { kind: 'lost', who: 'a', t: ms(5200) },
      { kind: 'released', who: 'a', t: ms(5201) },
      { kind: 'released', who: 'b', t: ms(6000) },
    ];
    // No pause logged: two holders, a violation.
    expect(checkHistory(overlap).violations).toHaveLength(1);
    // A pause that ended before b acquired excuses nothing.
    const over: HistoryEvent = { kind: 'paused', who: 'a', t: ms(10), from: ms(10), to: ms(2990) };
    expect(checkHistory([...overlap, over]).violations).toHaveLength(1);
    // Someone else's pause neither.
    expect(checkHistory([...overlap, { kind: 'paused', who: 'b', t: ms(10), from: ms(10), to: ms(5100) }]).violations).toHaveLength(1);
    // a paused across b's acquire: excused, and the window until a's signal is reported.
    const v = checkHistory([...overlap, { kind: 'paused', who: 'a', t: ms(10), from: ms(10), to: ms(5100) }]);
    expect(v.violations).toEqual([]);
    expect(v.pausedOverlaps).toBe(1);
    expect(v.longestLostDetectionMs).toBeCloseTo(2200, 0);
  });

  it('counts error events', () => {
    const h: HistoryEvent[] = [
      { kind: 'error', who: 'a', t: ms(0), message: 'ConnectionLoss' },
      { kind: 'error', who: 'b', t: ms(1), message: 'timed out' },
    ];
    expect(checkHistory(h)).toMatchObject({ acquisitions: 0, violations: [], errors: 2 });
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

import { describe, expect, it } from 'vitest';
import { checkCapacityWrites, checkFenced, checkHistory, interleavedWriters, peakHolders, type HistoryEvent } from './checker.js';

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

  // Leader elections (LeaderLatch, LeaderSelector) are checked like a lock: one acting leader, a
  // term from `acquired` (leadership came) to `released` (given up), the term's token growing.
  it('fails two leaders whose terms overlap, and a new leader before the old one lost its term (a late signal)', () => {
    const rotation: HistoryEvent[] = [
      { kind: 'acquired', who: 'latch0', t: ms(0), token: 100n },
      { kind: 'released', who: 'latch0', t: ms(10) },
      { kind: 'acquired', who: 'latch1', t: ms(11), token: 101n },
      { kind: 'released', who: 'latch1', t: ms(20) },
      { kind: 'acquired', who: 'latch0', t: ms(21), token: 102n },
      { kind: 'released', who: 'latch0', t: ms(30) },
    ];
    expect(checkHistory(rotation).violations).toEqual([]);
    const twoLeaders: HistoryEvent[] = [
      { kind: 'acquired', who: 'latch0', t: ms(0), token: 100n },
      { kind: 'acquired', who: 'latch1', t: ms(4), token: 101n },
      { kind: 'released', who: 'latch0', t: ms(10) },
      { kind: 'released', who: 'latch1', t: ms(20) },
    ];
    expect(checkHistory(twoLeaders).violations).toEqual(["latch0 (token 100) and latch1 (token 101) held the lock together for 6.0 ms, and latch0's lease signal never aborted"]);
    // The old leader's term was lost (partitioned), but it learned only after the next leader acted.
    const late: HistoryEvent[] = [
      { kind: 'acquired', who: 'sel0', t: ms(0), token: 7n },
      { kind: 'acquired', who: 'sel1', t: ms(2500), token: 9n },
      { kind: 'lost', who: 'sel0', t: ms(2501) },
      { kind: 'released', who: 'sel0', t: ms(2502) },
      { kind: 'released', who: 'sel1', t: ms(2600) },
    ];
    expect(checkHistory(late).violations).toEqual(["sel0 (token 7) and sel1 (token 9) held the lock together for 2.0 ms, and sel0's lease signal aborted only 1.0 ms later"]);
    expect(checkHistory(late.map((e) => (e.kind === 'lost' ? { ...e, t: ms(2400) } : e))).violations).toEqual([]);
  });

  describe('capacity (a semaphore with N permits)', () => {
    /** Holds [from, to) of `who` with `token`, in ms. */
    const hold = (who: string, token: bigint, from: number, to: number): HistoryEvent[] => [
      { kind: 'acquired', who, t: ms(from), token },
      { kind: 'released', who, t: ms(to) },
    ];

    it('accepts N holders at once, with tokens that do not grow from one holder to the next', () => {
      // s1 holds the oldest token throughout while newer holders come and go: no order across permits.
      const h = [...hold('s1', 10n, 0, 100), ...hold('s2', 12n, 5, 40), ...hold('s3', 13n, 10, 50), ...hold('s2', 15n, 41, 90), ...hold('s3', 16n, 51, 95)];
      expect(checkHistory(h, { capacity: 3 })).toEqual({ acquisitions: 5, violations: [], longestLostDetectionMs: 0, pausedOverlaps: 0, errors: 0 });
      // Against one permit the same history is full of overlaps.
      expect(checkHistory(h, { capacity: 1 }).violations.length).toBeGreaterThan(0);
    });

    it('fails N+1 holders at once', () => {
      const h = [...hold('s1', 10n, 0, 100), ...hold('s2', 11n, 5, 40), ...hold('s3', 12n, 10, 50), ...hold('s4', 13n, 20, 30)];
      expect(checkHistory(h, { capacity: 3 }).violations).toEqual([
        "s4 (token 13) acquired while 3 others held: 4 holders at once, over the capacity of 3: s1 (token 10; s1's lease signal never aborted), s2 (token 11; s2's lease signal never aborted), s3 (token 12; s3's lease signal never aborted)",
      ]);
      expect(checkHistory(h, { capacity: 4 }).violations).toEqual([]);
    });

    it('fails a late signal: the holder learned it lost its permit only after the acquire that needed it', () => {
      const h: HistoryEvent[] = [...hold('s1', 10n, 0, 100), ...hold('s2', 11n, 5, 100), { kind: 'acquired', who: 's3', t: ms(50), token: 12n }, { kind: 'lost', who: 's1', t: ms(53) }, { kind: 'released', who: 's3', t: ms(60) }];
      expect(checkHistory(h, { capacity: 2 }).violations).toEqual([
        "s3 (token 12) acquired while 2 others held: 3 holders at once, over the capacity of 2: s1 (token 10; s1's lease signal aborted only 3.0 ms later), s2 (token 11; s2's lease signal never aborted)",
      ]);
      // The signal first: s1 knew, and its permit was free.
      expect(checkHistory(h.map((e) => (e.kind === 'lost' ? { ...e, t: ms(49) } : e)), { capacity: 2 }).violations).toEqual([]);
    });

    it('excuses an over-capacity acquire only when the extra holder was paused, and reports the window', () => {
      const h: HistoryEvent[] = [...hold('s1', 10n, 0, 3000), ...hold('s2', 11n, 5, 4000), ...hold('s3', 12n, 2500, 3500), { kind: 'lost', who: 's1', t: ms(2900) }];
      expect(checkHistory(h, { capacity: 2 }).violations).toHaveLength(1);
      const v = checkHistory([...h, { kind: 'paused', who: 's1', t: ms(100), from: ms(100), to: ms(2800) }], { capacity: 2 });
      expect(v.violations).toEqual([]);
      expect(v.pausedOverlaps).toBe(1);
      expect(v.longestLostDetectionMs).toBeCloseTo(400, 0);
      // A free permit needs no excuse: s1 paused with only one other holder is no overlap at all.
      const room = checkHistory([...hold('s1', 10n, 0, 3000), ...hold('s3', 12n, 2500, 3500), { kind: 'paused', who: 's1', t: ms(100), from: ms(100), to: ms(2800) }], { capacity: 2 });
      expect(room).toMatchObject({ violations: [], pausedOverlaps: 0 });
    });

    it('counts a killed holder until its session could have expired', () => {
      const h: HistoryEvent[] = [
        ...hold('s1', 10n, 0, 5000),
        { kind: 'acquired', who: 's2', t: ms(10), token: 11n },
        { kind: 'killed', who: 's2', t: ms(20) },
        ...hold('s3', 12n, 120, 200),
        ...hold('s4', 13n, 1500, 1600),
      ];
      expect(checkHistory(h, { capacity: 2, sessionTimeoutMs: 2000 }).violations).toEqual([
        "s3 (token 12) acquired while 2 others held: 3 holders at once, over the capacity of 2: s1 (token 10; s1's lease signal never aborted), s2 (token 11; killed 100.0 ms before, its session could not have expired)",
      ]);
      expect(checkHistory(h, { capacity: 3, sessionTimeoutMs: 2000 }).violations).toEqual([]);
    });

    it('measures the most holders at once (a run must reach its permits)', () => {
      expect(peakHolders([...hold('s1', 1n, 0, 10), ...hold('s2', 2n, 5, 15), ...hold('s3', 3n, 11, 20)])).toBe(2);
      expect(peakHolders([...hold('s1', 1n, 0, 10), ...hold('s2', 2n, 10, 15)])).toBe(1);
    });

    it('fails a token held twice, and a participant whose tokens do not grow', () => {
      expect(checkHistory([...hold('s1', 10n, 0, 10), ...hold('s2', 10n, 5, 15)], { capacity: 2 }).violations).toEqual(['fencing token 10 held twice: by s1, then by s2']);
      expect(checkHistory([...hold('s1', 10n, 0, 10), ...hold('s1', 9n, 11, 15)], { capacity: 2 }).violations).toEqual(['fencing token did not grow: s1 had 10, then got 9']);
      expect(() => checkHistory([], { capacity: 0 })).toThrow(RangeError);
    });

    it('checks a shared resource by counting the tokens writing at once, not by the highest token', () => {
      const w = (who: string, token: bigint, t: number, accepted = true) => ({ who, t: ms(t), token, accepted });
      // The oldest permit's holder writes after newer ones: fine with 2 permits (checkFenced would call it stale).
      const fine = [w('s1', 10n, 0), w('s2', 12n, 5), w('s1', 10n, 10), w('s2', 12n, 15), w('s3', 14n, 16), w('s3', 14n, 20)];
      expect(checkCapacityWrites(fine, 2)).toEqual([]);
      expect(checkFenced(fine)).toHaveLength(1);
      // A stale holder's write accepted while two current ones write: three at once.
      const stale = [w('s2', 12n, 5), w('s3', 14n, 6), w('s1', 10n, 8), w('s2', 12n, 15), w('s3', 14n, 16)];
      expect(checkCapacityWrites(stale, 2)).toEqual(['accepted writes of 3 tokens at once, over the capacity of 2: s2 (token 12), s3 (token 14), s1 (token 10)']);
      // Refused, it is not counted.
      expect(checkCapacityWrites(stale.map((x) => ({ ...x, accepted: x.who !== 's1' })), 2)).toEqual([]);
    });
  });
});

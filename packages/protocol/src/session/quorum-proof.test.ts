import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { proofTiming, QuorumProof, type QuorumProofHost } from './quorum-proof.js';

/** A session as the proof sees it; writes are answered by the test (`answer`). */
class Host implements QuorumProofHost {
  t = 2000;
  up = true;
  heard = 0;
  readonly sent: Array<{ at: number; resolve: (at: number) => void; reject: (e: Error) => void }> = [];
  timeout(): number {
    return this.t;
  }
  connected(): boolean {
    return this.up;
  }
  lastHeard(): number {
    return this.heard;
  }
  write(): Promise<number> {
    const at = performance.now();
    return new Promise<number>((resolve, reject) => this.sent.push({ at, resolve, reject }));
  }
  /** Answers the oldest unanswered write (committed), dating `heard` by its send time. */
  async answer(): Promise<number> {
    const w = this.sent.shift();
    if (!w) throw new Error('no write outstanding');
    this.heard = Math.max(this.heard, w.at);
    w.resolve(w.at);
    await Promise.resolve();
    await Promise.resolve();
    return w.at;
  }
}

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
});
afterEach(() => {
  vi.useRealTimers();
});

describe('quorum proof - timing', () => {
  it('assumes a tick of T/2 unless told; confirms half a tick plus a margin later; writes every T/6 at most', () => {
    expect(proofTiming(2000)).toEqual({ confirmAfter: 600, every: 334 });
    expect(proofTiming(30_000, 2000)).toEqual({ confirmAfter: 1200, every: 5000 });
    // A stated tick above T/2 is impossible with the server's defaults: T/2 still bounds it.
    expect(proofTiming(2000, 5000)).toEqual(proofTiming(2000));
  });
});

describe('quorum proof - confirmation', () => {
  it('a committed write proves only what had been answered confirmAfter before it was sent, and samples land confirmAfter ahead of each write', async () => {
    const h = new Host();
    const p = new QuorumProof(h);
    const start = performance.now();
    p.noteHandshake(start);
    h.heard = start;
    p.hold();
    // T = 2000: confirmAfter 600, a write every 334 ms from 0; samples at 0 and on the grid
    // 334 - (600 mod 334) = 68, 402, 736, ... so the write at 668 confirms the sample at 68.
    vi.advanceTimersByTime(0);
    expect(h.sent.map((w) => w.at - start)).toEqual([0]);
    vi.advanceTimersByTime(10);
    await h.answer(); // heard = 0: nothing is confirmed (no sample is 600 ms older than 0)
    expect(p.proven).toBe(start);
    vi.advanceTimersByTime(60); // t = 70: the sample at 68 saw heard = 0
    h.heard = start + 69; // something sent at 69 is answered now: too late for that sample
    vi.advanceTimersByTime(264); // t = 334: second write
    vi.advanceTimersByTime(334); // t = 668: third write
    expect(h.sent.map((w) => w.at - start)).toEqual([334, 668]);
    await h.answer(); // the 334 write: confirms samples taken by -266: none
    expect(p.proven).toBe(start);
    await h.answer(); // the 668 write: confirms the samples at 0 and 68 (both heard = 0)
    expect(p.proven).toBe(start);
    vi.advanceTimersByTime(334); // t = 1002: the sample at 402 saw heard = 69 (the 334 write was answered only at 668)
    vi.advanceTimersByTime(334); // t = 1336
    while (h.sent.length > 1) await h.answer(); // the 1002 write confirms the sample at 402
    expect(p.proven - start).toBe(69);
    p.stop();
  });

  it('writes do not wait for each other: a slow round trip does not stretch the cadence (at most 4 in flight)', () => {
    const h = new Host();
    const p = new QuorumProof(h);
    p.noteHandshake(performance.now());
    p.hold();
    vi.advanceTimersByTime(334 * 3);
    expect(h.sent).toHaveLength(4);
    vi.advanceTimersByTime(334 * 3);
    expect(h.sent).toHaveLength(4);
    p.stop();
  });

  it('answers that keep coming do not move the proof when no write commits (a follower cut off from its leader)', () => {
    const h = new Host();
    const p = new QuorumProof(h);
    const start = performance.now();
    p.noteHandshake(start);
    p.hold();
    for (let i = 0; i < 30; i++) {
      vi.advanceTimersByTime(100);
      h.heard = performance.now(); // the follower answers pings...
    }
    expect(p.proven).toBe(start); // ...but no write commits
    p.stop();
  });

  it('nothing is written while nobody holds the proof or while disconnected, and the loop lingers after the last holder', async () => {
    const h = new Host();
    const p = new QuorumProof(h);
    p.noteHandshake(performance.now());
    vi.advanceTimersByTime(5000);
    expect(h.sent).toHaveLength(0);
    const release = p.hold();
    vi.advanceTimersByTime(0);
    expect(h.sent).toHaveLength(1);
    await h.answer();
    release();
    // Lingers (max(60 s, 10 T)): still writing half a minute later.
    vi.advanceTimersByTime(30_000);
    expect(h.sent.length).toBeGreaterThan(0);
    while (h.sent.length > 0) await h.answer();
    vi.advanceTimersByTime(40_000); // the linger is over
    while (h.sent.length > 0) await h.answer();
    vi.advanceTimersByTime(5000);
    expect(h.sent).toHaveLength(0);
    p.hold();
    h.up = false;
    p.onConnectionChange();
    vi.advanceTimersByTime(5000);
    expect(h.sent).toHaveLength(0);
    p.stop();
  });

  it('waitProven resolves once a write confirms something newer, and rejects when the session ends', async () => {
    const h = new Host();
    const p = new QuorumProof(h);
    const start = performance.now();
    p.noteHandshake(start);
    let done = false;
    const wait = p.waitProven(() => p.proven > start + 100, () => new Error('gone')).then(() => (done = true));
    for (let i = 0; i < 12 && !done; i++) {
      vi.advanceTimersByTime(i === 0 ? 0 : 167);
      while (h.sent.length > 0) await h.answer();
    }
    await wait;
    expect(p.proven).toBeGreaterThan(start + 100);
    const never = p.waitProven(() => false, () => new Error('session expired'));
    p.stop();
    await expect(never).rejects.toThrow('session expired');
  });
});

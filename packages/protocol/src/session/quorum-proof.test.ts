import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { proofTiming, QuorumProof, type QuorumProofHost } from './quorum-proof.js';

/** A session as the proof sees it; writes are answered by the test (`answer`). */
class Host implements QuorumProofHost {
  t = 2000;
  up = true;
  heard = 0;
  readonly sent: Array<{ at: number; resolve: (at: number) => void; reject: (e: Error) => void }> = [];
  readonly unprovenAt: number[] = [];
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
  unproven(): void {
    this.unprovenAt.push(performance.now());
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
  it('a committed write proves only what was answered at least confirmAfter before it was sent', async () => {
    const h = new Host();
    const p = new QuorumProof(h);
    const start = performance.now();
    p.noteHandshake(start);
    h.heard = start;
    const release = p.hold();
    // The first write goes at once; it confirms nothing (no sample is old enough).
    vi.advanceTimersByTime(0);
    expect(h.sent).toHaveLength(1);
    vi.advanceTimersByTime(10);
    await h.answer();
    expect(p.proven).toBe(start);
    // The next writes, every 334 ms: the one sent at 334 confirms nothing answered before -266
    // (the only sample is from 10 ms); the one at 668 confirms the sample taken at 10 (value 0,
    // its write's send time), which is not newer than the handshake. The one at 1002 confirms
    // the sample taken after the 334 write was answered (value 334).
    const proofs: number[] = [];
    for (let i = 0; i < 3; i++) {
      vi.advanceTimersByTime(334);
      vi.advanceTimersByTime(10);
      await h.answer();
      proofs.push(p.proven - start);
    }
    expect(proofs).toEqual([0, 0, 334]);
    release();
    p.stop();
  });

  it('answers that keep coming do not move the proof when no write commits (a follower cut off from its leader)', async () => {
    const h = new Host();
    const p = new QuorumProof(h);
    const start = performance.now();
    p.noteHandshake(start);
    p.hold();
    // The follower answers pings (heard advances) but the write never commits.
    for (let i = 0; i < 10; i++) {
      vi.advanceTimersByTime(100);
      h.heard = performance.now();
    }
    expect(p.proven).toBe(start);
    // The proof is older than T - T/6 (1,667 ms) while connected: the host is told, once.
    vi.advanceTimersByTime(665);
    expect(h.unprovenAt).toEqual([]);
    vi.advanceTimersByTime(2);
    expect(h.unprovenAt).toEqual([start + 1667]);
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
    // Lingers (max(60 s, 10 T)): still writing a minute later.
    vi.advanceTimersByTime(30_000);
    expect(h.sent.length).toBeGreaterThan(0);
    while (h.sent.length > 0) await h.answer();
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
    const wait = p.waitProven(start + 100, () => new Error('gone')).then(() => (done = true));
    for (let i = 0; i < 8 && !done; i++) {
      vi.advanceTimersByTime(i === 0 ? 0 : 334);
      while (h.sent.length > 0) await h.answer();
    }
    await wait;
    expect(p.proven).toBeGreaterThan(start + 100);
    const never = p.waitProven(Infinity, () => new Error('session expired'));
    p.stop();
    await expect(never).rejects.toThrow('session expired');
  });
});

import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { proofTiming, QuorumProof, type QuorumProofHost } from './quorum-proof.js';

/** A session as the proof sees it; writes are answered by the test (`answer`). */
class Host implements QuorumProofHost {
  t = 2000;
  up = true;
  #heard: { sentAt: number; at: number } | undefined = { sentAt: 0, at: 0 };
  readonly sent: Array<{ at: number; resolve: (at: number) => void; reject: (e: Error) => void }> = [];
  timeout(): number {
    return this.t;
  }
  connected(): boolean {
    return this.up;
  }
  heard(): { sentAt: number; at: number } | undefined {
    return this.#heard;
  }
  /** The reply to a request sent at `sentAt` arrives now. */
  hear(sentAt: number): void {
    if (this.#heard === undefined || sentAt > this.#heard.sentAt) this.#heard = { sentAt, at: performance.now() };
  }
  write(): Promise<number> {
    const at = performance.now();
    return new Promise<number>((resolve, reject) => this.sent.push({ at, resolve, reject }));
  }
  /** Answers the oldest unanswered write (committed), dating `heard` by its send time. */
  async answer(): Promise<number> {
    const w = this.sent.shift();
    if (!w) throw new Error('no write outstanding');
    this.hear(w.at);
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
    h.hear(start);
    p.hold();
    // T = 2000: confirmAfter 600, a write every 334 ms from 0; samples at 0 and on the grid
    // 334 - (600 mod 334) = 68, 402, 736, ... A sample is dated by when its answer came.
    vi.advanceTimersByTime(0);
    expect(h.sent.map((w) => w.at - start)).toEqual([0]);
    vi.advanceTimersByTime(10);
    await h.answer(); // nothing is confirmed (no sample is 600 ms older than 0)
    expect(p.proven).toBe(start);
    vi.advanceTimersByTime(60); // t = 70: the sample at 68 saw the answer of 0 again (kept once)
    h.hear(start + 69); // something sent at 69 is answered now, at 70: too late for that sample
    vi.advanceTimersByTime(264); // t = 334: second write
    vi.advanceTimersByTime(334); // t = 668: third write
    expect(h.sent.map((w) => w.at - start)).toEqual([334, 668]);
    await h.answer(); // the 334 write: confirms samples taken by -266: none
    expect(p.proven).toBe(start);
    await h.answer(); // the 668 write: confirms the sample of the answer at 0
    expect(p.proven).toBe(start);
    vi.advanceTimersByTime(334); // t = 1002: the sample at 402 saw the answer of 69, come at 70 (the 334 write was answered only at 668)
    vi.advanceTimersByTime(334); // t = 1336
    while (h.sent.length > 1) await h.answer(); // the 1002 write confirms that answer (come at 70 <= 1002 - 600)
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
      h.hear(performance.now()); // the follower answers pings...
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

  it('answers are noted while connected without writing, so the first write of a hold proves at once; just after a reconnect, that write proves nothing', async () => {
    for (const reconnected of [false, true]) {
      const h = new Host();
      const p = new QuorumProof(h);
      const start = performance.now();
      p.noteHandshake(start);
      p.onConnectionChange();
      // 3 s of an idle session with a ping answered every 600 ms (sent 1 ms before its answer).
      for (let t = 100; t <= 3000; t += 100) {
        vi.advanceTimersByTime(100);
        if (t % 600 === 0) h.hear(performance.now() - 1);
      }
      expect(h.sent).toHaveLength(0); // nothing is written while nobody holds it
      if (reconnected) p.onConnectionChange(); // what was noted on the old connection is dropped
      p.hold();
      vi.advanceTimersByTime(0);
      expect(h.sent).toHaveLength(1);
      await h.answer();
      // The write at 3000 confirms the newest answer noted by 2400: the ping sent at 2399.
      if (!reconnected) expect(p.proven - start).toBe(2399);
      else expect(p.proven).toBe(start); // only the answer noted now, too young to confirm
      p.stop();
    }
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

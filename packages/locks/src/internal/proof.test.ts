import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { ZooKeeper } from '@zk/protocol';
import { StateStub } from '../testing/fake-client.js';
import { freshProof, proofIsFresh, watchProof } from './proof.js';

/** The part of a ZooKeeper the monitor reads: state, negotiated timeout, expiry deadline. */
class StubSession extends StateStub {
  readonly sessionTimeout: number = 600;
  /** Send time of the newest answered request (the stub's own clock is performance.now()). */
  heard = 0;
  /** The newest send time the quorum is known to have counted; Infinity: follows `heard`. */
  quorum = Infinity;
  /** Quorum proof holders. */
  holds = 0;
  get expiryDeadline(): number {
    return this.heard + this.sessionTimeout;
  }
  get quorumDeadline(): number {
    return Math.min(this.quorum, this.heard) + this.sessionTimeout;
  }
  holdQuorumProof(): () => void {
    this.holds++;
    return () => void this.holds--;
  }
}

const asZk = (s: StubSession) => s as unknown as ZooKeeper;

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
});
afterEach(() => {
  vi.useRealTimers();
});

describe('lease proof monitor (connected, proof growing old)', () => {
  it('tells its leases a sixth of the timeout before the expiry deadline, not before', () => {
    const s = new StubSession();
    s.heard = performance.now();
    const told: number[] = [];
    watchProof(asZk(s), () => told.push(performance.now() - s.heard));
    vi.advanceTimersByTime(499);
    expect(told).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(told).toEqual([500]);
  });

  it('a fresher proof moves the deadline: nothing told while answers keep coming', () => {
    const s = new StubSession();
    const start = performance.now();
    s.heard = start;
    const told: string[] = [];
    watchProof(asZk(s), (why) => told.push(why));
    for (let i = 1; i <= 10; i++) {
      vi.advanceTimersByTime(300);
      s.heard = start + i * 300; // a ping every 300 ms, answered at once
    }
    expect(told).toEqual([]);
    vi.advanceTimersByTime(500);
    expect(told).toHaveLength(1);
    expect(told[0]).toMatch(/while connected/);
  });

  it('leaves a suspended session to the lease (no call), and re-arms once connected again', () => {
    const s = new StubSession();
    s.heard = performance.now();
    const told: number[] = [];
    watchProof(asZk(s), () => told.push(performance.now()));
    s.to('suspended');
    vi.advanceTimersByTime(2000);
    expect(told).toEqual([]);
    s.heard = performance.now();
    s.to('connected');
    vi.advanceTimersByTime(499);
    expect(told).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(told).toHaveLength(1);
  });

  it('a follower cut off from its leader: answers keep coming but the quorum proof does not move, so the leases are told by the quorum deadline', () => {
    const s = new StubSession();
    const start = performance.now();
    s.heard = s.quorum = start;
    const told: number[] = [];
    watchProof(asZk(s), () => told.push(performance.now() - start));
    for (let i = 1; i <= 3; i++) {
      vi.advanceTimersByTime(150);
      s.heard = start + i * 150; // the follower answers every ping...
    }
    vi.advanceTimersByTime(49); // ...but no proof write commits
    expect(told).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(told).toEqual([500]);
  });

  it('holds the session\'s quorum proof while it has leases, and lets it go as the last one goes (nothing is proven for no lease)', () => {
    const s = new StubSession();
    s.heard = performance.now();
    const a = watchProof(asZk(s), () => {});
    const b = watchProof(asZk(s), () => {});
    expect(s.holds).toBe(1);
    a();
    expect(s.holds).toBe(1);
    b();
    expect(s.holds).toBe(0);
    const c = watchProof(asZk(s), () => {}); // a lease taken again holds it again
    expect(s.holds).toBe(1);
    c();
    expect(s.holds).toBe(0);
  });

  it("leaseProof 'off': no proof is held, and the leases are told by the expiry deadline alone", () => {
    const s = Object.assign(new StubSession(), { leaseProof: 'off' });
    s.heard = performance.now();
    s.quorum = -Infinity; // no proof at all: would tell at once were it read
    const told: number[] = [];
    const off = watchProof(asZk(s), () => told.push(performance.now()));
    expect(s.holds).toBe(0);
    expect(told).toHaveLength(0);
    vi.advanceTimersByTime(500);
    expect(told).toEqual([500]);
    off();
  });

  it('one timer, one state listener and one proof hold per session however many leases; the hold ends with the last lease, the timer and listener when the timer next fires with no lease', () => {
    const s = new StubSession();
    s.heard = performance.now();
    const offs = Array.from({ length: 100 }, () => watchProof(asZk(s), () => {}));
    expect(vi.getTimerCount()).toBe(1);
    expect(s.listeners.size).toBe(1);
    expect(s.holds).toBe(1);
    for (const off of offs) off();
    offs[0]!(); // twice: no effect
    // The timer and the listener are kept for a lease taken right after: it reuses them.
    expect(s.holds).toBe(0);
    expect(vi.getTimerCount()).toBe(1);
    const again = watchProof(asZk(s), () => {});
    expect(s.holds).toBe(1);
    expect(vi.getTimerCount()).toBe(1);
    expect(s.listeners.size).toBe(1);
    again();
    vi.runOnlyPendingTimers();
    expect(s.holds).toBe(0);
    expect(vi.getTimerCount()).toBe(0);
    expect(s.listeners.size).toBe(0);
  });

  it('with no timer to come (the proof ran out), the last lease to go retires the monitor and its proof hold at once', () => {
    const s = new StubSession();
    s.heard = performance.now();
    const told: string[] = [];
    const off = watchProof(asZk(s), (why) => told.push(why));
    vi.advanceTimersByTime(500); // no answer for 5/6 of the timeout: told, and no timer left
    expect(told).toHaveLength(1);
    expect(vi.getTimerCount()).toBe(0);
    expect(s.holds).toBe(1);
    off();
    expect(s.holds).toBe(0);
    expect(s.listeners.size).toBe(0);
  });

  it('a monitor left with no lease goes at the next state change too', () => {
    const s = new StubSession();
    s.heard = performance.now();
    watchProof(asZk(s), () => {})();
    expect(s.listeners.size).toBe(1);
    s.to('suspended');
    expect(s.listeners.size).toBe(0);
    expect(vi.getTimerCount()).toBe(0);
    expect(s.holds).toBe(0);
  });
});

describe('a lease is handed out only when its proof can be renewed in time (proofIsFresh, freshProof)', () => {
  /** A session at T = 10 s, the tick unknown (confirmAfter 3 s, allowance 500 ms). */
  class Fresh extends StubSession {
    override readonly sessionTimeout: number = 10_000;
    /** When a renewal begun as soon as it proves something newer has committed (what the client computes). */
    quorumRenewedBy = 0;
    readonly leaseProof = 'auto';
    waits: number[] = [];
    awaitQuorumDeadline(deadline: number): Promise<void> {
      this.waits.push(deadline - performance.now());
      this.quorum = deadline - this.sessionTimeout + 1; // the proof renewed at once
      this.quorumRenewedBy = performance.now() + 1000; // an answer newer than it came just now
      return Promise.resolve();
    }
  }

  it('a proof with 3.7 s to run and a quarter of T: fresh only if a request can prove something newer early enough to commit before the at-risk line (T/6 before the deadline)', () => {
    const s = new Fresh();
    const now = performance.now();
    s.heard = now; // answers keep coming: the expiry deadline is not what is short
    s.quorum = now - 6300; // deadline now + 3.7 s: more than T/4 (2.5 s), as before
    // The first answer newer than the proof came just now: a write can confirm it 3 s from now,
    // committed 3.5 s from now, after the at-risk line (now + 2.03 s). Not fresh.
    s.quorumRenewedBy = now + 3500;
    expect(proofIsFresh(asZk(s))).toBe(false);
    // A ping newer than the proof was answered 2 s ago: confirmable 1 s from now, committed by 1.5 s.
    s.quorumRenewedBy = now + 1500;
    expect(proofIsFresh(asZk(s))).toBe(true);
    // Less than a quarter of T left: never fresh, however soon a renewal could go.
    s.quorum = now - 7600;
    s.quorumRenewedBy = now + 500;
    expect(proofIsFresh(asZk(s))).toBe(false);
  });

  it('freshProof waits for a deadline that leaves a renewal room before the at-risk line, again until fresh; at once when fresh', async () => {
    const s = new Fresh();
    const now = performance.now();
    s.heard = now + 20_000;
    s.quorum = now - 6300;
    s.quorumRenewedBy = now + 3500;
    await freshProof(asZk(s), new AbortController().signal);
    // renewal committed by now + 3.5 s, plus T/6: a deadline past now + 5.17 s.
    expect(s.waits).toHaveLength(1);
    expect(s.waits[0]).toBeCloseTo(3000 + 500 + 10_000 / 6, 0);
    expect(proofIsFresh(asZk(s))).toBe(true);
    await freshProof(asZk(s), new AbortController().signal);
    expect(s.waits).toHaveLength(1);
  });
});

import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { HeardLog } from '../connection/heard-log.js';
import { InvalidArgumentError } from '../errors.js';
import { impossibleProof, proofTiming, QuorumProof, type LeaseProofMode, type QuorumProofHost } from './quorum-proof.js';

/** A session as the proof sees it: its requests are answered by the test (`answer`), in order. */
class Host implements QuorumProofHost {
  up = true;
  log: HeardLog;
  proof: QuorumProof | undefined;
  readonly sent: Array<{ at: number; kind: 'write' | 'sync'; resolve: () => void }> = [];
  constructor(public t = 2000) {
    this.log = new HeardLog(t);
  }
  timeout(): number {
    return this.t;
  }
  connected(): boolean {
    return this.up;
  }
  heardBy(t: number): number {
    return this.log.newestBy(t);
  }
  answeredAfter(sentAfter: number): number {
    return this.log.firstAnsweredAfter(sentAfter);
  }
  /** The reply to a request sent at `sentAt` arrives now. */
  hear(sentAt: number): void {
    this.log.note(sentAt, performance.now());
  }
  send(kind: 'write' | 'sync'): Promise<unknown> {
    const at = performance.now();
    return new Promise<void>((resolve) => this.sent.push({ at, kind, resolve }));
  }
  /** A write or sync of the session's own, sent now; answered by {@link answer} like the proof's. */
  own(kind: 'write' | 'sync'): void {
    void this.send(kind);
  }
  /** Answers the oldest outstanding request (committed), as the session does: noted, then reported. */
  answered = 0;
  async answer(): Promise<number> {
    this.answered++;
    const w = this.sent.shift();
    if (!w) throw new Error('no request outstanding');
    this.hear(w.at);
    this.proof?.committed(w.at, w.kind);
    w.resolve();
    await Promise.resolve();
    return w.at;
  }
  reconnect(): void {
    this.log = new HeardLog(this.t);
    this.sent.length = 0;
    this.proof?.onConnectionChange();
  }
}

function make(t = 2000, tick?: number, mode: LeaseProofMode = 'auto'): { h: Host; p: QuorumProof } {
  const h = new Host(t);
  const p = new QuorumProof(h, tick, mode);
  h.proof = p;
  return { h, p };
}

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
});
afterEach(() => {
  vi.useRealTimers();
});

describe('quorum proof - timing', () => {
  it("syncs where the known tick leaves room, writes otherwise; 'auto' syncs only where that touches the session no more often than the idle pings (T >= about 4.7 ticks)", () => {
    // T = 2 ticks of 1 s (the fault suites): writes every 706 ms, 0.35 T, each confirming the
    // answer to the one before (455 ms and two back at a slack of T/10; 334 before that).
    expect(proofTiming(2000, 'auto')).toMatchObject({ confirmAfter: 600, kind: 'write', every: 706 });
    // T = 10 s, tick 2 s: a sync proves at most 3.5 s before it was sent; one every 0.35 T, just
    // after the idle pings (T/3).
    expect(proofTiming(10_000, 'auto', 2000)).toEqual({ confirmAfter: 1200, syncLag: 3500, kind: 'sync', every: 3532, possible: true });
    expect(proofTiming(10_000, 'write', 2000)).toMatchObject({ kind: 'write', every: 3532 });
    expect(proofTiming(30_000, 'auto', 2000)).toMatchObject({ kind: 'sync', every: 10_596 });
    // T = 2 ticks: no room for a sync, even when asked for one.
    expect(proofTiming(4000, 'auto', 2000)).toMatchObject({ kind: 'write', every: 1412 });
    expect(proofTiming(4000, 'sync', 2000)).toMatchObject({ kind: 'write' });
    // T = 4 ticks (the bench's failover rows: T = 2 s, tick 500 ms): a sync fits only every
    // 0.27 T, more often than the pings (T/3), so 'auto' writes every 0.35 T; 'sync' still syncs.
    expect(proofTiming(2000, 'auto', 500)).toMatchObject({ kind: 'write', every: 706 });
    expect(proofTiming(2000, 'sync', 500)).toMatchObject({ kind: 'sync', every: 537 });
    expect(proofTiming(9000, 'auto', 2000)).toMatchObject({ kind: 'write' });
    expect(proofTiming(9500, 'auto', 2000)).toMatchObject({ kind: 'sync' });
    // The tick unknown: T/2 assumed, writes.
    expect(proofTiming(10_000, 'auto')).toMatchObject({ kind: 'write', every: 3532 });
    expect(proofTiming(10_000, 'off', 2000).kind).toBeUndefined();
    // A stated tick of more than T/2 (minSessionTimeout lowered): no period can keep the proof
    // young; the writes go at T/20, not in a loop.
    expect(proofTiming(2000, 'auto', 5000)).toMatchObject({ kind: 'write', every: 100 });
    for (const t of [1000, 2000, 4000, 6000, 10_000, 30_000, 60_000]) {
      for (const tick of [undefined, 100, 500, 1000, 2000, 3000]) {
        if (tick !== undefined && tick > t / 2) continue;
        const before = Math.ceil(Math.max(Math.ceil((tick ?? t / 2) / 2 + Math.max(25, (tick ?? t / 2) / 10)) / 2, t / 6));
        for (const mode of ['auto', 'write'] as const) {
          const timing = proofTiming(t, mode, tick);
          expect(timing.every, `T ${t} tick ${tick} ${mode}`).toBeGreaterThanOrEqual(before - 1);
        }
        // 'auto' touches the session no more often than the idle pings (T/3, at most 10 s).
        expect(proofTiming(t, 'auto', tick).every, `T ${t} tick ${tick} auto`).toBeGreaterThanOrEqual(Math.min(t / 3, 10_000));
      }
    }
  });

  it('held and idle, round trips of T/20: the proof never gets older than 5T/6 - T/13 (when leases call it at risk, less the slack), in each mode and timing', async () => {
    for (const [t, tick, mode] of [
      [2000, undefined, 'auto'],
      [2000, 250, 'sync'],
      [4000, 2000, 'auto'],
      [10_000, 2000, 'auto'],
      [10_000, 2000, 'write'],
      [10_000, undefined, 'auto'],
      [30_000, 2000, 'auto'],
    ] as const) {
      const { h, p } = make(t, tick, mode);
      p.noteHandshake(performance.now());
      h.hear(performance.now());
      p.hold();
      const rtt = Math.max(25, t / 20);
      const answerAt: number[] = [];
      let worst = 0;
      const end = performance.now() + 10 * t;
      while (performance.now() < end) {
        vi.advanceTimersByTime(5);
        while (h.sent.length > answerAt.length) answerAt.push(h.sent[answerAt.length]!.at + rtt);
        while (answerAt.length > 0 && answerAt[0]! <= performance.now()) {
          answerAt.shift();
          await h.answer();
        }
        worst = Math.max(worst, performance.now() - p.proven);
      }
      expect(worst, `T ${t} tick ${tick} ${mode}: ${p.timing.kind} every ${p.timing.every}`).toBeLessThanOrEqual((5 * t) / 6 - t / 13 + 10);
      p.stop();
    }
  });

  it('a tick too large for T leaves no period (possible false): holding or waiting fails at once with a typed error naming a timeout that would do', () => {
    // The default tick (T/2) and a told tick up to about T keep the proof possible.
    expect(proofTiming(2000, 'auto').possible).toBe(true);
    expect(proofTiming(2000, 'write', 1600).possible).toBe(true);
    expect(proofTiming(2000, 'off', 5000).possible).toBe(true);
    expect(proofTiming(2000, 'write', 2100).possible).toBe(false);
    expect(proofTiming(2000, 'sync', 2500).possible).toBe(false);
    const { p } = make(2000, 2500, 'auto');
    expect(() => p.assertPossible()).toThrow(InvalidArgumentError);
    const err = impossibleProof(2000, 2500);
    const wanted = Number(/at least (\d+) ms/.exec(err.message)?.[1]);
    expect(proofTiming(wanted, 'write', 2500).possible).toBe(true);
    expect(proofTiming(Math.floor(wanted / 1.05), 'write', 2500).possible).toBe(false);
    expect(make(2000, 1000, 'auto').p.assertPossible()).toBeUndefined();
  });
});

describe('quorum proof - evidence', () => {
  it('a committed write proves only what had been answered confirmAfter before it was sent', async () => {
    const { h, p } = make(2000);
    const start = performance.now();
    p.noteHandshake(start);
    h.hear(start); // answered at 0
    vi.advanceTimersByTime(300);
    h.hear(start + 299); // sent at 299, answered at 300
    vi.advanceTimersByTime(400);
    // t = 700: a write sent now confirms what was answered by 100: the request of 0 only.
    h.own('write');
    await h.answer();
    expect(p.proven).toBe(start);
    vi.advanceTimersByTime(300);
    h.own('write'); // t = 1000: by 400, the request of 299
    await h.answer();
    expect(p.proven - start).toBe(299);
    p.stop();
  });

  it('a sync proves the same, but never more than syncLag before it was sent; a failed or uncommitted request proves nothing', async () => {
    const { h, p } = make(10_000, 1000, 'sync'); // syncLag 1500 + 250
    const start = performance.now();
    p.noteHandshake(start);
    vi.advanceTimersByTime(100);
    h.hear(start + 99);
    vi.advanceTimersByTime(900);
    h.own('sync'); // t = 1000: confirms 99 at most by the answers, but at most 1000 - 1750 by the sync
    await h.answer();
    expect(p.proven).toBe(start);
    vi.advanceTimersByTime(3000);
    h.own('sync'); // t = 4000: the answers confirm 1000 (the sync's own), the lag caps at 2250
    await h.answer();
    expect(p.proven - start).toBe(1000);
    vi.advanceTimersByTime(3000);
    h.hear(performance.now() - 1); // pings answered, nothing committed: no proof
    vi.advanceTimersByTime(3000);
    expect(p.proven - start).toBe(1000);
    p.stop();
  });

  it("the session's own writes stand in for the proof's: none is sent while they come often enough", async () => {
    const { h, p } = make(10_000, 2000, 'write'); // every 3532
    p.noteHandshake(performance.now());
    p.hold();
    for (let i = 0; i < 20; i++) {
      vi.advanceTimersByTime(2000);
      h.own('write');
      await h.answer();
    }
    expect(h.sent).toHaveLength(0);
    expect(performance.now() - p.proven).toBeLessThan(5000);
    vi.advanceTimersByTime(p.timing.every); // the application stops writing: the proof's own write comes
    expect(h.sent).toHaveLength(1);
    p.stop();
  });

  it("in write mode the session's syncs do not stand in for the proof's writes (they prove a tick and a half less)", async () => {
    const { h, p } = make(10_000, 2000, 'write'); // every 3532
    p.noteHandshake(performance.now());
    p.hold();
    let writes = 0;
    for (let i = 0; i < 10; i++) {
      vi.advanceTimersByTime(1000);
      h.own('sync');
      while (h.sent.length > 0) {
        if (h.sent[0]!.kind === 'write') writes++;
        await h.answer();
      }
    }
    expect(writes).toBeGreaterThanOrEqual(2); // 10 s of syncs every second: the writes still came
    p.stop();
  });
});

describe('quorum proof - when it sends', () => {
  it('round trips of 2.5 times the allowance keep the cadence; with none answered, at most 4 out and no pile', async () => {
    const { h, p } = make(2000, 250, 'sync'); // a sync every 706 ms, confirmAfter 150, syncLag 425
    const start = performance.now();
    p.noteHandshake(start);
    p.hold();
    const answerAt: number[] = [];
    for (let i = 0; i < 20_000 / 5; i++) {
      vi.advanceTimersByTime(5);
      while (h.sent.length > answerAt.length) answerAt.push(h.sent[answerAt.length]!.at + 250);
      while (answerAt.length > 0 && answerAt[0]! <= performance.now()) {
        answerAt.shift();
        await h.answer();
      }
    }
    // Every period a request.
    expect(h.answered).toBeGreaterThanOrEqual(Math.floor(20_000 / p.timing.every) - 1);
    p.stop();
    // No answers at all: the cadence's requests while one could still commit before the at-risk
    // line (less the allowance), then none more, and never over 4 out (a pile behind a server that
    // answers nothing helps no lease).
    const idle = make(2000);
    idle.p.noteHandshake(performance.now());
    idle.p.hold();
    vi.advanceTimersByTime(idle.p.timing.every * 8);
    expect(idle.h.sent.length).toBeGreaterThanOrEqual(Math.floor((2000 - 2000 / 6 - 100) / idle.p.timing.every));
    expect(idle.h.sent.length).toBeLessThanOrEqual(4);
    idle.p.stop();
  });

  it('nothing is sent while nobody holds the proof, after the last holder left, while disconnected, or in mode off', async () => {
    const { h, p } = make(2000);
    p.noteHandshake(performance.now());
    vi.advanceTimersByTime(5000);
    expect(h.sent).toHaveLength(0);
    const release = p.hold();
    vi.advanceTimersByTime(0);
    expect(h.sent).toHaveLength(1);
    await h.answer();
    release();
    vi.advanceTimersByTime(60_000); // no linger
    expect(h.sent).toHaveLength(0);
    const again = p.hold(); // a later hold starts again, at once when the proof is older than a period
    vi.advanceTimersByTime(0);
    expect(h.sent).toHaveLength(1);
    await h.answer();
    again();
    p.hold();
    h.up = false;
    h.reconnect();
    vi.advanceTimersByTime(5000);
    expect(h.sent).toHaveLength(0);
    p.stop();
    const off = make(2000, undefined, 'off');
    off.p.noteHandshake(performance.now());
    off.p.hold();
    vi.advanceTimersByTime(10_000);
    expect(off.h.sent).toHaveLength(0);
    expect(vi.getTimerCount()).toBe(0); // no timer at all, let alone one that fires again at once
    off.p.stop();
  });

  it('waitProven sends at once and resolves on the answer; just after a reconnect, when that answer is too young to be confirmed, once more confirmAfter later', async () => {
    for (const reconnected of [false, true]) {
      const { h, p } = make(2000);
      const start = performance.now();
      p.noteHandshake(start);
      // 3 s of an idle session with a ping answered every 600 ms (sent 1 ms before its answer).
      for (let t = 100; t <= 3000; t += 100) {
        vi.advanceTimersByTime(100);
        if (t % 600 === 0) h.hear(performance.now() - 1);
      }
      expect(h.sent).toHaveLength(0);
      if (reconnected) h.reconnect();
      const wait = p.waitProven(() => p.proven > start + 2000, () => new Error('gone'));
      expect(h.sent).toHaveLength(1);
      vi.advanceTimersByTime(2);
      await h.answer();
      if (!reconnected) {
        await wait; // the request at 3000 confirms the ping sent at 2399
        expect(p.proven - start).toBe(2399);
      } else {
        expect(p.proven).toBe(start); // nothing on the new connection is old enough
        vi.advanceTimersByTime(600);
        expect(h.sent).toHaveLength(1);
        await h.answer();
        await wait;
        expect(p.proven - start).toBe(3000);
      }
      p.stop();
    }
  });

  it('a hold begun on an old proof (a first lease on a session that only pinged): wherever the lease falls among the pings, the proof is renewed before the at-risk line whenever renewableAt left room for a round trip at the start', async () => {
    for (const [t, tick, mode] of [
      [10_000, undefined, 'auto'],
      [10_000, 2000, 'auto'],
      [10_000, 2000, 'write'],
      [2000, undefined, 'auto'],
      [30_000, 2000, 'auto'],
    ] as const) {
      const allowance = Math.max(25, t / 20);
      let held = 0;
      // The lease's create goes at a phase of the idle pings (every T/3), in 24 steps over two ping periods.
      const steps = 24;
      // The clock moves T/400 at a time (5 ms at T = 2 s): well under the round trip of T/40.
      const grain = t / 400;
      for (let step = 0; step < steps; step++) {
        const { h, p } = make(t, tick, mode);
        const rtt = allowance / 2;
        let lastSend = performance.now();
        p.noteHandshake(lastSend);
        const pings: number[] = [];
        const answers: Array<{ at: number; answer: () => unknown }> = [];
        /** Advances the clock by a grain, pinging when idle T/3 and answering each request rtt after it went. */
        const tickClock = async () => {
          vi.advanceTimersByTime(grain);
          const now = performance.now();
          while (h.sent.length > answers.length + pendingOwn) answers.push({ at: h.sent[answers.length + pendingOwn]!.at + rtt, answer: () => h.answer() });
          if (now - lastSend >= t / 3) {
            lastSend = now;
            pings.push(now);
          }
          while (pings.length > 0 && pings[0]! + rtt <= now) h.hear(pings.shift()!);
          while (answers.length > 0 && answers[0]!.at <= now) await answers.shift()!.answer();
          for (const r of h.sent) lastSend = Math.max(lastSend, r.at);
        };
        let pendingOwn = 0;
        const leaseAt = performance.now() + t + (step * (2 * t)) / 3 / steps;
        while (performance.now() < leaseAt) await tickClock();
        h.own('write'); // the lease's create
        pendingOwn = 0;
        while (h.sent.length > 0) await tickClock();
        const now = performance.now();
        if (!(p.renewedBy < p.proven + t - t / 6 && p.proven + t > now + t / 4)) {
          // Not fresh: the locks wait on the proof first (covered by the waitProven cases).
          p.stop();
          continue;
        }
        held++;
        p.hold();
        let worst = 0;
        const end = performance.now() + 3 * t;
        while (performance.now() < end) {
          await tickClock();
          worst = Math.max(worst, performance.now() - p.proven);
        }
        expect(worst, `T ${t} tick ${tick} ${mode}, lease at step ${step}: ${p.timing.kind} every ${p.timing.every}`).toBeLessThan(t - t / 6);
        p.stop();
      }
      // Most phases are fresh at once: the lease waits on the proof in few of them.
      expect(held, `T ${t} tick ${tick} ${mode}`).toBeGreaterThanOrEqual(18);
    }
  });

  it('waitProven rejects when the session ends', async () => {
    const { p } = make(2000);
    const never = p.waitProven(() => false, () => new Error('session expired'));
    p.stop();
    await expect(never).rejects.toThrow('session expired');
  });
});

describe('heard log', () => {
  it('answers what had been answered by a moment, never newer; within a bucket the newer reply replaces the older (an older answer at most a bucket away)', () => {
    const log = new HeardLog(2560); // buckets of 10 ms
    expect(log.newestBy(100)).toBe(-Infinity);
    log.note(1, 100);
    log.note(50, 150);
    log.note(60, 155); // same bucket as 150: replaces it
    log.note(40, 160); // an older send time is never newer news
    expect(log.newestBy(99)).toBe(-Infinity);
    expect(log.newestBy(100)).toBe(1);
    expect(log.newestBy(154)).toBe(1); // 50 was replaced: the older answer, never the newer
    expect(log.newestBy(155)).toBe(60);
    expect(log.newestBy(10_000)).toBe(60);
    // Past the span, the newest old entry is kept as the answer "by" any later moment.
    for (let t = 200; t < 10_000; t += 100) log.note(t - 1, t);
    expect(log.newestBy(9_000)).toBe(8_999);
    expect(log.newestBy(150)).toBe(-Infinity);
  });

  it('firstAnsweredAfter: when the oldest reply to a request sent after a moment arrived, never earlier (a bucket may hold a later one); Infinity when none', () => {
    const log = new HeardLog(2560);
    expect(log.firstAnsweredAfter(0)).toBe(Infinity);
    log.note(10, 100);
    log.note(50, 150);
    log.note(60, 155); // replaces 50's entry: its arrival is later, never earlier
    log.note(200, 300);
    expect(log.firstAnsweredAfter(-Infinity)).toBe(100);
    expect(log.firstAnsweredAfter(10)).toBe(155);
    expect(log.newestBy(log.firstAnsweredAfter(10))).toBeGreaterThan(10);
    expect(log.firstAnsweredAfter(60)).toBe(300);
    expect(log.firstAnsweredAfter(200)).toBe(Infinity);
  });
});

import { describe, expect, it } from 'vitest';
import { Liveness, type Clock } from './liveness.js';

/** A manual clock: timers fire only inside advance(), in deadline order, with now() at their deadline. */
class FakeClock implements Clock {
  #now = 1000;
  #seq = 0;
  readonly #timers = new Map<number, { at: number; fn: () => void }>();

  now(): number {
    return this.#now;
  }
  setTimeout(fn: () => void, ms: number): unknown {
    const id = ++this.#seq;
    this.#timers.set(id, { at: this.#now + ms, fn });
    return id;
  }
  clearTimeout(handle: unknown): void {
    this.#timers.delete(handle as number);
  }
  get pending(): number {
    return this.#timers.size;
  }
  /** Moves time forward by `ms`, running every timer that falls due on the way. */
  advance(ms: number): void {
    const end = this.#now + ms;
    for (;;) {
      let next: [number, { at: number; fn: () => void }] | undefined;
      for (const e of this.#timers) if (e[1].at <= end && (!next || e[1].at < next[1].at)) next = e;
      if (!next) break;
      this.#timers.delete(next[0]);
      this.#now = Math.max(this.#now, next[1].at);
      next[1].fn();
    }
    this.#now = end;
  }
}

function setup(sessionTimeout: number) {
  const clock = new FakeClock();
  const start = clock.now();
  const pings: number[] = [];
  const deaths: Array<{ at: number; idle: number }> = [];
  const liveness = new Liveness(
    {
      sendPing: () => pings.push(clock.now() - start),
      onDead: (idle) => deaths.push({ at: clock.now() - start, idle }),
    },
    sessionTimeout,
    clock,
  );
  return { clock, liveness, pings, deaths };
}

describe('liveness - pings', () => {
  it('liveness - pings at T/3 of send-idleness, not before', () => {
    const { clock, pings } = setup(300);
    clock.advance(99);
    expect(pings).toEqual([]);
    clock.advance(1);
    expect(pings).toEqual([100]);
  });

  it('liveness - keeps pinging every T/3 while replies arrive and nothing else is sent', () => {
    const { clock, liveness, pings, deaths } = setup(300);
    // The server answers each ping 10 ms later.
    for (let t = 0; t < 1000; t += 10) {
      clock.advance(10);
      if (pings.length > 0 && clock.now() - 1000 === pings[pings.length - 1]! + 10) liveness.received();
    }
    expect(pings).toEqual([100, 200, 300, 400, 500, 600, 700, 800, 900, 1000]);
    expect(deaths).toEqual([]);
  });

  it('liveness - sends no ping while requests are being sent', () => {
    const { clock, liveness, pings, deaths } = setup(300);
    for (let t = 0; t < 2000; t += 50) {
      clock.advance(50);
      liveness.sent();
      liveness.received();
    }
    expect(pings).toEqual([]);
    expect(deaths).toEqual([]);
  });

  it('liveness - a send postpones the ping to T/3 after it', () => {
    const { clock, liveness, pings } = setup(300);
    clock.advance(90);
    liveness.sent();
    clock.advance(99);
    expect(pings).toEqual([]);
    clock.advance(1);
    expect(pings).toEqual([190]);
  });

  it('liveness - the ping interval follows the session timeout (T = 30 s pings at 10 s)', () => {
    const { clock, pings } = setup(30_000);
    clock.advance(9_999);
    expect(pings).toEqual([]);
    clock.advance(1);
    expect(pings).toEqual([10_000]);
  });

  it('liveness - a long session timeout still pings every 10 s of send-idleness (Java MAX_SEND_PING_INTERVAL)', () => {
    const { clock, liveness, pings, deaths } = setup(60_000);
    clock.advance(9_999);
    expect(pings).toEqual([]);
    clock.advance(1);
    liveness.received();
    clock.advance(10_000);
    liveness.received();
    expect(pings).toEqual([10_000, 20_000]);
    // Death still follows the timeout: 2T/3 = 40 s after the last byte received.
    clock.advance(39_999);
    expect(deaths).toEqual([]);
    clock.advance(1);
    expect(deaths).toEqual([{ at: 60_000, idle: 40_000 }]);
  });
});

describe('liveness - dead connection', () => {
  it('liveness - declares the connection dead at 2T/3 of receive-idleness, once, and stops', () => {
    const { clock, pings, deaths } = setup(300);
    clock.advance(199);
    expect(deaths).toEqual([]);
    clock.advance(1);
    expect(deaths).toEqual([{ at: 200, idle: 200 }]);
    // The ping at T/3 went out before; nothing at all after death.
    expect(pings).toEqual([100]);
    expect(clock.pending).toBe(0);
    clock.advance(10_000);
    expect(deaths).toHaveLength(1);
    expect(pings).toEqual([100]);
  });

  it('liveness - sending does not keep a connection alive that receives nothing', () => {
    const { clock, liveness, pings, deaths } = setup(300);
    for (let t = 0; t < 190; t += 10) {
      clock.advance(10);
      liveness.sent();
    }
    clock.advance(10);
    expect(deaths).toEqual([{ at: 200, idle: 200 }]);
    expect(pings).toEqual([]);
  });

  it('liveness - a receive postpones death to 2T/3 after it', () => {
    const { clock, liveness, deaths } = setup(300);
    clock.advance(150);
    liveness.received();
    clock.advance(199);
    expect(deaths).toEqual([]);
    clock.advance(1);
    expect(deaths).toEqual([{ at: 350, idle: 200 }]);
  });
});

describe('liveness - stop', () => {
  it('liveness - stop() cancels every timer: no ping, no death', () => {
    const { clock, liveness, pings, deaths } = setup(300);
    clock.advance(50);
    liveness.stop();
    expect(clock.pending).toBe(0);
    clock.advance(10_000);
    expect(pings).toEqual([]);
    expect(deaths).toEqual([]);
  });

  it('liveness - stop() after pings have started cancels the rest; calling it again is harmless', () => {
    const { clock, liveness, pings, deaths } = setup(300);
    clock.advance(100);
    liveness.received();
    expect(pings).toEqual([100]);
    liveness.stop();
    liveness.stop();
    liveness.sent();
    liveness.received();
    clock.advance(10_000);
    expect(pings).toEqual([100]);
    expect(deaths).toEqual([]);
    expect(clock.pending).toBe(0);
  });

  it('liveness - stop() from inside sendPing leaves no timer armed', () => {
    const clock = new FakeClock();
    let pings = 0;
    const deaths: number[] = [];
    const liveness: Liveness = new Liveness(
      {
        sendPing: () => {
          pings++;
          liveness.stop();
        },
        onDead: (idle) => deaths.push(idle),
      },
      300,
      clock,
    );
    clock.advance(100);
    expect(pings).toBe(1);
    expect(clock.pending).toBe(0);
    clock.advance(10_000);
    expect(pings).toBe(1);
    expect(deaths).toEqual([]);
  });
});

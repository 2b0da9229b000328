import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ClientClosedError, type SessionState, type ZooKeeper } from '@zk/protocol';
import { LeaseLostError, LockTimeoutError } from '../errors.js';
import { LEADING } from '../leader/leadership.js';
import { StateStub, fakeClient } from '../testing/fake-client.js';
import { Attempt } from './attempt.js';

/** A client that passes the method check, with a session state the test drives. */
function stubClient(): { zk: ZooKeeper; session: StateStub } {
  const session = new StateStub();
  const zk = fakeClient({ onStateChange: (l: (s: SessionState, p: SessionState) => void) => session.onStateChange(l) });
  Object.defineProperty(zk, 'state', { get: () => session.state });
  return { zk, session };
}
const never = () => new Promise<never>(() => {});

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
});
afterEach(() => {
  vi.useRealTimers();
});

describe('attempt bounds', () => {
  it('a wait ends at the deadline with LockTimeoutError, not before; end() leaves no timer', async () => {
    const { zk } = stubClient();
    const a = new Attempt(zk, '/l', 1000, undefined);
    const settled = a.race(never()).catch((e: unknown) => e);
    await vi.advanceTimersByTimeAsync(999);
    expect(a.stopped).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(await settled).toBeInstanceOf(LockTimeoutError);
    a.end();
    const b = new Attempt(zk, '/l', 1000, undefined);
    expect(vi.getTimerCount()).toBe(1);
    b.end();
    expect(vi.getTimerCount()).toBe(0);
  });

  it('a deadline beyond one timer (40 days) is reached in steps: no TimeoutOverflowWarning, not stopped early, cleared by end()', async () => {
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(w.name);
    process.on('warning', onWarning);
    try {
      const { zk } = stubClient();
      const a = new Attempt(zk, '/l', 40 * 24 * 3600_000, undefined);
      await vi.advanceTimersByTimeAsync(30 * 24 * 3600_000);
      expect(a.stopped).toBe(false);
      await vi.advanceTimersByTimeAsync(10 * 24 * 3600_000);
      expect(a.reason).toBeInstanceOf(LockTimeoutError);
      a.end();
      const b = new Attempt(zk, '/l', 40 * 24 * 3600_000, undefined);
      b.end();
      expect(vi.getTimerCount()).toBe(0);
      await new Promise((r) => process.nextTick(r)); // warnings are emitted on a later tick
      expect(warnings).toEqual([]);
    } finally {
      process.off('warning', onWarning);
    }
  });

  it('one state listener per session however many attempts; the session\'s end stops the running ones only', () => {
    const { zk, session } = stubClient();
    const ended = Array.from({ length: 50 }, () => new Attempt(zk, '/l', undefined, undefined));
    for (const a of ended) a.end();
    const running = Array.from({ length: 50 }, () => new Attempt(zk, '/l', undefined, undefined));
    expect(session.listeners.size).toBe(1);
    session.to('expired');
    expect(running.every((a) => a.reason instanceof LeaseLostError)).toBe(true);
    expect(ended.some((a) => a.stopped)).toBe(false);
    for (const a of running) a.end();
  });

  it('a closed client: the client\'s own ClientClosedError, whether closed before the attempt or during it (issue 37 item 7)', () => {
    const { zk, session } = stubClient();
    const running = new Attempt(zk, '/l', undefined, undefined);
    session.to('closed');
    expect(running.reason).toBeInstanceOf(ClientClosedError);
    expect(running.reason).not.toBeInstanceOf(LeaseLostError);
    expect(running.reason?.message).toBe('the client is closed (acquiring /l)');
    running.end();
    const late = new Attempt(zk, '/l', 1000, undefined);
    expect(() => late.check()).toThrow(ClientClosedError);
    late.end();
  });

  it('a leadership wait speaks of leadership: its timeout, abort and session end', async () => {
    const { zk, session } = stubClient();
    const timed = new Attempt(zk, '/e', 1000, undefined, LEADING);
    const settled = timed.race(never()).catch((e: unknown) => e);
    await vi.advanceTimersByTimeAsync(1000);
    expect(await settled).toMatchObject({ name: 'LockTimeoutError', message: 'leadership of /e not gained within 1000 ms' });
    timed.end();
    expect(LEADING.timeout('/e', 0).message).toBe('leadership of /e is not ours right now');
    expect(LEADING.aborted('/e', 'why').message).toBe('waiting for leadership of /e was aborted');
    const waiting = new Attempt(zk, '/e', undefined, undefined, LEADING);
    session.to('expired');
    expect(waiting.reason?.message).toBe('session expired while waiting for leadership of /e');
    waiting.end();
  });
});

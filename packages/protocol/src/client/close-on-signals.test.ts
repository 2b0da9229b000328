import { afterEach, describe, expect, it, vi } from 'vitest';
import { InvalidArgumentError } from '../errors/client-errors.js';
import { closeOnSignals } from './close-on-signals.js';

const count = () => ({ SIGINT: process.listenerCount('SIGINT'), SIGTERM: process.listenerCount('SIGTERM'), SIGHUP: process.listenerCount('SIGHUP') });

afterEach(() => {
  vi.restoreAllMocks();
});

describe('closeOnSignals', () => {
  it('closeOnSignals - listens to SIGINT and SIGTERM by default and removes its listeners when disposed (twice is fine)', () => {
    const before = count();
    const closer = closeOnSignals({ close: async () => {} });
    expect(closer.signals).toEqual(['SIGINT', 'SIGTERM']);
    expect(count()).toEqual({ ...before, SIGINT: before.SIGINT + 1, SIGTERM: before.SIGTERM + 1 });
    closer[Symbol.dispose]();
    closer.dispose();
    expect(count()).toEqual(before);
    {
      using _ = closeOnSignals({ close: async () => {} }, { signals: ['SIGHUP'] });
      expect(count()).toEqual({ ...before, SIGHUP: before.SIGHUP + 1 });
    }
    expect(count()).toEqual(before);
  });

  it('closeOnSignals - closes every client on the signal, then exits with 128 + its number; a second signal exits at once', async () => {
    const exit = vi.spyOn(process, 'exit').mockImplementation((() => undefined) as never);
    let finish!: () => void;
    const slow = { close: vi.fn(() => new Promise<void>((r) => (finish = r))) };
    const fast = { close: vi.fn(async () => {}) };
    using _ = closeOnSignals(slow, fast, { signals: ['SIGHUP'] });
    process.emit('SIGHUP', 'SIGHUP');
    expect(slow.close).toHaveBeenCalledOnce();
    expect(fast.close).toHaveBeenCalledOnce();
    await new Promise((r) => setTimeout(r, 10));
    expect(exit).not.toHaveBeenCalled(); // waits for the slow close
    process.emit('SIGHUP', 'SIGHUP');
    expect(exit).toHaveBeenCalledWith(129);
    finish();
    await new Promise((r) => setTimeout(r, 10));
    expect(slow.close).toHaveBeenCalledOnce();
  });

  it('closeOnSignals - exits after the timeout when a close does not end; exit: false leaves the exit to the application', async () => {
    const exit = vi.spyOn(process, 'exit').mockImplementation((() => undefined) as never);
    {
      using _ = closeOnSignals({ close: () => new Promise<void>(() => {}) }, { signals: ['SIGHUP'], timeout: 20 });
      process.emit('SIGHUP', 'SIGHUP');
      await new Promise((r) => setTimeout(r, 60));
      expect(exit).toHaveBeenCalledWith(129);
    }
    exit.mockClear();
    const client = { close: vi.fn(async () => {}) };
    using _ = closeOnSignals(client, { signals: ['SIGHUP'], exit: false });
    process.emit('SIGHUP', 'SIGHUP');
    await new Promise((r) => setTimeout(r, 10));
    expect(client.close).toHaveBeenCalledOnce();
    expect(exit).not.toHaveBeenCalled();
  });

  it('closeOnSignals - refuses a non-client, options not last, an unknown signal and a bad timeout', () => {
    const c = { close: async () => {} };
    const before = count().SIGINT;
    expect(() => closeOnSignals({} as never)).toThrow(/at least one client/);
    expect(() => closeOnSignals(42 as never, c)).toThrow(InvalidArgumentError);
    expect(count().SIGINT).toBe(before);
    expect(() => closeOnSignals({ signals: ['SIGINT'] }, c)).toThrow(/argument 0 has no close\(\) method \(options go last\)/);
    expect(() => closeOnSignals(c, { signals: ['SIGNOPE' as NodeJS.Signals] })).toThrow(/SIGNOPE is not a signal/);
    expect(() => closeOnSignals(c, { timeout: -1 })).toThrow(/timeout/);
  });
});

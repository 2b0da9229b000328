import { afterEach, describe, expect, it, vi } from 'vitest';
import { connectLoop } from './stats.js';

describe('bench stats - connectLoop', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('connectLoop - opens and closes one session at a time, the close awaited before the next open, one latency per open', async () => {
    const events: string[] = [];
    let open = 0;
    const sample = await connectLoop(3, async () => {
      const i = open++;
      events.push(`open ${i}`);
      await new Promise((r) => setImmediate(r));
      return async () => {
        await new Promise((r) => setImmediate(r));
        events.push(`closed ${i}`);
      };
    });
    expect(events).toEqual(['open 0', 'closed 0', 'open 1', 'closed 1', 'open 2', 'closed 2']);
    expect(sample.ops).toBe(3);
    expect(sample.latenciesUs).toHaveLength(3);
  });

  it('connectLoop - times the open alone: the close is in the repetition, not in the latencies', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'performance'] });
    const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
    const running = connectLoop(2, async () => {
      await sleep(5);
      return () => sleep(30);
    });
    await vi.advanceTimersByTimeAsync(70);
    const sample = await running;
    expect(sample.latenciesUs).toEqual([5000, 5000]);
    // The control: the repetition's time holds the opens and the closes.
    expect(sample.seconds).toBeCloseTo(0.07, 9);
  });

  it('connectLoop - a synchronous close, and a failed open rejects the repetition', async () => {
    let closed = 0;
    expect((await connectLoop(2, async () => () => void closed++)).ops).toBe(2);
    expect(closed).toBe(2);
    await expect(connectLoop(1, () => Promise.reject(new Error('refused')))).rejects.toThrow('refused');
  });
});

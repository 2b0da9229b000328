import { describe, expect, it } from 'vitest';
import { connectLoop } from './stats.js';

describe('bench stats connectLoop', () => {
  it('opens and closes one session at a time, the close awaited before the next open, one latency per open', async () => {
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
    expect(sample.seconds).toBeGreaterThan(0);
  });

  it('times the open alone: a slow close is not in the latencies, but is in the repetition', async () => {
    const closeMs = 30;
    const sample = await connectLoop(2, async () => () => new Promise<void>((r) => setTimeout(r, closeMs)));
    // The control: the repetition's wall time holds both closes.
    expect(sample.seconds * 1000).toBeGreaterThanOrEqual(2 * closeMs - 2);
    for (const us of sample.latenciesUs) expect(us).toBeLessThan(closeMs * 1000);
  });

  it('a synchronous close and a failed open', async () => {
    let closed = 0;
    expect((await connectLoop(2, async () => () => void closed++)).ops).toBe(2);
    expect(closed).toBe(2);
    await expect(connectLoop(1, () => Promise.reject(new Error('refused')))).rejects.toThrow('refused');
  });
});

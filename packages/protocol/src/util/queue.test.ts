import { describe, expect, it } from 'vitest';
import { AsyncQueue } from './queue.js';

describe('queue - AsyncQueue', () => {
  it('yields pushed items in order, before and after the consumer waits', async () => {
    const q = new AsyncQueue<number>();
    q.push(1);
    q.push(2);
    const it = q[Symbol.asyncIterator]();
    expect(await it.next()).toEqual({ value: 1, done: false });
    expect(await it.next()).toEqual({ value: 2, done: false });
    const pending = it.next();
    q.push(3);
    expect(await pending).toEqual({ value: 3, done: false });
  });

  it('ends after queued items and calls onReturn once', async () => {
    let returned = 0;
    const q = new AsyncQueue<number>({ onReturn: () => returned++ });
    q.push(1);
    q.end();
    q.end();
    const seen: number[] = [];
    for await (const v of q) seen.push(v);
    expect(seen).toEqual([1]);
    expect(returned).toBe(1);
  });

  it('runs onReturn when the consumer breaks out', async () => {
    let returned = 0;
    const q = new AsyncQueue<number>({ onReturn: () => returned++ });
    q.push(1);
    q.push(2);
    for await (const v of q) {
      expect(v).toBe(1);
      break;
    }
    expect(returned).toBe(1);
    expect(q.done).toBe(true);
  });

  it('rejects a waiting consumer on abort', async () => {
    const ac = new AbortController();
    let returned = 0;
    const q = new AsyncQueue<number>({ signal: ac.signal, onReturn: () => returned++ });
    const pending = q.next();
    ac.abort(new Error('bye'));
    await expect(pending).rejects.toThrow('bye');
    expect(returned).toBe(1);
  });

  it('throws an error after the items queued before it', async () => {
    const q = new AsyncQueue<number>();
    q.push(1);
    q.fail(new Error('boom'));
    expect(await q.next()).toEqual({ value: 1, done: false });
    await expect(q.next()).rejects.toThrow('boom');
    expect(await q.next()).toEqual({ value: undefined, done: true });
  });
});

import { describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '@zk/protocol';
import { EventStream } from './event-stream.js';
import { makeInstance } from './instance.js';
import { RandomStrategy, RoundRobinStrategy, StickyStrategy } from './provider.js';

const list = ['a', 'b', 'c'].map((id) => makeInstance({ name: 's', id, address: null }));

describe('discovery strategies', () => {
  it('round robin cycles through the list in order; an empty list gives undefined', () => {
    const rr = new RoundRobinStrategy();
    expect(rr.pick([])).toBeUndefined();
    expect(Array.from({ length: 7 }, () => rr.pick(list)!.id)).toEqual(['a', 'b', 'c', 'a', 'b', 'c', 'a']); // an empty list does not count (Curator returns null before getAndIncrement)
    const fresh = new RoundRobinStrategy();
    expect(Array.from({ length: 4 }, () => fresh.pick(list.slice(0, 2))!.id)).toEqual(['a', 'b', 'a', 'b']);
  });

  it('random picks every instance of the list, only those', () => {
    const random = new RandomStrategy();
    const seen = new Set(Array.from({ length: 200 }, () => random.pick(list)!.id));
    expect([...seen].sort()).toEqual(['a', 'b', 'c']);
    expect(random.pick([])).toBeUndefined();
  });

  it('sticky keeps its instance while listed, then asks the inner strategy', () => {
    const sticky = new StickyStrategy(new RoundRobinStrategy());
    expect(sticky.pick(list)!.id).toBe('a');
    expect(sticky.pick(list)!.id).toBe('a');
    expect(sticky.pick(list.slice(1))!.id).toBe('c'); // 'a' gone: the inner round robin's second pick
    expect(sticky.pick(list)!.id).toBe('c');
    expect(sticky.pick([])).toBeUndefined();
    expect(() => new StickyStrategy({} as never)).toThrow(InvalidArgumentError);
  });
});

describe('discovery event stream', () => {
  it('queues pushes, hands one to a waiting read, ends after the queue, fails with the error', async () => {
    let returned = 0;
    const s = new EventStream<number>(() => returned++);
    s.push(1);
    s.push(2);
    const waiting = (async () => {
      const got: number[] = [];
      for await (const n of s) got.push(n);
      return got;
    })();
    await Promise.resolve();
    s.push(3);
    s.end();
    expect(await waiting).toEqual([1, 2, 3]);
    expect(returned).toBe(1);
    const f = new EventStream<number>(() => returned++);
    f.push(1);
    f.fail(new Error('x'));
    expect(await f.next()).toEqual({ value: 1, done: false });
    await expect(f.next()).rejects.toThrow('x');
    expect(await f.next()).toEqual({ value: undefined, done: true });
  });

  it('a signal aborts the stream; return() unsubscribes', async () => {
    let returned = 0;
    const c = new AbortController();
    const s = new EventStream<number>(() => returned++, c.signal);
    const next = s.next();
    c.abort(new Error('stop'));
    await expect(next).rejects.toThrow('stop');
    const r = new EventStream<number>(() => returned++);
    await r.return();
    r.push(1);
    expect(await r.next()).toEqual({ value: undefined, done: true });
    expect(returned).toBe(2);
    const pre = new EventStream<number>(() => returned++, AbortSignal.abort(new Error('early')));
    await expect(pre.next()).rejects.toThrow('early');
  });
});

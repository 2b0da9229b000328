import { describe, expect, it } from 'vitest';
import { eventTypeOf, WatchRegistry, type WatchListener } from './watches.js';

const listener = (): WatchListener => () => {};

describe('watches - registry', () => {
  it('fires data and exist watches on a data change, once, and removes them', () => {
    const reg = new WatchRegistry();
    const a = listener();
    const b = listener();
    reg.add('data', '/n', a);
    reg.add('exist', '/n', a); // same listener under two kinds
    reg.add('exist', '/n', b);
    reg.add('child', '/n', b);
    expect([...reg.take('NodeDataChanged', '/n')]).toEqual([a, b]);
    expect(reg.take('NodeDataChanged', '/n').size).toBe(0);
    // the child watch is untouched
    expect([...reg.take('NodeChildrenChanged', '/n')]).toEqual([b]);
    expect(reg.size).toBe(0);
  });

  it('fires every one-shot kind on deletion', () => {
    const reg = new WatchRegistry();
    const [a, b, c] = [listener(), listener(), listener()];
    reg.add('data', '/n', a);
    reg.add('exist', '/n', b);
    reg.add('child', '/n', c);
    expect(reg.take('NodeDeleted', '/n')).toEqual(new Set([a, b, c]));
    expect(reg.size).toBe(0);
  });

  it('deduplicates the same listener added twice', () => {
    const reg = new WatchRegistry();
    const a = listener();
    reg.add('data', '/n', a);
    reg.add('data', '/n', a);
    expect(reg.take('NodeDataChanged', '/n').size).toBe(1);
  });

  it('does not cross paths', () => {
    const reg = new WatchRegistry();
    reg.add('data', '/a', listener());
    expect(reg.take('NodeDataChanged', '/ab').size).toBe(0);
    expect(reg.size).toBe(1);
  });

  it('keeps persistent watches and walks ancestors for recursive ones', () => {
    const reg = new WatchRegistry();
    const p = listener();
    const r = listener();
    reg.add('persistent', '/a/b', p);
    reg.add('persistentRecursive', '/a', r);
    expect(reg.take('NodeDataChanged', '/a/b')).toEqual(new Set([p, r]));
    expect(reg.take('NodeCreated', '/a/b/c')).toEqual(new Set([r]));
    expect(reg.take('NodeChildrenChanged', '/a/b')).toEqual(new Set([p]));
    expect(reg.size).toBe(2);
  });

  it('removes one listener or all, and reports it', () => {
    const reg = new WatchRegistry();
    const [a, b] = [listener(), listener()];
    reg.add('child', '/n', a);
    reg.add('child', '/n', b);
    expect(reg.remove('child', '/n', a)).toBe(true);
    expect(reg.has('child', '/n', a)).toBe(false);
    expect(reg.has('child', '/n', b)).toBe(true);
    expect(reg.remove('child', '/n')).toBe(true);
    expect(reg.remove('child', '/n')).toBe(false);
  });

  it('snapshots and clears', () => {
    const reg = new WatchRegistry();
    const a = listener();
    reg.add('data', '/d', a);
    reg.add('exist', '/e', a);
    const r = listener();
    reg.add('persistentRecursive', '/r', r);
    expect(reg.snapshot()).toEqual({ data: ['/d'], exist: ['/e'], child: [], persistent: [], persistentRecursive: ['/r'] });
    // each listener once, with the first path it was registered for
    expect(reg.clear()).toEqual(new Map([[a, '/d'], [r, '/r']]));
    expect(reg.size).toBe(0);
  });

  it('maps numeric event types', () => {
    expect(eventTypeOf(1)).toBe('NodeCreated');
    expect(eventTypeOf(4)).toBe('NodeChildrenChanged');
    expect(eventTypeOf(-1)).toBeUndefined();
  });
});

import { describe, expect, it } from 'vitest';
import { abortCore, signalOf, type LeaseCore } from './lease.js';

/** A core with no guard behind it: only the signal bookkeeping is under test. */
function core(): LeaseCore {
  return {
    zk: undefined as never,
    lockPath: '/l',
    nodePath: '/l/n',
    fencingToken: 1n,
    controller: undefined,
    aborted: false,
    reason: undefined,
    revocation: undefined,
    revocable: false,
    refs: 1,
    released: false,
    end: async () => {},
  };
}

describe('lease - the signal, handed out lazily', () => {
  it('a hold lost before anyone asked gives out a signal already aborted, with the first reason', () => {
    const c = core();
    const first = new Error('lost');
    abortCore(c, first);
    abortCore(c, new Error('released'));
    expect(c.controller).toBeUndefined(); // nothing made for nobody
    expect(c.aborted).toBe(true);
    const signal = signalOf(c);
    expect(signal.aborted).toBe(true);
    expect(signal.reason).toBe(first);
    expect(signalOf(c)).toBe(signal);
  });

  it('a signal handed out before the loss aborts at the loss, once, with its reason', () => {
    const c = core();
    const signal = signalOf(c);
    const reasons: unknown[] = [];
    signal.addEventListener('abort', () => reasons.push(signal.reason));
    expect(signal.aborted).toBe(false);
    const first = new Error('lost');
    abortCore(c, first);
    abortCore(c, new Error('released'));
    expect(reasons).toEqual([first]);
    expect(c.reason).toBe(first);
  });
});

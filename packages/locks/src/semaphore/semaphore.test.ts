import { describe, expect, it } from 'vitest';
import { InvalidArgumentError, type ZooKeeper } from '@zk/protocol';
import { SemaphoreMutex } from './semaphore-mutex.js';
import { Semaphore } from './semaphore.js';
import { decodeCount, encodeCount, SharedCount, type SharedCountReader } from '../shared/shared-count.js';

/** A client that fails the test if anything is sent. */
const silent = new Proxy({} as ZooKeeper, {
  get(_, prop) {
    throw new Error(`unexpected use of the client: ${String(prop)}`);
  },
});

const reader = (count: number): SharedCountReader => ({ count, onChange: () => () => undefined });

describe('shared count - encoding', () => {
  it("is Java's ByteBuffer.putInt / getInt: 4 bytes, big-endian, signed", () => {
    expect([...encodeCount(0)]).toEqual([0, 0, 0, 0]);
    expect([...encodeCount(3)]).toEqual([0, 0, 0, 3]);
    expect([...encodeCount(258)]).toEqual([0, 0, 1, 2]);
    expect([...encodeCount(-1)]).toEqual([0xff, 0xff, 0xff, 0xff]);
    expect([...encodeCount(2 ** 31 - 1)]).toEqual([0x7f, 0xff, 0xff, 0xff]);
    expect(decodeCount(Uint8Array.from([0, 0, 1, 2]))).toBe(258);
    expect(decodeCount(Uint8Array.from([0x80, 0, 0, 0]))).toBe(-(2 ** 31));
    // getInt reads the first 4 bytes and ignores the rest; fewer than 4 is no count at all.
    expect(decodeCount(Uint8Array.from([0, 0, 0, 5, 9, 9]))).toBe(5);
    expect(decodeCount(Uint8Array.from([0, 0, 5]))).toBeUndefined();
    expect(decodeCount(new Uint8Array(0))).toBeUndefined();
    // A view into a larger buffer decodes from its own offset.
    expect(decodeCount(new Uint8Array(Uint8Array.from([9, 0, 0, 0, 7]).buffer, 1, 4))).toBe(7);
  });

  it('refuses a seed outside the Java int range without touching the client', () => {
    for (const seed of [2 ** 31, -(2 ** 31) - 1, 1.5, Number.NaN]) expect(() => new SharedCount(silent, '/c', seed)).toThrow(InvalidArgumentError);
    expect(() => new SharedCount(silent, 'c', 1)).toThrow(InvalidArgumentError);
    expect(new SharedCount(silent, '/c', -3).count).toBe(-3);
  });
});

describe('semaphore - input checks before anything is sent', () => {
  it('refuses maxLeases that is not an integer in 1..2^31-1 or a SharedCountReader', () => {
    for (const maxLeases of [0, -2, 2.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 31, '3', null, undefined, { count: 3 }]) {
      expect(() => new Semaphore(silent, '/s', { maxLeases: maxLeases as number })).toThrow(InvalidArgumentError);
    }
    expect(new Semaphore(silent, '/s', { maxLeases: 2 ** 31 - 1 }).maxLeases).toBe(2 ** 31 - 1);
    expect(new Semaphore(silent, '/s', { maxLeases: reader(5) }).maxLeases).toBe(5);
  });

  it('refuses bad paths, grace and data', () => {
    expect(() => new Semaphore(silent, 's', { maxLeases: 1 })).toThrow(InvalidArgumentError);
    expect(() => new Semaphore(silent, '/s/', { maxLeases: 1 })).toThrow(InvalidArgumentError);
    expect(() => new Semaphore(silent, '/s', { maxLeases: 1, suspendedGrace: -1 })).toThrow(InvalidArgumentError);
    expect(() => new Semaphore(silent, '/s', { maxLeases: 1, data: 5 as unknown as string })).toThrow(InvalidArgumentError);
    expect(() => new SemaphoreMutex(silent, '/a//b')).toThrow(InvalidArgumentError);
  });

  it('refuses bad quantities and timeouts, and an aborted signal, without a request', async () => {
    const fixed = new Semaphore(silent, '/s', { maxLeases: 3 });
    for (const qty of [0, -1, 1.5, Number.NaN, 4, 2 ** 31]) await expect(fixed.acquire(qty)).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(fixed.acquire(null as unknown as number)).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(fixed.acquire({ timeout: -1 })).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(fixed.acquire(2, { timeout: Number.NaN })).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(fixed.tryAcquire(5)).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(fixed.acquire({ signal: AbortSignal.abort() })).rejects.toMatchObject({ name: 'LockAbortedError', path: '/s' });
    // A shared count may rise later: more permits than the current count is not an input error.
    const shared = new Semaphore(silent, '/s', { maxLeases: reader(1) });
    await expect(shared.acquire(2, { signal: AbortSignal.abort() })).rejects.toMatchObject({ name: 'LockAbortedError' });
  });
});

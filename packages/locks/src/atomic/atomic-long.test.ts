import { describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '@zk/protocol';
import { AtomicLong, decodeLong, encodeLong } from './atomic-long.js';

describe('atomic long - encoding', () => {
  it('is Java ByteBuffer.putLong / getLong: 8 bytes big-endian, signed; empty reads 0, 1-7 bytes are corrupted', () => {
    expect(encodeLong(1n).toString('hex')).toBe('0000000000000001');
    expect(encodeLong(-1n).toString('hex')).toBe('ffffffffffffffff');
    expect(encodeLong(-(2n ** 63n)).toString('hex')).toBe('8000000000000000');
    expect(encodeLong(0x0102030405060708n).toString('hex')).toBe('0102030405060708');
    for (const v of [0n, 1n, -1n, 2n ** 63n - 1n, -(2n ** 63n), 123456789012345n]) expect(decodeLong(encodeLong(v))).toBe(v);
    expect(decodeLong(new Uint8Array())).toBe(0n);
    expect(decodeLong(null)).toBe(0n);
    expect(decodeLong(new Uint8Array(7))).toBeUndefined();
    expect(decodeLong(Buffer.from('00000000000000050000', 'hex'))).toBe(5n); // Java reads the first 8
    expect(decodeLong(Buffer.from('ffff0000000000000007', 'hex').subarray(2))).toBe(7n);
  });

  it('refuses bad paths, retry settings, lock paths and values before anything is sent', async () => {
    const zk = {} as never;
    expect(() => new AtomicLong(zk, 'rel')).toThrow(InvalidArgumentError);
    expect(() => new AtomicLong(zk, '/c', { retry: { maxTries: 0 } })).toThrow(InvalidArgumentError);
    expect(() => new AtomicLong(zk, '/c', { retry: { baseDelay: -1 } })).toThrow(InvalidArgumentError);
    expect(() => new AtomicLong(zk, '/c', { promotedToLock: { lockPath: 'x' } })).toThrow(InvalidArgumentError);
    expect(() => new AtomicLong(zk, '/c', { promotedToLock: { lockPath: '/c' } })).toThrow(InvalidArgumentError);
    expect(() => new AtomicLong(zk, '/c', { promotedToLock: { lockPath: '/l', timeout: Number.NaN } })).toThrow(InvalidArgumentError);
    const counter = new AtomicLong(zk, '/c');
    // The changes reject (a client of {} would throw TypeError at the first request instead).
    await expect(counter.add(1.5)).rejects.toThrow(InvalidArgumentError);
    await expect(counter.add(2n ** 63n)).rejects.toThrow(InvalidArgumentError);
    await expect(counter.trySet(Number.MAX_SAFE_INTEGER + 1)).rejects.toThrow(InvalidArgumentError);
  });
});

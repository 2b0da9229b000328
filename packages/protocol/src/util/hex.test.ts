import { describe, expect, it } from 'vitest';
import { hex64 } from './hex.js';

describe('hex64', () => {
  it('prints a session id as ZooKeeper logs do: unsigned, also when the server myid makes it negative', () => {
    expect(hex64(0x10000a1b2c3d0001n)).toBe('10000a1b2c3d0001');
    // myid 200: the id's top byte is 0xc8, a negative Java long.
    const id = BigInt.asIntN(64, (200n << 56n) | 0x1b2c3d0001n);
    expect(id).toBeLessThan(0n);
    expect(id.toString(16)).toMatch(/^-/); // what the messages printed before
    expect(hex64(id)).toBe('c800001b2c3d0001');
    expect(hex64(-1n)).toBe('ffffffffffffffff');
    expect(hex64(0n)).toBe('0');
  });
});

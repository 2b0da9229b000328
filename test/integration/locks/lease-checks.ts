import { expect } from 'vitest';
import type { Lease } from '@zk/locks';

/** Asserts the lease is still held and its signal has not fired. */
export function stillHeld(lease: Lease): void {
  expect(lease.signal.aborted).toBe(false);
  expect(lease.held).toBe(true);
}

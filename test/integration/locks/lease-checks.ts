import { expect } from 'vitest';
import { CREATOR_ALL_ACL, type ZooKeeper } from '@zk/protocol';
import { Mutex, type Lease } from '@zk/locks';
import { waitFor } from '../../harness/index.js';

/** Asserts the lease is still held and its signal has not fired. */
export function stillHeld(lease: Lease): void {
  expect(lease.signal.aborted).toBe(false);
  expect(lease.held).toBe(true);
}

/**
 * What intruders are set on: a revocable holder of the Mutex at `path` on `zk` and a waiter on
 * `zk2` (same identity), both under CREATOR_ALL_ACL. `keptTheirPlaces()` asserts, after the
 * intruders, that the holder kept its hold (no revocation request) and the waiter is still queued
 * (two nodes, no intruder's), then hands the lock on to the waiter and releases it.
 */
export async function holderAndWaiter(zk: ZooKeeper, zk2: ZooKeeper, path: string): Promise<{ lease: Lease; keptTheirPlaces(): Promise<void> }> {
  const lease = await new Mutex(zk, path, { acl: CREATOR_ALL_ACL }).acquire({ revocable: true });
  const waiting = new Mutex(zk2, path, { acl: CREATOR_ALL_ACL }).acquire({ timeout: 30_000 });
  await waitFor('the waiter to queue', async () => ((await zk.getChildren(path)).length === 2 ? true : undefined), 10_000, 10);
  let waiterDone = false;
  void waiting.then(() => (waiterDone = true), () => (waiterDone = true));
  return {
    lease,
    async keptTheirPlaces() {
      stillHeld(lease);
      expect(lease.revocationRequested.aborted).toBe(false);
      expect(waiterDone).toBe(false);
      expect((await zk.getChildren(path)).length).toBe(2); // no intruder node, nothing removed
      await lease.release();
      const next = await waiting;
      stillHeld(next);
      await next.release();
    },
  };
}

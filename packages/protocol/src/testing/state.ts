/**
 * Waiting for a client's state in unit tests (an event awaited, no polling). Not part of the
 * package's public surface.
 */
import type { ZooKeeper } from '../client/zookeeper.js';

/** Resolves once `zk` is in `state` (at once if it already is). */
export function reached(zk: ZooKeeper, state: string): Promise<void> {
  return new Promise((resolve) => {
    if (zk.state === state) return resolve();
    const off = zk.onStateChange((s) => s === state && (off(), resolve()));
  });
}

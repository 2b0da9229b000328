/**
 * Test doubles for the unit tests of @zk/locks (not emitted: src/testing is excluded from the build).
 */
import type { ZooKeeper } from '@zk/protocol';

/** A client that passes the recipes' method check and answers nothing. */
export function fakeClient(overrides: Record<string, unknown> = {}): ZooKeeper {
  const fn = () => new Promise(() => undefined);
  const methods = ['create', 'createWithStat', 'delete', 'exists', 'getData', 'getChildren', 'setData', 'transaction', 'removeWatches', 'removeLocalWatch', 'holdQuorumProof', 'awaitQuorumDeadline'];
  return { ...Object.fromEntries(methods.map((m) => [m, fn])), onStateChange: () => () => undefined, sessionTimeout: 10_000, expiryDeadline: 0, quorumDeadline: 0, state: 'connecting', ...overrides } as unknown as ZooKeeper;
}

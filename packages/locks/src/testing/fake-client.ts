/**
 * Test doubles for the unit tests of @zk/locks (not emitted: src/testing is excluded from the build).
 */
import type { SessionState, ZooKeeper } from '@zk/protocol';

/** A client that passes the recipes' method check and answers nothing. */
export function fakeClient(overrides: Record<string, unknown> = {}): ZooKeeper {
  const fn = () => new Promise(() => undefined);
  const methods = ['create', 'createWithStat', 'delete', 'exists', 'getData', 'getChildren', 'setData', 'transaction', 'removeWatches', 'removeLocalWatch', 'holdQuorumProof', 'awaitQuorumDeadline'];
  return { ...Object.fromEntries(methods.map((m) => [m, fn])), onStateChange: () => () => undefined, sessionTimeout: 10_000, expiryDeadline: 0, quorumDeadline: 0, quorumRenewedBy: 0, state: 'connecting', ...overrides } as unknown as ZooKeeper;
}

/**
 * A session state the test drives: `state`, the client's `onStateChange`, and `to(next)`, which
 * tells every listener. Subclass it, or pass its members to {@link fakeClient} as overrides.
 */
export class StateStub {
  state: SessionState = 'connected';
  readonly listeners = new Set<(s: SessionState, p: SessionState) => void>();
  onStateChange(l: (s: SessionState, p: SessionState) => void): () => void {
    this.listeners.add(l);
    return () => this.listeners.delete(l);
  }
  to(next: SessionState): void {
    const prev = this.state;
    this.state = next;
    for (const l of [...this.listeners]) l(next, prev);
  }
}

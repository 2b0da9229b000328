/**
 * Waiting on a client's state in fault tests: resolves on an event, never by polling.
 */
import type { SessionState, ZooKeeper } from '@zk/protocol';

/** Resolves with the first of `states` the client is in or enters (checked against the current state first). */
export function waitForState(zk: ZooKeeper, ...states: SessionState[]): Promise<SessionState> {
  return new Promise((resolve) => {
    if (states.includes(zk.state)) return resolve(zk.state);
    const off = zk.onStateChange((s) => {
      if (states.includes(s)) {
        off();
        resolve(s);
      }
    });
  });
}

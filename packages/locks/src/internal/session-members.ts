/**
 * One state listener per client for many short-lived members (the running acquire attempts, the
 * guarded holds): registered at the first member and kept once the last one leaves (an empty loop
 * per state change), so that a member joining or leaving costs a Set entry, not a listener
 * registered and removed on the acquire's path.
 */
import type { SessionState, ZooKeeper } from '@zk/protocol';

/** The members of each client, each told of every state change by `tell`. */
export class SessionMembers<T> {
  readonly #clients = new WeakMap<ZooKeeper, Set<T>>();
  readonly #tell: (member: T, state: SessionState) => void;

  constructor(tell: (member: T, state: SessionState) => void) {
    this.#tell = tell;
  }

  /** Adds `member` to `zk`'s members (registering the client's one listener the first time). */
  add(zk: ZooKeeper, member: T): void {
    let members = this.#clients.get(zk);
    if (members === undefined) {
      const set = new Set<T>();
      const tell = this.#tell;
      zk.onStateChange((state) => {
        for (const m of set) tell(m, state);
      });
      this.#clients.set(zk, (members = set));
    }
    members.add(member);
  }

  /** Removes `member` (idempotent). */
  delete(zk: ZooKeeper, member: T): void {
    this.#clients.get(zk)?.delete(member);
  }
}

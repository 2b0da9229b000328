/**
 * A one-shot children watch that a consumer sleeps on, removed on every exit that did not see it
 * fire (after the listing that set it has settled, for the reason barrier-wait.ts gives for
 * NodeWatch: a removal sent before the reply would find nothing and leak the watch).
 */
import type { WatchedEvent, ZooKeeper } from '@zk/protocol';

/** One children watch of one path, set by {@link ChildWatch.list}. */
export class ChildWatch {
  readonly #zk: ZooKeeper;
  readonly #path: string;
  #done = false;
  #request: Promise<unknown> | undefined;
  #resolve!: () => void;
  /** Resolves when the watch fires (a child added or removed, the node deleted). */
  readonly fired = new Promise<void>((resolve) => (this.#resolve = resolve));
  readonly #listener = (e: WatchedEvent) => {
    if (e.type === 'ChildWatchRemoved' || e.type === 'DataWatchRemoved') return;
    this.#done = true;
    this.#resolve();
  };

  constructor(zk: ZooKeeper, path: string) {
    this.#zk = zk;
    this.#path = path;
  }

  /** `getChildren` with this watch. A missing node rejects with NoNodeError and sets no watch. */
  list(): Promise<string[]> {
    const request = this.#zk.getChildren(this.#path, { watch: this.#listener });
    this.#request = request;
    return request;
  }

  /** Removes the watch unless it fired (on the server when connected, else only locally). Never throws. */
  async remove(): Promise<void> {
    if (this.#request) await this.#request.catch(() => undefined);
    if (this.#done) return;
    this.#done = true;
    if (this.#zk.state === 'connected') {
      try {
        return await this.#zk.removeWatches(this.#path, { kind: 'child', listener: this.#listener });
      } catch {
        // it fired meanwhile, the server is 3.4 (no removeWatches), or the connection dropped
      }
    }
    this.#zk.removeLocalWatch('child', this.#path, this.#listener);
  }
}

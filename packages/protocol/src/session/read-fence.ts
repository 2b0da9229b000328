/**
 * Fenced reads: a read sent behind a request that passed through the leader, on the same
 * connection, so that it reflects what the ensemble had committed when it was made.
 *
 * Why it works (ZooKeeper 3.8's source): a server executes one session's requests in the order
 * it received them, and holds a session's reads while a write or sync of that session is in
 * flight (`CommitProcessor`: a session with queued writes has its later requests queued behind
 * them; a follower forwards the sync to the leader and answers it only after applying every
 * transaction the leader committed before it). So a read sent right behind:
 * - **a committed write** W (the quorum proof's no-op write: a multi of one `check` of the root,
 *   proof-evidence.ts) is answered after W is applied; W was ordered by the leader after every
 *   write that had completed when W was sent, so the read reflects them all. A leader or
 *   follower that cannot reach a quorum never commits W: the read is held behind it until the
 *   connection drops (the liveness rule), and fails. That is a linearizable read, under the same
 *   assumptions as the lease (quorum-proof.ts): global sessions, and a server that honours the
 *   session order.
 * - **a sync** is answered after the server caught up with the leader it asked. When that leader
 *   is cut off from its quorum and a successor already commits (it answers syncs by itself for up
 *   to syncLimit + 1 ticks; ZOOKEEPER-1675, ZOOKEEPER-3600), the read misses the successor's writes.
 *   Cheaper (no transaction), not linearizable.
 *
 * Reads share fences: every read made in one tick waits for the end of the tick, where one fence
 * goes out followed by all of them (the connection then coalesces them into multiReads when it
 * coalesces). A write fence serves the tick's sync-fenced reads too: it proves more. A fence is
 * sent after each of its reads was made, which is what the argument above needs; a fence already
 * in flight is never reused for a read made after it was sent.
 *
 * A read's answer is used only when its fence committed (err 0 in its reply header): a fence that
 * fails (connection lost, a read-only server's NotReadOnly) fails its reads. When a read was sent
 * again on another connection (connection.ts holds and resends requests the multiRead probe kept
 * back), it still comes after the fence's reply: the handshake's lastZxidSeen, which includes the
 * fence's zxid, makes a server that has not applied the fence refuse the session.
 */
import type { Reply } from '../connection/connection.js';
import { fromCode } from '../errors.js';

/** What a read is sent behind: a committed no-op write, or a sync. */
export type FenceKind = 'write' | 'sync';

/** What the fence needs from the session. */
export interface ReadFenceHost {
  /** Whether a request made now is sent at once on a live connection. */
  connected(): boolean;
  /** Resolves once connected; rejects when the session ends. */
  waitConnected(): Promise<void>;
  /** Sends the fence request of `kind` now on the live connection; resolves with its reply header's err. */
  send(kind: FenceKind): Promise<number>;
}

/** A read waiting for its fence. */
interface Waiting {
  readonly kind: FenceKind;
  /** Sends the read now (on the live connection, behind the fence just sent). */
  readonly dispatch: () => Promise<Reply<unknown>>;
  /** True once its caller stopped waiting (abort, deadline): it is then never sent. */
  readonly gaveUp: () => boolean;
  resolve(reply: Reply<unknown>): void;
  reject(err: unknown): void;
}

const noop = () => {};

/** One session's fenced reads (see the file comment). */
export class ReadFence {
  readonly #host: ReadFenceHost;
  #queue: Waiting[] = [];
  #scheduled = false;
  #fences = 0;

  constructor(host: ReadFenceHost) {
    this.#host = host;
  }

  /** Fence requests sent so far (for tests and the bench: reads per fence). */
  get fencesSent(): number {
    return this.#fences;
  }

  /**
   * Sends a read behind a fence of `kind` sent after this call, and resolves with its reply once
   * that fence committed; rejects with the fence's error (or the read's) otherwise. `dispatch`
   * must send synchronously when the session is connected.
   */
  read<T>(kind: FenceKind, dispatch: () => Promise<Reply<T>>, gaveUp: () => boolean): Promise<Reply<T>> {
    return new Promise<Reply<T>>((resolve, reject) => {
      this.#queue.push({ kind, dispatch, gaveUp, resolve: resolve as (reply: Reply<unknown>) => void, reject });
      if (!this.#scheduled) {
        this.#scheduled = true;
        process.nextTick(() => this.#flush());
      }
    });
  }

  #flush(): void {
    if (!this.#host.connected()) {
      // Held until connected (each caller's deadline and signal bound its own wait).
      this.#host.waitConnected().then(
        () => this.#flush(),
        (err: unknown) => {
          this.#scheduled = false;
          const queue = this.#queue;
          this.#queue = [];
          for (const w of queue) w.reject(err);
        },
      );
      return;
    }
    this.#scheduled = false;
    const queue = this.#queue.filter((w) => !w.gaveUp());
    this.#queue = [];
    if (queue.length === 0) return;
    const kind: FenceKind = queue.some((w) => w.kind === 'write') ? 'write' : 'sync';
    this.#fences++;
    const fence = this.#host.send(kind);
    fence.catch(noop);
    for (const w of queue) {
      let read: Promise<Reply<unknown>>;
      try {
        read = w.dispatch();
      } catch (err) {
        w.reject(err);
        continue;
      }
      settle(w, kind, fence, read);
    }
  }
}

/** The read's reply, once its fence is known to have committed (the fence's reply comes first on the connection). */
function settle(w: Waiting, kind: FenceKind, fence: Promise<number>, read: Promise<Reply<unknown>>): void {
  read.then(
    (reply) =>
      fence.then(
        (err) => (err === 0 ? w.resolve(reply) : w.reject(fromCode(err, {}, `${fromCode(err).codeName}: the ${kind} this read was sent behind failed, so the read proves nothing`))),
        (err: unknown) => w.reject(err),
      ),
    (err: unknown) => w.reject(err),
  );
}

/**
 * In-process hand-offs (the `localQueue` option of {@link Mutex}): the contenders of one process
 * for one lock queue here, behind a single lock node, instead of each taking a node of its own.
 *
 * - The first local contender takes the lock node through the acquire engine, like any acquire.
 *   While it is held, the hold passes from one local contender to the next in FIFO order with no
 *   server round trip.
 * - Fairness toward other processes: once another contender is seen queued on the lock path
 *   (a child watch on it, set when the node is taken), at most `maxHandoffs` more local hand-offs
 *   happen; then the node is released, and local contenders still waiting queue again behind
 *   the others with a new node.
 * - Every local holder gets its own lease core: its signal aborts when the node's hold is at risk
 *   (the node's guard) or when it releases. The fencing token is the node's: local holders of one
 *   node share it (they are one session; the token still grows between nodes, so between
 *   processes).
 */
import { setLongTimeout, type LongTimeout, type WatchedEvent, type ZooKeeper } from '@zk/protocol';
import { LockAbortedError, LockTimeoutError } from '../errors.js';
import { abortCore, reasonOf, RELEASED, revocationOf, signalOf, type LeaseCore } from '../lease.js';

/** What the queue needs from its lock. */
export interface LocalQueueSpec {
  readonly zk: ZooKeeper;
  readonly path: string;
  /** At most this many local hand-offs once another process is seen waiting. */
  readonly maxHandoffs: number;
  /** Takes the lock node (0: one try) and starts its guard. */
  acquireNode(timeout: number | undefined, signal: AbortSignal): Promise<LeaseCore>;
}

interface Waiter {
  readonly timeout: number | undefined;
  readonly resolve: (core: LeaseCore) => void;
  readonly reject: (err: unknown) => void;
  readonly onEnd: () => void;
  done: boolean;
  cleanup: () => void;
}

/** The lock node while this process holds it. */
interface Hold {
  readonly core: LeaseCore;
  /** Local hand-offs since another process was seen waiting. */
  handoffs: number;
  othersWaiting: boolean;
  /** The child watch on the lock path, while armed. */
  watching: ((e: WatchedEvent) => void) | undefined;
  /** The local holder, if any. */
  holder: LeaseCore | undefined;
  /** A hand-off is scheduled for the next turn of the event loop. */
  handingOff: boolean;
}

/** The local queue of one lock (one lock object). */
export class LocalQueue {
  readonly #spec: LocalQueueSpec;
  readonly #waiters: Waiter[] = [];
  #hold: Hold | undefined;
  /** The node acquire in flight, if any; `settled` once it is over (and its node removed on failure). */
  #acquiring: { controller: AbortController; settled: Promise<void> } | undefined;

  constructor(spec: LocalQueueSpec) {
    this.#spec = spec;
  }

  /** Local contenders waiting (not counting the holder). */
  get waiting(): number {
    return this.#waiters.length;
  }

  /** Queues one contender; resolves with its lease core once it holds the lock. */
  acquire(timeout: number | undefined, signal: AbortSignal | undefined, onEnd: () => void): Promise<LeaseCore> {
    const path = this.#spec.path;
    return new Promise<LeaseCore>((resolve, reject) => {
      let timer: LongTimeout | undefined;
      const onAbort = () => this.#leave(waiter, new LockAbortedError(path, signal?.reason));
      const waiter: Waiter = {
        timeout,
        resolve,
        reject,
        onEnd,
        done: false,
        cleanup: () => {
          timer?.clear();
          signal?.removeEventListener('abort', onAbort);
        },
      };
      this.#waiters.push(waiter);
      signal?.addEventListener('abort', onAbort, { once: true });
      if (timeout !== undefined && timeout > 0) timer = setLongTimeout(() => this.#leave(waiter, new LockTimeoutError(path, timeout)), timeout);
      if (timeout === 0 && (this.#hold !== undefined || this.#acquiring !== undefined)) {
        // Held here already, or being taken for others: a try-once contender does not wait.
        this.#leave(waiter, new LockTimeoutError(path, 0));
        return;
      }
      this.#pump();
    });
  }

  /** A waiter gives up (timeout, abort): out of the queue; the node attempt stops when nobody waits. */
  #leave(waiter: Waiter, err: unknown): void {
    if (waiter.done) return;
    waiter.done = true;
    waiter.cleanup();
    const i = this.#waiters.indexOf(waiter);
    if (i >= 0) this.#waiters.splice(i, 1);
    if (this.#waiters.length === 0 && this.#acquiring) {
      // The last contender gone: stop taking the node, and reject once its node is removed (as a
      // timed-out or aborted acquire leaves no node behind when it rejects).
      const { controller, settled } = this.#acquiring;
      controller.abort(err);
      void settled.then(() => waiter.reject(err));
    } else waiter.reject(err);
  }

  /** Takes the node when contenders wait and nothing holds or takes it; hands a free hold on. */
  #pump(): void {
    if (this.#waiters.length === 0) return;
    const hold = this.#hold;
    if (hold) {
      if (!hold.holder && !hold.handingOff) this.#grant(hold);
      return;
    }
    if (this.#acquiring) return;
    const controller = new AbortController();
    // A try-once node attempt only when every contender asked to try once.
    const once = this.#waiters.every((w) => w.timeout === 0);
    const settled = this.#spec.acquireNode(once ? 0 : undefined, controller.signal).then(
      (core) => {
        this.#acquiring = undefined;
        if (controller.signal.aborted || this.#waiters.length === 0) {
          // Taken just as the last contender left: given up again (awaited, so nothing is left).
          return core.end().then(
            () => this.#pump(),
            () => this.#pump(),
          );
        }
        const taken: Hold = { core, handoffs: 0, othersWaiting: false, watching: undefined, holder: undefined, handingOff: false };
        this.#hold = taken;
        this.#watchOthers(taken);
        signalOf(core).addEventListener('abort', () => this.#lost(taken), { once: true });
        this.#grant(taken);
      },
      (err: unknown) => {
        this.#acquiring = undefined;
        if (controller.signal.aborted) return this.#pump(); // every waiter left, each with its own reason
        // The node attempt failed for everyone who waited on it (a try-once: only for those).
        for (const w of [...this.#waiters]) if (!once || w.timeout === 0) this.#leave(w, err);
        this.#pump();
      },
    );
    this.#acquiring = { controller, settled };
  }

  /** Gives the hold to the first waiter. */
  #grant(hold: Hold): void {
    const waiter = this.#waiters.shift();
    if (!waiter) return;
    waiter.done = true;
    waiter.cleanup();
    const node = hold.core;
    const onLost = () => abortCore(local, reasonOf(node));
    const local: LeaseCore = {
      zk: node.zk,
      lockPath: node.lockPath,
      nodePath: node.nodePath,
      fencingToken: node.fencingToken,
      sessionId: node.sessionId,
      controller: undefined,
      aborted: false,
      reason: undefined,
      // The node's own: a revocation request reaches every local holder of the node.
      revocation: revocationOf(node),
      revocable: node.revocable,
      refs: 1,
      released: false,
      end: async () => {
        local.released = true;
        signalOf(node).removeEventListener('abort', onLost);
        waiter.onEnd();
        abortCore(local, RELEASED);
        await this.#released(hold, local);
      },
      // The node's clock check: its loss reaches this holder through onLost, at once.
      check: () => node.check(),
    };
    if (node.aborted) onLost();
    else signalOf(node).addEventListener('abort', onLost, { once: true });
    hold.holder = local;
    waiter.resolve(local);
  }

  /** The local holder released: hand on, or give the node up. */
  async #released(hold: Hold, local: LeaseCore): Promise<void> {
    if (hold.holder !== local) return;
    hold.holder = undefined;
    const atRisk = hold.core.aborted;
    const fair = !hold.othersWaiting || hold.handoffs < this.#spec.maxHandoffs;
    if (!atRisk && this.#waiters.length > 0 && fair) {
      if (hold.othersWaiting) hold.handoffs++;
      // On the next turn of the event loop, not in this microtask chain: hand-offs that needed no
      // I/O would otherwise keep the loop from reading the socket, and the child event that says
      // another process waits (the fairness bound) would never be seen.
      hold.handingOff = true;
      setImmediate(() => {
        hold.handingOff = false;
        if (this.#hold === hold && !hold.holder) this.#grant(hold);
      });
      return;
    }
    await this.#giveUp(hold);
    this.#pump();
  }

  /** The node's hold is at risk: the local holder's signal aborted with it; the node goes once it releases. */
  #lost(hold: Hold): void {
    if (!hold.holder && !hold.handingOff) void this.#giveUp(hold).then(() => this.#pump());
  }

  async #giveUp(hold: Hold): Promise<void> {
    if (this.#hold !== hold) return;
    this.#hold = undefined;
    this.#unwatch(hold);
    const lost = hold.core.aborted;
    const ended = hold.core.end();
    // A lost hold's node is deleted in the background (as a lost lease's is); a released one first.
    if (lost) ended.catch(() => undefined);
    else await ended;
  }

  /**
   * Learns whether another contender queues on the lock path: one listing with a child watch. A
   * child appearing (any other contender) fires it; it is not set again (once seen, the bound
   * applies until the node is given up).
   */
  #watchOthers(hold: Hold): void {
    const { zk, path } = this.#spec;
    let fired = false;
    const listener = (e: WatchedEvent) => {
      if (e.type === 'ChildWatchRemoved') return;
      fired = true;
      hold.watching = undefined;
      hold.othersWaiting = true;
    };
    hold.watching = listener;
    zk.getChildren(path, { watch: listener }).then(
      (children) => {
        if (fired) return;
        if (children.length > 1) hold.othersWaiting = true;
        // Others seen, or the node given up before this reply registered the watch: drop it.
        if (children.length > 1 || this.#hold !== hold) this.#removeWatch(listener);
        if (children.length > 1) hold.watching = undefined;
      },
      () => {
        // Cut off or refused (no watch was set): count others as waiting, so the bound applies.
        hold.othersWaiting = true;
        hold.watching = undefined;
      },
    );
  }

  #unwatch(hold: Hold): void {
    const listener = hold.watching;
    hold.watching = undefined;
    if (listener) this.#removeWatch(listener);
  }

  #removeWatch(listener: (e: WatchedEvent) => void): void {
    const { zk, path } = this.#spec;
    if (zk.state === 'connected') zk.removeWatches(path, { kind: 'child', listener }).catch(() => zk.removeLocalWatch('child', path, listener));
    else zk.removeLocalWatch('child', path, listener);
  }
}

/**
 * Watch events delivered to their listeners in order, but never inside the socket read path: a
 * slow listener must not delay replies or pings (design.md §5). setImmediate also lets the
 * continuation of the request that registered a watch run before an event for it fires.
 */
import { debug, eventChannel } from '../diagnostics.js';
import type { WatcherEvent } from '../jute/proto.js';
import { reportListenerError } from '../util/listener-errors.js';
import { stripChroot } from '../util/paths.js';
import { eventTypeOf, type WatchListener, type WatchRegistry } from './watches.js';

/** The notifications of one session, queued as the connection hands them up and drained on a later turn. */
export class EventDelivery {
  readonly #watches: WatchRegistry;
  readonly #chroot: string;
  readonly #sessionId: () => bigint;
  readonly #queue: Array<{ event: WatcherEvent; zxid: bigint }> = [];
  #drainScheduled = false;

  constructor(watches: WatchRegistry, chroot: string, sessionId: () => bigint) {
    this.#watches = watches;
    this.#chroot = chroot;
    this.#sessionId = sessionId;
  }

  /** Queues a notification (called from the read path); its listeners hear of it on a later turn. */
  enqueue(event: WatcherEvent, zxid: bigint): void {
    this.#queue.push({ event, zxid });
    if (!this.#drainScheduled) {
      this.#drainScheduled = true;
      setImmediate(() => this.#drain());
    }
  }

  #drain(): void {
    this.#drainScheduled = false;
    const queue = this.#queue.splice(0);
    for (const { event, zxid } of queue) {
      const type = eventTypeOf(event.type);
      if (!type || event.path === null) continue;
      const path = stripChroot(this.#chroot, event.path);
      const listeners = this.#watches.take(type, path);
      if (eventChannel.hasSubscribers) eventChannel.publish({ sessionId: this.#sessionId(), type, path, listeners: listeners.size });
      for (const listener of listeners) deliver(listener, { type, path, zxid });
    }
  }
}

/**
 * Calls one watch listener. A throw does not stop the others (as the Java client's event thread
 * goes on), nor reach the session: it is re-thrown on the next tick, as an uncaught exception,
 * the way Node's EventTarget reports a throwing listener (util/listener-errors.ts).
 */
export function deliver(listener: WatchListener, event: Parameters<WatchListener>[0]): void {
  try {
    listener(event);
  } catch (err) {
    debug('watch listener threw: %s', (err as Error)?.message);
    reportListenerError(err);
  }
}

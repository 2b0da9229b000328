/**
 * What happens when an application's listener throws (a watch, a state-change, or a cache
 * listener): what Node's EventTarget does. The dispatch goes on to the other listeners, and the
 * error is re-thrown on a later tick (`process.nextTick`), where it is the process's
 * `'uncaughtException'`: the process exits with it unless the application handles that event.
 * Node documents this for EventTarget and AbortSignal listeners ("Throwing within an event
 * listener will not stop the other registered handlers from being invoked"; the error "is
 * treated as an uncaught exception on process.nextTick()"). Swallowing it, as before, hid bugs;
 * throwing it into the caller (the socket's read path, a state transition) would break the
 * client's own state.
 */

/** Calls `listener(...args)`; a throw is reported as an uncaught exception on the next tick, and returns. */
export function callListener<A extends unknown[]>(listener: (...args: A) => unknown, ...args: A): void {
  try {
    listener(...args);
  } catch (err) {
    reportListenerError(err);
  }
}

/** Re-throws `err` on the next tick, outside the dispatch loop (Node's EventTarget `emitUncaughtException`). */
export function reportListenerError(err: unknown): void {
  process.nextTick(() => {
    throw err;
  });
}

/**
 * The listeners and streams of a cache's events (TreeCache, NodeCache, PathChildrenCache): each
 * event goes to every listener (synchronously; a throw is re-thrown on the next tick, the others still called) and every open stream
 * (queued while its loop is busy); when the cache ends, the streams end or fail with its error.
 */
import { InvalidArgumentError } from '../errors.js';
import { callListener } from '../util/listener-errors.js';
import { AsyncQueue } from '../util/queue.js';

/** A cache's listeners and event streams. */
export class EventHub<E> {
  readonly #listeners = new Set<(event: E) => void>();
  readonly #streams = new Set<AsyncQueue<E>>();
  /** Set once the cache is ending: how it ends (resolves on close, rejects with the error that ended it). */
  #ending: Promise<void> | undefined;

  /** Adds a listener; returns a function that removes it. */
  listen(listener: (event: E) => void): () => void {
    if (typeof listener !== 'function') throw new InvalidArgumentError('listener', 'must be a function');
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /**
   * A stream of the events from now on, after `first`. Ending the loop or aborting `signal`
   * unsubscribes. A stream opened once the cache is ending ends (or fails) as the cache does.
   */
  stream(signal: AbortSignal | undefined, first: Iterable<E> = []): AsyncIterableIterator<E> {
    const queue: AsyncQueue<E> = new AsyncQueue<E>({ signal, onReturn: () => this.#streams.delete(queue) });
    for (const event of first) queue.push(event);
    if (this.#ending) {
      this.#ending.then(
        () => queue.end(),
        (err: unknown) => queue.fail(err),
      );
    } else {
      this.#streams.add(queue);
    }
    return queue;
  }

  /** Delivers `event` to every listener and stream. */
  emit(event: E): void {
    for (const listener of [...this.#listeners]) {
      // A throwing listener stops neither the others nor the cache; its error is re-thrown on
      // the next tick, as Node's EventTarget does (util/listener-errors.ts).
      callListener(listener, event);
    }
    for (const stream of this.#streams) stream.push(event);
  }

  /** The cache is ending, as `done` will settle: streams opened from now on follow it. */
  ending(done: Promise<void>): void {
    this.#ending = done;
  }

  /** The cache has ended: drops the listeners, ends the streams (or fails them with `error`). */
  finish(error: Error | undefined): void {
    this.#listeners.clear();
    for (const stream of this.#streams) {
      if (error) stream.fail(error);
      else stream.end();
    }
    this.#streams.clear();
  }
}

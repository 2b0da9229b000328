/**
 * A queue's items as an async iterator with back-pressure: one `take` per `next()`, none ahead.
 */
import type { QueueItem } from './item.js';

/**
 * The iterator `queue.items()` returns. `next()` first completes the item it handed out last (the
 * loop came back for more, so that item is done), then takes the next one; `return()` (a
 * `break`, a throw in the loop, `[Symbol.asyncDispose]`) releases an item not completed, so
 * another consumer gets it. Calls are served one after the other.
 */
export class QueueIterator<T> implements AsyncIterableIterator<QueueItem<T>> {
  readonly #take: (signal: AbortSignal | undefined) => Promise<QueueItem<T>>;
  readonly #signal: AbortSignal;
  /** Ends a pending take when `return()` is called. */
  readonly #stop = new AbortController();
  #current: QueueItem<T> | undefined;
  #done = false;
  #chain: Promise<unknown> = Promise.resolve();

  /** @internal Made by `items()`. */
  constructor(take: (signal: AbortSignal | undefined) => Promise<QueueItem<T>>, signal: AbortSignal | undefined) {
    this.#take = take;
    this.#signal = signal ? AbortSignal.any([signal, this.#stop.signal]) : this.#stop.signal;
  }

  /** Completes the previous item, then waits for the next one. */
  next(): Promise<IteratorResult<QueueItem<T>>> {
    return this.#serial(async () => {
      if (this.#done) return { done: true, value: undefined };
      const previous = this.#current;
      this.#current = undefined;
      try {
        await previous?.complete();
        const item = await this.#take(this.#signal);
        if (this.#done && item.held) {
          await item.release(); // return() came first: give it back (an item taken without a lock path is handed over all the same)
          return { done: true, value: undefined };
        }
        this.#current = item;
        return { done: false, value: item };
      } catch (err) {
        if (this.#stop.signal.aborted) return { done: true, value: undefined }; // return() ended the wait
        this.#done = true;
        throw err;
      }
    });
  }

  /** Ends the iteration, releasing the item of the current turn unless it was completed. */
  return(): Promise<IteratorResult<QueueItem<T>>> {
    this.#done = true;
    this.#stop.abort(new Error('iteration ended'));
    return this.#serial(async () => {
      const current = this.#current;
      this.#current = undefined;
      await current?.release();
      return { done: true, value: undefined };
    });
  }

  /** Same as `return()`. */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.return();
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  #serial<R>(work: () => Promise<R>): Promise<R> {
    const run = this.#chain.then(work, work);
    this.#chain = run.catch(() => undefined);
    return run;
  }
}

/**
 * A push-to-pull queue: events pushed by a cache, read with `for await`. Ending the loop or
 * aborting its signal unsubscribes; `fail` makes the next read throw.
 */
export class EventStream<T> implements AsyncIterableIterator<T> {
  readonly #items: T[] = [];
  #waiting: { resolve: (r: IteratorResult<T>) => void; reject: (e: unknown) => void } | undefined;
  #done = false;
  #error: unknown;
  readonly #onReturn: () => void;
  readonly #signal: AbortSignal | undefined;
  readonly #onAbort = () => this.fail(this.#signal?.reason);

  /** `onReturn` runs once, when the stream ends for any reason. */
  constructor(onReturn: () => void, signal?: AbortSignal) {
    this.#onReturn = onReturn;
    this.#signal = signal;
    if (signal?.aborted) this.fail(signal.reason);
    else signal?.addEventListener('abort', this.#onAbort, { once: true });
  }

  /** Queues `item` (or hands it to a waiting read). */
  push(item: T): void {
    if (this.#done) return;
    if (this.#waiting) {
      const { resolve } = this.#waiting;
      this.#waiting = undefined;
      resolve({ value: item, done: false });
    } else this.#items.push(item);
  }

  /** Ends the stream after the queued items. */
  end(): void {
    this.#finish(undefined);
  }

  /** Ends the stream: the queued items, then `error`. */
  fail(error: unknown): void {
    this.#finish(error ?? new Error('stream failed'));
  }

  next(): Promise<IteratorResult<T>> {
    if (this.#items.length > 0) return Promise.resolve({ value: this.#items.shift() as T, done: false });
    if (this.#done) {
      if (this.#error === undefined) return Promise.resolve({ value: undefined, done: true });
      const error = this.#error;
      this.#error = undefined;
      return Promise.reject(error);
    }
    return new Promise((resolve, reject) => (this.#waiting = { resolve, reject }));
  }

  return(): Promise<IteratorResult<T>> {
    this.#items.length = 0;
    this.#finish(undefined);
    this.#error = undefined;
    return Promise.resolve({ value: undefined, done: true });
  }

  [Symbol.asyncIterator](): AsyncIterableIterator<T> {
    return this;
  }

  #finish(error: unknown): void {
    if (this.#done) return;
    this.#done = true;
    this.#error = error;
    this.#signal?.removeEventListener('abort', this.#onAbort);
    this.#onReturn();
    if (this.#waiting && this.#items.length === 0) {
      const { resolve, reject } = this.#waiting;
      this.#waiting = undefined;
      if (error === undefined) resolve({ value: undefined, done: true });
      else {
        this.#error = undefined;
        reject(error);
      }
    }
  }
}

/**
 * A push queue read as an async iterator: the producer pushes, one consumer pulls with
 * `for await`. Ending the loop early (break, return, throw) or aborting the signal runs
 * `onReturn` once, which is where a stream unregisters itself.
 */
import { abortReason } from './abort.js';

/** @internal */
export class AsyncQueue<T> implements AsyncIterableIterator<T> {
  readonly #items: T[] = [];
  #head = 0;
  #waiter: { resolve: (r: IteratorResult<T>) => void; reject: (e: unknown) => void } | undefined;
  #done = false;
  #error: unknown;
  readonly #onReturn: (() => void) | undefined;
  readonly #signal: AbortSignal | undefined;
  readonly #onAbort = () => this.fail(abortReason(this.#signal as AbortSignal));

  constructor(options: { onReturn?: () => void; signal?: AbortSignal | undefined } = {}) {
    this.#onReturn = options.onReturn;
    this.#signal = options.signal;
    if (this.#signal) {
      if (this.#signal.aborted) queueMicrotask(this.#onAbort);
      else this.#signal.addEventListener('abort', this.#onAbort, { once: true });
    }
  }

  /** True once ended (by the consumer, the producer, an error or the signal). */
  get done(): boolean {
    return this.#done;
  }

  /** Adds an item; ignored after the end. */
  push(item: T): void {
    if (this.#done) return;
    const w = this.#waiter;
    if (w) {
      this.#waiter = undefined;
      w.resolve({ value: item, done: false });
      return;
    }
    this.#items.push(item);
  }

  /** Ends the stream after the queued items. */
  end(): void {
    this.#finish(undefined);
  }

  /** Ends the stream with an error (thrown to the consumer after the queued items). */
  fail(error: unknown): void {
    this.#finish(error ?? new Error('stream failed'));
  }

  #finish(error: unknown): void {
    if (this.#done) return;
    this.#done = true;
    this.#error = error;
    this.#signal?.removeEventListener('abort', this.#onAbort);
    this.#onReturn?.();
    const w = this.#waiter;
    if (w) {
      this.#waiter = undefined;
      if (error === undefined) w.resolve({ value: undefined, done: true });
      else w.reject(error);
    }
  }

  next(): Promise<IteratorResult<T>> {
    if (this.#head < this.#items.length) {
      const value = this.#items[this.#head++] as T;
      if (this.#head > 1024 && this.#head * 2 > this.#items.length) {
        this.#items.splice(0, this.#head);
        this.#head = 0;
      }
      return Promise.resolve({ value, done: false });
    }
    if (this.#done) {
      if (this.#error !== undefined) {
        const e = this.#error;
        this.#error = undefined;
        return Promise.reject(e);
      }
      return Promise.resolve({ value: undefined, done: true });
    }
    return new Promise((resolve, reject) => (this.#waiter = { resolve, reject }));
  }

  return(): Promise<IteratorResult<T>> {
    this.#items.length = 0;
    this.#head = 0;
    this.#error = undefined;
    this.#finish(undefined);
    return Promise.resolve({ value: undefined, done: true });
  }

  [Symbol.asyncIterator](): AsyncIterableIterator<T> {
    return this;
  }
}

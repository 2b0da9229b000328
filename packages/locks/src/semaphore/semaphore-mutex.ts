/**
 * SemaphoreMutex: Curator's InterProcessSemaphoreMutex, wire-compatible with it.
 */
import type { ZooKeeper } from '@zk/protocol';
import type { Lease } from '../lease.js';
import type { LockOptions } from '../locks/lock.js';
import { Semaphore, type SemaphoreAcquireOptions } from './semaphore.js';

/**
 * A non-reentrant mutex across processes: Curator's `InterProcessSemaphoreMutex`, i.e. a
 * {@link Semaphore} with one permit on the same layout (`locks/`, `leases/`), so Java processes
 * using `InterProcessSemaphoreMutex` and Node processes exclude each other.
 *
 * Unlike {@link Mutex} it is not reentrant: a second acquire waits for the first lease to be
 * released, even from the same async flow (acquiring it again inside `run` waits until its
 * timeout). Any flow may release the lease. Use {@link Mutex} unless you need this layout.
 *
 * @example
 * ```ts
 * const mutex = new SemaphoreMutex(zk, '/locks/legacy-job');
 * await mutex.run(async (lease) => job({ signal: lease.signal }));
 * ```
 */
export class SemaphoreMutex {
  readonly #semaphore: Semaphore;

  /** Bad input (path, suspendedGrace, data) throws InvalidArgumentError; nothing is sent. */
  constructor(zk: ZooKeeper, path: string, options: LockOptions = {}) {
    this.#semaphore = new Semaphore(zk, path, { ...options, maxLeases: 1 });
  }

  /** The client. */
  get zk(): ZooKeeper {
    return this.#semaphore.zk;
  }
  /** The lock path. */
  get path(): string {
    return this.#semaphore.path;
  }

  /** Acquires the lock: see {@link Semaphore.acquire}. */
  acquire(options: SemaphoreAcquireOptions = {}): Promise<Lease> {
    return this.#semaphore.acquire(options);
  }

  /** Acquires only if free right now; never waits. Resolves `undefined` when held. */
  tryAcquire(options: Omit<SemaphoreAcquireOptions, 'timeout'> = {}): Promise<Lease | undefined> {
    return this.#semaphore.tryAcquire(options);
  }

  /** Runs `fn` while holding the lock and releases it afterwards (not reentrant: see the class). */
  run<T>(fn: (lease: Lease) => Promise<T> | T, options: SemaphoreAcquireOptions = {}): Promise<T> {
    return this.#semaphore.run(fn, options);
  }
}

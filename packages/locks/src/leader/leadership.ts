/**
 * What the leader recipes share: the leadership handle (a {@link Lease} on the leader's node, with
 * the participant id), participant ids, and the participant listing both Curator recipes use.
 */
import { InvalidArgumentError, NoNodeError, type Transaction, type ZooKeeper } from '@zk/protocol';
import { LeaseReleasedError, LockAbortedError, LockTimeoutError } from '../errors.js';
import type { AttemptKind } from '../internal/attempt.js';
import type { Lease } from '../lease.js';
import { sortChildren } from '../internal/names.js';

/** Largest participant id, in UTF-8 bytes (ids are stored as node data and listed often). */
export const MAX_PARTICIPANT_ID_BYTES = 4096;

/** A UTF-16 surrogate without its pair: not representable in UTF-8. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** @internal Checks a participant id: a well-formed string of at most {@link MAX_PARTICIPANT_ID_BYTES} UTF-8 bytes. */
export function participantId(id: unknown): string {
  if (id === undefined) return '';
  if (typeof id !== 'string') throw new InvalidArgumentError('id', `must be a string, got ${typeof id}`);
  if (LONE_SURROGATE.test(id)) throw new InvalidArgumentError('id', 'must be well-formed Unicode (it contains a lone surrogate, which UTF-8 cannot carry)');
  const bytes = Buffer.byteLength(id);
  if (bytes > MAX_PARTICIPANT_ID_BYTES) throw new InvalidArgumentError('id', `must be at most ${MAX_PARTICIPANT_ID_BYTES} UTF-8 bytes, got ${bytes}`);
  return id;
}

/**
 * @internal A wait for leadership (`LeaderLatch.leadership()`, `LeaderSelector.run()`): its
 * errors speak of leadership, not of a lock.
 */
export const LEADING: AttemptKind = {
  doing: 'waiting for leadership of',
  timeout: (path, ms) => new LockTimeoutError(path, ms, ms === 0 ? `leadership of ${path} is not ours right now` : `leadership of ${path} not gained within ${ms} ms`),
  aborted: (path, reason) => new LockAbortedError(path, reason, `waiting for leadership of ${path} was aborted`),
};

/** @internal A lock's timeout or abort from a leadership wait, said as leadership's ({@link LEADING}); any other error as it is. */
export function asLeadershipError(path: string, err: unknown): unknown {
  if (err instanceof LockTimeoutError && err.constructor === LockTimeoutError) return LEADING.timeout(path, err.timeout);
  if (err instanceof LockAbortedError && err.constructor === LockAbortedError) return LEADING.aborted(path, err.cause);
  return err;
}

/** One participant of an election, as Curator's `Participant` describes it. */
export interface Participant {
  /** The id the participant gave (its node's data, UTF-8). */
  readonly id: string;
  /** Whether it is the leader (the first node in Curator's order). */
  readonly isLeader: boolean;
  /** The name of its node under the election path. */
  readonly node: string;
}

/**
 * @internal The participants under `path`, in Curator's order (sorted on what follows
 * `lockName`), leader first. Nodes that vanish while listed are skipped.
 */
export async function listParticipants(zk: ZooKeeper, path: string, lockName: string): Promise<Participant[]> {
  let children: string[];
  try {
    children = await zk.getChildren(path);
  } catch (err) {
    if (err instanceof NoNodeError) return [];
    throw err;
  }
  const sorted = sortChildren(children, [lockName]);
  const data = await Promise.all(sorted.map((name) => zk.getData(`${path}/${name}`).then((r) => r.data, (err: unknown) => (err instanceof NoNodeError ? undefined : Promise.reject(err)))));
  const participants: Participant[] = [];
  for (let i = 0; i < sorted.length; i++) {
    const bytes = data[i];
    if (bytes === undefined) continue;
    participants.push({ id: Buffer.from(bytes).toString('utf8'), isLeader: participants.length === 0, node: sorted[i] as string });
  }
  return participants;
}

/**
 * One term of leadership: a {@link Lease} on the leader's node, with the participant's id.
 *
 * The same promises as a lease: `signal` aborts as soon as leadership is at risk (the session
 * suspended past the grace, lost or expired, the node deleted) or is given up, and before any other
 * participant can become leader; `fencingToken` grows with every term, whoever holds it (the
 * node's creation zxid: every term has a node of its own); `fenced()` writes only while this term's
 * node exists. Stop the leader's work when `signal` aborts.
 */
export class Leadership implements AsyncDisposable {
  readonly #lease: Lease;
  readonly #signal: AbortSignal;
  /** Aborted first thing on release, so the signal says so before the node goes. */
  readonly #released = new AbortController();
  /** The participant id of the leader (ours). */
  readonly id: string;

  /**
   * @internal `cancel`: aborts the term from outside (close, interrupt, the run's signal); the
   * term's signal then aborts with a {@link LeaseReleasedError} whose `cause` is `cancel`'s reason.
   */
  constructor(lease: Lease, id: string, cancel?: AbortSignal) {
    this.#lease = lease;
    this.id = id;
    this.#signal = AbortSignal.any([lease.signal, this.#released.signal]);
    if (cancel === undefined) return;
    const interrupt = () => {
      const reason: unknown = cancel.reason;
      if (reason instanceof LeaseReleasedError) this.#released.abort(reason);
      else this.#end(`leadership of ${this.path} interrupted`, reason);
    };
    if (cancel.aborted) interrupt();
    else {
      cancel.addEventListener('abort', interrupt, { once: true });
      this.#signal.addEventListener('abort', () => cancel.removeEventListener('abort', interrupt), { once: true });
    }
  }

  /** Ends the term from this side: the signal aborts with a {@link LeaseReleasedError}. */
  #end(message: string, cause?: unknown): void {
    if (!this.#released.signal.aborted) this.#released.abort(new LeaseReleasedError(this.path, message, cause === undefined ? undefined : { cause }));
  }

  /** The election path. */
  get path(): string {
    return this.#lease.path;
  }
  /** The path of the node that makes us leader. */
  get node(): string {
    return this.#lease.node;
  }
  /** Grows with every term of leadership on this path (the node's creation zxid). */
  get fencingToken(): bigint {
    return this.#lease.fencingToken;
  }
  /**
   * Aborts as soon as this term is at risk or over; `reason` says why, as a lease's does: a
   * {@link LeaseReleasedError} when this process ended it (`release()`, a selector's
   * `interruptLeadership()` or `close()`), a `LeaseLostError` (`code` `'lost'` or `'revoked'`) when
   * it was taken away.
   */
  get signal(): AbortSignal {
    return this.#signal;
  }
  /** True until the term is over or at risk. Reads the clock, as {@link Lease.held} does. */
  get held(): boolean {
    return this.#lease.held && !this.#signal.aborted;
  }
  /** Throws the reason if the term is over or at risk. Reads the clock, as {@link Lease.assertHeld} does. */
  assertHeld(): void {
    this.#lease.assertHeld();
    if (this.#signal.aborted) throw this.#signal.reason;
  }
  /** A transaction that commits only while this term's node exists (see {@link Lease.fenced}). */
  fenced(): Transaction {
    return this.#lease.fenced();
  }
  /**
   * Ends this term (idempotent): `signal` aborts at once, then the node is deleted and the next
   * participant leads.
   */
  release(): Promise<void> {
    this.#end(`leadership of ${this.path} released`);
    return this.#lease.release();
  }
  /** `await using leadership = await latch.leadership()`: {@link Leadership.release} at the end of the scope. */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.release();
  }
}

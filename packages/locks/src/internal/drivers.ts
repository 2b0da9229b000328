/**
 * Lock drivers: the pure decision each recipe makes from the sorted children and our node
 * (Curator's `LockInternalsDriver.getsTheLock`). The acquire engine does the I/O.
 */
import { LATCH_LOCK_NAME, LATCH_LOCK_NAMES, MUTEX_LOCK_NAME, MUTEX_LOCK_NAMES, READ_LOCK_NAME, READ_WRITE_LOCK_NAMES, WRITE_LOCK_NAME } from './names.js';

/** What the engine should do next. */
export type Decision =
  /** We hold the lock. */
  | { readonly kind: 'holds' }
  /**
   * Wait for this sibling to go (watch it with getData, so a vanished node leaves no watch).
   * `thenHolds`: once it is deleted we hold the lock, with no need to list again. Nodes ahead
   * of ours all exist already (sequence numbers only grow), so this is known now.
   */
  | { readonly kind: 'watch'; readonly node: string; readonly thenHolds: boolean }
  /** Our node is not among the children: it was deleted (session expired, or by someone else). */
  | { readonly kind: 'lost' };

/** A recipe's naming and decision rule. */
export interface LockDriver {
  /** The name part after the protected prefix (`lock-`, `__READ__`, `__WRIT__`). */
  readonly lockName: string;
  /** The lock names that define the sort key of siblings. */
  readonly sortNames: readonly string[];
  /** The decision for `ours` among `sorted` (children in Curator's order). */
  decide(sorted: readonly string[], ours: string): Decision;
}

/** Curator's standard rule with one lease: hold when first, else watch the node right before ours. */
function firstInLine(sorted: readonly string[], ours: string): Decision {
  const i = sorted.indexOf(ours);
  if (i < 0) return { kind: 'lost' };
  if (i === 0) return { kind: 'holds' };
  return { kind: 'watch', node: sorted[i - 1] as string, thenHolds: i === 1 };
}

/** `InterProcessMutex`: FIFO, one holder. */
export const mutexDriver: LockDriver = { lockName: MUTEX_LOCK_NAME, sortNames: MUTEX_LOCK_NAMES, decide: firstInLine };

/** `LeaderLatch`: the first latch node leads; each other one watches the node right before it. */
export const latchDriver: LockDriver = { lockName: LATCH_LOCK_NAME, sortNames: LATCH_LOCK_NAMES, decide: firstInLine };

/** The write side of `InterProcessReadWriteLock`: first among readers and writers. */
export const writeDriver: LockDriver = { lockName: WRITE_LOCK_NAME, sortNames: READ_WRITE_LOCK_NAMES, decide: firstInLine };

/**
 * The read side: hold when no writer is ahead of us; otherwise watch the *nearest* writer ahead
 * (Curator watches the first one, which wakes every reader behind it at each write release; the
 * nearest is enough because the writers ahead of it must go first anyway). A writer's node is
 * recognised as Curator does, by containing `__WRIT__`.
 */
export const readDriver: LockDriver = {
  lockName: READ_LOCK_NAME,
  sortNames: READ_WRITE_LOCK_NAMES,
  decide(sorted, ours) {
    let nearestWriter = -1;
    let firstWriter = -1;
    for (let i = 0; i < sorted.length; i++) {
      const node = sorted[i] as string;
      if (node === ours) {
        if (nearestWriter < 0) return { kind: 'holds' };
        return { kind: 'watch', node: sorted[nearestWriter] as string, thenHolds: firstWriter === nearestWriter };
      }
      if (node.includes(WRITE_LOCK_NAME)) {
        if (firstWriter < 0) firstWriter = i;
        nearestWriter = i;
      }
    }
    return { kind: 'lost' };
  },
};

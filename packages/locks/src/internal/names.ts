/**
 * Lock node names, compatible with Apache Curator 5 so Node and Java processes queue in one
 * order on the same path. Pure.
 *
 * - A protected name starts with `_c_<uuid>-` (Curator's `ProtectedUtils`): the per-attempt id
 *   lets a client find its own node after a create whose reply was lost.
 * - The mutex appends `lock-`; the read-write lock `__READ__` or `__WRIT__` (same length on
 *   purpose in Curator). The server appends a 10-digit sequence.
 * - Sorting: Curator's `StandardLockInternalsDriver.fixForSorting` keeps what follows the last
 *   occurrence of the lock name (the sequence); the read-write lock applies it for `__READ__`
 *   then for `__WRIT__`. Names that contain neither sort by their whole name, as in Curator.
 */
import { randomUUID } from 'node:crypto';

/** Curator's protected-name prefix. */
export const PROTECTED_PREFIX = '_c_';
/** `_c_` + a 36-character UUID + `-`. */
const PROTECTED_LENGTH = PROTECTED_PREFIX.length + 36 + 1;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** `InterProcessMutex`'s lock name. */
export const MUTEX_LOCK_NAME = 'lock-';
/** `InterProcessReadWriteLock`'s read lock name. */
export const READ_LOCK_NAME = '__READ__';
/** `InterProcessReadWriteLock`'s write lock name. */
export const WRITE_LOCK_NAME = '__WRIT__';

/** `LeaderLatch`'s node name. */
export const LATCH_LOCK_NAME = 'latch-';

/** A new per-attempt id (a random UUID, as Curator uses). */
export function newAttemptId(): string {
  return randomUUID();
}

/** The node name to create (before the server's suffix): `_c_<id>-<lockName>`. */
export function protectedName(attemptId: string, lockName: string): string {
  return `${PROTECTED_PREFIX}${attemptId}-${lockName}`;
}

/** The attempt id of a protected node name, or `undefined` if the name is not protected. */
export function attemptIdOf(nodeName: string): string | undefined {
  if (nodeName.length <= PROTECTED_LENGTH || !nodeName.startsWith(PROTECTED_PREFIX) || nodeName[PROTECTED_LENGTH - 1] !== '-') return undefined;
  const id = nodeName.slice(PROTECTED_PREFIX.length, PROTECTED_LENGTH - 1);
  return UUID.test(id) ? id : undefined;
}

/** Curator's `fixForSorting`: what follows the last `lockName`, or the whole name without it. */
export function fixForSorting(nodeName: string, lockName: string): string {
  const i = nodeName.lastIndexOf(lockName);
  return i >= 0 ? nodeName.slice(i + lockName.length) : nodeName;
}

/** The sort key of a node under a lock that uses `lockNames` (applied in order, as Curator does). */
export function sortKey(nodeName: string, lockNames: readonly string[]): string {
  let key = nodeName;
  for (const name of lockNames) key = fixForSorting(key, name);
  return key;
}

/**
 * Children sorted as Curator sorts them (Java `String.compareTo` on the keys, which compares
 * UTF-16 code units as JavaScript's `<` does). Stable for equal keys.
 */
export function sortChildren(children: readonly string[], lockNames: readonly string[]): string[] {
  const keyed = children.map((name) => ({ name, key: sortKey(name, lockNames) }));
  keyed.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  return keyed.map((k) => k.name);
}

/** Sort-key sets of the two Curator recipes. */
export const MUTEX_LOCK_NAMES: readonly string[] = [MUTEX_LOCK_NAME];
/** `LeaderLatch` sorts on its name. */
export const LATCH_LOCK_NAMES: readonly string[] = [LATCH_LOCK_NAME];
/** The read-write lock sorts on both names (`SortingLockInternalsDriver`). */
export const READ_WRITE_LOCK_NAMES: readonly string[] = [READ_LOCK_NAME, WRITE_LOCK_NAME];

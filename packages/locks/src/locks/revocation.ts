/**
 * Revocation: asking the holder of a lock to give it up, on Curator's protocol (`Revoker`,
 * `RevocationListener`). The request is the lock node's data set to `__REVOKE__`; a holder that
 * opted in watches its own node and sees the change. Nothing is forced: the holder decides.
 */
import { BadVersionError, InvalidArgumentError, NoNodeError, validatePath, type CallOptions, type ZooKeeper } from '@zk/protocol';
import { REVOKE_MESSAGE } from '../internal/revoke-message.js';
import { inspectLock } from './inspect.js';

export { REVOKE_MESSAGE };

/** How often a request is written again when the node's version moved between our read and our write. */
const MAX_VERSION_RETRIES = 3;

/**
 * Asks the holder of the lock node `nodePath` to release it, as Curator's
 * `Revoker.attemptRevoke(client, nodePath)` does: the node's data becomes `__REVOKE__`. Reaches a
 * Curator holder that called `makeRevocable(listener)` and one of ours acquired with
 * `revocable: true` (its `lease.revocationRequested` aborts); any other holder does not notice.
 * Resolves `true` when the request was written, `false` when the node no longer exists (the lock
 * was released meanwhile). A node that is not ephemeral is not a lock node: it is refused with an
 * {@link InvalidArgumentError} instead of having its data overwritten (Curator writes anyway).
 * The request replaces the owner data that `inspectLock` shows.
 *
 * To find the node, use {@link revokeHolders}, {@link inspectLock} or Curator's
 * `getParticipantNodes()`.
 *
 * @example
 * ```ts
 * const { holders } = await inspectLock(zk, '/locks/report');
 * for (const h of holders) await revoke(zk, `/locks/report/${h.node}`);
 * ```
 */
export async function revoke(zk: ZooKeeper, nodePath: string, options: CallOptions = {}): Promise<boolean> {
  validatePath(nodePath);
  for (let attempt = 0; ; attempt++) {
    const stat = await zk.exists(nodePath, options);
    if (!stat) return false;
    if (stat.ephemeralOwner === 0n) throw new InvalidArgumentError('nodePath', `${nodePath} is not ephemeral, so not a lock node; its data is left alone`);
    try {
      // The version read above: the request never lands on a node that changed owner in between.
      await zk.setData(nodePath, REVOKE_MESSAGE, { ...options, version: stat.version });
      return true;
    } catch (err) {
      if (err instanceof NoNodeError) return false;
      // Not written (another request, most likely): safe to read and write again.
      if (!(err instanceof BadVersionError) || attempt >= MAX_VERSION_RETRIES) throw err;
    }
  }
}

/**
 * Asks every current holder of the lock at `lockPath` to release it: the holder of a
 * {@link Mutex} or write lock, every reader of a {@link ReadWriteLock} (Curator's or ours), or
 * the holder of an {@link ExclusiveLock} (whose node is `lockPath` itself). Resolves with the
 * node paths the request was written to (empty when the lock is free).
 */
export async function revokeHolders(zk: ZooKeeper, lockPath: string, options: CallOptions = {}): Promise<string[]> {
  validatePath(lockPath);
  const { holders } = await inspectLock(zk, lockPath);
  let nodes = holders.map((h) => `${lockPath}/${h.node}`);
  if (nodes.length === 0) {
    const stat = await zk.exists(lockPath, options);
    if (stat && stat.ephemeralOwner !== 0n) nodes = [lockPath]; // an ExclusiveLock's node
  }
  const written = await Promise.all(nodes.map((n) => revoke(zk, n, options)));
  return nodes.filter((_, i) => written[i]);
}

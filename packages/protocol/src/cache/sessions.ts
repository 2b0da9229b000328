/**
 * Carrying a cache across sessions. A `ZooKeeper` client ends with its session; Curator's
 * framework instead opens a new session after expiry, and its caches read their level again and
 * report the differences. A cache given a {@link SessionSource} (such as `RenewingClient` of
 * `@zk/locks`) does the same: after expiry it waits for the source's next client, loads the level
 * there, and reports what differs from what it held, computed here.
 */
import type { ZooKeeper } from '../client/zookeeper.js';
import type { CachedNode, NodeChange } from './node-table.js';

/**
 * A chain of sessions: the current client (the next one once the current session has expired),
 * and word of each new one. `RenewingClient` of `@zk/locks` is one.
 */
export interface SessionSource {
  /** The current client; after an expiry, the next one (opened if need be). Rejects when the chain has ended. */
  client(): Promise<ZooKeeper>;
  /** Calls `listener` with each client opened after an expiry; returns a function that stops it. */
  onRenew(listener: (zk: ZooKeeper) => void): () => void;
}

/** True for a {@link SessionSource} (rather than a client). */
export function isSessionSource(value: unknown): value is SessionSource {
  const v = value as Partial<SessionSource> & { addWatch?: unknown };
  return typeof v === 'object' && v !== null && typeof v.addWatch !== 'function' && typeof v.client === 'function' && typeof v.onRenew === 'function';
}

/**
 * The changes that turn `held` (the nodes a cache held, by path) into `found` (the nodes read in
 * the new session, parents first): nodes gone are deleted (deepest first, as the server must have
 * deleted them), a node at a held path with another czxid was deleted and created again, one with
 * another mzxid changed, and new ones were created (parents first).
 */
export function differences(held: ReadonlyMap<string, CachedNode>, found: readonly CachedNode[]): NodeChange[] {
  const now = new Map(found.map((n) => [n.path, n]));
  const out: NodeChange[] = [];
  const gone = [...held.values()].filter((n) => now.get(n.path)?.stat.czxid !== n.stat.czxid);
  gone.sort((a, b) => depth(b.path) - depth(a.path));
  for (const previous of gone) out.push({ type: 'deleted', path: previous.path, previous });
  for (const node of found) {
    const previous = held.get(node.path);
    if (!previous || previous.stat.czxid !== node.stat.czxid) out.push({ type: 'created', path: node.path, node });
    else if (previous.stat.mzxid !== node.stat.mzxid) out.push({ type: 'changed', path: node.path, node, previous });
  }
  return out;
}

function depth(path: string): number {
  return path === '/' ? 0 : path.split('/').length - 1;
}

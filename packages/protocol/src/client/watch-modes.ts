/**
 * Which `WatcherType` a removeWatches or checkWatches of a persistent kind sends (ZOOKEEPER-4472).
 *
 * Servers up to 3.8 know only Children (1), Data (2) and Any (3) there (Persistent 4 and
 * PersistentRecursive 5 get MARSHALLINGERROR), and their Any covers persistent watches. So a
 * persistent kind goes as Any while no other kind is watched on its path (the same watches on
 * every 3.5+ server), and by its own mode when another is, which needs 3.9 (3.9's
 * `DataTree.removeWatch` / `containsWatcher` match `WatcherMode`): an older server cannot remove
 * or check one mode without the others, and the call fails with UnimplementedError before it is
 * sent (server-features.ts). The one exception is the remover that `addWatch` returns (a watch
 * stream's or a cache's end): it drops the local listener and leaves the server its watch.
 */
import { WatcherType } from '../constants.js';
import type { WatchKind, WatchRegistry } from '../session/watches.js';

/** The 3.9 `WatcherType` of the persistent kinds. */
const BY_MODE: Readonly<Record<string, number>> = {
  persistent: WatcherType.Persistent,
  persistentRecursive: WatcherType.PersistentRecursive,
};

const ALL_KINDS: readonly WatchKind[] = ['data', 'exist', 'child', 'persistent', 'persistentRecursive'];

/** What to send for `kind` on `path`, and whether it needs a 3.9 server. */
export interface ModeChoice {
  readonly type: number;
  readonly needs39: boolean;
}

/**
 * The `WatcherType` for `kind` (covering the local `kinds`) on `path`: `anyType` (what 3.5+
 * servers take) unless it is a persistent kind and this client watches `path` with a kind
 * outside `kinds`; then its own mode, which needs 3.9.
 */
export function chooseWatcherType(kind: string, kinds: readonly WatchKind[], anyType: number, watches: WatchRegistry, path: string): ModeChoice {
  const mode = BY_MODE[kind];
  if (mode === undefined || !ALL_KINDS.some((k) => !kinds.includes(k) && watches.has(k, path))) return { type: anyType, needs39: false };
  return { type: mode, needs39: true };
}

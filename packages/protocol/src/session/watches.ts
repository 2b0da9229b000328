/**
 * The client's watch table, keyed by (path, kind), following the Java client's
 * `ZKWatchManager`: a watch is registered when its request succeeds (an `exists` on a missing
 * node registers an exist watch), one-shot watches are removed when they fire, and an event
 * reaches each distinct listener once even when it was registered several times or under
 * several kinds. Paths here are client paths (chroot already stripped). Pure.
 */

/** Event types of a watch notification (`Watcher.Event.EventType`). */
export type WatchEventType =
  | 'NodeCreated'
  | 'NodeDeleted'
  | 'NodeDataChanged'
  | 'NodeChildrenChanged'
  | 'DataWatchRemoved'
  | 'ChildWatchRemoved'
  | 'PersistentWatchRemoved'
  | 'SessionExpired';

/** A watch notification as user code sees it. */
export interface WatchedEvent {
  /** What happened. */
  readonly type: WatchEventType;
  /** The node it happened to (relative to the chroot). */
  readonly path: string;
  /** The zxid of the change, when the server sent one (3.x notifications carry the reply header's zxid). */
  readonly zxid?: bigint | undefined;
}

/**
 * Called once per event. A throw does not stop the other listeners or disturb the session; it is
 * re-thrown on the next tick, as the process's `'uncaughtException'` (as Node's EventTarget does).
 */
export type WatchListener = (event: WatchedEvent) => void;

/** The kinds of watch the server keeps, as `SetWatches2` lists them. */
export type WatchKind = 'data' | 'exist' | 'child' | 'persistent' | 'persistentRecursive';

const numericTypes: Record<number, WatchEventType | undefined> = {
  1: 'NodeCreated',
  2: 'NodeDeleted',
  3: 'NodeDataChanged',
  4: 'NodeChildrenChanged',
  5: 'DataWatchRemoved',
  6: 'ChildWatchRemoved',
  7: 'PersistentWatchRemoved',
};

/** The event type for a `WatcherEvent.type` number, or `undefined` for None (-1) and unknown values. */
export function eventTypeOf(type: number): WatchEventType | undefined {
  return numericTypes[type];
}

/** A snapshot of the registered paths per kind, for re-arming after a reconnect. */
export type WatchSnapshot = Record<WatchKind, string[]>;

/** The (path, kind) -> listeners table. */
export class WatchRegistry {
  readonly #tables: Record<WatchKind, Map<string, Set<WatchListener>>> = {
    data: new Map(),
    exist: new Map(),
    child: new Map(),
    persistent: new Map(),
    persistentRecursive: new Map(),
  };

  /** Adds `listener` for `path` under `kind`. Adding the same listener twice is a no-op. */
  add(kind: WatchKind, path: string, listener: WatchListener): void {
    const table = this.#tables[kind];
    let set = table.get(path);
    if (!set) table.set(path, (set = new Set()));
    set.add(listener);
  }

  /**
   * Removes `listener` (or every listener when omitted) for `path` under `kind`.
   * Returns true when something was removed.
   */
  remove(kind: WatchKind, path: string, listener?: WatchListener): boolean {
    const table = this.#tables[kind];
    const set = table.get(path);
    if (!set) return false;
    if (!listener) return table.delete(path);
    const removed = set.delete(listener);
    if (set.size === 0) table.delete(path);
    return removed;
  }

  /** True when `path` has a watch of `kind` (with `listener`, when given). */
  has(kind: WatchKind, path: string, listener?: WatchListener): boolean {
    const set = this.#tables[kind].get(path);
    return set !== undefined && (listener === undefined || set.has(listener));
  }

  /** The number of (path, kind) entries, for leak checks. */
  get size(): number {
    let n = 0;
    for (const table of Object.values(this.#tables)) n += table.size;
    return n;
  }

  /**
   * The listeners an event reaches, each once, with the one-shot ones removed (Java's
   * `ZKWatchManager.materialize`): data changes and creations fire data and exist watches;
   * child changes fire child watches; a deletion fires all three; persistent watches on the
   * path fire and stay, and recursive ones fire for the path and every ancestor, except for
   * child changes (the server does not send those to recursive watches).
   */
  take(type: WatchEventType, path: string): Set<WatchListener> {
    const out = new Set<WatchListener>();
    const takeFrom = (kind: WatchKind) => {
      const set = this.#tables[kind].get(path);
      if (!set) return;
      for (const l of set) out.add(l);
      this.#tables[kind].delete(path);
    };
    switch (type) {
      case 'NodeCreated':
      case 'NodeDataChanged':
        takeFrom('data');
        takeFrom('exist');
        break;
      case 'NodeChildrenChanged':
        takeFrom('child');
        break;
      case 'NodeDeleted':
        takeFrom('data');
        takeFrom('exist');
        takeFrom('child');
        break;
      default:
        break;
    }
    const persistent = this.#tables.persistent.get(path);
    if (persistent) for (const l of persistent) out.add(l);
    if (type !== 'NodeChildrenChanged' && this.#tables.persistentRecursive.size > 0) {
      for (let p: string | undefined = path; p !== undefined; p = parentOf(p)) {
        const set = this.#tables.persistentRecursive.get(p);
        if (set) for (const l of set) out.add(l);
      }
    }
    return out;
  }

  /** The registered paths per kind. */
  snapshot(): WatchSnapshot {
    return {
      data: [...this.#tables.data.keys()],
      exist: [...this.#tables.exist.keys()],
      child: [...this.#tables.child.keys()],
      persistent: [...this.#tables.persistent.keys()],
      persistentRecursive: [...this.#tables.persistentRecursive.keys()],
    };
  }

  /**
   * Empties the table (session expiry, close) and returns each distinct listener once, with the
   * first path it was registered for.
   */
  clear(): Map<WatchListener, string> {
    const out = new Map<WatchListener, string>();
    for (const table of Object.values(this.#tables)) {
      for (const [path, set] of table) for (const l of set) if (!out.has(l)) out.set(l, path);
      table.clear();
    }
    return out;
  }

  /** The listeners registered for `path` under `kind` (a copy). */
  listeners(kind: WatchKind, path: string): WatchListener[] {
    return [...(this.#tables[kind].get(path) ?? [])];
  }
}

function parentOf(path: string): string | undefined {
  if (path === '/') return undefined;
  const i = path.lastIndexOf('/');
  return i <= 0 ? '/' : path.slice(0, i);
}

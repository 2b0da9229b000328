/**
 * The member list behind GroupMember: the names of a path's children and their data. On 3.6+
 * servers a TreeCache (one persistent recursive watch); on older ones, where Curator's bridge
 * falls back to its old TreeCache, a list kept with one-shot watches (a child watch on the path,
 * a data watch on each member), read again in full after any event.
 */
import { NoNodeError, SessionExpiredError, TreeCache, UnimplementedError, ZooKeeperError, type WatchedEvent, type ZooKeeper } from '@zk/protocol';
import { connected } from './attempt.js';

/** What GroupMember reads the group from. */
export interface MemberList {
  /** The members: each child's name and data. */
  members(): Map<string, Buffer>;
  /** Calls `listener` after the list may have changed; returns a function that stops it. */
  onChange(listener: () => void): () => void;
  /** Stops following the group and removes the watches. */
  close(): Promise<void>;
}

/** Opens the list of `path`'s children: a TreeCache, or a watched listing when the server has no persistent watches (before 3.6). */
export async function openMemberList(zk: ZooKeeper, path: string, options: { timeout?: number; signal?: AbortSignal }): Promise<MemberList> {
  try {
    return treeList(await TreeCache.open(zk, path, options), path);
  } catch (err) {
    if (!(err instanceof UnimplementedError)) throw err;
    return await WatchedList.open(zk, path, options);
  }
}

function treeList(cache: TreeCache, path: string): MemberList {
  cache.done.catch(() => undefined); // ended by the session: the list keeps its last content
  const prefix = path === '/' ? '' : path;
  return {
    members() {
      const members = new Map<string, Buffer>();
      for (const name of cache.children(path) ?? []) {
        const node = cache.get(`${prefix}/${name}`);
        if (node) members.set(name, node.data);
      }
      return members;
    },
    onChange(listener) {
      return cache.onEvent((e) => {
        if (e.type === 'created' || e.type === 'changed' || e.type === 'deleted' || e.type === 'resynced') listener();
      });
    },
    close: () => cache.close(),
  };
}

/** The pre-3.6 list: one-shot watches, set again by every full read. */
class WatchedList implements MemberList {
  readonly #zk: ZooKeeper;
  readonly #path: string;
  #members = new Map<string, Buffer>();
  readonly #listeners = new Set<() => void>();
  /** The member paths holding our data watch. */
  readonly #watched = new Set<string>();
  #closed = false;
  #running: Promise<void> | undefined;
  #again = false;
  readonly #onEvent = (e: WatchedEvent): void => {
    if (!this.#closed && !e.type.endsWith('WatchRemoved')) this.#kick();
  };

  private constructor(zk: ZooKeeper, path: string) {
    this.#zk = zk;
    this.#path = path;
  }

  static async open(zk: ZooKeeper, path: string, options: { timeout?: number; signal?: AbortSignal }): Promise<WatchedList> {
    const list = new WatchedList(zk, path);
    try {
      await list.#read(options);
    } catch (err) {
      await list.close();
      throw err;
    }
    return list;
  }

  members(): Map<string, Buffer> {
    return new Map(this.#members);
  }

  onChange(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => void this.#listeners.delete(listener);
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#listeners.clear();
    await this.#running?.catch(() => undefined);
    // An exists() that found the group registers a data watch on it, one that did not an exist watch.
    for (const kind of ['child', 'exist', 'data'] as const) this.#zk.removeLocalWatch(kind, this.#path, this.#onEvent);
    for (const child of this.#watched) this.#zk.removeLocalWatch('data', child, this.#onEvent);
    this.#watched.clear();
  }

  #kick(): void {
    if (this.#running) return void (this.#again = true);
    this.#running = this.#follow().finally(() => (this.#running = undefined));
  }

  /** Reads until no event came meanwhile; waits out disconnections; stops with the session. */
  async #follow(): Promise<void> {
    do {
      this.#again = false;
      try {
        await this.#read({});
      } catch (err) {
        if (err instanceof SessionExpiredError || !(err instanceof ZooKeeperError) || !err.isRetryable) return;
        this.#again = true;
        await connected(this.#zk).catch(() => (this.#closed = true)); // the session ended: keep the last list
      }
    } while (this.#again && !this.#closed);
  }

  /** One full read: the children (with a child watch, or an exists watch while the path is missing), then every member's data (with a data watch). */
  async #read(options: { timeout?: number; signal?: AbortSignal }): Promise<void> {
    const zk = this.#zk;
    let names: string[] = [];
    try {
      names = await zk.getChildren(this.#path, { ...options, watch: this.#onEvent });
    } catch (err) {
      if (!(err instanceof NoNodeError)) throw err;
      if (await zk.exists(this.#path, { ...options, watch: this.#onEvent })) return this.#kick(); // created meanwhile
    }
    const prefix = this.#path === '/' ? '' : this.#path;
    const read = await Promise.all(
      names.map((name) =>
        zk.getData(`${prefix}/${name}`, { ...options, watch: this.#onEvent }).then(
          ({ data }) => [name, data] as const,
          (e: unknown) => (e instanceof NoNodeError ? undefined : Promise.reject(e)),
        ),
      ),
    );
    const next = new Map(read.filter((r) => r !== undefined));
    for (const name of next.keys()) this.#watched.add(`${prefix}/${name}`);
    for (const child of this.#watched) {
      if (next.has(child.slice(prefix.length + 1))) continue;
      zk.removeLocalWatch('data', child, this.#onEvent);
      this.#watched.delete(child);
    }
    if (this.#closed) return;
    this.#members = next;
    for (const listener of [...this.#listeners]) listener();
  }
}

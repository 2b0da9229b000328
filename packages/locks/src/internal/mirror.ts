/**
 * A lock directory's children as the ensemble has them, kept current by a persistent recursive
 * watch (ZooKeeper 3.6+), so that an acquire can send its create alone, with no listing (the
 * locks' `mirror` option; issue 26). {@link liveMirror} and {@link noteFirstDecision} are what
 * the acquire engine uses; the class is the mirror itself.
 *
 * Why it is exact:
 * - The watch is registered before the base listing is read (one session, one order), so every
 *   create and delete in the directory after the listing's state reaches us as an event. Events of
 *   changes from before that state may arrive after the listing: they change nothing, since a
 *   sequential name is created once and deleted once, and the last event of each name agrees with
 *   the listing.
 * - A server sends a session the notifications of a transaction before its reply to any later
 *   request, and the client delivers the events in that order (session.ts: in a drain scheduled
 *   when the notification frame is read, before the later reply is handled). So once the event of
 *   our own node's creation is applied, the mirror holds every change up to our create: what a
 *   listing sent behind the create would return, or a later state.
 *
 * It ends, and says why ({@link DirectoryMirror.ended}), when the session leaves `connected`
 * (events may be missed while away), when the directory is deleted or the watch removed, when a
 * node that is not ours appears (every mirroring session would hear of every hand-off: the herd
 * the queue exists to avoid), when the creation of our own node is not reported by the time its
 * reply is handled (the watch is not what it should be), or on {@link DirectoryMirror.close}.
 * An ended mirror removes its watch and answers `undefined`: the caller lists instead.
 */
import { UnimplementedError, type WatchedEvent, type ZooKeeper } from '@zk/protocol';
import { attemptIdOf } from './names.js';

/** What {@link DirectoryMirror.open} needs besides the client and the directory. */
export interface MirrorOptions {
  /** Attempt ids of our nodes already in the directory (their names are not another session's). */
  readonly ours?: Iterable<string>;
}

/** See the module comment. */
export class DirectoryMirror {
  readonly zk: ZooKeeper;
  /** The directory (client path, chroot applied by the client). */
  readonly dir: string;
  readonly #prefix: string;
  readonly #names = new Set<string>();
  /** Attempt ids of our nodes, claimed before their creates are sent. */
  readonly #ours = new Set<string>();
  /** Callers of {@link childrenWith} waiting for their node's creation event. */
  readonly #waiting = new Map<string, (children: string[] | undefined) => void>();
  #ended: string | undefined;
  #watching = false;
  #offState: () => void = () => undefined;
  readonly #onEvent = (event: WatchedEvent): void => this.#apply(event);

  private constructor(zk: ZooKeeper, dir: string, ours: Iterable<string>) {
    this.zk = zk;
    this.dir = dir;
    this.#prefix = dir === '/' ? '/' : `${dir}/`;
    for (const id of ours) this.#ours.add(id);
  }

  /**
   * Registers the watch and reads the base listing, in one round trip. Rejects with the client's
   * error when either fails (a 3.4 or 3.5 server has no persistent watches; a missing directory is
   * NoNode), leaving no watch behind. Resolves with a mirror that may already have ended (a node
   * of another session in the base listing).
   */
  static async open(zk: ZooKeeper, dir: string, options: MirrorOptions = {}): Promise<DirectoryMirror> {
    const mirror = new DirectoryMirror(zk, dir, options.ours ?? []);
    const added = zk.addWatch(dir, mirror.#onEvent, { recursive: true });
    const listed = zk.getChildren(dir);
    listed.catch(() => undefined); // its failure is handled below, once the watch's is
    try {
      await added;
      mirror.#watching = true;
      mirror.#offState = zk.onStateChange((state) => {
        if (state !== 'connected') mirror.#end(`the session was ${state} (events may have been missed)`);
      });
      if (zk.state !== 'connected') mirror.#end(`the session was ${zk.state} (events may have been missed)`);
      const children = await listed;
      if (mirror.#ended === undefined) {
        mirror.#names.clear();
        for (const name of children) mirror.#names.add(name);
        const foreign = children.find((name) => !mirror.#isOurs(name));
        if (foreign !== undefined) await mirror.#end(`the directory holds ${foreign}, not ours`);
      }
    } catch (err) {
      mirror.#end(`it could not be opened: ${(err as Error)?.message ?? String(err)}`);
      throw err;
    }
    return mirror;
  }

  /** Why the mirror ended, once it has; undefined while it is live. */
  get ended(): string | undefined {
    return this.#ended;
  }

  /** The children as the mirror has them now (a copy). */
  get children(): string[] {
    return [...this.#names];
  }

  /** Marks the nodes of attempt `attemptId` as ours: call before sending its create. */
  claim(attemptId: string): void {
    this.#ours.add(attemptId);
  }

  /**
   * The children once the creation of our node `name` has been applied: call when its create's
   * reply is in. Undefined when the mirror has ended, or ends because the event did not come
   * before the client's next event drain (which a notification sent ahead of the reply reaches
   * first).
   */
  childrenWith(name: string): Promise<string[] | undefined> {
    if (this.#ended !== undefined) return Promise.resolve(undefined);
    if (this.#names.has(name)) return Promise.resolve(this.children);
    return new Promise((resolve) => {
      this.#waiting.set(name, resolve);
      setImmediate(() => {
        if (this.#waiting.get(name) !== resolve) return;
        this.#end(`the creation of ${name} was not reported before its reply was handled`);
      });
    });
  }

  /** Ends the mirror and removes its watch (on the server when connected). */
  async close(): Promise<void> {
    await this.#end('closed');
  }

  #isOurs(name: string): boolean {
    const id = attemptIdOf(name);
    return id !== undefined && this.#ours.has(id);
  }

  #apply(event: WatchedEvent): void {
    if (this.#ended !== undefined) return;
    if (event.path === this.dir) {
      if (event.type === 'NodeDeleted') this.#end('the directory was deleted');
      else if (event.type === 'PersistentWatchRemoved') this.#end('its watch was removed');
      return;
    }
    if (!event.path.startsWith(this.#prefix)) return;
    const name = event.path.slice(this.#prefix.length);
    if (name.includes('/')) return; // below a child: not a contender
    if (event.type === 'NodeCreated') {
      if (!this.#isOurs(name)) return void this.#end(`${name} appeared, not ours`);
      this.#names.add(name);
      const resolve = this.#waiting.get(name);
      if (resolve !== undefined) {
        this.#waiting.delete(name);
        resolve(this.children);
      }
    } else if (event.type === 'NodeDeleted') {
      this.#names.delete(name);
      const id = attemptIdOf(name);
      if (id !== undefined) this.#ours.delete(id);
    }
  }

  #end(why: string): Promise<void> {
    if (this.#ended !== undefined) return Promise.resolve();
    this.#ended = why;
    this.#offState();
    for (const resolve of this.#waiting.values()) resolve(undefined);
    this.#waiting.clear();
    if (!this.#watching) return Promise.resolve();
    this.#watching = false;
    // Off the server when connected; else locally only, so a reconnect does not register it again.
    if (this.zk.state !== 'connected') {
      this.zk.removeLocalWatch('persistentRecursive', this.dir, this.#onEvent);
      return Promise.resolve();
    }
    return this.zk.removeWatches(this.dir, { kind: 'persistentRecursive', listener: this.#onEvent }).catch(() => {
      this.zk.removeLocalWatch('persistentRecursive', this.dir, this.#onEvent);
    });
  }
}

/** Acquires in a row that found the directory holding their node alone, before a mirror is opened. */
export const SOLITARY_BEFORE_MIRROR = 2;
/** A mirror not used by an acquire for this long is closed (ms). */
export const MIRROR_IDLE_MS = 30_000;

/** What the engine keeps per client and lock directory. */
interface DirState {
  /** Uncontended acquires in a row (reset by any other). */
  solitary: number;
  mirror: DirectoryMirror | undefined;
  opening: boolean;
  idle: NodeJS.Timeout | undefined;
}

const dirs = new WeakMap<ZooKeeper, Map<string, DirState>>();
/** Clients whose server has no persistent watches (an addWatch answered Unimplemented). */
const unsupported = new WeakSet<ZooKeeper>();

function stateOf(zk: ZooKeeper, dir: string): DirState {
  let byDir = dirs.get(zk);
  if (byDir === undefined) dirs.set(zk, (byDir = new Map()));
  let state = byDir.get(dir);
  if (state === undefined) byDir.set(dir, (state = { solitary: 0, mirror: undefined, opening: false, idle: undefined }));
  return state;
}

function forget(zk: ZooKeeper, dir: string, state: DirState): void {
  if (state.idle !== undefined) clearTimeout(state.idle);
  state.idle = undefined;
  state.mirror = undefined;
  state.solitary = 0;
  if (!state.opening) dirs.get(zk)?.delete(dir);
}

/**
 * The live mirror of `dir` for an acquire about to be made on `zk`, if there is one (its idle
 * time starts again); an ended one is forgotten here.
 */
export function liveMirror(zk: ZooKeeper, dir: string): DirectoryMirror | undefined {
  const state = dirs.get(zk)?.get(dir);
  const mirror = state?.mirror;
  if (state === undefined || mirror === undefined) return undefined;
  if (mirror.ended !== undefined) {
    forget(zk, dir, state);
    return undefined;
  }
  state.idle?.refresh();
  return mirror;
}

/**
 * Told the first decision of each acquire on `dir` with the option on: `solitary` when our node
 * was the only child. After {@link SOLITARY_BEFORE_MIRROR} in a row a mirror is opened in the
 * background (one addWatch and one listing, not on any acquire's path), with the node of attempt
 * `attemptId` as ours; never on a 3.4 server, nor again on a client whose server lacked addWatch.
 */
export function noteFirstDecision(zk: ZooKeeper, dir: string, attemptId: string | undefined, solitary: boolean): void {
  const state = stateOf(zk, dir);
  if (!solitary) {
    if (state.mirror === undefined && !state.opening) forget(zk, dir, state);
    else state.solitary = 0;
    return;
  }
  if (state.mirror !== undefined || state.opening || ++state.solitary < SOLITARY_BEFORE_MIRROR) return;
  if (unsupported.has(zk) || zk.state !== 'connected' || zk.serverGeneration() !== 'modern' || typeof zk.addWatch !== 'function') return;
  state.opening = true;
  DirectoryMirror.open(zk, dir, { ours: attemptId === undefined ? [] : [attemptId] }).then(
    (mirror) => {
      state.opening = false;
      if (mirror.ended !== undefined) return forget(zk, dir, state);
      state.mirror = mirror;
      state.idle = setTimeout(() => {
        forget(zk, dir, state);
        void mirror.close();
      }, MIRROR_IDLE_MS);
      state.idle.unref();
    },
    (err: unknown) => {
      state.opening = false;
      if (err instanceof UnimplementedError) unsupported.add(zk);
      forget(zk, dir, state);
    },
  );
}

/**
 * A persistent watch's events and the session's state changes as async iterables
 * ({@link ZooKeeper.watch}, {@link ZooKeeper.states}): a queue fed by a listener, which ending the
 * loop or aborting the signal removes.
 */
import { SessionExpiredError } from '../errors.js';
import type { Session, SessionState } from '../session/session.js';
import type { WatchedEvent, WatchKind, WatchListener } from '../session/watches.js';
import { AsyncQueue } from '../util/queue.js';
import { validatePath } from '../util/paths.js';

/** One state change of {@link ZooKeeper.states}. */
export interface StateChange {
  readonly state: SessionState;
  /** The state before; `undefined` for the first item (the state when iteration began). */
  readonly previous: SessionState | undefined;
}

/** @internal The client's calls a watch stream makes. */
export interface WatchingClient {
  addWatch(path: string, listener: WatchListener, options: { recursive?: boolean }): Promise<() => Promise<void>>;
  removeLocalWatch(kind: WatchKind, path: string, listener?: WatchListener): boolean;
}

/** @internal {@link ZooKeeper.watch}. */
export function watchStream(zk: WatchingClient, path: string, options: { recursive?: boolean; signal?: AbortSignal }): AsyncIterableIterator<WatchedEvent> {
  validatePath(path);
  let remove: (() => Promise<void>) | undefined;
  const queue = new AsyncQueue<WatchedEvent>({
    signal: options.signal,
    onReturn: () => {
      if (remove) remove().catch(() => zk.removeLocalWatch(options.recursive ? 'persistentRecursive' : 'persistent', path, listener));
    },
  });
  const listener: WatchListener = (event) => {
    if (event.type === 'SessionExpired') queue.fail(new SessionExpiredError(undefined, { op: 'watch', path }));
    else queue.push(event);
  };
  zk.addWatch(path, listener, { recursive: options.recursive ?? false }).then(
    (r) => {
      remove = r;
      if (queue.done) r().catch(() => undefined);
    },
    (err: unknown) => queue.fail(err),
  );
  return queue;
}

/** @internal {@link ZooKeeper.states}. */
export function stateStream(session: Pick<Session, 'state' | 'onState'>, options: { signal?: AbortSignal }): AsyncIterableIterator<StateChange> {
  let off = () => {};
  const queue = new AsyncQueue<StateChange>({ signal: options.signal, onReturn: () => off() });
  queue.push({ state: session.state, previous: undefined });
  off = session.onState((state, previous) => {
    queue.push({ state, previous });
    if (state === 'closed') queue.end();
  });
  if (session.state === 'closed') queue.end();
  return queue;
}

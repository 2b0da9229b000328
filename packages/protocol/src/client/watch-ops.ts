/**
 * Removing and checking watches (3.5+ `removeWatches` / `checkWatches`), on the client's watch
 * table and the server's.
 */
import { needsNewerServer } from './legacy.js';
import { WatcherType, OpCode } from '../constants.js';
import { ErrorCode, fromCode, InvalidArgumentError, NoWatcherError } from '../errors.js';
import type { Reply } from '../connection/connection.js';
import type { JuteWriter } from '../jute/writer.js';
import * as proto from '../jute/proto.js';
import type { WatchedEvent, WatchKind, WatchListener, WatchRegistry } from '../session/watches.js';
import { callListener } from '../util/listener-errors.js';
import { addChroot, validatePath } from '../util/paths.js';
import { chooseWatcherType } from './watch-modes.js';
import { needs39 as needs39Error } from './server-features.js';

/** Which watches {@link ZooKeeper.removeWatches} and {@link ZooKeeper.checkWatches} address. */
export type RemovableWatchKind = 'data' | 'child' | 'persistent' | 'persistentRecursive' | 'any';

/** @internal What the watch operations need from the client. */
export interface WatchContext {
  readonly watches: WatchRegistry;
  readonly chroot: string;
  send(op: number, opName: string, path: string, write: (w: JuteWriter) => void, options: { signal?: AbortSignal | undefined; timeout?: number | undefined }): Promise<Reply<unknown>>;
  /** True when connected to a 3.4 server (for the message of an Unimplemented reply). */
  legacy(): boolean;
  /** Whether the server has the 3.9 watch modes (asked once per connection, server-features.ts). */
  hasModes(op: string, path: string, options: { signal?: AbortSignal | undefined; timeout?: number | undefined }): Promise<boolean>;
}

const allKinds: readonly WatchKind[] = ['data', 'exist', 'child', 'persistent', 'persistentRecursive'];

const removable: Record<RemovableWatchKind, readonly WatchKind[]> = {
  data: ['data', 'exist'],
  child: ['child'],
  persistent: ['persistent'],
  persistentRecursive: ['persistentRecursive'],
  any: allKinds,
};

/**
 * `Watcher.WatcherType` numbers sent to the server. Servers up to 3.8 know only Children (1),
 * Data (2) and Any (3) in removeWatches/checkWatches (Persistent 4 and PersistentRecursive 5 get
 * MARSHALLINGERROR), and their Any covers persistent watches, so persistent kinds are sent as Any
 * unless other kinds share the path (then by their mode, 3.9+: watch-modes.ts).
 */
const serverWatcherType: Record<RemovableWatchKind, number> = {
  child: WatcherType.Children,
  data: WatcherType.Data,
  any: WatcherType.Any,
  persistent: WatcherType.Any,
  persistentRecursive: WatcherType.Any,
};

/**
 * @internal See {@link ZooKeeper.removeWatches}. `cleanup` is the remover that
 * {@link ZooKeeper.addWatch} returns (watch streams and caches end with it): where a 3.5-3.8
 * server cannot remove one persistent mode alone, it drops the local listener and leaves the
 * server its watch, whose events then reach nobody, instead of failing.
 */
export async function removeWatches(ctx: WatchContext, path: string, options: { kind?: RemovableWatchKind; listener?: WatchListener; local?: boolean; signal?: AbortSignal; timeout?: number }, cleanup = false): Promise<void> {
  validatePath(path);
  const kind = options.kind ?? 'any';
  const kinds = removable[kind];
  if (!kinds) throw new InvalidArgumentError('kind', `unknown watch kind ${String(kind)}`);
  const watches = ctx.watches;
  const matched = kinds.filter((k) => watches.has(k, path, options.listener));
  if (matched.length === 0) throw new NoWatcherError(undefined, { op: 'removeWatches', path });
  // The server keeps one watch per (path, kind) for the session: drop it only when no other local listener needs it.
  const othersOnSameWatch = options.listener !== undefined && matched.every((k) => watches.listeners(k, path).length > 1);
  // A persistent kind beside other kinds on the path goes by its mode, 3.9+ (watch-modes.ts). An
  // older server's Any would drop the others too: the call fails before it is sent, or, for the
  // addWatch remover, the server's watch is kept and its extra events reach nobody.
  const { type, needs39 } = chooseWatcherType(kind, kinds, serverWatcherType[kind], watches, path);
  const serverKeeps = needs39 && !options.local && !othersOnSameWatch && !(await ctx.hasModes('removeWatches', path, options));
  if (serverKeeps && !cleanup) throw needs39Error('removeWatches', path, 'removing one persistent watch mode beside other watches on the path', ctx.legacy());
  if (!options.local && !othersOnSameWatch && !serverKeeps) {
    const p = addChroot(ctx.chroot, path);
    const reply = await ctx.send(OpCode.removeWatches, 'removeWatches', path, (w) => proto.writeRemoveWatchesRequest(w, { path: p, type }), options);
    if (reply.err === ErrorCode.UNIMPLEMENTED) throw needsNewerServer('removeWatches', path, '3.5', ctx.legacy());
    if (reply.err !== 0 && reply.err !== ErrorCode.NOWATCHER) throw fromCode(reply.err, { op: 'removeWatches', path });
  }
  for (const k of matched) {
    const removed = options.listener ? [options.listener] : watches.listeners(k, path);
    watches.remove(k, path, options.listener);
    const type = k === 'child' ? 'ChildWatchRemoved' : k === 'data' || k === 'exist' ? 'DataWatchRemoved' : 'PersistentWatchRemoved';
    for (const l of removed) safeCall(l, { type, path });
  }
}

/** @internal See {@link ZooKeeper.checkWatches}. */
export async function checkWatches(ctx: WatchContext, path: string, options: { kind?: RemovableWatchKind; signal?: AbortSignal; timeout?: number }): Promise<boolean> {
  validatePath(path);
  const kind = options.kind ?? 'any';
  const kinds = removable[kind];
  if (!kinds) throw new InvalidArgumentError('kind', `unknown watch kind ${String(kind)}`);
  const p = addChroot(ctx.chroot, path);
  const { type, needs39 } = chooseWatcherType(kind, kinds, serverWatcherType[kind], ctx.watches, path);
  // An older server cannot tell one persistent mode from the other watches of the path.
  if (needs39 && !(await ctx.hasModes('checkWatches', path, options))) throw needs39Error('checkWatches', path, 'checking one persistent watch mode beside other watches on the path', ctx.legacy());
  const reply = await ctx.send(OpCode.checkWatches, 'checkWatches', path, (w) => proto.writeCheckWatchesRequest(w, { path: p, type }), options);
  if (reply.err === 0) return true;
  if (reply.err === ErrorCode.NOWATCHER) return false;
  if (reply.err === ErrorCode.UNIMPLEMENTED) throw needsNewerServer('checkWatches', path, '3.5', ctx.legacy());
  throw fromCode(reply.err, { op: 'checkWatches', path });
}

/** A throwing listener does not stop the others; its error is re-thrown on the next tick (as in the session's event delivery). */
function safeCall(listener: WatchListener, event: WatchedEvent): void {
  callListener(listener, event);
}

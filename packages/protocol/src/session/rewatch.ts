/**
 * Re-registering watches after a reconnect: the watch table becomes SetWatches (op 101) or, when
 * persistent watches exist, SetWatches2 (op 105, 3.6+) requests, each under a size limit. The
 * server compares each watched node with `relativeZxid` (our lastZxidSeen) and fires at once the
 * watches whose node changed while we were away. Pure.
 */
import { CONFIG_NODE, OpCode } from '../constants.js';
import type { JuteWriter } from '../jute/writer.js';
import { writeSetWatches, writeSetWatches2 } from '../jute/proto.js';
import { addChroot } from '../util/paths.js';
import type { WatchKind, WatchSnapshot } from './watches.js';

/**
 * Largest batch of watched paths per request. The Java client uses 128 KiB
 * (`ClientCnxn.SET_WATCHES_MAX_LENGTH`): well under the server's 1 MiB `jute.maxbuffer`, so a
 * client with many watches never sends a frame the server would refuse.
 */
export const SET_WATCHES_MAX_LENGTH = 128 * 1024;

/** One request to send: its op code and body writer. */
export interface SetWatchesRequest {
  readonly type: number;
  readonly write: (w: JuteWriter) => void;
  /** The number of paths it carries. */
  readonly count: number;
}

const kinds: readonly WatchKind[] = ['data', 'exist', 'child', 'persistent', 'persistentRecursive'];

/**
 * The requests that re-register `snapshot` (client paths, `chroot` added here). Each batch
 * carries paths whose encoded size stays under `min(SET_WATCHES_MAX_LENGTH, maxFrameSize / 2)`.
 */
export function setWatchesRequests(snapshot: WatchSnapshot, chroot: string, relativeZxid: bigint, maxFrameSize: number): SetWatchesRequest[] {
  const limit = Math.min(SET_WATCHES_MAX_LENGTH, Math.floor(maxFrameSize / 2));
  const usesPersistent = snapshot.persistent.length > 0 || snapshot.persistentRecursive.length > 0;
  const out: SetWatchesRequest[] = [];
  let batch = emptyBatch();
  let size = 0;
  let count = 0;
  const flush = () => {
    if (count === 0) return;
    const b = batch;
    const body = {
      relativeZxid,
      dataWatches: b.data,
      existWatches: b.exist,
      childWatches: b.child,
    };
    out.push(
      usesPersistent
        ? { type: OpCode.setWatches2, count, write: (w) => writeSetWatches2(w, { ...body, persistentWatches: b.persistent, persistentRecursiveWatches: b.persistentRecursive }) }
        : { type: OpCode.setWatches, count, write: (w) => writeSetWatches(w, body) },
    );
    batch = emptyBatch();
    size = 0;
    count = 0;
  };
  for (const kind of kinds) {
    for (const clientPath of snapshot[kind]) {
      // getConfig's watch is on the config node itself, outside the chroot.
      const path = clientPath === CONFIG_NODE ? CONFIG_NODE : addChroot(chroot, clientPath);
      const bytes = 4 + Buffer.byteLength(path, 'utf8');
      if (size + bytes > limit) flush();
      batch[kind].push(path);
      size += bytes;
      count++;
    }
  }
  flush();
  return out;
}

function emptyBatch(): Record<WatchKind, string[]> {
  return { data: [], exist: [], child: [], persistent: [], persistentRecursive: [] };
}

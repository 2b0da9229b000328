/**
 * What the client does on a 3.4 server (a `'legacy'` generation, see connection/generation.ts):
 * the typed error for an operation it lacks, and the creates it can still serve another way.
 */
import { CreateMode, OpCode } from '../constants.js';
import { ErrorCode, fromCode, type ZooKeeperError } from '../errors.js';
import { SINCE_VERSION } from '../connection/generation.js';
import type { MultiOpInput } from '../jute/multi.js';

/**
 * The error for an operation the server does not have: an UnimplementedError (code -6) whose
 * message names the operation and the version it needs.
 */
export function needsNewerServer(op: string, path: string | undefined, since: string, legacy = true): ZooKeeperError {
  const where = path === undefined ? op : `${op} ${path}`;
  const server = legacy ? 'this server is 3.4' : 'this server does not have it';
  return fromCode(ErrorCode.UNIMPLEMENTED, { op, path }, `UNIMPLEMENTED (${where}): ${op} needs ZooKeeper ${since} or newer; ${server}`);
}

/**
 * A multi's operations as a 3.4 server takes them: containers become persistent nodes (as
 * Curator does without container support); a TTL create cannot be served and throws the typed
 * error before anything is sent.
 */
export function legacyMultiOps(ops: readonly { op: string; path: string; wire: MultiOpInput }[]): MultiOpInput[] {
  return ops.map(({ op, path, wire }) => {
    if (wire.type === OpCode.createContainer) return { ...wire, type: OpCode.create, flags: CreateMode.PERSISTENT };
    const since = SINCE_VERSION.get(wire.type);
    if (since !== undefined) throw needsNewerServer(op, path, since);
    return wire;
  });
}

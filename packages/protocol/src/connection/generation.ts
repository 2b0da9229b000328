/**
 * Which server generation a connection talks to: a 3.4 server (`'legacy'`) or 3.5 and newer
 * (`'modern'`), learnt with one request at the start of every connection.
 *
 * Why it matters: a 3.4 server answers an operation it does not know (create2, containers,
 * addWatch, whoAmI, ...) with Unimplemented and then closes the connection
 * (`UnimplementedRequestProcessor` calls `sendCloseSession` after the reply), losing every request
 * behind it. So those operations must not be sent before the server is known.
 *
 * How it is learnt: `exists /zookeeper/config`, sent after the handshake and after SASL (a
 * server answers SASL packets out of band, so they go alone first). Since 3.5 every server's data
 * tree has that node (the dynamic configuration's home, created with the tree, also
 * in standalone mode); a 3.4 server has no such node and answers NoNode. `exists` needs no ACL
 * and is valid on every version, read-only servers included.
 */
import { OpCode } from '../constants.js';
import { ErrorCode } from '../errors.js';
import type { JuteWriter } from '../jute/writer.js';
import type { JuteReader } from '../jute/reader.js';
import { readCreateResponse } from '../jute/proto.js';

/** A 3.4 server (`'legacy'`), or 3.5 and newer (`'modern'`). */
export type ServerGeneration = 'legacy' | 'modern';

/** The node every 3.5+ server has. */
export const CONFIG_NODE = '/zookeeper/config';

/**
 * The operations a 3.4 server does not have, with the first version that does (from the
 * ZooKeeper release notes: create2, containers, TTL, reconfig and watch removal came with 3.5;
 * multiRead, getEphemerals, getAllChildrenNumber, addWatch and setWatches2 with 3.6; whoAmI with 3.7).
 */
export const SINCE_VERSION: ReadonlyMap<number, string> = new Map([
  [OpCode.create2, '3.5'],
  [OpCode.createContainer, '3.5'],
  [OpCode.createTTL, '3.5.3'],
  [OpCode.reconfig, '3.5'],
  [OpCode.checkWatches, '3.5'],
  [OpCode.removeWatches, '3.5'],
  [OpCode.multiRead, '3.6'],
  [OpCode.getEphemerals, '3.6'],
  [OpCode.getAllChildrenNumber, '3.6'],
  [OpCode.addWatch, '3.6'],
  [OpCode.setWatches2, '3.6'],
  [OpCode.whoAmI, '3.7'],
]);

/** Writes the probe's body: ExistsRequest `{ path: /zookeeper/config, watch: false }`. */
export function writeGenerationProbe(w: JuteWriter): void {
  w.writeUString(CONFIG_NODE).writeBool(false);
}

/** The generation a probe's reply code shows (only NoNode means 3.4; anything else is taken as newer). */
export function generationOf(err: number): ServerGeneration {
  return err === ErrorCode.NONODE ? 'legacy' : 'modern';
}

/**
 * What a 3.4 server gets instead of an operation it lacks, where the same body serves: create2
 * (a CreateRequest) goes as a plain create, whose reply has the path and no Stat; the client then
 * asks for the Stat. Used for a create2 made before the server was known, so it still leaves in
 * call order (a lock's create and the listing pipelined behind it).
 */
export const LEGACY_SUBSTITUTES: ReadonlyMap<number, { readonly type: number; readonly read: (r: JuteReader) => unknown }> = new Map([[OpCode.create2, { type: OpCode.create, read: readCreateResponse }]]);

/**
 * The generations learnt in this process, by server address (`address:port`): a new connection
 * to a server already probed starts knowing it and sends no probe (a short-lived client, or a
 * reconnect, pays the probe once per server and process). An entry is forgotten when the server
 * answers Unimplemented to an operation its generation should have (a server replaced by an
 * older one at the same address), so the next connection probes again. At most
 * {@link MAX_REMEMBERED} servers; beyond that the oldest are forgotten.
 */
const remembered = new Map<string, ServerGeneration>();
const MAX_REMEMBERED = 1024;

/** The generation learnt for `server` (`address:port`) in this process, if any. */
export function rememberedGeneration(server: string): ServerGeneration | undefined {
  return remembered.get(server);
}

/** Records (or, with undefined, forgets) the generation of `server`. */
export function rememberGeneration(server: string, generation: ServerGeneration | undefined): void {
  remembered.delete(server);
  if (generation === undefined) return;
  remembered.set(server, generation);
  if (remembered.size > MAX_REMEMBERED) remembered.delete(remembered.keys().next().value as string);
}

/** @internal Forgets every remembered generation (tests whose fake servers may reuse a port). */
export function forgetGenerations(): void {
  remembered.clear();
}

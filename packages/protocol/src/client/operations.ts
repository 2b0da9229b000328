/**
 * The client's one-request operations, but create (create.ts) and the watch removals
 * (watch-ops.ts): each validates its input, applies the chroot, sends through the request path,
 * registers the watch it left, and turns the reply into the caller's value. The `ZooKeeper`
 * class documents them.
 */
import { AddWatchMode, CONFIG_NODE, OpCode } from '../constants.js';
import { ErrorCode, fromCode, InvalidArgumentError } from '../errors.js';
import type { Stat } from '../jute/data.js';
import type { JuteWriter } from '../jute/writer.js';
import * as proto from '../jute/proto.js';
import type { WatchKind, WatchListener } from '../session/watches.js';
import { raceAbort, validateTimeout } from '../util/abort.js';
import { addChroot, validatePath } from '../util/paths.js';
import { validateACL, type ACL } from './acl.js';
import { authBytes, dataBytes, type Data } from './data.js';
import { needsNewerServer } from './legacy.js';
import { parseConfig, reconfigBody, type EnsembleConfig, type ReconfigChange } from './reconfig.js';
import type { RequestPath } from './request-path.js';
import { withRetryPolicy } from './retry-policy.js';
import type { CallOptions, DataResult, WatchOptions } from './types.js';

const EMPTY = Buffer.alloc(0);

/** @internal */
export async function deleteNode(rp: RequestPath, path: string, options: CallOptions & { version?: number }): Promise<void> {
  validatePath(path);
  const version = validVersion(options.version);
  const p = addChroot(rp.chroot, path);
  await rp.call(OpCode.delete, 'delete', path, (w) => proto.writeDeleteRequest(w, { path: p, version }), undefined, options);
}

/** @internal */
export async function exists(rp: RequestPath, path: string, options: WatchOptions): Promise<Stat | null> {
  validatePath(path);
  const p = addChroot(rp.chroot, path);
  const watch = options.watch !== undefined;
  const once = (o: CallOptions) => rp.rawRequest(OpCode.exists, 'exists', path, (w) => proto.writeExistsRequest(w, { path: p, watch }), proto.readExistsResponse, o, true);
  const policy = rp.options.retry;
  const reply = await (policy === undefined ? once(options) : withRetryPolicy(policy, options, rp.options.requestTimeout, (o) => once({ ...options, ...o })));
  if (reply.err === 0) {
    if (options.watch) rp.session.watches.add('data', path, options.watch);
    return (reply.body as proto.ExistsResponse).stat;
  }
  if (reply.err === ErrorCode.NONODE) {
    if (options.watch) rp.session.watches.add('exist', path, options.watch);
    return null;
  }
  throw fromCode(reply.err, { op: 'exists', path });
}

/** @internal */
export async function getData(rp: RequestPath, path: string, options: WatchOptions): Promise<DataResult> {
  validatePath(path);
  const p = addChroot(rp.chroot, path);
  const watch = options.watch !== undefined;
  const { body, zxid } = await rp.callReply(OpCode.getData, 'getData', path, (w) => proto.writeGetDataRequest(w, { path: p, watch }), proto.readGetDataResponse, options, !watch);
  if (options.watch) rp.session.watches.add('data', path, options.watch);
  return { data: body!.data ?? EMPTY, stat: body!.stat, zxid };
}

/** @internal */
export async function setData(rp: RequestPath, path: string, data: Data, options: CallOptions & { version?: number }): Promise<Stat> {
  validatePath(path);
  const version = validVersion(options.version);
  const bytes = dataBytes(data, rp.options.maxFrameSize);
  const p = addChroot(rp.chroot, path);
  const body = await rp.call(OpCode.setData, 'setData', path, (w) => proto.writeSetDataRequest(w, { path: p, data: bytes, version }), proto.readSetDataResponse, options);
  return body.stat;
}

/** @internal */
export async function getACL(rp: RequestPath, path: string, options: CallOptions): Promise<{ acl: ACL[]; stat: Stat }> {
  validatePath(path);
  const p = addChroot(rp.chroot, path);
  const body = await rp.call(OpCode.getACL, 'getACL', path, (w) => proto.writeGetACLRequest(w, { path: p }), proto.readGetACLResponse, options);
  const acl = (body.acl ?? []).map((a) => ({ perms: a.perms, id: { scheme: a.id.scheme ?? '', id: a.id.id ?? '' } }));
  return { acl, stat: body.stat };
}

/** @internal */
export async function setACL(rp: RequestPath, path: string, acl: readonly ACL[], options: CallOptions & { version?: number }): Promise<Stat> {
  validatePath(path);
  validateACL(acl);
  const version = validVersion(options.version);
  const p = addChroot(rp.chroot, path);
  const body = await rp.call(OpCode.setACL, 'setACL', path, (w) => proto.writeSetACLRequest(w, { path: p, acl: acl as ACL[], version }), proto.readSetACLResponse, options);
  return body.stat;
}

/** @internal */
export async function getChildren(rp: RequestPath, path: string, options: WatchOptions): Promise<string[]> {
  validatePath(path);
  const p = addChroot(rp.chroot, path);
  const watch = options.watch !== undefined;
  const body = await rp.call(OpCode.getChildren, 'getChildren', path, (w) => proto.writeGetChildrenRequest(w, { path: p, watch }), proto.readGetChildrenResponse, options, !watch);
  if (options.watch) rp.session.watches.add('child', path, options.watch);
  return (body.children ?? []) as string[];
}

/** @internal */
export async function getChildrenWithStat(rp: RequestPath, path: string, options: WatchOptions): Promise<{ children: string[]; stat: Stat; zxid?: bigint }> {
  validatePath(path);
  const p = addChroot(rp.chroot, path);
  const watch = options.watch !== undefined;
  const { body, zxid } = await rp.callReply(OpCode.getChildren2, 'getChildren', path, (w) => proto.writeGetChildren2Request(w, { path: p, watch }), proto.readGetChildren2Response, options);
  if (options.watch) rp.session.watches.add('child', path, options.watch);
  return { children: (body!.children ?? []) as string[], stat: body!.stat, zxid };
}

/** @internal */
export async function getAllChildrenNumber(rp: RequestPath, path: string, options: CallOptions): Promise<number> {
  validatePath(path);
  const p = addChroot(rp.chroot, path);
  const body = await rp.call(OpCode.getAllChildrenNumber, 'getAllChildrenNumber', path, (w) => proto.writeGetAllChildrenNumberRequest(w, { path: p }), proto.readGetAllChildrenNumberResponse, options);
  return body.totalNumber;
}

/** @internal */
export async function getEphemerals(rp: RequestPath, prefix: string, options: CallOptions): Promise<string[]> {
  validatePath(prefix);
  const p = addChroot(rp.chroot, prefix);
  const body = await rp.call(OpCode.getEphemerals, 'getEphemerals', prefix, (w) => proto.writeGetEphemeralsRequest(w, { prefixPath: p }), proto.readGetEphemeralsResponse, options);
  return (body.ephemerals ?? []).map((e) => rp.strip(e));
}

/** @internal */
export async function sync(rp: RequestPath, path: string, options: CallOptions): Promise<void> {
  validatePath(path);
  const p = addChroot(rp.chroot, path);
  await rp.call(OpCode.sync, 'sync', path, (w) => proto.writeSyncRequest(w, { path: p }), proto.readSyncResponse, options);
}

/** @internal Adds the persistent watch and registers `listener`; the caller hands back its remover. */
export async function addWatch(rp: RequestPath, path: string, listener: WatchListener, options: CallOptions & { recursive?: boolean }): Promise<void> {
  validatePath(path);
  if (typeof listener !== 'function') throw new InvalidArgumentError('listener', 'must be a function');
  const kind: WatchKind = options.recursive ? 'persistentRecursive' : 'persistent';
  const p = addChroot(rp.chroot, path);
  const mode = options.recursive ? AddWatchMode.PERSISTENT_RECURSIVE : AddWatchMode.PERSISTENT;
  await rp.call(OpCode.addWatch, 'addWatch', path, (w) => proto.writeAddWatchRequest(w, { path: p, mode }), undefined, options);
  rp.session.watches.add(kind, path, listener);
}

/** @internal */
export async function addAuth(rp: RequestPath, scheme: string, auth: string | Uint8Array, options: CallOptions): Promise<void> {
  if (typeof scheme !== 'string' || scheme === '') throw new InvalidArgumentError('scheme', 'must be a non-empty string');
  const bytes = authBytes(auth);
  const timeout = options.timeout ?? rp.options.requestTimeout;
  validateTimeout(timeout);
  options.signal?.throwIfAborted();
  // The session keeps the credentials and sends them again on every reconnect.
  await raceAbort(rp.session.addAuth(scheme, bytes), options.signal, timeout, { op: 'addAuth' });
}

/** @internal */
export async function whoAmI(rp: RequestPath, options: CallOptions): Promise<Array<{ authScheme: string; user: string }>> {
  const body = await rp.call(OpCode.whoAmI, 'whoAmI', undefined, undefined, proto.readWhoAmIResponse, options);
  return (body.clientInfo ?? []).map((c) => ({ authScheme: c.authScheme ?? '', user: c.user ?? '' }));
}

/** @internal */
export async function getConfig(rp: RequestPath, options: WatchOptions): Promise<EnsembleConfig> {
  const watch = options.watch !== undefined;
  const write = (w: JuteWriter) => proto.writeGetDataRequest(w, { path: CONFIG_NODE, watch });
  const reply = await rp.rawRequest(OpCode.getData, 'getConfig', CONFIG_NODE, write, proto.readGetDataResponse, options);
  if (reply.err === ErrorCode.NONODE && rp.session.serverGeneration() === 'legacy') throw needsNewerServer('getConfig', undefined, '3.5');
  if (reply.err !== 0) throw fromCode(reply.err, { op: 'getConfig', path: CONFIG_NODE });
  // Registered by the server path, which the session strips to itself and re-arms as is.
  if (options.watch) rp.session.watches.add('data', CONFIG_NODE, options.watch);
  const body = reply.body as proto.GetDataResponse;
  return parseConfig((body.data ?? EMPTY).toString('utf8'), body.stat);
}

/** @internal */
export async function reconfig(rp: RequestPath, change: ReconfigChange, options: CallOptions): Promise<EnsembleConfig> {
  const request = reconfigBody(change);
  const body = await rp.call(OpCode.reconfig, 'reconfig', undefined, (w) => proto.writeReconfigRequest(w, request), proto.readGetDataResponse, options);
  return parseConfig((body.data ?? EMPTY).toString('utf8'), body.stat);
}

function validVersion(version: number | undefined): number {
  if (version === undefined) return -1;
  if (!Number.isInteger(version) || version < -1 || version > 0x7fffffff) {
    throw new InvalidArgumentError('version', `must be an integer >= -1, got ${String(version)}`);
  }
  return version;
}

/**
 * Creating a node: the request validated and built (every create mode, TTLs, the ACL a create
 * that names none gets), `parents`, and a create on a 3.4 server, which has neither create2 nor
 * containers. Shared by {@link ZooKeeper.create} and transactions; the chroot itself is created
 * here too, at connect (`createChroot`).
 */
import { CreateMode, OpCode } from '../constants.js';
import { ErrorCode, fromCode, InvalidArgumentError, NoNodeError, ZooKeeperError } from '../errors.js';
import type { Stat } from '../jute/data.js';
import type { JuteReader } from '../jute/reader.js';
import type { JuteWriter } from '../jute/writer.js';
import * as proto from '../jute/proto.js';
import { addChroot, validatePath } from '../util/paths.js';
import { validateACL, type ACL } from './acl.js';
import { dataBytes, type Data } from './data.js';
import type { ResolvedOptions } from './options.js';
import type { RequestPath } from './request-path.js';
import { Budget, createWithParents, ensurePath, validateParents, type TreeClient } from './tree.js';
import type { CallOptions, CreateOp, CreateOptions } from './types.js';

/** Largest TTL the server accepts (`EphemeralType.TTL` keeps it in 40 bits). */
const MAX_TTL = 0xff_ffff_ffff;

/**
 * @internal A create, with its Stat when `withStat`. `zk`: the client's own calls, for the
 * ancestors `parents` creates and the Stat a 3.4 server does not send.
 */
export async function create(rp: RequestPath, zk: TreeClient, path: string, data: Data, options: CreateOptions, withStat: boolean): Promise<{ path: string; stat?: Stat }> {
  // On a 3.4 server, create2 and containers are served another way. Checked without waiting, so
  // the request leaves in call order; in a new connection's first round trip the connection
  // holds it until the server is known, and on a 3.4 server answers Unimplemented (below).
  const legacyMay = withStat || options.mode === CreateMode.CONTAINER;
  if (legacyMay && rp.session.serverGeneration() === 'legacy') return createOnLegacy(rp, zk, path, data, options, withStat);
  try {
    const created = await createNow(rp, zk, path, data, options, withStat);
    // A create2 the connection sent to a 3.4 server as a plain create (LEGACY_SUBSTITUTES).
    if (withStat && created.stat === undefined) return await statOf(zk, created.path, options);
    return created;
  } catch (err) {
    if (legacyMay && err instanceof ZooKeeperError && err.code === ErrorCode.UNIMPLEMENTED && rp.session.serverGeneration() === 'legacy') return createOnLegacy(rp, zk, path, data, options, withStat);
    throw err;
  }
}

async function createNow(rp: RequestPath, zk: TreeClient, path: string, data: Data, options: CreateOptions, withStat: boolean): Promise<{ path: string; stat?: Stat }> {
  const { request, read } = prepareCreate(rp, path, data, options, withStat);
  validateParents(options.parents);
  if (options.parentAcl !== undefined) validateACL(options.parentAcl);
  const write = request.type === OpCode.createTTL ? (w: JuteWriter) => proto.writeCreateTTLRequest(w, request) : (w: JuteWriter) => proto.writeCreateRequest(w, request);
  let r: proto.CreateResponse | proto.Create2Response;
  if (!options.parents) {
    r = await rp.call(request.type, 'create', path, write, read, options);
  } else {
    const budget = new Budget(options);
    const send = () => rp.call(request.type, 'create', path, write, read, budget.call());
    try {
      r = await send();
    } catch (err) {
      if (!(err instanceof NoNodeError)) throw err;
      r = await createWithParents(zk, path, options.parents, options.parentAcl, budget, send);
    }
  }
  return { path: rp.strip(r.path), ...('stat' in r ? { stat: r.stat } : {}) };
}

/**
 * A create on a 3.4 server, which has neither create2 nor containers: a container is created as
 * a persistent node (as Curator does without container support: nothing removes it when its
 * last child goes), and the Stat, when wanted, comes from an `exists` after the create: one
 * more round trip.
 */
async function createOnLegacy(rp: RequestPath, zk: TreeClient, path: string, data: Data, options: CreateOptions, withStat: boolean): Promise<{ path: string; stat?: Stat }> {
  const mode = options.mode === CreateMode.CONTAINER ? CreateMode.PERSISTENT : options.mode;
  const created = await createNow(rp, zk, path, data, { ...options, mode }, false);
  return withStat ? statOf(zk, created.path, options) : created;
}

// Not bound to the caller's signal: the node exists by now, and a caller that aborts must still
// learn its path (a lock's sweep deletes it by path; aborted here, it had to look for it).
async function statOf(zk: TreeClient, path: string, options: CallOptions): Promise<{ path: string; stat: Stat }> {
  const stat = (await zk.exists(path, options.timeout === undefined ? {} : { timeout: options.timeout })) as Stat | null;
  // Deleted between the two requests (by another session, or this one's expiry). The error
  // names the created node (a missing parent names the requested path), so a caller can tell.
  if (stat === null) throw new NoNodeError(`NONODE (create ${path}): created, then deleted before its Stat was read (a 3.4 server has no create2: the Stat takes a second request)`, { op: 'create', path });
  return { path, stat };
}

/**
 * @internal Validates a create and returns its wire request (op code included) and reply
 * reader. Containers and TTL nodes have op codes of their own and always answer with a Stat; a
 * plain create asks for one only when wanted.
 */
export function prepareCreate(rp: RequestPath, path: string, data: Data, options: CreateOptions, withStat = false): { request: CreateOp; read: (r: JuteReader) => proto.CreateResponse | proto.Create2Response } {
  const mode = options.mode ?? CreateMode.PERSISTENT;
  if (!Number.isInteger(mode) || mode < 0 || mode > 6) throw new InvalidArgumentError('mode', `unknown create mode ${String(mode)}`);
  const sequential = mode === CreateMode.PERSISTENT_SEQUENTIAL || mode === CreateMode.EPHEMERAL_SEQUENTIAL || mode === CreateMode.PERSISTENT_SEQUENTIAL_WITH_TTL;
  validatePath(path, { sequential });
  const isTtl = mode === CreateMode.PERSISTENT_WITH_TTL || mode === CreateMode.PERSISTENT_SEQUENTIAL_WITH_TTL;
  if (isTtl) {
    if (options.ttl === undefined || !Number.isInteger(options.ttl) || options.ttl <= 0 || options.ttl > MAX_TTL) {
      throw new InvalidArgumentError('ttl', `a TTL mode needs an integer ttl in 1..${MAX_TTL} ms, got ${String(options.ttl)}`);
    }
  } else if (options.ttl !== undefined) {
    throw new InvalidArgumentError('ttl', 'ttl applies only to the TTL create modes');
  }
  const acl = options.acl === undefined ? aclFor(rp.options, path) : options.acl;
  if (options.acl !== undefined) validateACL(options.acl);
  const fields = { path: addChroot(rp.chroot, path), data: dataBytes(data, rp.options.maxFrameSize), acl, flags: mode };
  if (isTtl) return { request: { type: OpCode.createTTL, ...fields, ttl: BigInt(options.ttl as number) }, read: proto.readCreate2Response };
  if (mode === CreateMode.CONTAINER) return { request: { type: OpCode.createContainer, ...fields }, read: proto.readCreate2Response };
  if (withStat) return { request: { type: OpCode.create2, ...fields }, read: proto.readCreate2Response };
  return { request: { type: OpCode.create, ...fields }, read: proto.readCreateResponse };
}

/**
 * @internal The ACL of a create that names none: the `acl` connect option's answer for `path`
 * (the caller's path, chroot-relative), else its default. The default was validated when
 * connecting; an answer of `forPath` is validated here, each time (it may be any value).
 */
export function aclFor(options: Pick<ResolvedOptions, 'acl'>, path: string): readonly ACL[] {
  const { default: fallback, forPath } = options.acl;
  if (forPath === undefined) return fallback;
  const acl = forPath(path);
  if (acl === undefined) return fallback;
  validateACL(acl, 'acl.forPath');
  return acl;
}

/** @internal `createChroot`: the chroot and its ancestors, by their server paths (outside the chroot). */
export async function ensureChroot(rp: RequestPath, signal: AbortSignal | undefined): Promise<void> {
  const call = { signal, timeout: rp.options.connectTimeout };
  // Seen from this client the chroot is '/': its ACL (and its ancestors', outside our view) is '/''s.
  const acl = aclFor(rp.options, '/');
  const root: Pick<TreeClient, 'create' | 'exists'> = {
    create: async (p, _data, o = {}) => {
      const write = (w: JuteWriter) => proto.writeCreateRequest(w, { path: p, data: null, acl: acl as ACL[], flags: CreateMode.PERSISTENT });
      const reply = await rp.rawRequest(OpCode.create, 'create', p, write, proto.readCreateResponse, o);
      if (reply.err !== 0) throw fromCode(reply.err, { op: 'create', path: p });
      return p;
    },
    exists: async (p, o = {}) => {
      const reply = await rp.rawRequest(OpCode.exists, 'exists', p, (w) => proto.writeExistsRequest(w, { path: p, watch: false }), proto.readExistsResponse, o);
      if (reply.err !== 0 && reply.err !== ErrorCode.NONODE) throw fromCode(reply.err, { op: 'exists', path: p });
      return reply.err === 0 ? reply.body : null;
    },
  };
  try {
    await ensurePath(root, rp.chroot, call);
  } catch (err) {
    if (!(err instanceof ZooKeeperError)) throw err;
    throw fromCode(err.code, { op: 'connect', path: rp.chroot, cause: err }, `could not create the chroot ${rp.chroot}: ${err.message}`);
  }
}

/**
 * Whether a lock path is as closed as the lock's own nodes. ZooKeeper checks a delete against the
 * parent's ACL, not the node's (`PrepRequestProcessor`: DELETE on the parent), and a create
 * against the parent's CREATE: a holder's node under a path that someone else made open can be
 * deleted by any session, whatever the node's own ACL, and the waiter behind it takes the lock.
 * So a recipe whose nodes shut others out refuses a path that lets them in (UnsafeLockPathError).
 *
 * "Others" are judged against the ACL our nodes get (the recipe's `acl`, else the client's
 * `zk.defaultACL(path)`): an identity it grants a right may hold the same right on the path. An
 * ACL with `auth` entries (CREATOR_ALL_ACL) stands for the session's identities, which only the
 * server knows: the ACL it stored on our first node is read then (one getACL per client and ACL,
 * the first time it is needed). An ACL open to everyone checks nothing; a closed one reads the
 * path's ACL with every create, in the same round trip, since a container path may be reaped and
 * made again by someone else between two acquires.
 */
import { NoNodeError, Perm, type ACL, type ZooKeeper } from '@zk/protocol';
import { UnsafeLockPathError } from '../errors.js';

/** The rights on a lock path that let a session break a hold: queue (create), delete holders, change the ACL. */
const GUARDED = [
  [Perm.CREATE, 'create'],
  [Perm.DELETE, 'delete'],
  [Perm.ADMIN, 'admin'],
] as const;

const ALL_GUARDED = Perm.CREATE | Perm.DELETE | Perm.ADMIN;

/** What is known of the ACL our nodes get, per recipe ACL (or per client, for the client's option). */
interface Known {
  /** `perm|scheme:id` grants of our own node, as the server stored them. */
  readonly trusted: Set<string>;
  /** Our nodes give everyone create, delete and admin: there is nothing to protect. */
  open: boolean;
  /** Our node's ACL has been read. */
  read: boolean;
}

/** Per client, by the ACL's text: what is known of that ACL. */
const known = new WeakMap<ZooKeeper, Map<string, Known>>();

/** The same, by the list object itself (and the client it was seen with). */
const byList = new WeakMap<readonly ACL[], { zk: ZooKeeper; known: Known }>();

const key = (perm: number, scheme: string, id: string) => `${perm}|${scheme}:${id}`;

/**
 * The check of a recipe's creates under `path`: `undefined` when nothing needs checking (our
 * nodes are open to all), else a {@link PathCheck} run after our create with the path's ACL.
 */
export function pathCheck(zk: ZooKeeper, recipeAcl: readonly ACL[] | undefined, path: string): PathCheck | undefined {
  // A client of a copy of @zk/protocol without defaultACL: its option is learnt from our node.
  const ours = recipeAcl ?? (typeof zk.defaultACL === 'function' ? zk.defaultACL(path) : undefined);
  // The uncontended acquire is a measured fast path: the same list (a recipe's, the option's
  // default) is looked up by identity, without building its text.
  const seen = ours === undefined ? undefined : byList.get(ours);
  if (seen !== undefined && seen.zk === zk) return seen.known.open ? undefined : new PathCheck(zk, seen.known);
  const text = ours === undefined ? '' : ours.map((a) => `${a.perms}|${a.id.scheme}:${a.id.id}`).join(',');
  let byAcl = known.get(zk);
  if (byAcl === undefined) known.set(zk, (byAcl = new Map()));
  let k = byAcl.get(text);
  if (k === undefined) {
    k = { trusted: new Set(), open: false, read: false };
    // An ACL that names its ids is what the server stores (no `auth` to resolve).
    if (ours !== undefined && !ours.some((a) => a.id.scheme === 'auth')) learn(k, ours);
    byAcl.set(text, k);
  }
  if (ours !== undefined) byList.set(ours, { zk, known: k });
  if (k.open) return undefined;
  return new PathCheck(zk, k);
}

function learn(k: Known, acl: readonly ACL[]): void {
  for (const a of acl) for (const [perm] of GUARDED) if (a.perms & perm) k.trusted.add(key(perm, a.id.scheme, a.id.id));
  k.read = true;
  k.open = GUARDED.every(([perm]) => k.trusted.has(key(perm, 'world', 'anyone')));
}

/** The grants of `pathAcl` (C, D, A) that our nodes do not give the same identity. */
function untrusted(k: Known, pathAcl: readonly ACL[]): string[] {
  const out: string[] = [];
  for (const a of pathAcl) {
    if (!(a.perms & ALL_GUARDED)) continue;
    for (const [perm, name] of GUARDED) {
      if (a.perms & perm && !k.trusted.has(key(perm, a.id.scheme, a.id.id))) out.push(`${name} to ${a.id.scheme}:${a.id.scheme === 'digest' ? a.id.id.slice(0, a.id.id.indexOf(':') >>> 0) : a.id.id}`);
    }
  }
  return out;
}

/** One recipe's check; see {@link pathCheck}. */
export class PathCheck {
  readonly #zk: ZooKeeper;
  readonly #known: Known;
  constructor(zk: ZooKeeper, k: Known) {
    this.#zk = zk;
    this.#known = k;
  }

  /** The path's ACL, asked for in the same round trip as the create (its failure is the create's). */
  readPath(path: string): Promise<readonly ACL[]> {
    const read = this.#zk.getACL(path).then((r) => r.acl);
    read.catch(() => undefined);
    return read;
  }

  /**
   * Throws UnsafeLockPathError when `pathAcl` lets in someone our node (`ourNode`, just created)
   * shuts out; reads our node's ACL the first time it is needed.
   */
  async verify(path: string, pathAcl: readonly ACL[], ourNode: string, race: <T>(p: Promise<T>) => Promise<T>): Promise<void> {
    const k = this.#known;
    if (k.open) return;
    if (untrusted(k, pathAcl).length > 0 && !k.read) {
      // Our node gone already (deleted by someone with the right): the acquire finds it gone and
      // fails as before; nothing is learned.
      const ours = await race(this.#zk.getACL(ourNode)).catch((e: unknown) => (e instanceof NoNodeError ? undefined : Promise.reject(e)));
      if (ours === undefined) return;
      learn(k, ours.acl);
    }
    if (k.open) return;
    const grants = untrusted(k, pathAcl);
    if (grants.length > 0) throw new UnsafeLockPathError(path, pathAcl, grants);
  }
}

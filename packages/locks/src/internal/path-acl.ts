/**
 * Whether a lock path is as closed as the lock's own nodes. ZooKeeper checks a delete against the
 * parent's ACL, not the node's (`PrepRequestProcessor`: DELETE on the parent), and a create
 * against the parent's CREATE: a holder's node under a path that someone else made open can be
 * deleted by any session, whatever the node's own ACL, and the waiter behind it takes the lock.
 * So a recipe whose nodes shut others out refuses a path that lets them in (UnsafeLockPathError).
 *
 * "Others" are judged against the ACL the server stored on our own node: an identity that it
 * grants a right (our digest user in place of CREATOR_ALL_ACL's `auth`, the client's `acl`
 * option's answer) may hold the same right on the path. That ACL is read once per recipe and
 * client (one getACL after the first create that needs it); the path's ACL is read with every
 * create of a closed recipe, in the same round trip, since a container path may be reaped and made
 * again by someone else between two acquires. A recipe whose nodes are open to everyone checks
 * nothing after its first create.
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

const known = new WeakMap<object, Known>();

const key = (perm: number, scheme: string, id: string) => `${perm}|${scheme}:${id}`;

/**
 * The check of one recipe's path: `undefined` when nothing needs checking (the recipe's nodes are
 * known to be open to all), else a function run after our create with the path's ACL.
 */
export function pathCheck(zk: ZooKeeper, recipeAcl: readonly ACL[] | undefined): PathCheck | undefined {
  const owner: object = recipeAcl ?? zk;
  let k = known.get(owner);
  if (k === undefined) {
    k = { trusted: new Set(), open: false, read: false };
    // A recipe ACL that names its ids is what the server stores (no `auth` to resolve).
    if (recipeAcl !== undefined && !recipeAcl.some((a) => a.id.scheme === 'auth')) learn(k, recipeAcl);
    known.set(owner, k);
  }
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

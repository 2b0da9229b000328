/**
 * ACL helpers: the well-known lists of Java's `ZooDefs.Ids`, digest identities, and the
 * validation the client applies before sending an ACL.
 */
import { createHash } from 'node:crypto';
import { Perm } from '../constants.js';
import { InvalidArgumentError } from '../errors.js';


/** An identity: `world:anyone`, `digest:user:hash`, `ip:10.0.0.0/8`, `auth:`, `sasl:name`. */
export interface Id {
  /** The scheme (`'world'`, `'digest'`, `'ip'`, `'auth'`, `'sasl'`, `'x509'`, ...). */
  readonly scheme: string;
  /** The identity within the scheme. */
  readonly id: string;
}

/** One entry of a node's access control list. */
export interface ACL {
  /** A bitwise OR of {@link Perm} values. */
  readonly perms: number;
  /** Who gets them. */
  readonly id: Id;
}

/** `world:anyone` (`ZooDefs.Ids.ANYONE_ID_UNSAFE`). */
export const ANYONE_ID_UNSAFE: Id = Object.freeze({ scheme: 'world', id: 'anyone' });
/** The identity of whoever authenticated on the creating session (`ZooDefs.Ids.AUTH_IDS`). */
export const AUTH_IDS: Id = Object.freeze({ scheme: 'auth', id: '' });

/** Anyone may do anything (`ZooDefs.Ids.OPEN_ACL_UNSAFE`). The default for creates. */
export const OPEN_ACL_UNSAFE: readonly ACL[] = Object.freeze([Object.freeze({ perms: Perm.ALL, id: ANYONE_ID_UNSAFE })]);
/** Anyone may read (`ZooDefs.Ids.READ_ACL_UNSAFE`). */
export const READ_ACL_UNSAFE: readonly ACL[] = Object.freeze([Object.freeze({ perms: Perm.READ, id: ANYONE_ID_UNSAFE })]);
/**
 * Everything for the identities the creating session authenticated with
 * (`ZooDefs.Ids.CREATOR_ALL_ACL`); the create fails with InvalidACL if it has none.
 */
export const CREATOR_ALL_ACL: readonly ACL[] = Object.freeze([Object.freeze({ perms: Perm.ALL, id: AUTH_IDS })]);

/**
 * The `digest` identity for a user and password, as the server computes it
 * (`DigestAuthenticationProvider.generateDigest`): `user:base64(sha1("user:password"))`.
 *
 * @example
 * ```ts
 * const acl = [{ perms: Perm.ALL, id: digestId('alice', 'secret') }];
 * await zk.addAuth('digest', 'alice:secret');
 * await zk.create('/private', data, { acl });
 * ```
 */
export function digestId(user: string, password: string): Id {
  const hash = createHash('sha1').update(`${user}:${password}`, 'utf8').digest('base64');
  return { scheme: 'digest', id: `${user}:${hash}` };
}

/** A one-entry ACL giving `perms` to the digest identity of `user`/`password`. */
export function digestACL(user: string, password: string, perms: number = Perm.ALL): ACL[] {
  return [{ perms, id: digestId(user, password) }];
}

/**
 * The ACL of every create that names none: the client-wide `acl` connect option, as Curator's
 * `ACLProvider` (`getDefaultAcl`, `getAclForPath`) and Kazoo's `default_acl`.
 *
 * @example
 * ```ts
 * // Everything this client creates belongs to its digest identity; /public stays readable.
 * const acl: ACLProvider = {
 *   default: CREATOR_ALL_ACL,
 *   forPath: (path) => (path.startsWith('/public/') ? [...CREATOR_ALL_ACL, ...READ_ACL_UNSAFE] : undefined),
 * };
 * await ZooKeeper.connect('zk1:2181/app', { auth: [{ scheme: 'digest', auth: 'app:secret' }], acl });
 * ```
 */
export interface ACLProvider {
  /** The ACL of a create whose path `forPath` does not answer for (Curator's `getDefaultAcl`). */
  readonly default: readonly ACL[];
  /**
   * The ACL for one path (Curator's `getAclForPath`), or `undefined` for {@link default}. Called
   * synchronously for each create that names no ACL, with the path as the caller wrote it,
   * relative to the client's chroot (the sequential node's prefix, before the server's suffix).
   * The chroot node itself and its ancestors, made by `createChroot`, get the ACL for `'/'`.
   * An invalid answer fails that create with InvalidArgumentError before it is sent.
   */
  readonly forPath?: ((path: string) => readonly ACL[] | undefined) | undefined;
}

/** @internal The `acl` connect option after validation: a frozen copy of the default, and the function. */
export interface ResolvedACLProvider {
  readonly default: readonly ACL[];
  readonly forPath: ((path: string) => readonly ACL[] | undefined) | undefined;
}

/** @internal The provider of a client that was given none: {@link OPEN_ACL_UNSAFE} everywhere. */
export const OPEN_PROVIDER: ResolvedACLProvider = Object.freeze({ default: OPEN_ACL_UNSAFE, forPath: undefined });

/**
 * @internal Validates the `acl` connect option (a list, or an {@link ACLProvider}) and returns it
 * resolved: the default list copied and frozen, so later changes to the caller's array cannot
 * bypass the validation done here.
 */
export function resolveACLProvider(option: readonly ACL[] | ACLProvider | undefined): ResolvedACLProvider {
  if (option === undefined) return OPEN_PROVIDER;
  if (Array.isArray(option)) return Object.freeze({ default: frozenACL(option, 'acl'), forPath: undefined });
  if (typeof option !== 'object' || option === null) throw new InvalidArgumentError('acl', `must be a list of ACL entries or { default, forPath? }, got ${String(option)}`);
  const provider = option as ACLProvider;
  if (provider.forPath !== undefined && typeof provider.forPath !== 'function') {
    throw new InvalidArgumentError('acl.forPath', `must be a function (path) => ACL[] | undefined, got ${typeof provider.forPath}`);
  }
  return Object.freeze({ default: frozenACL(provider.default, 'acl.default'), forPath: provider.forPath });
}

/**
 * @internal A validated, deeply frozen copy of `acl`: what the client keeps, checked once.
 * Throws {@link InvalidArgumentError} (naming `argument`) like {@link validateACL}.
 */
export function frozenACL(acl: readonly ACL[], argument = 'acl'): readonly ACL[] {
  validateACL(acl, argument);
  if (acl === OPEN_ACL_UNSAFE || acl === CREATOR_ALL_ACL || acl === READ_ACL_UNSAFE) return acl;
  return Object.freeze(acl.map(({ perms, id }) => Object.freeze({ perms, id: Object.freeze({ scheme: id.scheme, id: id.id }) })));
}

/**
 * The schemes a stock server knows (`ProviderRegistry`'s built-in providers, with `auth`, which
 * the server replaces by the creator's identities, and `world`). An ACL naming another scheme
 * would fail with InvalidACL on a server without a custom `authProvider` for it.
 */
const SCHEMES: ReadonlySet<string> = new Set(['world', 'auth', 'digest', 'ip', 'sasl', 'x509']);

/**
 * `user:` and the base64 of a hash of at least 20 bytes: SHA-1 (28 characters) by default, longer
 * for the 3.7+ `DigestAuthenticationProvider.digestAlg` choices (SHA-256, SHA3-256). A password
 * in place of the hash (the usual mistake: nobody could ever authenticate as it) rarely fits.
 */
const DIGEST_ID = /^[^:]+:(?=.{28})(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** Why `id` is not a valid identity of its scheme (as the server's `AuthenticationProvider.isValid` would say), or undefined. */
function badId(scheme: string, id: string): string | undefined {
  switch (scheme) {
    case 'world':
      return id === 'anyone' ? undefined : `the world scheme has one id, 'anyone', got '${id}'`;
    case 'auth':
      return undefined; // the server puts the creating session's identities in its place
    case 'digest':
      // A user name and the base64 hash, not the password: `digestId(user, password)` makes one.
      // The message leaves out what follows the colon: it may be a password written by mistake.
      return DIGEST_ID.test(id) ? undefined : `a digest id is 'user:base64(sha1(user:password))' (see digestId()), got '${id.includes(':') ? `${id.slice(0, id.indexOf(':'))}:...` : '(no colon)'}'`;
    case 'ip':
      return validIp(id) ? undefined : `an ip id is an address with an optional /bits mask (10.0.0.0/8, ::1), got '${id}'`;
    default:
      return id === '' ? `a ${scheme} id must not be empty` : undefined;
  }
}

const IPV4 = /^(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)$/;

/** 4 or 6 for an IP address, else 0. Pure (only connection/transport.ts may import node:net): IPv6 as the URL parser reads a bracketed host. */
function ipFamily(address: string): 0 | 4 | 6 {
  if (IPV4.test(address)) return 4;
  if (!address.includes(':') || /[[\]/%]/.test(address)) return 0;
  try {
    new URL(`http://[${address}]/`);
    return 6;
  } catch {
    return 0;
  }
}

function validIp(id: string): boolean {
  const slash = id.indexOf('/');
  const address = slash === -1 ? id : id.slice(0, slash);
  const family = ipFamily(address);
  if (family === 0) return false;
  if (slash === -1) return true;
  const bits = id.slice(slash + 1);
  return /^\d{1,3}$/.test(bits) && Number(bits) <= (family === 4 ? 32 : 128);
}

/**
 * Throws {@link InvalidArgumentError} unless `acl` is a non-empty list of well-formed entries:
 * perms an integer in 1..31 (a bitwise OR of {@link Perm}), a scheme the server knows (`world`,
 * `auth`, `digest`, `ip`, `sasl`, `x509`) and an id of that scheme's shape (`world:anyone`,
 * `digest:user:base64hash`, `ip:address[/bits]`, non-empty for `sasl` and `x509`).
 */
export function validateACL(acl: readonly ACL[], argument = 'acl'): void {
  if (!Array.isArray(acl) || acl.length === 0) throw new InvalidArgumentError(argument, `must be a non-empty list of ACL entries, got ${Array.isArray(acl) ? 'an empty list' : String(acl)}`);
  for (const [i, entry] of acl.entries()) {
    const perms = entry?.perms;
    if (!Number.isInteger(perms) || perms < 1 || perms > Perm.ALL) {
      throw new InvalidArgumentError(argument, `entry ${i}: perms must be an integer in 1..31 (Perm flags), got ${String(perms)}`);
    }
    const id = entry.id;
    if (!id || typeof id.scheme !== 'string' || id.scheme === '' || typeof id.id !== 'string') {
      throw new InvalidArgumentError(argument, `entry ${i}: id must be { scheme: non-empty string, id: string }`);
    }
    if (!SCHEMES.has(id.scheme)) throw new InvalidArgumentError(argument, `entry ${i}: unknown scheme '${id.scheme}' (world, auth, digest, ip, sasl or x509)`);
    const bad = badId(id.scheme, id.id);
    if (bad !== undefined) throw new InvalidArgumentError(argument, `entry ${i}: ${bad}`);
  }
}

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

/** Throws {@link InvalidArgumentError} unless `acl` is a non-empty list of well-formed entries. */
export function validateACL(acl: readonly ACL[], argument = 'acl'): void {
  if (!Array.isArray(acl) || acl.length === 0) throw new InvalidArgumentError(argument, 'must be a non-empty list');
  for (const [i, entry] of acl.entries()) {
    const perms = entry?.perms;
    if (!Number.isInteger(perms) || perms < 0 || perms > Perm.ALL) {
      throw new InvalidArgumentError(argument, `entry ${i}: perms must be an integer in 0..31, got ${String(perms)}`);
    }
    const id = entry.id;
    if (!id || typeof id.scheme !== 'string' || id.scheme === '' || typeof id.id !== 'string') {
      throw new InvalidArgumentError(argument, `entry ${i}: id must be { scheme: non-empty string, id: string }`);
    }
  }
}

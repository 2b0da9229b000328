/**
 * zk-lock's exit codes, and what it says when something other than the command fails: each error
 * class gets its sysexits code and a hint at what to check. Pure (no I/O), so the table is tested
 * as a table.
 */
import {
  BadVersionError,
  InvalidACLError,
  InvalidArgumentError,
  NoAuthError,
  NotEmptyError,
  ZooKeeperError,
} from '@zk/protocol';
import { UnsafeLockPathError } from '../errors.js';
import { UsageError } from './args.js';

/** Exit codes (sysexits.h where one fits; documented in the README and in --help). */
export const Exit = {
  /** EX_USAGE: bad command line, a bad --acl included (refused by zk-lock or by the server). */
  usage: 64,
  /** EX_UNAVAILABLE: ZooKeeper could not be reached, or the session was lost before the hold. */
  unavailable: 69,
  /** EX_SOFTWARE: ZooKeeper refused an operation for another reason (NOTEMPTY, BADVERSION, ...). */
  software: 70,
  /** EX_TEMPFAIL: the lock was not acquired within --timeout. */
  timeout: 75,
  /** EX_PROTOCOL: the lease (or leadership) was lost while the command ran. */
  lost: 76,
  /** EX_NOPERM: the path's ACL does not admit this identity (NOAUTH), or is open where --acl is not. */
  noPerm: 77,
  /** The command was not found (as in shells). */
  notFound: 127,
} as const;

/** What zk-lock was doing, for the messages. */
export interface FailureContext {
  /** The lock path. */
  readonly path: string;
  /** The identity used, without secrets (`digest user deploy`, `no credentials`). */
  readonly identity: string;
}

/** An error's exit code and the one line zk-lock prints for it (after `zk-lock: `). */
export function describeFailure(err: unknown, ctx: FailureContext): { code: number; message: string } {
  const message = (err as Error)?.message ?? String(err);
  if (err instanceof UsageError) return { code: Exit.usage, message };
  if (err instanceof InvalidArgumentError) return { code: Exit.usage, message: `${message}${err.argument === 'acl' ? ` (${ACL_HINT})` : ''}` };
  if (err instanceof InvalidACLError) return { code: Exit.usage, message: `${message}: the server refused the ACL of --acl (${ACL_HINT})` };
  if (err instanceof NoAuthError) {
    return { code: Exit.noPerm, message: `${message}. ${ctx.path} belongs to another identity than this one (${ctx.identity}): run with the credentials of its owner (ZK_DIGEST_FILE, ZK_SASL_USER with ZK_SASL_PASSWORD_FILE, or a TLS client certificate; see --help), or ask them to open it to you` };
  }
  if (err instanceof UnsafeLockPathError) return { code: Exit.noPerm, message };
  if (err instanceof NotEmptyError) {
    return { code: Exit.software, message: `${message}: ZooKeeper deletes only nodes without children, and a node zk-lock meant to remove has some. Is something other than lock recipes using ${ctx.path}? (zk-lock status ${ctx.path} shows its queue)` };
  }
  if (err instanceof BadVersionError) {
    return { code: Exit.software, message: `${message}: the node changed between zk-lock's read and its write, so another program writes under ${ctx.path}. A lock path should be used by lock recipes only` };
  }
  if (err instanceof ZooKeeperError && !isUnavailable(err)) return { code: Exit.software, message };
  return { code: Exit.unavailable, message };
}

const ACL_HINT = "'creator' needs an identity (ZK_DIGEST_FILE, ZK_SASL_USER, or a TLS client certificate); a digest entry is digest:user:<base64 sha1 of user:password>:perms, never the password; see --help";

/** Errors that mean the ensemble or the session could not be used: exit 69. */
function isUnavailable(err: ZooKeeperError): boolean {
  return ['ConnectionLossError', 'SessionExpiredError', 'SessionMovedError', 'OperationTimeoutError', 'ClientClosedError', 'AuthFailedError'].includes(err.name);
}

/**
 * zk-lock's command line, parsed without dependencies. Pure.
 */
import { CREATOR_ALL_ACL, OPEN_ACL_UNSAFE, Perm, READ_ACL_UNSAFE, validatePath, type ACL } from '@zk/protocol';

/** A usage mistake: printed as one line with a pointer to --help. */
export class UsageError extends Error {
  override name = 'UsageError';
}

/** The parsed command line. */
export interface Parsed {
  command: 'run' | 'status';
  path: string;
  argv: string[];
  connect?: string | undefined;
  timeout?: number | undefined;
  sessionTimeout?: number | undefined;
  grace?: number | undefined;
  read?: boolean;
  write?: boolean;
  /** `--semaphore N`: at most N commands at once (a Curator-compatible semaphore). */
  semaphore?: number | undefined;
  /** `--leader`: run the command while leader (a Curator-compatible LeaderSelector). */
  leader?: boolean;
  /** `--id`: the participant id of `--leader`. */
  id?: string | undefined;
  /** `--acl`: the ACL of the nodes zk-lock creates (default: the client's, open). */
  acl?: ACL[] | undefined;
  json?: boolean;
  verbose?: boolean;
  help?: boolean;
  /** `--version`: print the versions and exit. */
  version?: boolean;
}

/** `500ms`, `30s`, `5m`, `1h`, or a plain number of seconds, to ms. */
export function parseDuration(text: string, option: string): number {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(text.trim());
  if (!m) throw new UsageError(`${option}: bad duration ${JSON.stringify(text)} (use 500ms, 30s, 5m or seconds)`);
  const n = Number(m[1]);
  const unit = m[2] ?? 's';
  return Math.round(n * { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[unit]!);
}

/** A unit written apart from its number (`--timeout 5 minutes`). */
const UNIT_WORD = /^(ms|milliseconds?|s|secs?|seconds?|m|mins?|minutes?|h|hrs?|hours?)$/i;

/** Parses `zk-lock [options] <path> -- <command...>` and `zk-lock status [options] <path>`. */
export function parseArgs(argv: readonly string[]): Parsed {
  const dashdash = argv.indexOf('--');
  const head = dashdash === -1 ? [...argv] : argv.slice(0, dashdash);
  const command = dashdash === -1 ? [] : argv.slice(dashdash + 1);
  const out: Parsed = { command: 'run', path: '', argv: command };
  if (head.includes('--version')) return { ...out, version: true };
  if (head.includes('-h') || head.includes('--help')) return { ...out, help: true };
  const positional: string[] = [];
  /** The duration option whose value was the previous argument (`--timeout 5 minutes`: `minutes` follows it). */
  let afterDuration: string | undefined;
  for (let i = 0; i < head.length; i++) {
    const previousDuration = afterDuration;
    afterDuration = undefined;
    const a = head[i] as string;
    const value = () => {
      const v = head[++i];
      if (v === undefined) throw new UsageError(`${a} needs a value`);
      return v;
    };
    switch (a) {
      case '-h':
      case '--help':
        out.help = true;
        break;
      case '--connect':
        out.connect = value();
        break;
      case '--timeout':
        out.timeout = parseDuration(value(), a);
        afterDuration = a;
        break;
      case '--session-timeout':
        out.sessionTimeout = parseDuration(value(), a);
        afterDuration = a;
        break;
      case '--grace':
        out.grace = parseDuration(value(), a);
        afterDuration = a;
        break;
      case '--read':
        out.read = true;
        break;
      case '--write':
        out.write = true;
        break;
      case '--semaphore': {
        const text = value();
        const n = /^\d+$/.test(text) ? Number(text) : NaN;
        if (!Number.isSafeInteger(n) || n < 1 || n > 2 ** 31 - 1) throw new UsageError(`${a}: the number of permits must be an integer from 1 to 2^31-1, got ${JSON.stringify(text)}`);
        out.semaphore = n;
        break;
      }
      case '--leader':
        out.leader = true;
        break;
      case '--id':
        out.id = value();
        break;
      case '--acl':
        out.acl = parseAcl(value());
        break;
      case '--json':
        out.json = true;
        break;
      case '--verbose':
        out.verbose = true;
        break;
      default:
        if (a.startsWith('-')) throw new UsageError(`unknown option ${a}`);
        if (previousDuration !== undefined && UNIT_WORD.test(a)) {
          throw new UsageError(`${previousDuration} takes one value with its unit attached (500ms, 30s, 5m, 1h): ${JSON.stringify(`${head[i - 1]} ${a}`)} is two arguments`);
        }
        positional.push(a);
    }
  }
  if (out.help) return out;
  if (positional[0] === 'status') {
    out.command = 'status';
    positional.shift();
  }
  if (positional.length !== 1) throw new UsageError(positional.length === 0 ? 'missing <lock-path>' : `unexpected ${JSON.stringify(positional[1])} (put the command after --)`);
  out.path = positional[0] as string;
  try {
    validatePath(out.path);
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  const modes = [out.read && '--read', out.write && '--write', out.semaphore !== undefined && '--semaphore', out.leader && '--leader'].filter(Boolean);
  if (modes.length > 1) throw new UsageError(`${modes.join(' and ')} exclude each other`);
  if (out.id !== undefined && !out.leader) throw new UsageError('--id is the participant id of --leader');
  if (out.command === 'run' && command.length === 0) throw new UsageError('missing the command to run (after --)');
  if (out.command === 'status' && command.length > 0) throw new UsageError('status takes no command');
  return out;
}

const PERMS: Readonly<Record<string, number>> = { r: Perm.READ, w: Perm.WRITE, c: Perm.CREATE, d: Perm.DELETE, a: Perm.ADMIN };

/**
 * `--acl`: comma-separated entries, each `creator` (all rights for the identities this session
 * authenticated as: CREATOR_ALL_ACL), `world` (OPEN_ACL_UNSAFE), `world:r` (READ_ACL_UNSAFE),
 * or `scheme:id:perms` with perms from `crwda` (`digest:alice:<base64 hash>:cdrwa`,
 * `ip:10.0.0.0/8:r`, `x509:CN=svc:cdrwa`). The server checks schemes and ids.
 */
export function parseAcl(spec: string): ACL[] {
  const acl: ACL[] = [];
  const entries = spec.split(',').map((e) => e.trim());
  entries.forEach((entry, i) => {
    if (entry === 'creator') acl.push(...CREATOR_ALL_ACL.map((a) => ({ perms: a.perms, id: { ...a.id } })));
    else if (entry === 'world') acl.push(...OPEN_ACL_UNSAFE.map((a) => ({ perms: a.perms, id: { ...a.id } })));
    else if (entry === 'world:r') acl.push(...READ_ACL_UNSAFE.map((a) => ({ perms: a.perms, id: { ...a.id } })));
    else {
      // The messages name the entry by its place and scheme only: what follows the scheme may be
      // a password typed by mistake (`digest:owner:s3cret`), and a usage error lands in logs.
      const first = entry.indexOf(':');
      const last = entry.lastIndexOf(':');
      const which = `entry ${i + 1}${entries.length > 1 ? ` of ${entries.length}` : ''}${first > 0 ? ` (scheme ${JSON.stringify(entry.slice(0, first))})` : ''}`;
      if (first <= 0 || last === first || last === entry.length - 1) throw new UsageError(`--acl: ${which} is not creator, world, world:r or scheme:id:perms (its text is not repeated: it may hold a secret)`);
      let perms = 0;
      for (const p of entry.slice(last + 1)) {
        const bit = PERMS[p];
        if (bit === undefined) {
          const digest = entry.slice(0, first) === 'digest' ? '; a digest entry is digest:user:<base64 sha1 of user:password>:perms, never the password itself' : '';
          throw new UsageError(`--acl: ${which} does not end in permissions (letters from crwda after the last colon; the text is not repeated: it may hold a secret)${digest}`);
        }
        perms |= bit;
      }
      acl.push({ perms, id: { scheme: entry.slice(0, first), id: entry.slice(first + 1, last) } });
    }
  });
  return acl;
}

#!/usr/bin/env node
/**
 * zk-lock: run a command while holding a ZooKeeper lock, like flock(1) for a cluster.
 * `zk-lock status` shows a lock's holders and queue.
 */
import { spawn } from 'node:child_process';
import { hostname } from 'node:os';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { setLongTimeout, ZooKeeper, type LongTimeout } from '@zk/protocol';
import { LeaseLostError, LockTimeoutError } from '../errors.js';
import { inspectLock, inspectSemaphore, type LockEntry } from '../locks/inspect.js';
import { LeaderSelector } from '../leader/leader-selector.js';
import type { Lease } from '../lease.js';
import type { LockBase } from '../locks/lock.js';
import { Mutex } from '../locks/mutex.js';
import { ReadWriteLock } from '../locks/read-write-lock.js';
import { Semaphore } from '../semaphore/semaphore.js';
import { parseArgs, type Parsed } from './args.js';
import { describeFailure, Exit, type FailureContext } from './failure.js';
import { securityFromEnv } from './credentials.js';
import { startTelemetry } from './telemetry.js';

export { Exit };

const HELP = `Usage:
  zk-lock [options] <lock-path> -- <command> [args...]
  zk-lock status [--json] [--semaphore N] [--connect HOSTS] <lock-path>

Runs <command> while holding the lock at <lock-path>, then releases it and exits with the
command's exit code. The lock is a fair mutex, wire-compatible with Apache Curator's
InterProcessMutex (or its InterProcessReadWriteLock with --read/--write, its
InterProcessSemaphoreV2 with --semaphore, its LeaderSelector with --leader).

Options:
  --connect HOSTS          ZooKeeper connect string (default: $ZK_CONNECT, then 127.0.0.1:2181)
  --timeout DURATION       give up after this long (default: wait forever); 0 tries once
  --read | --write         take the read or write side of a read-write lock
  --semaphore N            at most N commands at once on <lock-path> (a semaphore of N permits)
  --leader                 run the command while this process leads the election at <lock-path>;
                           it is stopped (SIGTERM, then SIGKILL after --grace) if leadership is lost
  --id ID                  (--leader) the participant id (default: host:pid)
  --session-timeout DUR    ZooKeeper session timeout (default 10s)
  --grace DURATION         after the lease is lost: SIGTERM, then SIGKILL after this (default 10s)
  --acl ACL                the ACL of the nodes it creates: creator (all rights for the identity
                           below), world, world:r, or scheme:id:perms (perms from crwda), commas
                           between entries (default: open to all)
  --json                   (status) machine-readable output
  --verbose                errors with stack traces
  --version                the versions of zk-lock, @zk/protocol and Node
  -h, --help               this text
Durations: 500ms, 30s, 5m, or a plain number of seconds.

A secured ensemble: TLS and credentials come from the environment and files, never from the
command line (which anyone can read in ps):
  ZK_TLS=1                 TLS, the server checked against the system's CAs
  ZK_TLS_CA=FILE           TLS, the server checked against this CA (PEM) only
  ZK_TLS_CERT=FILE, ZK_TLS_KEY=FILE   a client certificate and its key (PEM)
  ZK_TLS_PFX=FILE          or both in one PKCS#12 file (a Java keystore)
  ZK_TLS_KEY_PASSPHRASE_FILE=FILE     the key's (or the PKCS#12 file's) passphrase
  ZK_TLS_SERVERNAME=NAME   the name the server's certificate must carry (default: the host)
  ZK_DIGEST_FILE=FILE      digest authentication: the file holds user:password
  ZK_SASL_USER=NAME, ZK_SASL_PASSWORD_FILE=FILE       SASL DIGEST-MD5

OpenTelemetry: with an OTEL_* exporter setting (OTEL_TRACES_EXPORTER, OTEL_METRICS_EXPORTER,
OTEL_EXPORTER_OTLP_ENDPOINT, ...) and @zk/otel and @opentelemetry/sdk-node installed beside
@zk/locks, the wait, the hold and every request are traced and measured (--verbose says why not).

The command gets ZK_LOCK_FENCING_TOKEN (grows with every new holder) and ZK_LOCK_PATH.
Signals (INT, TERM, HUP, QUIT) are forwarded to the command.

Exit codes:
  the command's code   (128+N when it was killed by signal N)
  ${Exit.timeout}                   the lock was not acquired within --timeout (the message names the holder)
  ${Exit.lost}                   the lease (or leadership) was lost while the command ran (it was terminated)
  ${Exit.noPerm}                   NOAUTH: the path's ACL does not admit this identity; or the path is open
                       to others while --acl is not (UnsafeLockPathError)
  ${Exit.unavailable}                   ZooKeeper could not be reached, or the session was lost before the hold
  ${Exit.software}                   ZooKeeper refused an operation for another reason (NOTEMPTY, BADVERSION, ...)
  ${Exit.usage}                   bad usage, a bad --acl included (refused by zk-lock or by the server)
  ${Exit.notFound}                  the command was not found

Examples:
  zk-lock --timeout 30s /locks/nightly -- ./nightly-report.sh
  zk-lock --timeout 0 /locks/migrate -- npm run migrate     # skip if someone else runs it
  zk-lock --read /locks/catalog -- ./read-catalog
  zk-lock --semaphore 3 /semaphores/encoders -- ./encode.sh   # at most 3 at once
  zk-lock --leader /services/billing/leader -- ./billing-loop   # one active instance
  zk-lock status --json /locks/nightly
`;

const FORWARDED: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGQUIT'];

async function main(argv: string[]): Promise<number> {
  const args = parseArgs(argv);
  if (args.version) {
    process.stdout.write(`${version()}\n`);
    return 0;
  }
  if (args.help) {
    process.stdout.write(HELP);
    return 0;
  }
  const connect = args.connect ?? process.env.ZK_CONNECT ?? '127.0.0.1:2181';
  const sessionTimeout = args.sessionTimeout ?? 10_000;
  context = { path: args.path, identity: 'plain, no credentials' };
  const security = securityFromEnv();
  context = { path: args.path, identity: security.summary };
  const telemetry = await startTelemetry();
  if (!telemetry.on && args.verbose && telemetry.why.includes('not both installed')) process.stderr.write(`zk-lock: telemetry off: ${telemetry.why}\n`);
  try {
    let zk: ZooKeeper;
    try {
      zk = await ZooKeeper.connect(connect, { sessionTimeout, connectTimeout: 5000, ...security.options });
    } catch (err) {
      fail(`cannot connect to ZooKeeper at ${connect} (${security.summary}): ${(err as Error).message}`, err, args.verbose);
      return Exit.unavailable;
    }
    try {
      const work = () => (args.command === 'status' ? status(zk, args) : run(zk, args));
      return telemetry.on ? await telemetry.span(`zk-lock ${args.command === 'status' ? 'status ' : ''}${args.path}`, work) : await work();
    } finally {
      await zk.close();
    }
  } finally {
    if (telemetry.on) await telemetry.stop();
  }
}

async function status(zk: ZooKeeper, args: Parsed): Promise<number> {
  const state = args.semaphore !== undefined ? await inspectSemaphore(zk, args.path, args.semaphore) : await inspectLock(zk, args.path);
  const now = Date.now();
  const describe = (e: LockEntry, i: number, role: 'holder' | 'waiter') => {
    let owner: Record<string, unknown> = {};
    try {
      owner = JSON.parse(e.data.toString('utf8')) as Record<string, unknown>;
    } catch {
      owner = { data: e.data.toString('utf8') };
    }
    // Wait and hold times where they are known: a waiter has waited since its node was made; a
    // zk-lock holder rewrote its node's data when its hold began (see markHeld), so the node's
    // mtime ends the wait and starts the hold (both by the server's clock). Another holder's
    // (a Curator process's) hold start is not recorded anywhere.
    const created = e.createdAt.getTime();
    const marked = e.modifiedAt.getTime() > created ? e.modifiedAt.getTime() : undefined;
    const times: { waitingMs?: number; waitedMs?: number; heldMs?: number } = role === 'waiter' ? { waitingMs: now - created } : marked === undefined ? {} : { waitedMs: marked - created, heldMs: now - marked };
    return { role, position: i, kind: e.kind, node: e.node, fencingToken: e.fencingToken.toString(), sessionId: `0x${BigInt.asUintN(64, e.sessionId).toString(16)}`, sinceMs: now - created, ...times, owner };
  };
  const rows = [...state.holders.map((e, i) => describe(e, i, 'holder')), ...state.waiters.map((e, i) => describe(e, i, 'waiter'))];
  if (args.json) {
    process.stdout.write(`${JSON.stringify({ path: args.path, holders: rows.filter((r) => r.role === 'holder'), waiters: rows.filter((r) => r.role === 'waiter') })}\n`);
    return 0;
  }
  if (rows.length === 0) {
    process.stdout.write(`${args.path}: free\n`);
    return 0;
  }
  process.stdout.write(`${args.path}: ${state.holders.length} holder(s), ${state.waiters.length} waiting\n`);
  for (const r of rows) {
    const who = ownerText(r.owner);
    const verb = r.role === 'holder' ? 'held' : 'waiting';
    process.stdout.write(`  ${r.role === 'holder' ? 'HOLDS' : `#${r.position + 1}   `} ${r.kind.padEnd(5)} token ${r.fencingToken.padEnd(12)} ${verb} ${(r.heldMs === undefined ? formatMs(r.sinceMs) : `${formatMs(r.heldMs)} (waited ${formatMs(r.waitedMs ?? 0)})`).padEnd(7)} ${who || r.sessionId}\n`);
  }
  return 0;
}

async function run(zk: ZooKeeper, args: Parsed): Promise<number> {
  const data = JSON.stringify({ host: hostname(), pid: process.pid, command: args.argv.join(' ') });
  // A signal while waiting for the lock abandons the attempt (its queue node is removed); once
  // the command runs, it is forwarded to it. One handler per signal stays installed for the whole
  // run and only its action changes: on Bun (1.4), under load, removing a handler and adding
  // another left the signal without one for a while, and a SIGTERM then killed zk-lock and
  // orphaned the command.
  const waiting = new AbortController();
  const signals: Signals = { action: (sig) => waiting.abort(sig) };
  const relay = (sig: NodeJS.Signals) => signals.action(sig);
  for (const sig of FORWARDED) process.on(sig, relay);
  const stopped = () => {
    for (const sig of FORWARDED) process.off(sig, relay);
  };
  /** Who holds the lock, read after a timeout (the message names them). */
  let holders: string[] = [];
  const failed = (err: unknown): number => {
    if (err instanceof LockTimeoutError) {
      const what = args.leader ? `leadership of ${args.path}` : args.path;
      fail(`${args.timeout === 0 ? `${what} is held by someone else` : `${what} not acquired within ${formatMs(args.timeout ?? 0)}`}${holders.length > 0 ? `: held by ${holders.join('; ')}` : ''}`, err, args.verbose);
      return Exit.timeout;
    }
    if (waiting.signal.aborted) return 128 + signalNumber(waiting.signal.reason as NodeJS.Signals);
    throw err;
  };
  if (args.leader) {
    const selector = new LeaderSelector(zk, args.path, { id: args.id ?? `${hostname()}:${process.pid}`, acl: args.acl });
    try {
      return await selector.run(
        (leadership) => runChild(leadership, args, signals),
        { timeout: args.timeout, signal: waiting.signal },
      );
    } catch (err) {
      if (err instanceof LockTimeoutError) holders = await describeHolders(zk, args);
      return failed(err);
    } finally {
      stopped();
    }
  }
  const lock: LockBase | Semaphore =
    args.semaphore !== undefined
      ? new Semaphore(zk, args.path, { maxLeases: args.semaphore, data, acl: args.acl })
      : args.read
        ? new ReadWriteLock(zk, args.path, { data, acl: args.acl }).readLock()
        : args.write
          ? new ReadWriteLock(zk, args.path, { data, acl: args.acl }).writeLock()
          : new Mutex(zk, args.path, { data, acl: args.acl });
  let lease: Lease;
  try {
    lease = await lock.acquire({ timeout: args.timeout, signal: waiting.signal });
  } catch (err) {
    stopped();
    if (err instanceof LockTimeoutError) holders = await describeHolders(zk, args);
    return failed(err);
  }
  markHeld(zk, lease.node, data);
  try {
    return await runChild(lease, args, signals);
  } finally {
    stopped();
    await lease.release();
  }
}

/** A holder's owner as zk-lock writes it (`{"host","pid","command"}`): `host pid 123 ./job.sh`. */
function ownerText(owner: Record<string, unknown>): string {
  return [owner.host, owner.pid && `pid ${String(owner.pid)}`, owner.command && String(owner.command), owner.data && String(owner.data).slice(0, 100)].filter(Boolean).join(' ');
}

/**
 * The holders of the lock, for the timeout message: what they wrote in their nodes (zk-lock's
 * host, pid and command; a recipe's `{"host","pid"}`; a leader's id), else their session, and how
 * long each has held or waited. Best effort: a failed read leaves the message as it was.
 */
async function describeHolders(zk: ZooKeeper, args: Parsed): Promise<string[]> {
  try {
    const state = args.semaphore !== undefined ? await inspectSemaphore(zk, args.path, args.semaphore) : await inspectLock(zk, args.path);
    return state.holders.map((e) => {
      let owner: Record<string, unknown>;
      try {
        const parsed: unknown = JSON.parse(e.data.toString('utf8'));
        owner = parsed !== null && typeof parsed === 'object' ? (parsed as Record<string, unknown>) : { data: e.data.toString('utf8') };
      } catch {
        owner = { data: e.data.toString('utf8') };
      }
      const since = e.modifiedAt.getTime() > e.createdAt.getTime() ? e.modifiedAt.getTime() : e.createdAt.getTime();
      return `${ownerText(owner) || `session 0x${BigInt.asUintN(64, e.sessionId).toString(16)}`} (token ${e.fencingToken}, for ${formatMs(Date.now() - since)})`;
    });
  } catch {
    return [];
  }
}

/** `zk-lock 0.1.0 (@zk/protocol 0.1.0, Node v20.11.0)`: from the package manifests beside the code. */
function version(): string {
  const read = (url: URL | string) => {
    try {
      return (JSON.parse(readFileSync(url, 'utf8')) as { version?: string }).version ?? 'unknown';
    } catch {
      return 'unknown';
    }
  };
  // dist/cli/zk-lock.js and dist/cli/zk-lock.bundle.js both sit two levels below the manifest.
  const own = read(new URL('../../package.json', import.meta.url));
  let protocol = 'unknown';
  try {
    protocol = read(createRequire(import.meta.url).resolve('@zk/protocol/package.json'));
  } catch {
    // not resolvable from here (a bundle moved elsewhere): said as unknown
  }
  return `zk-lock ${own} (@zk/protocol ${protocol}, Node ${process.version})`;
}

/**
 * Records when the hold began, for `status`: the node's data written again (the same bytes), so
 * its mtime is the server's time of the hold's start. Only over version 0: a revocation request
 * written meanwhile is never overwritten. In the background: the command does not wait for it.
 */
function markHeld(zk: ZooKeeper, node: string, data: string): void {
  zk.setData(node, data, { version: 0 }).catch(() => undefined);
}

/** What the run's signal handlers do now (see run). */
interface Signals {
  action: (sig: NodeJS.Signals) => void;
}

/** What the command runs under: a lease or a leadership. */
type Held = Pick<Lease, 'fencingToken' | 'signal'>;

function runChild(lease: Held, args: Parsed, signals: Signals): Promise<number> {
  return new Promise((resolve) => {
    const [cmd, ...rest] = args.argv as [string, ...string[]];
    const child = spawn(cmd, rest, { stdio: 'inherit', env: { ...process.env, ZK_LOCK_FENCING_TOKEN: lease.fencingToken.toString(), ZK_LOCK_PATH: args.path } });
    let lost = false;
    let killTimer: LongTimeout | undefined;
    // process.kill, not child.kill: on Deno (2.9) a child.kill(sig) makes 'exit' report that
    // signal even when the command handled it and exited with a code of its own (a command that
    // traps TERM and exits 42 was reported as killed by SIGTERM, and zk-lock exited 143).
    signals.action = (sig) => {
      if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
      try {
        process.kill(child.pid, sig);
      } catch {
        // It exited meanwhile; its 'exit' is on its way.
      }
    };
    const onLost = () => {
      lost = true;
      fail(`lease on ${args.path} lost (${(lease.signal.reason as LeaseLostError)?.message ?? 'unknown'}); terminating the command`, lease.signal.reason, args.verbose);
      child.kill('SIGTERM');
      killTimer = setLongTimeout(() => child.kill('SIGKILL'), args.grace ?? 10_000);
    };
    lease.signal.addEventListener('abort', onLost, { once: true });
    const done = (code: number) => {
      signals.action = () => {};
      lease.signal.removeEventListener('abort', onLost);
      killTimer?.clear();
      resolve(lost ? Exit.lost : code);
    };
    child.once('error', (err: NodeJS.ErrnoException) => {
      fail(`cannot run ${cmd}: ${err.message}`, err, args.verbose);
      done(err.code === 'ENOENT' ? Exit.notFound : 126);
    });
    child.once('exit', (code, signal) => done(code ?? 128 + signalNumber(signal ?? 'SIGTERM')));
  });
}

function signalNumber(sig: NodeJS.Signals): number {
  const n: Partial<Record<NodeJS.Signals, number>> = { SIGHUP: 1, SIGINT: 2, SIGQUIT: 3, SIGKILL: 9, SIGTERM: 15 };
  return n[sig] ?? 15;
}

function formatMs(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)}ms`;
  if (ms < 120_000) return `${(ms / 1000).toFixed(1)}s`;
  return `${Math.round(ms / 60_000)}m`;
}

function fail(message: string, err: unknown, verbose: boolean | undefined): void {
  process.stderr.write(`zk-lock: ${message}\n`);
  if (verbose && err instanceof Error && err.stack) process.stderr.write(`${err.stack}\n`);
}

/** What the run was about, for the failure messages (set once the arguments are parsed). */
let context: FailureContext = { path: '(none)', identity: 'plain, no credentials' };

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    const { code, message } = describeFailure(err, context);
    if (code === Exit.usage) {
      process.stderr.write(`zk-lock: ${message}\n(see zk-lock --help)\n`);
      process.exit(code);
    }
    fail(message, err, process.argv.includes('--verbose'));
    process.exit(code);
  },
);


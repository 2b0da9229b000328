/**
 * The runtime suite: one program, plain ESM JavaScript, that runs unchanged on Node, Bun and Deno
 * and uses @zk/protocol and @zk/locks the way an application does (imported by name from the
 * packed tarballs installed next to it). The driver (test/runtime/runtimes.test.ts) copies this
 * directory into the scratch app and runs it once per runtime:
 *
 *     <runtime> main.mjs              (deno: deno run -A main.mjs)
 *     ZK_RT_CONFIG=<config.json>      what to connect to, see the driver's SuiteConfig
 *
 * Output, one JSON object a line on stdout:
 *
 *     {"check":"3 watches","ok":true,"ms":41}
 *     {"check":"9 TLS","ok":false,"ms":5003,"error":"<stack>"}
 *     {"ask":"restart"}                the driver restarts the server, then writes {"done":"restart"} to stdin
 *     {"end":true,"passed":20,"failed":1}
 *
 * Exit code 0 when every check passed, 1 otherwise. Checks run one after another, each bounded;
 * a check that times out fails and the next one starts.
 */
import { readFileSync } from 'node:fs';
import { ZooKeeper } from '@zk/protocol';
import { clientChecks, reach } from './client-checks.mjs';
import { kerberosChecks } from './kerberos-checks.mjs';
import { programChecks } from './program-checks.mjs';
import { recipeChecks } from './recipe-checks.mjs';
import { securityChecks } from './security-checks.mjs';
import { sessionChecks } from './session-checks.mjs';

const config = JSON.parse(readFileSync(process.env.ZK_RT_CONFIG, 'utf8'));
const CHECK_BOUND_MS = 30_000 * (config.scale ?? 1);

function emit(record) {
  process.stdout.write(`${JSON.stringify(record)}\n`);
}

// Replies from the driver, one JSON line each, matched to asks in order.
const replies = [];
const waiters = [];
let pendingInput = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk) => {
  pendingInput += chunk;
  let nl;
  while ((nl = pendingInput.indexOf('\n')) >= 0) {
    const line = pendingInput.slice(0, nl);
    pendingInput = pendingInput.slice(nl + 1);
    const reply = JSON.parse(line);
    const waiter = waiters.shift();
    if (waiter) waiter(reply);
    else replies.push(reply);
  }
});

/** Asks the driver to do something to the servers (`restart`) and resolves with its reply. */
function ask(what) {
  emit({ ask: what });
  process.stdin.resume();
  return new Promise((resolve) => {
    const reply = replies.shift();
    if (reply) resolve(reply);
    else waiters.push(resolve);
  }).finally(() => process.stdin.pause());
}

/**
 * What a check gets: the config, its own namespace (`base`, created for it), clients that are
 * closed after it, and `ask`.
 */
class CheckContext {
  #clients = [];

  constructor(base) {
    this.config = config;
    this.base = base;
    this.scale = config.scale ?? 1;
  }

  /** A client rooted at this check's namespace (or at `chroot` below the server root, when given). */
  async client(options = {}, chroot = this.base) {
    const zk = await ZooKeeper.connect(`${config.connect}${chroot}`, { sessionTimeout: 10_000, ...options });
    this.#clients.push(zk);
    return zk;
  }

  /** Keeps `zk` (connected elsewhere) to be closed after the check. */
  track(zk) {
    this.#clients.push(zk);
    return zk;
  }

  ask(what) {
    return ask(what);
  }

  async close() {
    await Promise.allSettled(this.#clients.map((zk) => zk.close()));
  }
}

function bounded(promise, ms, what) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not finish within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

function describeError(err) {
  if (!(err instanceof Error)) return String(err);
  let text = err.stack ?? `${err.name}: ${err.message}`;
  for (let cause = err.cause, depth = 0; cause !== undefined && depth < 4; cause = cause?.cause, depth++) {
    text += `\n  caused by: ${cause instanceof Error ? `${cause.name}: ${cause.message}` : String(cause)}`;
    if (cause instanceof AggregateError) text += cause.errors.map((e) => `\n    - ${e?.name}: ${e?.message}${e?.cause ? ` (cause: ${e.cause?.message ?? e.cause})` : ''}`).join('');
  }
  return text;
}

async function main() {
  const checks = [...clientChecks, ...securityChecks, ...kerberosChecks(config), ...recipeChecks, ...sessionChecks, ...programChecks(config)];
  const only = config.only ? new Set(config.only) : undefined;
  const admin = await ZooKeeper.connect(config.connect, { sessionTimeout: 10_000 });
  await admin.ensurePath(config.base);
  let passed = 0;
  let failed = 0;
  for (const [i, check] of checks.entries()) {
    const name = `${i + 1} ${check.name}`;
    if (only && !only.has(check.name)) continue;
    const base = `${config.base}/c${i + 1}`;
    // After a check that restarted the server, this session may still be reconnecting.
    await reach(admin, 'connected', 30_000 * (config.scale ?? 1));
    await admin.ensurePath(base);
    const ctx = new CheckContext(base);
    const started = performance.now();
    let error;
    try {
      await bounded(check.run(ctx), (check.boundMs ?? CHECK_BOUND_MS) * ctx.scale, name);
    } catch (err) {
      error = describeError(err);
    }
    await bounded(ctx.close(), 10_000, `${name}: closing its clients`).catch((err) => (error ??= describeError(err)));
    const ms = Math.round(performance.now() - started);
    emit(error === undefined ? { check: name, ok: true, ms } : { check: name, ok: false, ms, error });
    if (error === undefined) passed++;
    else failed++;
  }
  await admin.deleteRecursive(config.base).catch(() => {});
  await admin.close();
  emit({ end: true, passed, failed });
  return failed === 0 ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (err) => {
    emit({ end: true, fatal: describeError(err) });
    process.exit(2);
  },
);

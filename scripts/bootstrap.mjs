#!/usr/bin/env node
// The README's commands go through here: `npm run demo`, `npm test`, `npm run zk -- start`.
// It runs before anything is installed or built, so it is plain JavaScript with Node built-ins
// only. Each step first looks whether its result is already there and then does nothing, and
// prints nothing: a run on a ready checkout goes straight to the action.
//
//   1. workspace dependencies: node_modules is current when pnpm's copy of the lockfile
//      (node_modules/.pnpm/lock.yaml) equals pnpm-lock.yaml; otherwise `pnpm install`, with
//      pnpm found (in this order) in npx's cache, on PATH, through `corepack pnpm@<version>`
//      (never `corepack enable`, which leaves a global shim behind), or fetched by npx; after a
//      fresh install, a second offline install once the build exists links the `zk-lock` bin
//   2. ZooKeeper (scripts/install-zookeeper.sh, silent when installed) unless ZK_CONNECT names
//      an existing ensemble; not for `zk stop` / `zk status`. With ZK_VERSION=3.4|3.9, that
//      line's jars too (scripts/zookeeper-versions.mjs, from Debian's archive into a cache)
//   3. build: `tsc -b` of what the action runs (itself a no-op in about 0.2 s when up to date),
//      then the packages' bundles (scripts/bundle.mjs; a no-op when newer than tsc's output)
//   4. the action: test | demo | zk | bench <args> | setup
//
// `test ... --soak 45m` (as in `npm run test:faults -- --soak 45m`) runs the fault soak instead:
// ZK_FAULTS_SOAK=45m and test/faults/soak.test.ts only.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const [action = 'test', ...rest] = process.argv.slice(2);
const PNPM_VERSION = '9.15.9';
const quiet = process.env.ZK_BOOTSTRAP_QUIET === '1';

function log(msg) {
  if (!quiet) process.stderr.write(`[bootstrap] ${msg}\n`);
}

function run(cmd, args, opts = {}) {
  const res = spawnSync(cmd, args, { cwd: root, stdio: 'inherit', env: process.env, ...opts });
  if (res.error) return { ok: false, status: 127, error: res.error, output: '' };
  const output = opts.stdio === 'pipe' ? `${res.stdout ?? ''}${res.stderr ?? ''}` : '';
  return { ok: res.status === 0, status: res.status ?? 1, output };
}

function fail(msg, status = 1) {
  process.stderr.write(`[bootstrap] ${msg}\n`);
  process.exit(status);
}

// npm's own warnings (an unknown key in the user's .npmrc, ...) are not ours to print when npx
// or corepack only fetches or starts pnpm.
const npmQuietEnv = { ...process.env, npm_config_loglevel: 'error', npm_config_update_notifier: 'false', COREPACK_ENABLE_DOWNLOAD_PROMPT: '0' };

/** `pnpm --version` through `cmd`, or undefined when it does not run. */
function pnpmVersion(cmd, args) {
  const res = spawnSync(cmd, [...args, '--version'], { cwd: root, stdio: ['ignore', 'pipe', 'ignore'], env: npmQuietEnv, encoding: 'utf8', timeout: 60_000 });
  return !res.error && res.status === 0 ? res.stdout.trim() : undefined;
}

/** pnpm PNPM_VERSION as npx left it in its cache (`npx -y pnpm@<v>` on an earlier run), run with node directly. */
function pnpmFromNpxCache() {
  const cache = join(process.env.npm_config_cache || join(homedir(), '.npm'), '_npx');
  let dirs = [];
  try {
    dirs = readdirSync(cache);
  } catch {
    return undefined;
  }
  for (const d of dirs) {
    const pkg = join(cache, d, 'node_modules', 'pnpm');
    try {
      if (JSON.parse(readFileSync(join(pkg, 'package.json'), 'utf8')).version === PNPM_VERSION && existsSync(join(pkg, 'bin', 'pnpm.cjs'))) {
        return [process.execPath, join(pkg, 'bin', 'pnpm.cjs')];
      }
    } catch {
      // not a pnpm install, or a half-written one
    }
  }
  return undefined;
}

/** The command (and leading args) that runs pnpm; only called when an install is needed. */
function findPnpm() {
  const cached = pnpmFromNpxCache();
  if (cached) return cached;
  if (pnpmVersion('pnpm', [])?.startsWith('9.')) return ['pnpm'];
  if (pnpmVersion('corepack', [`pnpm@${PNPM_VERSION}`]) === PNPM_VERSION) return ['corepack', `pnpm@${PNPM_VERSION}`];
  const npx = ['npx', '-y', `pnpm@${PNPM_VERSION}`];
  if (pnpmVersion(npx[0], npx.slice(1)) === PNPM_VERSION) return pnpmFromNpxCache() ?? npx;
  fail(`could not run pnpm ${PNPM_VERSION} (tried npx's cache, pnpm on PATH, corepack and npx); install it (npm install -g pnpm@${PNPM_VERSION}) and run again`);
}

function dependenciesCurrent() {
  const lock = join(root, 'pnpm-lock.yaml');
  const copy = join(root, 'node_modules', '.pnpm', 'lock.yaml');
  if (!existsSync(join(root, 'node_modules', '.modules.yaml')) || !existsSync(copy) || !existsSync(lock)) return false;
  return readFileSync(lock, 'utf8') === readFileSync(copy, 'utf8');
}

/**
 * Installs the workspace dependencies unless they are current. Returns a function that links
 * the bins pnpm could not link yet, to call after the build, or undefined.
 */
function ensureDependencies() {
  if (dependenciesCurrent()) return undefined;
  const started = performance.now();
  const [cmd, ...pre] = findPnpm();
  const install = (extra) => {
    const args = ['install', '--reporter=append-only', ...extra];
    if (process.env.CI) args.push('--frozen-lockfile');
    // The output is kept and shown only if the install fails.
    const res = run(cmd, [...pre, ...args], { stdio: 'pipe', encoding: 'utf8', env: npmQuietEnv });
    if (!res.ok) {
      process.stderr.write(res.output);
      fail(`pnpm install failed (exit ${res.status})`);
    }
    return res.output;
  };
  install([]);
  log(`installed the workspace dependencies (${((performance.now() - started) / 1000).toFixed(1)} s)`);
  // On a fresh clone pnpm cannot link the `zk-lock` bin (it warns, in the output kept above): its
  // target (packages/locks/dist) is built below. Once it is, an offline install links it (a second).
  return () => {
    if (missingBins()) install(['--offline']);
  };
}

/** True when a workspace package's bin has no link in node_modules/.bin (the root depends on every package). */
function missingBins() {
  const dir = join(root, 'packages');
  return readdirSync(dir).some((name) => {
    let bin;
    try {
      bin = JSON.parse(readFileSync(join(dir, name, 'package.json'), 'utf8')).bin;
    } catch {
      return false;
    }
    const names = typeof bin === 'string' ? [name] : Object.keys(bin ?? {});
    return names.some((b) => !existsSync(join(root, 'node_modules', '.bin', b)));
  });
}

function ensureZooKeeper() {
  const res = run('bash', [join(root, 'scripts', 'install-zookeeper.sh')], { stdio: ['ignore', 'ignore', 'inherit'] });
  if (process.env.ZK_CONNECT) return; // the servers come from ZK_CONNECT; the jars are only wanted by the Java suites
  if (!res.ok) fail('ZooKeeper is not installed and could not be installed (see the message above), or set ZK_CONNECT=host:port to use an existing one');
  // ZK_VERSION=3.4|3.9: that line's jars (and Curator 5.7.1 for 3.9), fetched once into a cache
  // (scripts/zookeeper-versions.mjs; silent when cached). 3.8 is the installed package.
  const line = process.env.ZK_VERSION;
  if (line && !process.env.ZOOKEEPER_HOME && !run(process.execPath, [join(root, 'scripts', 'zookeeper-versions.mjs'), 'fetch', line]).ok) {
    fail(`ZooKeeper ${line} could not be had (see the message above); unset ZK_VERSION to use the installed 3.8`);
  }
}

/**
 * `tsc -b` of one project (`.` for all); TypeScript comes from the workspace, no pnpm needed.
 * Then the packages' single-file entries (scripts/bundle.mjs: what the tarballs' exports name;
 * the bench's cold start loads them), remade only when tsc wrote something newer.
 */
async function build(project) {
  const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
  // A first build takes a while (about 10 s on two cores): say so instead of sitting silent.
  if (!existsSync(join(root, 'packages', 'protocol', 'dist', 'index.js'))) log('building the packages (first run, about 10 s)');
  if (!run(process.execPath, [tsc, '-b', project]).ok) fail(`build failed (tsc -b ${project})`);
  const { bundleAll } = await import('./bundle.mjs');
  await bundleAll().catch((err) => fail(`bundling failed: ${err.message}`));
}

/** `--soak <duration>` (or `--soak=<duration>`): sets ZK_FAULTS_SOAK and narrows the run to the soak file. */
function soakArgs(args) {
  const i = args.findIndex((a) => a === '--soak' || a.startsWith('--soak='));
  if (i < 0) return args;
  const duration = args[i].includes('=') ? args[i].slice('--soak='.length) : args[i + 1];
  if (!duration || !/^\d+(\.\d+)?(ms|s|m|h)?$/.test(duration)) fail(`--soak needs a duration such as 45m, 90s or 2h (got ${duration ?? 'nothing'})`, 2);
  process.env.ZK_FAULTS_SOAK = duration;
  log(`soak of ${duration}: test/faults/soak.test.ts`);
  const kept = args.filter((a, j) => j !== i && !(j === i + 1 && !args[i].includes('=')) && !a.startsWith('test/faults'));
  return ['--project', 'integration', ...kept, 'test/faults/soak.test.ts'];
}

// What each action needs built: the demo and zk scripts need protocol, locks and the harness
// (scripts/tsconfig.json references them), the bench its own project, tests everything.
const projects = { test: '.', demo: 'scripts', zk: 'scripts', bench: 'bench', setup: '.' };
if (!(action in projects)) fail(`unknown action ${action}; use test, demo, zk, bench or setup`, 2);

const linkBins = ensureDependencies();
// `zk stop`, `zk status` and `zk check` only talk to a server already started (or ZK_CONNECT's).
if (!(action === 'zk' && ['stop', 'status', 'check'].includes(rest[0] ?? ''))) ensureZooKeeper();
await build(projects[action]);
linkBins?.();

let res;
switch (action) {
  case 'test':
    res = run(process.execPath, [join(root, 'node_modules', 'vitest', 'vitest.mjs'), 'run', ...soakArgs(rest)]);
    break;
  case 'demo':
    res = run(process.execPath, [join(root, 'scripts', 'dist', 'demo.js'), ...rest]);
    break;
  case 'zk':
    res = run(process.execPath, [join(root, 'scripts', 'dist', 'zk.js'), ...rest]);
    break;
  case 'bench':
    res = run(process.execPath, ['--expose-gc', join(root, 'bench', 'dist', 'run.js'), ...rest]);
    break;
  default:
    res = { ok: true, status: 0 };
}
process.exit(res.status);

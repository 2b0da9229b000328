#!/usr/bin/env node
// The README's commands go through here: `npm run demo`, `npm test`, `npm run zk -- start`.
// It runs before anything is installed or built, so it is plain JavaScript with Node built-ins
// only. Each step is skipped when its result is already there, so it is cheap to run again.
//
//   1. pnpm (corepack, else npm -g, else npx)
//   2. workspace dependencies (pnpm install)
//   3. ZooKeeper (scripts/install-zookeeper.sh) unless ZK_CONNECT names an existing ensemble
//   4. build (tsc -b)
//   5. the action: test | demo | zk | bench <args>
//
// `test ... --soak 45m` (as in `npm run test:faults -- --soak 45m`) runs the fault soak instead:
// ZK_FAULTS_SOAK=45m and test/faults/soak.test.ts only.
import { spawnSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
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
  if (res.error) return { ok: false, status: 127, error: res.error };
  return { ok: res.status === 0, status: res.status ?? 1 };
}

function works(cmd, args) {
  const res = spawnSync(cmd, args, { cwd: root, stdio: 'ignore', env: process.env });
  return !res.error && res.status === 0;
}

function fail(msg, status = 1) {
  process.stderr.write(`[bootstrap] ${msg}\n`);
  process.exit(status);
}

/** Returns the command (and leading args) that runs pnpm. */
function ensurePnpm() {
  if (works('pnpm', ['--version'])) return ['pnpm'];
  log('pnpm not found; enabling it through corepack');
  const env = { ...process.env, COREPACK_ENABLE_DOWNLOAD_PROMPT: '0' };
  if (works('corepack', ['enable']) && spawnSync('pnpm', ['--version'], { cwd: root, stdio: 'ignore', env }).status === 0) {
    process.env.COREPACK_ENABLE_DOWNLOAD_PROMPT = '0';
    return ['pnpm'];
  }
  log(`corepack did not work; installing pnpm@${PNPM_VERSION} with npm -g`);
  if (run('npm', ['install', '-g', `pnpm@${PNPM_VERSION}`]).ok && works('pnpm', ['--version'])) return ['pnpm'];
  log('npm -g did not work (not root?); using npx');
  return ['npx', '-y', `pnpm@${PNPM_VERSION}`];
}

function ensureDependencies(pnpm) {
  const marker = join(root, 'node_modules', '.modules.yaml');
  const lock = join(root, 'pnpm-lock.yaml');
  if (existsSync(marker) && (!existsSync(lock) || statSync(lock).mtimeMs <= statSync(marker).mtimeMs)) return;
  log('installing workspace dependencies');
  const args = ['install'];
  if (process.env.CI && existsSync(lock)) args.push('--frozen-lockfile');
  const [cmd, ...pre] = pnpm;
  if (!run(cmd, [...pre, ...args]).ok) fail('pnpm install failed');
}

function ensureZooKeeper() {
  const res = run('bash', [join(root, 'scripts', 'install-zookeeper.sh')], { stdio: ['ignore', 'ignore', 'inherit'] });
  if (process.env.ZK_CONNECT) {
    // The servers come from ZK_CONNECT; the jars are still wanted by the Java conformance and
    // interop suites, but their absence is not fatal here.
    log(`using the ensemble in ZK_CONNECT (${process.env.ZK_CONNECT})`);
    return;
  }
  if (!res.ok) fail('ZooKeeper is not installed and could not be installed (see the message above), or set ZK_CONNECT=host:port to use an existing one');
}

function build(pnpm) {
  const [cmd, ...pre] = pnpm;
  if (!run(cmd, [...pre, 'exec', 'tsc', '-b']).ok) fail('build failed (tsc -b)');
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

const pnpm = ensurePnpm();
ensureDependencies(pnpm);
ensureZooKeeper();
build(pnpm);

const [cmd, ...pre] = pnpm;
let res;
switch (action) {
  case 'test':
    res = run(cmd, [...pre, 'exec', 'vitest', 'run', ...soakArgs(rest)]);
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
  case 'setup':
    res = { ok: true, status: 0 };
    break;
  default:
    fail(`unknown action ${action}; use test, demo, zk, bench or setup`, 2);
}
process.exit(res.status);

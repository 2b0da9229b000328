#!/usr/bin/env node
// The JavaScript runtimes the runtime suite (test/runtime/) runs on, fetched from the npm
// registry into a cache; nothing is installed globally or into the system.
//
//   node scripts/runtimes.mjs list              every runtime: its package, version, and whether it is cached
//   node scripts/runtimes.mjs fetch [name...]   fetch the named runtimes (default: all); silent when cached
//   node scripts/runtimes.mjs path <name>       the binary's path (fetched first when missing)
//   node scripts/runtimes.mjs json [name...]    one JSON line per runtime: { name, kind, version, bin }
//
// Names: node20 (the Node running this script; CI's is 20), node20.19 (the `engines` floor),
// node22, node24, node26, bun, deno. The versions are pinned in RUNTIMES below, the newest of
// each major when they were chosen; change them there and nowhere else.
//
// Each runtime is one npm package holding its binary: node-<platform>-<arch> (bin/node),
// @oven/bun-<platform>-<arch> (bin/bun; what the `bun` package's postinstall would fetch) and
// @deno/<platform>-<arch>[-glibc] (deno; likewise for the `deno` package). `npm pack` fetches the
// tarball (checked against the registry's integrity field), tar unpacks it into
// <cache>/<name>-<version>/, and the binary must answer --version before the directory is
// renamed into place, so a half-fetched runtime is never used.
//
// The cache: ZK_RUNTIMES_CACHE, else $XDG_CACHE_HOME/zk-runtimes, else ~/.cache/zk-runtimes.
// When the registry cannot be reached and the runtime is not cached, it says so and exits 69.
//
// Plain JavaScript with Node built-ins only, like bootstrap.mjs and release.mjs.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Pinned versions: the newest of each major on the registry on 26 November 2026. */
export const RUNTIMES = {
  node20: { kind: 'node', major: 20, version: '20.20.2' },
  'node20.19': { kind: 'node', version: '20.19.0' },
  node22: { kind: 'node', version: '22.23.3' },
  node24: { kind: 'node', version: '24.21.0' },
  node26: { kind: 'node', version: '26.10.0' },
  bun: { kind: 'bun', version: '1.4.5' },
  deno: { kind: 'deno', version: '2.9.6' },
};

/** Exit code when the registry cannot be reached (EX_UNAVAILABLE, as zk-lock's). */
const UNAVAILABLE = 69;

class RuntimeError extends Error {
  constructor(message, status = 1) {
    super(message);
    this.status = status;
  }
}

export function cacheDir() {
  if (process.env.ZK_RUNTIMES_CACHE) return resolve(process.env.ZK_RUNTIMES_CACHE);
  return join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'zk-runtimes');
}

/** The npm package holding `kind`'s binary on this platform, and the binary's path inside it. */
function packageOf(kind) {
  const { platform, arch } = process;
  if (!['linux', 'darwin'].includes(platform) || !['x64', 'arm64'].includes(arch)) {
    throw new RuntimeError(`no ${kind} package is known for ${platform}-${arch} (linux and darwin, x64 and arm64 only)`);
  }
  switch (kind) {
    case 'node':
      return { name: `node-${platform}-${arch}`, bin: join('bin', 'node') };
    case 'bun':
      return { name: `@oven/bun-${platform}-${arch === 'arm64' ? 'aarch64' : 'x64'}`, bin: join('bin', 'bun') };
    case 'deno':
      return { name: `@deno/${platform}-${arch}${platform === 'linux' ? '-glibc' : ''}`, bin: 'deno' };
    default:
      throw new RuntimeError(`unknown runtime kind ${kind}`);
  }
}

function spec(name) {
  const runtime = RUNTIMES[name];
  if (!runtime) throw new RuntimeError(`unknown runtime ${JSON.stringify(name)}; known: ${Object.keys(RUNTIMES).join(', ')}`, 64);
  return runtime;
}

/** The running Node, when it is the major `name` stands for (node20 on a Node 20 machine). */
function runningNode(runtime) {
  if (runtime.kind !== 'node' || runtime.major === undefined) return undefined;
  return Number(process.versions.node.split('.')[0]) === runtime.major ? process.execPath : undefined;
}

function versionOf(bin) {
  const res = spawnSync(bin, ['--version'], { encoding: 'utf8', timeout: 30_000 });
  if (res.error || res.status !== 0) return undefined;
  return res.stdout.trim().split('\n')[0];
}

/** Where `name`'s binary is (or will be) and whether it is there. */
export function locate(name) {
  const runtime = spec(name);
  const running = runningNode(runtime);
  if (running) return { name, kind: runtime.kind, version: process.versions.node, bin: running, cached: true, system: true };
  const pkg = packageOf(runtime.kind);
  const dir = join(cacheDir(), `${name}-${runtime.version}`);
  const bin = join(dir, pkg.bin);
  return { name, kind: runtime.kind, version: runtime.version, bin, cached: existsSync(bin), package: `${pkg.name}@${runtime.version}`, dir };
}

const NETWORK = /E(NOTFOUND|AI_AGAIN|TIMEDOUT|CONNREFUSED|CONNRESET|NETUNREACH|HOSTUNREACH)|network|socket hang up|request to .* failed/i;

function registry() {
  const res = spawnSync('npm', ['config', 'get', 'registry'], { encoding: 'utf8', timeout: 30_000 });
  return res.status === 0 ? res.stdout.trim() : 'the npm registry';
}

/** Fetches `name` into the cache unless it is there; returns where it is. Silent when cached. */
export function fetchRuntime(name, log = (msg) => process.stderr.write(`[runtimes] ${msg}\n`)) {
  const found = locate(name);
  if (found.cached) return found;
  mkdirSync(cacheDir(), { recursive: true });
  const staging = mkdtempSync(join(cacheDir(), `.${name}-`));
  try {
    log(`fetching ${found.package} for ${name} into ${found.dir}`);
    // Retries bounded to seconds, not npm's minute: an unreachable registry is reported quickly.
    const retries = ['--fetch-retries=2', '--fetch-retry-mintimeout=1000', '--fetch-retry-maxtimeout=5000'];
    const packed = spawnSync('npm', ['pack', found.package, '--pack-destination', staging, '--loglevel=error', '--no-update-notifier', ...retries], {
      cwd: staging,
      encoding: 'utf8',
      timeout: 600_000,
    });
    if (packed.error || packed.status !== 0) {
      const output = `${packed.error?.message ?? ''}${packed.stderr ?? ''}`.trim();
      if (NETWORK.test(output)) {
        const lines = output.split('\n').map((l) => l.replace(/^npm error /, ''));
        const reason = lines.find((l) => /failed, reason:/.test(l))?.replace(/^.*failed, reason: /, '') ?? lines.find((l) => NETWORK.test(l)) ?? output;
        throw new RuntimeError(`cannot reach ${registry()} to fetch ${found.package} for ${name} (${reason}); nothing is cached at ${found.dir}: retry when the registry answers, or point ZK_RUNTIMES_CACHE at a cache that has it`, UNAVAILABLE);
      }
      throw new RuntimeError(`npm pack ${found.package} failed (status ${packed.status}): ${output}`);
    }
    const tarball = readdirSync(staging).find((f) => f.endsWith('.tgz'));
    if (!tarball) throw new RuntimeError(`npm pack ${found.package} left no tarball in ${staging}`);
    const unpacked = join(staging, 'unpacked');
    mkdirSync(unpacked);
    const untar = spawnSync('tar', ['-xzf', join(staging, tarball), '-C', unpacked, '--strip-components=1'], { encoding: 'utf8' });
    if (untar.error || untar.status !== 0) throw new RuntimeError(`tar could not unpack ${tarball}: ${untar.error?.message ?? untar.stderr}`);
    const version = versionOf(join(unpacked, packageOf(found.kind).bin));
    if (!version?.includes(found.version)) throw new RuntimeError(`${found.package}'s binary answered --version with ${JSON.stringify(version)}, not ${found.version}`);
    try {
      renameSync(unpacked, found.dir);
    } catch (err) {
      // Another process fetched it meanwhile: keep theirs.
      if (!existsSync(found.bin)) throw err;
    }
    return { ...found, cached: true };
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
}

function names(args) {
  const list = args.length > 0 ? args : Object.keys(RUNTIMES);
  for (const n of list) spec(n);
  return list;
}

function main([command, ...args]) {
  switch (command) {
    case 'list':
      for (const n of names(args)) {
        const r = locate(n);
        process.stdout.write(`${n.padEnd(10)} ${r.version.padEnd(8)} ${r.system ? `the running Node (${r.bin})` : `${r.package.padEnd(34)} ${r.cached ? r.dir : 'not cached'}`}\n`);
      }
      return;
    case 'fetch':
      for (const n of names(args)) fetchRuntime(n);
      return;
    case 'path':
      if (args.length !== 1) throw new RuntimeError('usage: runtimes.mjs path <name>', 64);
      process.stdout.write(`${fetchRuntime(args[0]).bin}\n`);
      return;
    case 'json':
      for (const n of names(args)) {
        const r = fetchRuntime(n);
        process.stdout.write(`${JSON.stringify({ name: r.name, kind: r.kind, version: r.version, bin: r.bin })}\n`);
      }
      return;
    default:
      throw new RuntimeError(`usage: runtimes.mjs list | fetch [name...] | path <name> | json [name...]\nruntimes: ${Object.keys(RUNTIMES).join(', ')}`, 64);
  }
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  try {
    main(process.argv.slice(2));
  } catch (err) {
    if (!(err instanceof RuntimeError)) throw err;
    process.stderr.write(`[runtimes] ${err.message}\n`);
    process.exit(err.status);
  }
}

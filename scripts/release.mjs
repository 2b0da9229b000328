#!/usr/bin/env node
// Publishing @zk/protocol, @zk/locks and @zk/otel goes through here, and only through here
// (.changeset/README.md has the whole flow):
//
//   npm run release          clean build, pack and check every public package, then
//                            `changeset publish` (pnpm publish of the versions not yet published)
//   npm run release:check    the same up to the publish, then `pnpm publish --dry-run` (CI)
//   node scripts/release.mjs --pack <dir>
//                            build (outputs of deleted sources pruned), pack and check only,
//                            leaving the tarballs in <dir> (the consumer test installs them)
//   node scripts/release.mjs --check <tarball>...
//                            only the checks, on tarballs made some other way
//   node ../../scripts/release.mjs --guard
//                            the packages' prepublishOnly and prepack: refuses a publish or a
//                            pack by anything but this script's pnpm, which alone turns
//                            `workspace:^` into a real version range and applies publishConfig
//                            (`npm pack` in a package directory names the pack command instead)
//
// Every build here is `tsc -b` and then the single-file entries (scripts/bundle.mjs) that the
// packages' publishConfig names as main, exports and bin in the tarball.
//
// Plain JavaScript with Node built-ins only, like bootstrap.mjs. pnpm, changeset and tsc come
// from node_modules/.bin (root devDependencies), esbuild (through bundle.mjs) from node_modules.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundleAll, namedFiles, publicPackages } from './bundle.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const bin = (name) => join(root, 'node_modules', '.bin', name);
// changeset publish runs `pnpm publish`: the pnpm of the devDependencies.
process.env.PATH = `${join(root, 'node_modules', '.bin')}:${process.env.PATH ?? ''}`;

function fail(msg) {
  process.stderr.write(`[release] ${msg}\n`);
  process.exit(1);
}

function log(msg) {
  process.stderr.write(`[release] ${msg}\n`);
}

function run(cmd, args, opts = {}) {
  const res = spawnSync(cmd, args, { cwd: root, stdio: 'inherit', env: process.env, ...opts });
  if (res.error) fail(`${cmd} ${args.join(' ')}: ${res.error.message}`);
  if (res.status !== 0) fail(`${relative(root, cmd) || cmd} ${args.join(' ')} exited with ${res.status}`);
  return res;
}

const DEPENDENCY_FIELDS = ['dependencies', 'peerDependencies', 'optionalDependencies', 'devDependencies'];

/** Every way `manifest` still refers to the workspace (`workspace:`, `link:`, `file:` ranges). */
function workspaceRanges(manifest) {
  const found = [];
  for (const field of DEPENDENCY_FIELDS) {
    for (const [name, range] of Object.entries(manifest[field] ?? {})) {
      if (/^(workspace|link|file):/.test(String(range))) found.push(`${field}.${name}: ${range}`);
    }
  }
  return found;
}

function listFiles(dir, base = dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? listFiles(join(dir, e.name), base) : [relative(base, join(dir, e.name))],
  );
}

/**
 * Checks an unpacked tarball (`<dir>/package`) the way a user of the published package meets
 * it; returns the problems found (none when it is fit to publish).
 */
function checkPacked(unpacked) {
  const problems = [];
  const manifest = JSON.parse(readFileSync(join(unpacked, 'package.json'), 'utf8'));
  const files = new Set(listFiles(unpacked));
  for (const r of workspaceRanges(manifest)) problems.push(`package.json keeps a workspace range (${r}): npm cannot install it`);
  // No "repository", "homepage" or "bugs": the project has no public repository yet, and a URL
  // that does not exist misleads whoever reads the package page (issue 37 item 1). Add them with one.
  for (const field of ['license', 'keywords', 'engines']) {
    if (manifest[field] === undefined) problems.push(`package.json has no "${field}"`);
  }
  for (const f of ['LICENSE', 'README.md', 'dist/index.bundle.js', 'dist/index.d.ts', 'src/index.ts']) {
    if (!files.has(f)) problems.push(`${f} is missing`);
  }
  if (files.has('LICENSE') && readFileSync(join(unpacked, 'LICENSE'), 'utf8') !== readFileSync(join(root, 'LICENSE'), 'utf8')) {
    problems.push('LICENSE differs from the repository LICENSE');
  }
  for (const f of files) {
    if (/\.test\.|(^|\/)testing\/|tsbuildinfo/.test(f)) problems.push(`${f} is shipped (tests and build state stay out)`);
  }
  // Every file that main, types, exports and bin name is there.
  for (const t of namedFiles(manifest.main, manifest.types, manifest.exports, manifest.bin)) {
    if (!files.has(t.replace(/^\.\//, ''))) problems.push(`${t} (named in main, types, exports or bin) is missing`);
  }
  // Source maps and declaration maps resolve inside the tarball: a debugger or "go to
  // definition" lands on the shipped TypeScript, and a map whose source is gone gives away a
  // stale build output.
  for (const f of files) {
    if (!f.endsWith('.map')) continue;
    const map = JSON.parse(readFileSync(join(unpacked, f), 'utf8'));
    for (const source of map.sources ?? []) {
      const target = relative(unpacked, resolve(unpacked, dirname(f), map.sourceRoot ?? '', source));
      if (!files.has(target)) problems.push(`${f} points at ${target}, which is not in the tarball (a stale build output?)`);
    }
  }
  return problems;
}

/** Unpacks `tarball` into a temporary directory and checks it. */
function checkTarball(tarball) {
  const unpacked = mkdtempSync(join(tmpdir(), 'zk-release-'));
  try {
    run('tar', ['-xzf', tarball, '-C', unpacked]);
    return checkPacked(join(unpacked, 'package'));
  } finally {
    rmSync(unpacked, { recursive: true, force: true });
  }
}

/** Packs every public package with pnpm into `dest`, unpacks and checks each; returns the tarballs. */
function packAll(dest) {
  const tarballs = [];
  const problems = [];
  for (const { dir, manifest } of publicPackages()) {
    const tarball = join(dest, tarballName(manifest));
    rmSync(tarball, { force: true });
    // ZK_RELEASE lets the package's prepack guard through: this pnpm packs what was just built.
    const env = { ...process.env, ZK_RELEASE: '1' };
    run(bin('pnpm'), ['pack', '--pack-destination', dest], { cwd: dir, stdio: ['ignore', 'ignore', 'inherit'], env });
    if (!existsSync(tarball)) fail(`pnpm pack of ${manifest.name} did not make ${tarball}`);
    for (const p of checkTarball(tarball)) problems.push(`${manifest.name}: ${p}`);
    tarballs.push({ name: manifest.name, version: manifest.version, dir, tarball, bytes: statSync(tarball).size });
  }
  if (problems.length > 0) fail(`the packed packages are not fit to publish:\n  ${problems.join('\n  ')}`);
  return tarballs;
}

/**
 * Deletes the build outputs in `dist` whose source is gone (tsc -b never does): a moved or deleted
 * source leaves its .js, .d.ts and maps behind, and they would be packed. Every output has a map
 * (sourceMap and declarationMap), which names its source.
 */
function pruneStale(dist) {
  if (!existsSync(dist)) return;
  for (const f of listFiles(dist)) {
    if (!f.endsWith('.map')) continue;
    const mapPath = join(dist, f);
    const map = JSON.parse(readFileSync(mapPath, 'utf8'));
    const gone = (map.sources ?? []).some((source) => !existsSync(resolve(dirname(mapPath), map.sourceRoot ?? '', source)));
    if (!gone) continue;
    rmSync(mapPath, { force: true });
    rmSync(mapPath.slice(0, -'.map'.length), { force: true });
  }
}

/** `npm install` of every public package's tarball as `--pack <dir>` names it. */
function installLine(dir) {
  // A package others depend on first (@zk/protocol, then @zk/locks), as a reader expects.
  const packages = publicPackages().sort((a, b) => workspaceRanges(a.manifest).length - workspaceRanges(b.manifest).length);
  return `npm install ${packages.map(({ manifest }) => `${dir}/${tarballName(manifest)}`).join(' ')}`;
}

/** npm's and pnpm's tarball name: @scope/name 1.2.3 -> scope-name-1.2.3.tgz */
function tarballName(manifest) {
  return `${manifest.name.replace(/^@/, '').replace('/', '-')}-${manifest.version}.tgz`;
}

/**
 * prepublishOnly and prepack of each package: only this script's pnpm (marked by ZK_RELEASE) may
 * pack or publish. pnpm 9 runs prepack too, for `pnpm pack` and `pnpm publish`, so the user agent
 * alone does not tell this script's pnpm, which packs what it has just built and then checks the
 * tarball, from a bare `pnpm pack` of whatever dist holds. npm and yarn ignore publishConfig (the
 * tarball's main and exports would name dist/index.js, which `files` leaves out: the bundle is
 * the entry) and ship "workspace:^" as it is, which npm then refuses to install.
 */
function guard() {
  const agent = process.env.npm_config_user_agent ?? '';
  if (agent.startsWith('pnpm/') && process.env.ZK_RELEASE === '1') return;
  const tool = agent.split('/')[0] || 'npm';
  // prepublishOnly runs before prepack, so a publish stops there with the publish message.
  if (process.env.npm_lifecycle_event !== 'prepack' || process.env.npm_command === 'publish') {
    fail(
      `publish with \`npm run release\` at the repository root, not \`${tool} publish\`: ` +
        'it builds from clean and checks the tarballs, and its pnpm replaces "workspace:^" with a real version range',
    );
  }
  const manifest = JSON.parse(readFileSync(join(process.cwd(), 'package.json'), 'utf8'));
  const why =
    tool === 'pnpm'
      ? 'a bare pnpm pack packs whatever dist holds, perhaps stale or without the bundled entry, and checks nothing'
      : `its tarball would not work: ${tool} ignores publishConfig, so its main and exports would name dist/index.js, which is not packed` +
        workspaceRanges(manifest).map((r) => `, and it would keep ${r.replace(/^\w+\.(.*): (.*)$/, '"$1": "$2"')}, which npm cannot install`).join('');
  fail(
    `\`${tool} pack\` of ${manifest.name} stopped before packing, as ${why}.\n` +
      `From the repository root (cd ${relative(process.cwd(), root) || '.'}), build, pack and check the packages with:\n` +
      '  node scripts/release.mjs --pack <dir>\n' +
      'then install the tarballs in your app:\n' +
      `  ${installLine('<dir>')}`,
  );
}

/** Stops, naming the command that installs them, when the workspace's tools are not installed (a fresh clone). */
function needDependencies() {
  const missing = ['pnpm', 'tsc', 'changeset'].filter((name) => !existsSync(bin(name)));
  if (missing.length > 0 || !existsSync(join(root, 'node_modules', 'esbuild'))) {
    fail(`the workspace dependencies are not installed (no ${missing.map((m) => `node_modules/.bin/${m}`).join(', ') || 'node_modules/esbuild'}): run \`node scripts/bootstrap.mjs setup\` first`);
  }
}

function pendingChangesets() {
  return readdirSync(join(root, '.changeset')).filter((f) => f.endsWith('.md') && f !== 'README.md');
}

const args = process.argv.slice(2);
if (args[0] === '--guard') {
  guard();
} else if (args[0] === '--check') {
  if (args.length < 2) fail('--check needs tarballs');
  const problems = args.slice(1).flatMap((t) => checkTarball(resolve(t)).map((p) => `${relative(process.cwd(), t)}: ${p}`));
  if (problems.length > 0) fail(`not fit to publish:\n  ${problems.join('\n  ')}`);
} else if (args[0] === '--pack') {
  if (!args[1]) fail('--pack needs a directory');
  needDependencies();
  // Not a clean build (others may be using dist), but nothing left from a deleted source.
  for (const { dir } of publicPackages()) pruneStale(join(dir, 'dist'));
  run(bin('tsc'), ['-b', ...publicPackages().map((p) => p.dir)]);
  await bundleAll({ force: true });
  for (const t of packAll(resolve(args[1]))) process.stdout.write(`${JSON.stringify(t)}\n`);
  log(`packed and checked; install them in your app with: ${installLine(resolve(args[1]))}`);
} else {
  // Anything else is a mistake, never a publish (a mistyped --dry-run must not publish).
  if (args.length > 1 || (args.length === 1 && args[0] !== '--dry-run')) fail(`unknown arguments: ${args.join(' ')} (use --dry-run, --pack <dir>, --check <tarball>...)`);
  const dryRun = args[0] === '--dry-run';
  needDependencies();
  if (!dryRun) {
    const dirty = spawnSync('git', ['status', '--porcelain'], { cwd: root, encoding: 'utf8' }).stdout.trim();
    if (dirty) fail(`the working tree has uncommitted changes; commit them first:\n${dirty}`);
    const pending = pendingChangesets();
    if (pending.length > 0) fail(`pending changesets (${pending.join(', ')}): run \`npm run version-packages\` and commit first`);
  }
  process.env.ZK_RELEASE = '1'; // lets the packages' prepublishOnly guard through
  // A clean build, so no output of a deleted source ships.
  for (const { dir } of publicPackages()) rmSync(join(dir, 'dist'), { recursive: true, force: true });
  run(bin('tsc'), ['-b', ...publicPackages().map((p) => p.dir)]);
  await bundleAll({ force: true });
  const dest = mkdtempSync(join(tmpdir(), 'zk-release-'));
  try {
    for (const t of packAll(dest)) log(`${t.name}@${t.version}: ${relative(dest, t.tarball)}, ${(t.bytes / 1024).toFixed(1)} KiB, checked`);
  } finally {
    rmSync(dest, { recursive: true, force: true });
  }
  if (dryRun) {
    for (const { dir } of publicPackages()) run(bin('pnpm'), ['publish', '--dry-run', '--no-git-checks'], { cwd: dir });
  } else {
    run(bin('changeset'), ['publish']);
  }
}

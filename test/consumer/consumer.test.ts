/**
 * The consumer test: what a user of the published packages gets. Packs @zk/protocol,
 * @zk/locks and @zk/otel as `npm run release` does (scripts/release.mjs --pack: pnpm pack, then the tarball
 * checks), installs the tarballs with npm into a scratch app in a temporary directory (offline:
 * the tarballs only, and @zk/otel's peer @opentelemetry/api from this repository's copy;
 * TypeScript and @types/node are linked from this repository), and there:
 *
 * - imports and requires both packages from JavaScript, and from TypeScript with `module`
 *   node16, node20 and nodenext, in ESM and CommonJS projects;
 * - compiles a strict program against the shipped .d.ts (skipLibCheck off);
 * - runs every ```ts block of the three READMEs as written (compiled by tsc), and every ```js
 *   block (the plain JavaScript variants) as written, with its connect string pointed at the
 *   test server (each in a fresh namespace, as on a fresh server): each must exit by itself, with
 *   code 0, within a bound.
 */
import { execFile } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { timing } from '../harness/index.js';
import { connectString, TestSpace } from '../harness/fixtures.js';
import { pointAt, readmeBlocks, type ReadmeBlock } from './readme-blocks.js';
import { explain, run as runCommand, type Ran } from '../runtime/app.js';

const repo = fileURLToPath(new URL('../../', import.meta.url));
const READMES = ['README.md', 'packages/protocol/README.md', 'packages/locks/README.md', 'packages/otel/README.md'].map((p) => join(repo, p));
/** How long one README program may take, connect to exit. */
const RUN_BOUND_MS = timing(20_000);

const QUIET_ENV = { ...process.env, NODE_OPTIONS: '', NODE_DEBUG: '' };

/** Runs a command to its end (or kills it after `timeoutMs`); never rejects. */
function run(cmd: string, args: string[], cwd: string, timeoutMs = timing(120_000)): Promise<Ran> {
  return runCommand(cmd, args, cwd, timeoutMs, QUIET_ENV);
}

const tsc = (app: string) => join(app, 'node_modules', 'typescript', 'bin', 'tsc');

let work: string;
let app: string;
let tarballs: { name: string; tarball: string; bytes: number }[];
const timings: Record<string, number> = {};

beforeAll(async () => {
  const t0 = performance.now();
  work = mkdtempSync(join(tmpdir(), 'zk-consumer-'));
  app = join(work, 'app');
  const packed = await run(process.execPath, [join(repo, 'scripts', 'release.mjs'), '--pack', work], repo);
  if (packed.code !== 0) throw new Error(explain('scripts/release.mjs --pack', packed));
  tarballs = packed.stdout.trim().split('\n').map((l) => JSON.parse(l) as { name: string; tarball: string; bytes: number });
  timings.pack = performance.now() - t0;

  cpSync(join(repo, 'test', 'consumer', 'app'), app, { recursive: true });
  const dependencies = Object.fromEntries(tarballs.map((t) => [t.name, `file:${t.tarball}`]));
  // @zk/otel's peer dependency, as an application has it; npm links this directory (no registry).
  dependencies['@opentelemetry/api'] = `file:${realpathSync(join(repo, 'node_modules', '@opentelemetry', 'api'))}`;
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'consumer-app', private: true, type: 'module', dependencies }, null, 2));
  const t1 = performance.now();
  // --offline: a dependency the tarballs do not satisfy (a `workspace:` range, a name npm would
  // look up) fails the install instead of reaching for the registry.
  const installed = await run('npm', ['install', '--offline', '--no-audit', '--no-fund', '--loglevel=error'], app);
  if (installed.code !== 0) throw new Error(explain('npm install of the tarballs', installed));
  timings.install = performance.now() - t1;
  // The compiler and Node's types come from this repository rather than the registry.
  mkdirSync(join(app, 'node_modules', '@types'), { recursive: true });
  symlinkSync(realpathSync(join(repo, 'node_modules', 'typescript')), join(app, 'node_modules', 'typescript'));
  symlinkSync(realpathSync(join(repo, 'node_modules', '@types', 'node')), join(app, 'node_modules', '@types', 'node'));
  writeBlocks();
});

afterAll(() => {
  if (process.env.ZK_CONSUMER_KEEP) return void process.stderr.write(`[consumer] kept ${work}\n`);
  if (tarballs) process.stderr.write(`[consumer] ${tarballs.map((t) => `${t.name} ${(t.bytes / 1024).toFixed(1)} KiB`).join(', ')}; ${Object.entries(timings).map(([k, v]) => `${k} ${Math.round(v)} ms`).join(', ')}\n`);
  if (work) rmSync(work, { recursive: true, force: true });
});

describe('consumer: the packed packages installed with npm', () => {
  it('installs @zk/locks with a real range on @zk/protocol, LICENSE in both, and the zk-lock bin', async () => {
    const manifest = (name: string) => JSON.parse(readFileSync(join(app, 'node_modules', name, 'package.json'), 'utf8')) as { version: string; dependencies?: Record<string, string> };
    const range = manifest('@zk/locks').dependencies?.['@zk/protocol'];
    expect(range).toBe(`^${manifest('@zk/protocol').version}`);
    for (const name of ['@zk/protocol', '@zk/locks', '@zk/otel']) {
      expect(readFileSync(join(app, 'node_modules', name, 'LICENSE'), 'utf8')).toBe(readFileSync(join(repo, 'LICENSE'), 'utf8'));
    }
    const help = await run(join(app, 'node_modules', '.bin', 'zk-lock'), ['--help'], app);
    expect(help.code, explain('zk-lock --help', help)).toBe(0);
    expect(help.stdout).toContain('Usage:');
  });

  it('each package\'s entry (and the zk-lock bin) is one file that imports only Node built-ins and @zk/protocol (@zk/otel: @opentelemetry/api)', async () => {
    const resolved = await run(process.execPath, ['--input-type=module', '-e', "for (const n of ['@zk/protocol', '@zk/locks', '@zk/otel']) console.log(import.meta.resolve(n))"], app);
    expect(resolved.code, explain('import.meta.resolve', resolved)).toBe(0);
    const entries = resolved.stdout.trim().split('\n').map((u) => fileURLToPath(u));
    entries.push(realpathSync(join(app, 'node_modules', '.bin', 'zk-lock')));
    expect(entries.map((e) => e.replace(/^.*node_modules\//, ''))).toEqual(['@zk/protocol/dist/index.bundle.js', '@zk/locks/dist/index.bundle.js', '@zk/otel/dist/index.bundle.js', '@zk/locks/dist/cli/zk-lock.bundle.js']);
    for (const entry of entries) {
      const specifiers = [...readFileSync(entry, 'utf8').matchAll(/^(?:import|export)\b[^;]*?\bfrom\s*["']([^"']+)["']/gm)].map((m) => m[1]!);
      expect(specifiers.length, entry).toBeGreaterThan(0);
      const allowed = entry.includes('@zk/otel/') ? '@opentelemetry/api' : '@zk/protocol';
      expect(specifiers.filter((s) => !s.startsWith('node:') && s !== allowed), entry).toEqual([]);
    }
  });

  it('runs the installed zk-lock against the server: the command gets a fencing token', async () => {
    const space = new TestSpace();
    await space.admin();
    try {
      const check = 'process.exit(/^[0-9]+$/.test(process.env.ZK_LOCK_FENCING_TOKEN ?? "") ? 7 : 3)';
      const args = ['--connect', `${connectString()}${space.root}`, '--timeout', '10s', '/locks/consumer', '--', process.execPath, '-e', check];
      const ran = await run(join(app, 'node_modules', '.bin', 'zk-lock'), args, app, RUN_BOUND_MS);
      expect(ran.code, explain('zk-lock', ran)).toBe(7); // the command's own exit code
    } finally {
      await space.close();
    }
  });

  it('the tarball check refuses what `npm pack` makes of @zk/locks (the workspace range kept), and npm publish refuses to run', async () => {
    // Negative control of the check the release and the packing above rely on.
    const dir = join(work, 'npm-pack');
    mkdirSync(dir);
    // --ignore-scripts: past the package's prepack guard, which stops a plain `npm pack` (pack.test.ts).
    const packed = await run('npm', ['pack', '--ignore-scripts', '--pack-destination', dir, '--loglevel=error'], join(repo, 'packages', 'locks'));
    expect(packed.code, explain('npm pack', packed)).toBe(0);
    const checked = await run(process.execPath, [join(repo, 'scripts', 'release.mjs'), '--check', join(dir, packed.stdout.trim().split('\n').at(-1)!)], repo);
    expect(checked.code).toBe(1);
    expect(checked.stderr).toContain('keeps a workspace range (dependencies.@zk/protocol: workspace:^)');
    // And npm publish stops in prepublishOnly (a dry run: nothing could be published anyway).
    const published = await run('npm', ['publish', '--dry-run', '--loglevel=error'], join(repo, 'packages', 'locks'));
    expect(published.code).not.toBe(0);
    expect(published.stderr).toContain('publish with `npm run release`');
  });

  it('loads from JavaScript: import (ESM) and require (CommonJS, Node >= 20.19), one module instance', async () => {
    mkdirSync(join(app, 'js-esm'));
    writeFileSync(join(app, 'js-esm', 'package.json'), '{ "type": "module" }');
    writeFileSync(
      join(app, 'js-esm', 'index.js'),
      `import { ZooKeeper } from '@zk/protocol';\nimport { Mutex } from '@zk/locks';\nconsole.log(typeof ZooKeeper, typeof Mutex);\n`,
    );
    mkdirSync(join(app, 'js-cjs'));
    writeFileSync(join(app, 'js-cjs', 'package.json'), '{ "type": "commonjs" }');
    writeFileSync(
      join(app, 'js-cjs', 'index.js'),
      [
        `const { ZooKeeper, NoNodeError } = require('@zk/protocol');`,
        `const { Mutex } = require('@zk/locks');`,
        `import('@zk/protocol').then((m) => console.log(typeof ZooKeeper, typeof Mutex, m.NoNodeError === NoNodeError));`,
      ].join('\n'),
    );
    const esm = await run(process.execPath, ['js-esm/index.js'], app);
    expect(esm.stdout.trim(), explain('import', esm)).toBe('function function');
    const cjs = await run(process.execPath, ['js-cjs/index.js'], app);
    expect(cjs.stdout.trim(), explain('require', cjs)).toBe('function function true');
    expect(esm.stderr + cjs.stderr).toBe('');
  });

  it('loads from TypeScript: module node16, node20 and nodenext, ESM and CommonJS projects (and node10, bundler)', async () => {
    const variants = [
      { type: 'module', module: 'node16' },
      { type: 'module', module: 'nodenext' },
      { type: 'commonjs', module: 'node20' },
      { type: 'commonjs', module: 'nodenext' },
      // node16 keeps Node 16's rule (no require of ESM): TS1479 on a static import; the README
      // says to use nodenext or node20; what remains with node16 is import() (and types
      // imported with resolution-mode 'import'), as below.
      { type: 'commonjs', module: 'node16', dynamic: true },
      // Older and bundler settings: resolved through "types"/"main" (node10) or exports (bundler).
      { type: 'commonjs', module: 'commonjs', moduleResolution: 'node10' },
      { type: 'module', module: 'esnext', moduleResolution: 'bundler' },
    ];
    const source = [
      `import { ZooKeeper, NoNodeError } from '@zk/protocol';`,
      `import { Mutex, type Lease } from '@zk/locks';`,
      `const token = (lease: Lease): bigint => lease.fencingToken;`,
      `// @ts-expect-error connect needs a connect string (fails as unused if the types were lost)`,
      `void (() => ZooKeeper.connect());`,
      `console.log(typeof ZooKeeper, typeof Mutex, typeof NoNodeError, typeof token);`,
    ].join('\n');
    const dynamic = [
      `import type { Lease } from '@zk/locks' with { 'resolution-mode': 'import' };`,
      `void (async () => {`,
      `  const { ZooKeeper } = await import('@zk/protocol');`,
      `  const { Mutex } = await import('@zk/locks');`,
      `  const token = (lease: Lease): bigint => lease.fencingToken;`,
      `  // @ts-expect-error connect needs a connect string`,
      `  void (() => ZooKeeper.connect());`,
      `  console.log(typeof ZooKeeper, typeof Mutex, 'function', typeof token);`,
      `})();`,
    ].join('\n');
    const dirs = variants.map((v) => {
      const dir = join(app, `ts-${v.type}-${v.module}${v.moduleResolution ? `-${v.moduleResolution}` : ''}`);
      mkdirSync(dir);
      writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: v.type }));
      const compilerOptions = { module: v.module, moduleResolution: v.moduleResolution, target: 'ES2022', strict: true, types: ['node'], skipLibCheck: true };
      writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions, include: ['*.ts'] }));
      writeFileSync(join(dir, 'index.ts'), v.dynamic ? dynamic : source);
      if (v.dynamic) {
        mkdirSync(join(dir, 'static'));
        writeFileSync(join(dir, 'static', 'tsconfig.json'), JSON.stringify({ compilerOptions, include: ['*.ts'] }));
        writeFileSync(join(dir, 'static', 'index.ts'), source);
      }
      return dir;
    });
    const started = performance.now();
    // One tsc -b for all of them: it parses the libraries once.
    const [compiled, node16Static] = await Promise.all([
      run(process.execPath, [tsc(app), '-b', ...dirs], app),
      run(process.execPath, [tsc(app), '-p', join(dirs[variants.findIndex((v) => v.dynamic)]!, 'static')], app),
    ]);
    timings.tsVariants = performance.now() - started;
    expect(compiled.code, explain(`tsc -b ${dirs.join(' ')}`, compiled)).toBe(0);
    expect(node16Static.code).not.toBe(0);
    expect(node16Static.stdout).toContain('error TS1479');
    for (const dir of dirs) {
      const ran = await run(process.execPath, [join(dir, 'index.js')], app);
      expect(ran.stdout.trim(), explain(`node ${dir}/index.js`, ran)).toBe('function function function function');
      expect(ran.stderr).toBe('');
    }
  });

  it('compiles a strict program and the README blocks against the shipped declarations', async () => {
    const started = performance.now();
    const compiled = await run(process.execPath, [tsc(app), '-p', app], app);
    timings.strictCompile = performance.now() - started;
    expect(compiled.code, explain('tsc (strict, skipLibCheck off)', compiled)).toBe(0);
  });

  it('source maps lead to the shipped TypeScript sources', async () => {
    const ran = await run(process.execPath, ['--enable-source-maps', 'source-maps.js'], app);
    expect(ran.code, explain('source-maps.js', ran)).toBe(0);
    expect(ran.stdout).toContain('InvalidArgumentError');
    expect(ran.stdout).toMatch(/node_modules\/@zk\/protocol\/src\/client\/options\.ts:\d+:\d+/);
  });
});

const blocks: ReadmeBlock[] = READMES.flatMap((p) => readmeBlocks(p, repo, { js: true }));
const runnable = blocks.filter((b) => b.notRunnable === undefined);
const spaces = new Map<string, TestSpace>();

/** Writes each runnable block to readme/<name>.ts, its connect strings pointed at its own namespace. */
function writeBlocks(): void {
  mkdirSync(join(app, 'readme'), { recursive: true });
  for (const block of runnable) {
    const space = new TestSpace();
    spaces.set(block.where, space);
    const { code, replaced } = pointAt(block.code, connectString(), space.root);
    if (replaced === 0 && block.code.includes('.connect(')) throw new Error(`${block.where}: no connect string literal to point at the test server`);
    writeFileSync(join(app, 'readme', block.fileName), code);
  }
}

describe('consumer: every ```ts and ```js block of the READMEs runs as written', () => {
  it('finds the blocks, and few are marked not runnable', () => {
    expect(runnable.length).toBeGreaterThanOrEqual(3);
    expect(blocks.length - runnable.length).toBeLessThanOrEqual(Math.max(2, blocks.length / 4));
  });

  it('each README whose TypeScript uses `await using` has a plain JavaScript variant without it (Node 20 and 22 cannot parse it)', () => {
    for (const readme of READMES) {
      const mine = blocks.filter((b) => b.where.startsWith(`${readme.slice(repo.length)}:`));
      if (!mine.some((b) => b.lang === 'ts' && /\bawait using\b/.test(b.code))) continue;
      const js = mine.filter((b) => b.lang === 'js' && b.notRunnable === undefined);
      expect(js.length, `${readme}: no runnable \`\`\`js block`).toBeGreaterThan(0);
      for (const b of js) expect(b.code, b.where).not.toMatch(/\bawait using\b|\busing\s+\w+\s*=/);
    }
  });

  it.each(runnable.map((b) => [b.where, b] as const))('%s', async (_where, block) => {
    const space = spaces.get(block.where);
    if (!space) throw new Error(`${block.where} was not written`);
    await space.admin(); // the namespace: an empty tree, as on a fresh server
    try {
      const ran = await run(process.execPath, ['--enable-source-maps', join('readme', block.fileName.replace(/\.ts$/, '.js'))], app, RUN_BOUND_MS);
      timings[block.where] = ran.ms;
      expect(ran.signal, explain(`${block.where} did not exit by itself within ${RUN_BOUND_MS} ms (a client or lease left open?):`, ran)).toBeNull();
      expect(ran.code, explain(block.where, ran)).toBe(0);
      expect(ran.stderr, explain(block.where, ran)).toBe('');
    } finally {
      await space.close();
    }
  });
});

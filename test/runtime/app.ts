/**
 * The scratch application the runtime suite runs in, built once for every runtime: the packed
 * tarballs (scripts/release.mjs --pack, as the consumer test and a release make them) installed
 * with npm into a temporary directory with a package.json, the suite copied next to them, and
 * every runnable ```ts block of the READMEs in three forms:
 *
 * - `ts`: the block as written (its connect string pointed at the test server), for runtimes
 *   that run TypeScript themselves (Bun);
 * - `ts-npm`: the same with `npm:` specifiers (`from 'npm:@zk/locks'`), as a Deno program
 *   imports npm packages (Deno resolves them from the app's node_modules);
 * - `esnext`: tsc's JavaScript with `await using` kept, for runtimes that parse it;
 * - `es2022`: tsc's JavaScript with `await using` rewritten (TypeScript's disposal helpers), for
 *   runtimes that do not (Node 20 and 22).
 *
 * Bun and Deno resolve the bare `@zk/protocol` and `@zk/locks` from the app's package.json and
 * node_modules, as Node does: that is how their users would install the packages.
 */
import { spawn } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { pointAt, readmeBlocks } from '../consumer/readme-blocks.js';

const repo = fileURLToPath(new URL('../../', import.meta.url));
const READMES = ['README.md', 'packages/protocol/README.md', 'packages/locks/README.md'].map((p) => join(repo, p));

/** The forms a README block is prepared in. */
export type BlockForm = 'ts' | 'ts-npm' | 'esnext' | 'es2022';

/** One README block, written for the suite. */
export interface AppBlock {
  /** `path:line` of its fence. */
  readonly where: string;
  /** The namespace its connect strings point into (created before it runs, deleted after). */
  readonly base: string;
  /** Its file in each form, relative to the app. */
  readonly files: Readonly<Record<BlockForm, string>>;
}

/** The built scratch app. */
export interface App {
  readonly dir: string;
  /** The installed zk-lock bin (the file the package's `bin` names). */
  readonly zkLock: string;
  readonly blocks: readonly AppBlock[];
  /** What packing, installing and compiling took, ms. */
  readonly timings: Readonly<Record<string, number>>;
}

/** A finished child process. */
export interface Ran {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  ms: number;
}

/** Runs a command to its end (killed after `timeoutMs`); never rejects. */
export function run(cmd: string, args: readonly string[], cwd: string, timeoutMs: number, env: NodeJS.ProcessEnv = process.env): Promise<Ran> {
  const started = performance.now();
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'], env });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', (err) => (stderr += String(err)));
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr, ms: performance.now() - started });
    });
  });
}

export function explain(what: string, r: Ran): string {
  const how = r.signal ? `was killed (${r.signal}) after ${Math.round(r.ms)} ms` : `exited with ${r.code}`;
  return `${what} ${how}\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`;
}

/**
 * Packs, installs and prepares the app; `hosts` (awaited only for the last step, so the server
 * can start meanwhile) is the plain connect string the README blocks get.
 */
export async function buildApp(hosts: Promise<string>): Promise<App> {
  const timings: Record<string, number> = {};
  const work = mkdtempSync(join(tmpdir(), 'zk-runtime-'));
  const dir = join(work, 'app');
  mkdirSync(dir);
  let t = performance.now();
  const packed = await run(process.execPath, [join(repo, 'scripts', 'release.mjs'), '--pack', work], repo, 300_000);
  if (packed.code !== 0) throw new Error(explain('scripts/release.mjs --pack', packed));
  const tarballs = packed.stdout.trim().split('\n').map((l) => JSON.parse(l) as { name: string; tarball: string });
  timings.pack = performance.now() - t;

  // @zk/otel is left out: the runtime suite runs the client and the recipes, and @zk/otel's peer
  // @opentelemetry/api is not in the offline cache here (npm installs peers; the consumer test
  // covers @zk/otel's tarball).
  const dependencies = Object.fromEntries(tarballs.filter((tb) => tb.name !== '@zk/otel').map((tb) => [tb.name, `file:${tb.tarball}`]));
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'runtime-app', private: true, type: 'module', dependencies }, null, 2));
  t = performance.now();
  // --offline: the tarballs are all it needs (as in the consumer test).
  const installed = await run('npm', ['install', '--offline', '--no-audit', '--no-fund', '--loglevel=error'], dir, 120_000);
  if (installed.code !== 0) throw new Error(explain('npm install of the tarballs', installed));
  timings.install = performance.now() - t;

  cpSync(join(repo, 'test', 'runtime', 'suite'), join(dir, 'suite'), { recursive: true });
  const locks = JSON.parse(readFileSync(join(dir, 'node_modules', '@zk', 'locks', 'package.json'), 'utf8')) as { bin: Record<string, string> };
  const zkLock = join(dir, 'node_modules', '@zk', 'locks', locks.bin['zk-lock']!);

  const connect = await hosts;
  t = performance.now();
  const blocks = await writeBlocks(dir, connect);
  timings.compileReadme = performance.now() - t;
  return { dir, zkLock, blocks, timings };
}

/**
 * Writes the README's ```ts blocks as `ts` and compiles them to `esnext` and `es2022` (emit only:
 * the consumer test type-checks them); its ```js blocks are run as written, in every form.
 */
async function writeBlocks(dir: string, hosts: string): Promise<AppBlock[]> {
  const src = join(dir, 'readme', 'ts');
  const npm = join(dir, 'readme', 'ts-npm');
  mkdirSync(src, { recursive: true });
  mkdirSync(npm);
  const blocks: AppBlock[] = [];
  mkdirSync(join(dir, 'readme', 'js'));
  for (const block of READMES.flatMap((p) => readmeBlocks(p, repo, { js: true })).filter((b) => b.notRunnable === undefined)) {
    const base = `/runtime-readme/${block.fileName.replace(/\.m?[jt]s$/, '')}`;
    const { code } = pointAt(block.code, hosts, base);
    if (block.lang === 'js') {
      // Plain JavaScript, run as written (bare specifiers, through the app's node_modules) in every form.
      const file = join('readme', 'js', block.fileName);
      writeFileSync(join(dir, file), code);
      blocks.push({ where: block.where, base, files: { ts: file, 'ts-npm': file, esnext: file, es2022: file } });
      continue;
    }
    writeFileSync(join(src, block.fileName), code);
    writeFileSync(join(npm, block.fileName), code.replace(/(from\s+['"])(@zk\/)/g, '$1npm:$2'));
    const js = block.fileName.replace(/\.ts$/, '.js');
    const files = { ts: join('readme', 'ts', block.fileName), 'ts-npm': join('readme', 'ts-npm', block.fileName), esnext: join('readme', 'esnext', js), es2022: join('readme', 'es2022', js) };
    blocks.push({ where: block.where, base, files });
  }
  const tsc = join(repo, 'node_modules', 'typescript', 'bin', 'tsc');
  for (const target of ['esnext', 'es2022'] as const) {
    const compilerOptions = { target, module: 'nodenext', moduleResolution: 'nodenext', lib: ['ESNext'], noCheck: true, skipLibCheck: true, rootDir: 'ts', outDir: target };
    writeFileSync(join(dir, 'readme', `tsconfig.${target}.json`), JSON.stringify({ compilerOptions, include: ['ts/*.ts'] }));
    const compiled = await run(process.execPath, [tsc, '-p', join(dir, 'readme', `tsconfig.${target}.json`)], dir, 120_000);
    if (compiled.code !== 0) throw new Error(explain(`tsc (${target}) of the README blocks`, compiled));
  }
  return blocks;
}

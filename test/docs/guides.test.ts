/**
 * The documentation site's guides (docs/site/**\/*.md, built into docs/api by `npm run docs`):
 * every ```ts block is a program, and so is every ```js block (a plain JavaScript variant, for
 * Node 20 and 22, which cannot parse `await using`: it must not use it). The ts blocks are
 * compiled together with tsc (strict, against the workspace packages' declarations), the js
 * blocks run as written, and each is run against the test server, its connect string
 * pointed at a fresh namespace, as the consumer test does with the READMEs' blocks: each must
 * exit by itself, with code 0 and nothing on stderr, within a bound. A block that is a fragment
 * says so on the line before its fence: `<!-- not-runnable: the reason -->` (it is still
 * compiled, so it must type-check as a program of its own).
 */
import { mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { timing } from '../harness/index.js';
import { connectString, TestSpace } from '../harness/fixtures.js';
import { pointAt, readmeBlocks } from '../consumer/readme-blocks.js';
import { explain, run } from '../runtime/app.js';
import { startPostgres, type PostgresServer } from '../harness/postgres.js';
import { startRedis, type RedisServer } from '../harness/redis.js';

const repo = fileURLToPath(new URL('../../', import.meta.url));
const site = join(repo, 'docs', 'site');
/** How long one guide program may take, connect to exit. */
const RUN_BOUND_MS = timing(20_000);
const QUIET_ENV = { ...process.env, NODE_OPTIONS: '', NODE_DEBUG: '' };

function markdownFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? markdownFiles(join(dir, e.name)) : e.name.endsWith('.md') ? [join(dir, e.name)] : [],
  );
}

/** Each block with a file name unique across the site: `<folder>-<page>-<line>.ts`. */
const blocks = markdownFiles(site).flatMap((file) => {
  const page = relative(site, file).replace(/\.md$/, '').replaceAll('/', '-');
  return readmeBlocks(file, repo, { js: true }).map((b) => ({ ...b, fileName: `${page}-${b.where.split(':').at(-1)}.${b.lang === 'ts' ? 'ts' : 'mjs'}` }));
});
const runnable = blocks.filter((b) => b.notRunnable === undefined);
const spaces = new Map<string, TestSpace>();
let dir: string;
// The fencing guide's blocks write to Postgres and Redis (DATABASE_URL, REDIS_URL): private servers, started only for them.
let postgresServer: PostgresServer | undefined;
let redisServer: RedisServer | undefined;
/** The store drivers those blocks import: dev dependencies of the test package, linked beside the workspace's modules. */
const DRIVERS = ['pg', 'postgres', 'ioredis', 'redis', '@types/pg'];

/** dir/node_modules: a link to each of the workspace's modules, and to each of {@link DRIVERS}. */
function linkModules(target: string): void {
  const modules = join(target, 'node_modules');
  mkdirSync(join(modules, '@types'), { recursive: true });
  for (const name of readdirSync(join(repo, 'node_modules'))) if (name !== '@types') symlinkSync(join(repo, 'node_modules', name), join(modules, name));
  for (const name of readdirSync(join(repo, 'node_modules', '@types'))) symlinkSync(join(repo, 'node_modules', '@types', name), join(modules, '@types', name));
  for (const name of DRIVERS) symlinkSync(join(repo, 'test', 'node_modules', name), join(modules, name));
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'zk-guides-'));
  // The packages, TypeScript and @types/node as the workspace has them (the packages' dist).
  linkModules(dir);
  if (runnable.some((b) => b.code.includes('DATABASE_URL'))) Object.assign(QUIET_ENV, { DATABASE_URL: (postgresServer = await startPostgres()).url });
  if (runnable.some((b) => b.code.includes('REDIS_URL'))) Object.assign(QUIET_ENV, { REDIS_URL: (redisServer = await startRedis()).url });
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ private: true, type: 'module' }));
  writeFileSync(
    join(dir, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        strict: true,
        noUncheckedIndexedAccess: true,
        // ES2022 rewrites `await using`, which Node 20 and 22 cannot parse.
        target: 'es2022',
        lib: ['es2022', 'esnext.disposable'],
        module: 'nodenext',
        types: ['node'],
        skipLibCheck: false,
        sourceMap: true,
      },
      include: ['*.ts'],
    }),
  );
  for (const block of blocks) {
    const space = new TestSpace();
    spaces.set(block.where, space);
    const { code, replaced } = pointAt(block.code, connectString(), space.root);
    if (replaced === 0 && block.code.includes('.connect(') && block.notRunnable === undefined) {
      throw new Error(`${block.where}: no connect string literal to point at the test server`);
    }
    // Each block is a module of its own (top-level await, no shared names).
    writeFileSync(join(dir, block.fileName), block.lang === 'js' || /^\s*(import|export)\s/m.test(code) ? code : `${code}\nexport {};\n`);
  }
}, timing(120_000));

afterAll(async () => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  await Promise.all([postgresServer?.stop(), redisServer?.stop()]);
});

describe('docs: the guides\' ```ts and ```js blocks', () => {
  it('finds the blocks, and few are marked not runnable', () => {
    expect(runnable.length).toBeGreaterThanOrEqual(10);
    expect(runnable.filter((b) => b.lang === 'js').length).toBeGreaterThanOrEqual(16);
    expect(blocks.length - runnable.length).toBeLessThanOrEqual(Math.max(2, blocks.length / 4));
  });

  it('the JavaScript variants do without `await using` (Node 20 and 22 cannot parse it)', () => {
    expect(runnable.filter((b) => b.lang === 'js' && /^\s*await using\s/m.test(b.code)).map((b) => b.where)).toEqual([]);
  });

  it('compile with tsc (strict) against the packages', async () => {
    const ran = await run(process.execPath, [join(repo, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', dir], dir, timing(120_000), QUIET_ENV);
    // Name each error's block by its place in the guide.
    const where = new Map(blocks.map((b) => [b.fileName, b.where]));
    const out = ran.stdout.replace(/^([\w-]+\.ts)\((\d+),(\d+)\)/gm, (m, f: string, line: string) => (where.has(f) ? `${where.get(f)!.replace(/:\d+$/, '')}:${Number(where.get(f)!.split(':').at(-1)) + Number(line)} (${m})` : m));
    expect(ran.code, explain('tsc', { ...ran, stdout: out })).toBe(0);
  }, timing(150_000));

  it.each(runnable.map((b) => [b.where, b] as const))('%s runs', async (_where, block) => {
    const space = spaces.get(block.where)!;
    await space.admin(); // the namespace: an empty tree, as on a fresh server
    try {
      const js = join(dir, basename(block.fileName).replace(/\.ts$/, '.js'));
      const ran = await run(process.execPath, ['--enable-source-maps', js], dir, RUN_BOUND_MS, QUIET_ENV);
      expect(ran.signal, explain(`${block.where} did not exit by itself within ${RUN_BOUND_MS} ms (a client or lease left open?):`, ran)).toBeNull();
      expect(ran.code, explain(block.where, ran)).toBe(0);
      expect(ran.stderr, explain(block.where, ran)).toBe('');
    } finally {
      await space.close();
    }
  });
});

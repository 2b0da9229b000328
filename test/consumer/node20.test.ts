/**
 * TypeScript for Node 20 and 22 (issue 37 item 8): test/consumer/node20/tsconfig.json, the one the
 * README's Runtimes section gives. A program with `await using` (a client and a lease) compiles
 * with it against the workspace packages, the output has no `await using` left (those Nodes cannot
 * parse it), and it runs against the test server, exiting by itself. The ESNext.Disposable lib is
 * what makes `await using` compile at a lowered target without @types/node's declarations: with
 * `types: []` and without that lib, tsc rejects it (the control), with it, tsc accepts it.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { timing } from '../harness/index.js';
import { connectString, TestSpace } from '../harness/fixtures.js';
import { explain, run } from '../runtime/app.js';

const repo = fileURLToPath(new URL('../../', import.meta.url));
const project = join(repo, 'test', 'consumer', 'node20');
const out = join(repo, 'test', '.work', 'node20');
const tsc = join(repo, 'node_modules', 'typescript', 'bin', 'tsc');
const QUIET_ENV = { ...process.env, NODE_OPTIONS: '', NODE_DEBUG: '' };
const space = new TestSpace();

afterAll(async () => {
  await space.close();
});

/** A tsconfig beside the output that extends the Node 20 one: no @types (so no @types/node), `lib` as given. */
function withoutNodeTypes(name: string, lib: string[] | undefined): string {
  mkdirSync(out, { recursive: true });
  const file = join(out, `${name}.json`);
  writeFileSync(file, JSON.stringify({ extends: join(project, 'tsconfig.json'), compilerOptions: { types: [], noEmit: true, ...(lib ? { lib } : {}) }, include: [join(project, 'disposable.ts')] }));
  return file;
}

describe('TypeScript on Node 20 (test/consumer/node20/tsconfig.json)', () => {
  it('compiles a program with `await using` to ES2022 without it, which runs and exits', async () => {
    rmSync(out, { recursive: true, force: true });
    const compiled = await run(process.execPath, [tsc, '-p', project], repo, timing(120_000), QUIET_ENV);
    expect(compiled.code, explain('tsc -p test/consumer/node20', compiled)).toBe(0);
    const js = readFileSync(join(out, 'app.js'), 'utf8');
    expect(js).not.toMatch(/^\s*await using\s/m);
    expect(js).toContain('__addDisposableResource');
    await space.admin();
    const ran = await run(process.execPath, [join(out, 'app.js')], repo, timing(20_000), { ...QUIET_ENV, ZK_CONNECT: `${connectString()}${space.root}` });
    expect(ran.code, explain('node test/.work/node20/app.js', ran)).toBe(0);
    expect(ran.stdout).toMatch(/held with fencing token \d+\nreleased: 0 lock nodes left/);
  }, timing(150_000));

  it('without @types/node, `await using` compiles at ES2022 with the ESNext.Disposable lib and not without it', async () => {
    const without = await run(process.execPath, [tsc, '-p', withoutNodeTypes('no-disposable-lib', ['ES2023'])], repo, timing(60_000), QUIET_ENV);
    expect(without.code).not.toBe(0);
    expect(without.stdout).toContain("Cannot find global type 'AsyncDisposable'");
    const withLib = await run(process.execPath, [tsc, '-p', withoutNodeTypes('disposable-lib', undefined)], repo, timing(60_000), QUIET_ENV);
    expect(withLib.code, explain('tsc with ESNext.Disposable', withLib)).toBe(0);
  }, timing(150_000));
});

/**
 * Packing by hand: `npm pack` in a package directory (issue 24) would make a tarball that does
 * not work (npm ignores publishConfig, which names the bundled entry, and keeps `workspace:^`),
 * so each package's prepack (scripts/release.mjs --guard) stops it before anything is written and
 * names the command that makes working tarballs. The supported path, `scripts/release.mjs --pack`,
 * is the consumer test's: consumer.test.ts installs its tarballs.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { timing } from '../harness/index.js';
import { explain, run, type Ran } from '../runtime/app.js';

const repo = fileURLToPath(new URL('../../', import.meta.url));
const PACKAGES = ['protocol', 'locks', 'otel'] as const;

const version = (pkg: string) => (JSON.parse(readFileSync(join(repo, 'packages', pkg, 'package.json'), 'utf8')) as { version: string }).version;

/**
 * The environment of a user's shell: none of the npm_* variables of an `npm test` around this run
 * (a child npm reads npm_config_* as its own configuration), and not the marker with which
 * release.mjs lets its own pnpm through the guard.
 */
function userEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { NODE_OPTIONS: '', NODE_DEBUG: '' };
  for (const [k, v] of Object.entries(process.env)) if (!/^npm_/i.test(k) && k !== 'ZK_RELEASE' && !(k in env)) env[k] = v;
  return env;
}

/** Runs `cmd pack --pack-destination <a new directory>` in packages/<pkg>; returns the run and what the directory holds after it. */
async function packByHand(cmd: string, pkg: string): Promise<{ ran: Ran; left: string[]; leftInPackage: string[] }> {
  const dest = mkdtempSync(join(work, `${pkg}-`));
  const dir = join(repo, 'packages', pkg);
  const before = new Set(readdirSync(dir));
  const ran = await run(cmd, ['pack', '--pack-destination', dest, '--loglevel=error'], dir, timing(60_000), userEnv());
  return { ran, left: readdirSync(dest), leftInPackage: readdirSync(dir).filter((f) => !before.has(f) && f.endsWith('.tgz')) };
}

let work: string;

beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), 'zk-pack-'));
});

afterAll(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

describe('pack - by hand in a package directory', () => {
  // Packages with no workspace dependency first (directory order), then @zk/locks.
  const install = `npm install <dir>/zk-otel-${version('otel')}.tgz <dir>/zk-protocol-${version('protocol')}.tgz <dir>/zk-locks-${version('locks')}.tgz`;

  it.each(PACKAGES)('npm pack in packages/%s stops before writing anything and names scripts/release.mjs --pack', async (pkg) => {
    const { ran, left, leftInPackage } = await packByHand('npm', pkg);
    expect(ran.code, explain('npm pack', ran)).not.toBe(0);
    expect(ran.stderr).toContain(`\`npm pack\` of @zk/${pkg} stopped before packing, as its tarball would not work: npm ignores publishConfig`);
    expect(ran.stderr).toContain('From the repository root (cd ../..), build, pack and check the packages with:\n  node scripts/release.mjs --pack <dir>\n');
    expect(ran.stderr).toContain(`then install the tarballs in your app:\n  ${install}\n`);
    // @zk/locks also names the range npm would ship as it is.
    if (pkg === 'locks') expect(ran.stderr).toContain('it would keep "@zk/protocol": "workspace:^", which npm cannot install');
    expect(left).toEqual([]);
    expect(leftInPackage).toEqual([]);
  });

  it('a bare pnpm pack (not release.mjs\'s) stops too: it would pack whatever dist holds, unchecked', async () => {
    const { ran, left } = await packByHand(join(repo, 'node_modules', '.bin', 'pnpm'), 'locks');
    expect(ran.code, explain('pnpm pack', ran)).not.toBe(0);
    expect(ran.stderr).toContain('`pnpm pack` of @zk/locks stopped before packing, as a bare pnpm pack packs whatever dist holds');
    expect(ran.stderr).toContain('  node scripts/release.mjs --pack <dir>\n');
    expect(left).toEqual([]);
  });
});

#!/usr/bin/env node
// The published entry points as single files: `tsc -b` writes one ES module per source file
// (47 for @zk/protocol), and loading 47 modules costs a fresh process about twice the time of
// loading one file with the same code (bench: "first connect of a fresh process"). Each public
// package's `publishConfig` points `main`, `exports` (and the zk-lock bin) at these bundles, so
// the tarball's entry is one file while the workspace keeps running tsc's modules (never stale).
//
//   node scripts/bundle.mjs          bundle every public package (after `tsc -b`)
//
// For each entry named in a package's publishConfig (`./dist/<x>.bundle.js` for `dist/<x>.js`):
// esbuild bundles tsc's output with the package's own modules inlined and everything else (Node
// built-ins, @zk/protocol for @zk/locks, @opentelemetry/api for @zk/otel) left as imports; tsc's source maps are followed, so the
// bundle's map names the shipped TypeScript sources. Function and class names are kept.
// Plain JavaScript; esbuild is a dev dependency of the workspace.
import { existsSync, readdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

/** The strings anywhere in `values` (a manifest's main, exports or bin: the files it names). */
export function namedFiles(...values) {
  const found = [];
  const walk = (v) => (typeof v === 'string' ? found.push(v) : v && typeof v === 'object' && Object.values(v).forEach(walk));
  values.forEach(walk);
  return found;
}

/** The bundles of one package, as [tsc output, bundle] paths relative to the package. */
export function bundleEntries(manifest) {
  const publish = manifest.publishConfig ?? {};
  const bundles = namedFiles(publish.main, publish.exports, publish.bin).filter((t) => t.endsWith('.bundle.js'));
  return [...new Set(bundles)].map((t) => [t.replace(/\.bundle\.js$/, '.js').replace(/^\.\//, ''), t.replace(/^\.\//, '')]);
}

/** The public packages (packages/*, not private) and their manifests. */
export function publicPackages() {
  const dir = join(root, 'packages');
  return readdirSync(dir)
    .map((name) => join(dir, name))
    .filter((d) => existsSync(join(d, 'package.json')))
    .map((d) => ({ dir: d, manifest: JSON.parse(readFileSync(join(d, 'package.json'), 'utf8')) }))
    .filter((p) => !p.manifest.private);
}

/** Newest modification time of the .js files under `dir` (not the bundles), ms. */
function newestModule(dir) {
  let newest = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) newest = Math.max(newest, newestModule(p));
    else if (e.name.endsWith('.js') && !e.name.endsWith('.bundle.js')) newest = Math.max(newest, statSync(p).mtimeMs);
  }
  return newest;
}

/**
 * Bundles every public package's entries; an entry whose bundle is newer than every module of
 * its package's dist is left as it is (a no-op costs a few stat calls). Returns the bundles written.
 */
export async function bundleAll({ force = false } = {}) {
  const written = [];
  let esbuild;
  for (const { dir, manifest } of publicPackages()) {
    const entries = bundleEntries(manifest);
    if (entries.length === 0) continue;
    const dist = join(dir, 'dist');
    const newest = existsSync(dist) ? newestModule(dist) : 0;
    const stale = entries.filter(([, out]) => force || !existsSync(join(dir, out)) || statSync(join(dir, out)).mtimeMs < newest);
    if (stale.length === 0) continue;
    esbuild ??= (await import(pathToFileURL(join(root, 'node_modules', 'esbuild', 'lib', 'main.js')).href)).default;
    for (const [entry, out] of stale) {
      if (!existsSync(join(dir, entry))) throw new Error(`${manifest.name}: ${entry} is not built (run tsc -b first)`);
      const result = await esbuild.build({
        absWorkingDir: dir,
        entryPoints: [entry],
        outfile: out,
        bundle: true,
        platform: 'node',
        format: 'esm',
        target: 'node20',
        packages: 'external',
        sourcemap: 'linked',
        keepNames: true,
        logLevel: 'warning',
        write: false,
      });
      // Each file replaced by a rename, never rewritten in place: other processes may be loading
      // the bundle meanwhile (a test run packs the packages while others run programs on them).
      for (const file of [...result.outputFiles].sort((a, b) => Number(a.path.endsWith('.js')) - Number(b.path.endsWith('.js')))) {
        const tmp = `${file.path}.${process.pid}.tmp`;
        writeFileSync(tmp, file.contents);
        renameSync(tmp, file.path);
      }
      written.push(join(dir, out));
    }
  }
  return written;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const written = await bundleAll({ force: process.argv.includes('--force') });
  for (const f of written) process.stderr.write(`[bundle] ${f.slice(root.length + 1)}\n`);
}

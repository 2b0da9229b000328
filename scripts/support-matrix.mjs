#!/usr/bin/env node
// The support matrix, made from a test run's results, never by hand. It lives on the docs site's
// "Supported servers and runtimes" page (docs/site/guides/support.md); the README links there.
//
//   node scripts/support-matrix.mjs           prints the matrix (markdown)
//   node scripts/support-matrix.mjs --write   replaces it in docs/site/guides/support.md, between the markers
//                                             <!-- support-matrix:start --> and <!-- support-matrix:end -->
//
// Inputs (what .ci/run leaves in test/.work/):
// - results/zk-<line>.json: vitest's JSON report of one pass against ZooKeeper <line>
//   (`--reporter=json --outputFile.json=...`), with results/zk-<line>.meta.json: { node, line }
// - runtimes/<runtime>.json: the runtime pass's summaries (test/runtime/runtimes.test.ts)
// A missing input is a column or a row marked "not run", so a partial run cannot look complete.
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { manifest } from './zookeeper-versions.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const work = join(root, 'test', '.work');
const LINES = ['3.8', '3.9', '3.4'];

/** Feature rows: which test files show each. */
const FEATURES = [
  ['Operations, multi, trees', /test\/integration\/protocol\/(client|multi|tree)\.test/],
  ['Sessions, reconnect, failover, host names', /test\/integration\/protocol\/(session|reconnect|connection|retry|hosts-dns)\.test/],
  ['Operations by server version (fail fast on 3.4)', /test\/integration\/protocol\/server-versions\.test/],
  ['TLS, SASL, digest, ACLs', /test\/integration\/protocol\/security\.test/],
  ['Reconfiguration, read-only servers', /test\/integration\/protocol\/(reconfig|readonly)\.test/],
  ['Quorum proof', /test\/integration\/protocol\/quorum-proof\.test/],
  ['TreeCache', /test\/integration\/protocol\/tree-cache\.test/],
  ['Mutex, ReadWriteLock, ExclusiveLock, MultiLock, revocation', /test\/integration\/locks\/(locks|multi-lock|revocation|disconnected|failure|local-queue|two-copies)\.test/],
  ['LeaderLatch, LeaderSelector', /test\/integration\/locks\/leader\.test/],
  ['Semaphore, SemaphoreMutex, SharedCount', /test\/integration\/locks\/semaphore\.test/],
  ['Curator interop (same paths, real Curator processes)', /test\/interop\//],
  ['Fault suite (partitions, pauses, kills)', /test\/faults\//],
  ['zk-lock, demo, examples, packed packages', /test\/(integration\/(cli|demo|examples)|consumer)\//],
];

function readJson(file) {
  return existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : undefined;
}

/** One cell: tests passed / run for the files matching `pattern` in a vitest report. */
function cell(report, pattern) {
  if (!report) return 'not run';
  let passed = 0;
  let failed = 0;
  for (const file of report.testResults ?? []) {
    if (!pattern.test(file.name.replaceAll('\\', '/'))) continue;
    for (const t of file.assertionResults ?? []) {
      if (t.status === 'passed') passed++;
      else if (t.status === 'failed') failed++;
    }
  }
  if (passed + failed === 0) return 'not run';
  return failed === 0 ? `✓ ${passed}` : `✗ ${failed} of ${passed + failed} failed`;
}

function serverTable() {
  const passes = LINES.map((line) => ({ line, report: readJson(join(work, 'results', `zk-${line}.json`)), meta: readJson(join(work, 'results', `zk-${line}.meta.json`)) }));
  const version = (line) => {
    try {
      return manifest(line);
    } catch {
      return undefined;
    }
  };
  const head = passes.map(({ line, meta }) => {
    const m = version(line);
    return `ZooKeeper ${m?.version ?? line}${meta?.node ? ` (Node ${meta.node})` : ''}`;
  });
  const rows = FEATURES.map(([name, pattern]) => {
    const cells = passes.map(({ line, report }) => {
      const c = cell(report, pattern);
      const curator = name.startsWith('Curator') && c.startsWith('✓') ? `, Curator ${version(line)?.curator?.version}` : '';
      return `${c}${curator}`;
    });
    return `| ${name} | ${cells.join(' | ')} |`;
  });
  return [`| Feature (tests passed) | ${head.join(' | ')} |`, `|---|${head.map(() => '---').join('|')}|`, ...rows].join('\n');
}

function runtimeTable() {
  const dir = join(work, 'runtimes');
  const files = existsSync(dir) ? readdirSync(dir).filter((f) => f.endsWith('.json')) : [];
  const order = ['node20.19', 'node20', 'node22', 'node24', 'node26', 'bun', 'deno'];
  const summaries = files.map((f) => readJson(join(dir, f))).sort((a, b) => order.indexOf(a.runtime) - order.indexOf(b.runtime));
  if (summaries.length === 0) return '_The runtime pass did not run._';
  const rows = summaries.map((s) => {
    const checks = s.checks ?? [];
    const ok = checks.filter((c) => c.ok).length;
    const limited = checks.filter((c) => !c.ok && c.limitation);
    const failed = checks.filter((c) => !c.ok && !c.limitation);
    const name = s.kind === 'node' ? 'Node' : s.kind === 'bun' ? 'Bun' : 'Deno';
    const verdict = failed.length > 0 ? `✗ ${failed.length} failed` : '✓';
    // The page is docs/site/guides/support.md; the runtimes' limitations are stated in the README.
    const notes = limited.length > 0 ? `${limited.map((c) => c.check.replace(/^\d+ /, '')).join('; ')} (see [Runtimes](../../../README.md#runtimes))` : '';
    return `| ${name} ${s.version} | ${verdict} ${ok} of ${checks.length} | ${s.readmeForm ?? ''} | ${notes || '–'} |`;
  });
  return ['| Runtime | Checks passed | README examples ran as | Limitations (tested) |', '|---|---|---|---|', ...rows].join('\n');
}

const main = readJson(join(work, 'results', `zk-${LINES[0]}.json`));
const when = main?.startTime ? `From the test run of ${new Date(main.startTime).toISOString().slice(0, 10)} (\`node scripts/support-matrix.mjs\`):\n\n` : '';
const matrix = `${when}${serverTable()}\n\n${runtimeTable()}\n`;
if (process.argv.includes('--write')) {
  const page = join(root, 'docs', 'site', 'guides', 'support.md');
  const text = readFileSync(page, 'utf8');
  const start = '<!-- support-matrix:start -->';
  const end = '<!-- support-matrix:end -->';
  const a = text.indexOf(start);
  const b = text.indexOf(end);
  if (a < 0 || b < a) {
    process.stderr.write(`[support-matrix] docs/site/guides/support.md has no ${start} ... ${end} section\n`);
    process.exit(1);
  }
  writeFileSync(page, `${text.slice(0, a + start.length)}\n${matrix}${text.slice(b)}`);
} else {
  process.stdout.write(matrix);
}

#!/usr/bin/env node
// The flake hunt (issue 36): runs test files again and again on a loaded machine and counts, per
// file, the runs that failed and how.
//
//   node scripts/flake-hunt.mjs [--rounds N] [--hogs K] [--minutes M] [--out FILE] <file or directory>...
//
// Each round is one `vitest run` of every file given (vitest's own parallelism, as in CI), beside
// K busy loops (default 2: "two CPU hogs") that run for the whole hunt. It stops after N rounds
// (default 20) or once M minutes have passed (default: no limit; a round under way is finished).
// Prints one line per round and, at the end, per file: runs, failures, and the first line of each
// distinct failure; --out writes the same as JSON. Exit 1 when anything failed.
// Load and servers stay on this machine (the harness's local ZooKeeper on 127.0.0.1).
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { parseArgs } from 'node:util';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    rounds: { type: 'string', default: '20' },
    hogs: { type: 'string', default: '2' },
    minutes: { type: 'string' },
    out: { type: 'string' },
  },
});
if (positionals.length === 0) {
  console.error('usage: node scripts/flake-hunt.mjs [--rounds N] [--hogs K] [--minutes M] [--out FILE] <file or directory>...');
  process.exit(64);
}
const rounds = Number(values.rounds);
const deadline = values.minutes === undefined ? Infinity : Date.now() + Number(values.minutes) * 60_000;

const hogs = Array.from({ length: Number(values.hogs) }, () => spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' }));
const stopHogs = () => hogs.forEach((h) => h.kill('SIGKILL'));
process.on('exit', stopHogs);
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => process.exit(130));

const dir = mkdtempSync(join(tmpdir(), 'flake-hunt-'));
/** Per file: runs, failures, and the distinct failures' first lines with their counts. */
const files = new Map();
let round = 0;
const started = Date.now();
while (round < rounds && Date.now() < deadline) {
  round++;
  const report = join(dir, `round-${round}.json`);
  const t0 = Date.now();
  await new Promise((resolve) => {
    const child = spawn('npx', ['vitest', 'run', '--reporter=json', `--outputFile=${report}`, ...positionals], { stdio: ['ignore', 'ignore', 'ignore'], env: { ...process.env, CI: 'true' } });
    child.on('exit', resolve);
  });
  let results;
  try {
    results = JSON.parse(readFileSync(report, 'utf8')).testResults;
  } catch {
    results = [{ name: '(vitest)', status: 'failed', assertionResults: [], message: 'no JSON report' }];
  }
  const failed = [];
  for (const file of results) {
    const name = relative(process.cwd(), file.name);
    const entry = files.get(name) ?? { runs: 0, failures: 0, how: {} };
    files.set(name, entry);
    entry.runs++;
    if (file.status === 'passed') continue;
    entry.failures++;
    failed.push(name);
    const tests = file.assertionResults.filter((t) => t.status === 'failed');
    const lines = tests.length > 0 ? tests.map((t) => `${t.fullName}: ${String(t.failureMessages?.[0] ?? '').split('\n')[0]}`) : [String(file.message ?? 'failed').split('\n')[0]];
    for (const line of lines) entry.how[line] = (entry.how[line] ?? 0) + 1;
  }
  console.log(`round ${round}: ${results.length} files, ${failed.length} failed${failed.length ? ` (${failed.join(', ')})` : ''}, ${Math.round((Date.now() - t0) / 1000)} s`);
}
stopHogs();
rmSync(dir, { recursive: true, force: true });

const summary = { rounds: round, hogs: hogs.length, minutes: Math.round((Date.now() - started) / 60_000), files: Object.fromEntries([...files].sort(([a], [b]) => a.localeCompare(b))) };
let anyFailed = false;
for (const [name, { runs, failures, how }] of Object.entries(summary.files)) {
  if (failures > 0) anyFailed = true;
  console.log(`${String(failures).padStart(3)} / ${String(runs).padEnd(3)} ${name}`);
  for (const [line, n] of Object.entries(how)) console.log(`      ${n}x ${line.slice(0, 300)}`);
}
if (values.out) writeFileSync(values.out, `${JSON.stringify(summary, null, 2)}\n`);
process.exit(anyFailed ? 1 : 0);

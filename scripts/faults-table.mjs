#!/usr/bin/env node
// Prints the fault suite's summary table of the newest run recorded in test/.work/faults-rows.jsonl
// (written by `npm run test:faults`), as pasted into docs/site/guides/fault-results.md. Uses the built test sources:
// run `pnpm exec tsc -b` first.
//   node scripts/faults-table.mjs [rows.jsonl] [--all]   (--all: every run in the file, one table each)
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const built = new URL('../test/dist/faults/summary.js', import.meta.url);
if (!existsSync(fileURLToPath(built))) {
  process.stderr.write('test/dist/faults/summary.js is missing: run `pnpm exec tsc -b` first\n');
  process.exit(1);
}
const { latestRun, readRows, renderTable, ROWS_FILE } = await import(built.href);
const args = process.argv.slice(2);
const all = args.includes('--all');
const file = args.find((a) => !a.startsWith('--')) ?? ROWS_FILE;
const rows = readRows(file);
if (rows.length === 0) {
  process.stderr.write(`no rows in ${file}: run \`npm run test:faults\` first\n`);
  process.exit(1);
}
const runs = all ? [...new Set(rows.map((r) => r.run))] : [latestRun(rows)[0].run];
for (const run of runs) {
  const of = rows.filter((r) => r.run === run);
  process.stdout.write(`<!-- run ${run}, ${of.length} rows, last at ${of[of.length - 1].at} -->\n${renderTable(of)}\n\n`);
}

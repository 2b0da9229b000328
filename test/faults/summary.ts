/**
 * The fault suite's summary table. Every nemesis test (nemeses.test.ts, network.test.ts, the
 * soak) calls `recordRow` once per run of a nemesis with what it measured; the row is appended as
 * one JSON line to test/.work/faults-rows.jsonl (tagged with the run id) and the table of the
 * current run is rendered again to test/.work/faults-summary.md. Vitest runs test files in
 * separate forks, so the rows of one run come from several processes: each appends one line
 * (O_APPEND, small writes) and the run id comes from the environment (`ZK_FAULTS_RUN`, set by the
 * global setup before any fork starts; else the vitest parent's pid). The global setup keeps only
 * the newest run's rows when a run starts (`keepLatestRun`), so the file stays small.
 *
 * `node scripts/faults-table.mjs` prints the table of the newest run in the file (after `tsc -b`).
 */
import { appendFileSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { threadId } from 'node:worker_threads';

/** What one run of one nemesis measured. */
export interface NemesisRow {
  /** What was done, e.g. `SIGKILL of the holder (3 kills)`; rows with the same name are summed. */
  nemesis: string;
  /** Participant processes started over the run. */
  processes: number;
  /** Acquisitions in the checked history. */
  acquisitions: number;
  /** Violations the history checker and the fenced resource found. */
  violations: number;
  /** Longest excused overlap (a paused old holder), ms; 0 when there was none. */
  longestDetectionMs: number;
  /** Stale writes (a token below the highest accepted) the fenced resource refused. */
  staleRejected: number;
  /** Stale writes the fenced resource accepted (a violation). */
  staleAccepted: number;
  /** `error` events the participants logged (failed acquires, lost sessions...). */
  participantErrors: number;
  /** Wall time of the run, ms. */
  durationMs: number;
}

/** A row as stored: tagged with its run and the time it was recorded. */
export interface StoredRow extends NemesisRow {
  run: string;
  at: string;
}

/** test/.work/ */
export const WORK_DIR = fileURLToPath(new URL(import.meta.url.includes('/test/dist/') ? '../../.work/' : '../.work/', import.meta.url));
/** The rows of recent runs, one JSON object a line. */
export const ROWS_FILE = `${WORK_DIR}faults-rows.jsonl`;
/** The rendered table of the current run. */
export const SUMMARY_FILE = `${WORK_DIR}faults-summary.md`;

/** The id of this run: `ZK_FAULTS_RUN`, else one per vitest parent process. */
export function currentRunId(): string {
  return process.env.ZK_FAULTS_RUN ?? `ppid-${process.ppid}`;
}

/**
 * Records one nemesis run: appends it to the rows file and renders the current run's table to
 * the summary file. Throws on a row with a missing or non-finite number (a test bug).
 */
export function recordRow(row: NemesisRow): void {
  for (const key of ['processes', 'acquisitions', 'violations', 'longestDetectionMs', 'staleRejected', 'staleAccepted', 'participantErrors', 'durationMs'] as const) {
    if (typeof row[key] !== 'number' || !Number.isFinite(row[key])) throw new TypeError(`recordRow: ${key} is ${String(row[key])}`);
  }
  const run = currentRunId();
  const stored: StoredRow = { run, at: new Date().toISOString(), ...row };
  mkdirSync(WORK_DIR, { recursive: true });
  appendFileSync(ROWS_FILE, `${JSON.stringify(stored)}\n`);
  const table = renderTable(readRows().filter((r) => r.run === run));
  // Fault files run two at a time in worker threads of one process: the thread names the file too.
  const tmp = `${SUMMARY_FILE}.${process.pid}-${threadId}.tmp`;
  writeFileSync(tmp, `${table}\n`);
  renameSync(tmp, SUMMARY_FILE);
}

/**
 * Records the row of a recipe's run that has no lock in it (a counter, a barrier):
 * `operations` (increments that succeeded, enters that passed) stand in the acquisitions column,
 * and no resource is fenced (no stale writes).
 */
export function recordOperationsRow(row: Pick<NemesisRow, 'nemesis' | 'processes' | 'violations' | 'participantErrors' | 'durationMs'> & { operations: number; longestDetectionMs?: number }): void {
  const { operations, longestDetectionMs = 0, ...rest } = row;
  recordRow({ ...rest, acquisitions: operations, longestDetectionMs, staleRejected: 0, staleAccepted: 0 });
}

/** Every row in the rows file (skipping a torn last line), oldest first. */
export function readRows(file = ROWS_FILE): StoredRow[] {
  if (!existsSync(file)) return [];
  const rows: StoredRow[] = [];
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (!line.trim()) continue;
    try {
      rows.push(JSON.parse(line) as StoredRow);
    } catch {
      // a line being written by another fork right now
    }
  }
  return rows;
}

/** The rows of the newest run in `rows` (the run of the last row). */
export function latestRun(rows: readonly StoredRow[]): StoredRow[] {
  const last = rows[rows.length - 1];
  return last ? rows.filter((r) => r.run === last.run) : [];
}

/** Rewrites the rows file keeping only the newest run's rows (called before a run starts). */
export function keepLatestRun(file = ROWS_FILE): void {
  const rows = latestRun(readRows(file));
  if (!existsSync(file)) return;
  writeFileSync(file, rows.map((r) => `${JSON.stringify(r)}\n`).join(''));
}

/** One line per nemesis: rows with the same name summed (the longest detection is the maximum). */
export function aggregate(rows: readonly NemesisRow[]): (NemesisRow & { rounds: number; maxProcesses: number })[] {
  const byName = new Map<string, NemesisRow & { rounds: number; maxProcesses: number }>();
  for (const r of rows) {
    const a = byName.get(r.nemesis);
    if (!a) {
      byName.set(r.nemesis, { ...r, rounds: 1, maxProcesses: r.processes });
      continue;
    }
    a.rounds++;
    a.processes += r.processes;
    a.maxProcesses = Math.max(a.maxProcesses, r.processes);
    a.acquisitions += r.acquisitions;
    a.violations += r.violations;
    a.longestDetectionMs = Math.max(a.longestDetectionMs, r.longestDetectionMs);
    a.staleRejected += r.staleRejected;
    a.staleAccepted += r.staleAccepted;
    a.participantErrors += r.participantErrors;
    a.durationMs += r.durationMs;
  }
  return [...byName.values()];
}

const n = (x: number) => x.toLocaleString('en-US');

/**
 * The markdown table of `rows`, one line per nemesis in first-seen order, with a total line.
 * A `rounds` column appears when a nemesis ran more than once (the soak); processes are then the
 * most any one round started.
 */
export function renderTable(rows: readonly NemesisRow[]): string {
  const lines = aggregate(rows);
  const rounds = lines.some((l) => l.rounds > 1);
  const head = ['nemesis', ...(rounds ? ['rounds'] : []), rounds ? 'processes (most in a round)' : 'processes', 'acquisitions', 'acquisitions/s', 'violations', 'longest detection window', 'stale writes rejected', 'stale writes accepted', 'participant errors', 'duration'];
  const out = [`| ${head.join(' | ')} |`, `| ${head.map(() => '---').join(' | ')} |`];
  const line = (l: NemesisRow & { rounds: number; maxProcesses: number }) => {
    const rate = l.durationMs > 0 ? (l.acquisitions / (l.durationMs / 1000)).toFixed(1) : '-';
    const cells = [l.nemesis, ...(rounds ? [n(l.rounds)] : []), n(rounds ? l.maxProcesses : l.processes), n(l.acquisitions), rate, n(l.violations), `${Math.round(l.longestDetectionMs)} ms`, n(l.staleRejected), n(l.staleAccepted), n(l.participantErrors), `${(l.durationMs / 1000).toFixed(1)} s`];
    return `| ${cells.join(' | ')} |`;
  };
  for (const l of lines) out.push(line(l));
  if (lines.length > 1) {
    const total = aggregate(lines.map((l) => ({ ...l, nemesis: '**total**' })))[0]!;
    out.push(line({ ...total, rounds: lines.reduce((sum, l) => sum + l.rounds, 0), maxProcesses: Math.max(...lines.map((l) => l.maxProcesses)) }));
  }
  return out.join('\n');
}

/**
 * What a CI-size nemesis test does with a run's result (nemeses.test.ts, network.test.ts): records
 * its summary row, prints its counts, and fails with every problem it had, keeping the history.
 */
import { expect } from 'vitest';
import { keepEvidence, type NemesisResult } from './nemeses.js';
import { recordRow } from './summary.js';

/** Records the row, shows the counts (and `extra`), and fails with every problem the run had (keeping the history). */
export function report(result: NemesisResult, extra: Record<string, unknown> = {}): void {
  recordRow(result.row);
  console.log(`${result.row.nemesis}: ${JSON.stringify({ ...result.counts, ...extra, acquisitions: result.row.acquisitions, errors: result.row.participantErrors, ms: result.row.durationMs })}`);
  const evidence = keepEvidence(result);
  // The problems in the message too: a report (vitest's JSON) shows the array only as `[ Array(n) ]`.
  expect(result.problems, `history kept in ${evidence}; ${result.problems.join('; ')}`).toEqual([]);
}

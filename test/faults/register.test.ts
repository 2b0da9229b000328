/**
 * The register workload under the nemeses between the servers (issue 39; register.ts): three
 * processes, one pinned to each server of a 3-server ensemble, each with a plain, a sync and a
 * linearizable session reading and writing three keys while a follower, the leader, or a bridged
 * follower is cut off for 8 s (past syncLimit's 5 s). The checker (linearizability.ts, itself
 * tested on bad histories in linearizability.test.ts) judges each mode's history.
 *
 * - Linearizable reads: no violation, every run, every key (and the search never gives up).
 * - Control: plain reads are stale behind a cut-off follower (isolated or bridged): the checker
 *   must reject that history, or the control proves nothing about the workload.
 * - Sync and plain reads behind a cut-off leader: reported, not required (the window where the old
 *   leader answers alone after a successor commits is 1.5 ticks at most, and a short run can miss it).
 *
 * `ZK_FAULTS_REGISTER_LEADER_RUNS=n` repeats the leader nemesis n times (default 1).
 * Skipped on an external ensemble (ZK_CONNECT): the nemeses cut the servers.
 */
import { describe, expect, it } from 'vitest';
import { NEMESES, registerRun, type RegisterResult } from './register.js';

const external = Boolean(process.env.ZK_CONNECT);
const LEADER_RUNS = Math.max(1, Number(process.env.ZK_FAULTS_REGISTER_LEADER_RUNS ?? 1));
const TIMING = { beforeMs: 3000, faultMs: 8000, afterMs: 3000, strikes: 1 };

function summary(r: RegisterResult): string {
  const modes = Object.entries(r.modes).map(([m, x]) => `${m}: ${x.reads} reads (${x.failedReads} failed), ${x.stale} stale, ${x.verdict.violations.length} of ${x.verdict.keys.length} keys non-linearizable${x.verdict.keys.some((k) => k.linearizable === 'unknown') ? ', search gave up on some' : ''}`);
  return `${r.name} [${r.strikes.join('; ')}]: ${r.writes} writes (${r.unknownWrites} unknown), ${modes.join('; ')}; ${(r.durationMs / 1000).toFixed(1)} s, checked in ${r.checkMs} ms; stale by who ${JSON.stringify(r.staleBy)}; failures ${JSON.stringify(r.failures)}${r.errors.length ? `; errors: ${r.errors.slice(0, 3).join(' | ')}` : ''}`;
}

function expectLinearizable(r: RegisterResult): void {
  const lin = r.modes.linearizable;
  expect(lin.reads, summary(r)).toBeGreaterThan(100);
  expect(lin.verdict.violations.map((v) => ({ key: v.key, witness: v.witness?.map((o) => `${o.who} ${o.kind} ${o.value} ${o.call}-${o.ret}`) })), summary(r)).toEqual([]);
  expect(lin.verdict.ok, summary(r)).toBe(true);
}

describe.skipIf(external)('faults - register workload, linearizability checker', () => {
  it('a follower isolated: linearizable reads never violate; plain reads on it are stale (control)', async () => {
    const r = await registerRun(NEMESES.isolateFollower, TIMING);
    console.log(summary(r));
    expectLinearizable(r);
    expect(r.modes.plain.stale, summary(r)).toBeGreaterThan(0);
    expect(r.modes.plain.verdict.ok, summary(r)).toBe(false);
  }, 120_000);

  it('a bridge: linearizable reads never violate; plain reads on the bridged follower are stale (control)', async () => {
    const r = await registerRun(NEMESES.bridge, TIMING);
    console.log(summary(r));
    expectLinearizable(r);
    expect(r.modes.plain.stale, summary(r)).toBeGreaterThan(0);
    expect(r.modes.plain.verdict.ok, summary(r)).toBe(false);
  }, 120_000);

  for (let i = 0; i < LEADER_RUNS; i++) {
    it(`the leader isolated${LEADER_RUNS > 1 ? ` (run ${i + 1} of ${LEADER_RUNS})` : ''}: linearizable reads never violate; plain and sync staleness reported`, async () => {
      const r = await registerRun(NEMESES.isolateLeader, TIMING);
      console.log(summary(r));
      expectLinearizable(r);
    }, 120_000);
  }
});

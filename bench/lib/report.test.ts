import { describe, expect, it } from 'vitest';
import { CLIENT, WORKLOAD } from './names.js';
import { evaluateTargets, renderMarkdown, versusRows, type ReportMeta } from './report.js';
import { summarize, type Row, type Sample } from './stats.js';

const meta: ReportMeta = { date: '2026-11-22T00:00:00.000Z', node: 'v20', server: 'test', connect: 'local', reps: 1, quick: false, skipped: {} };

/** A row whose one repetition did `opsPerSec` with the given latencies, CPU per op and metrics. */
function row(workload: string, client: string, opsPerSec: number, extra: { latencies?: number[]; cpuPerOp?: number; metrics?: Record<string, number> } = {}): Row {
  const sample: Sample = { ops: opsPerSec, seconds: 1, latenciesUs: extra.latencies ?? [], cpuUs: (extra.cpuPerOp ?? 10) * opsPerSec, ...(extra.metrics ? { metrics: extra.metrics } : {}) };
  return { group: 'raw', workload, client, unit: 'ops', summary: summarize([sample]) };
}

const verdict = (rows: Row[], prefix: string) => evaluateTargets(rows).find((t) => t.target.startsWith(prefix))?.verdict;

describe('bench report - targets', () => {
  it('getData at 64 outstanding needs 1.3x the throughput: 1.29x misses, 1.3x meets', () => {
    const peer = row(WORKLOAD.get64, CLIENT.nzc, 10_000);
    expect(verdict([row(WORKLOAD.get64, CLIENT.ours, 12_900), peer], 'getData, 64 outstanding: throughput')).toBe('missed');
    expect(verdict([row(WORKLOAD.get64, CLIENT.ours, 13_000), peer], 'getData, 64 outstanding: throughput')).toBe('met');
  });

  it('CPU per op must be at most half of the peer’s', () => {
    const peer = row(WORKLOAD.get64, CLIENT.nzc, 10_000, { cpuPerOp: 20 });
    expect(verdict([row(WORKLOAD.get64, CLIENT.ours, 10_000, { cpuPerOp: 10 }), peer], 'getData, 64 outstanding: client CPU')).toBe('met');
    expect(verdict([row(WORKLOAD.get64, CLIENT.ours, 10_000, { cpuPerOp: 10.5 }), peer], 'getData, 64 outstanding: client CPU')).toBe('missed');
  });

  it('the uncontended acquire is compared with a create measured alongside it', () => {
    const mutex = (r: number) => row(WORKLOAD.uncontended('Mutex'), CLIENT.ours, 900, { latencies: [460], metrics: { acquireOverCreate: r, acquireOverCreate2: 1 } });
    expect(verdict([mutex(1.15)], 'uncontended Mutex acquire p50 <= 1.15x one create round trip (interleaved)')).toBe('met');
    expect(verdict([mutex(1.16)], 'uncontended Mutex acquire p50 <= 1.15x one create round trip (interleaved)')).toBe('missed');
  });

  it('the uncontended acquire is compared with the create half of create+delete', () => {
    const cd = row(WORKLOAD.createDelete, CLIENT.ours, 1000, { metrics: { createP50Us: 400, deleteP50Us: 380 } });
    const fast = row(WORKLOAD.uncontended('Mutex'), CLIENT.ours, 900, { latencies: [460] });
    const slow = row(WORKLOAD.uncontended('Mutex'), CLIENT.ours, 900, { latencies: [461] });
    expect(verdict([cd, fast], 'uncontended Mutex acquire p50 <= 1.15x one create round trip (separate')).toBe('met');
    expect(verdict([cd, slow], 'uncontended Mutex acquire p50 <= 1.15x one create round trip (separate')).toBe('missed');
  });

  it('coalesceReads has its own getData targets, against the same peer row', () => {
    const peer = row(WORKLOAD.get64, CLIENT.nzc, 10_000, { cpuPerOp: 20 });
    const plain = row(WORKLOAD.get64, CLIENT.ours, 11_000, { cpuPerOp: 12 });
    const rows = [plain, row(WORKLOAD.get64, CLIENT.oursCoalesced, 100_000, { cpuPerOp: 2 }), peer];
    expect(verdict(rows, 'getData, 64 outstanding: throughput')).toBe('missed');
    expect(verdict(rows, 'getData, 64 outstanding, coalesceReads: throughput')).toBe('met');
    expect(verdict(rows, 'getData, 64 outstanding, coalesceReads: client CPU')).toBe('met');
    // Each configuration of ours gets its ratio against the peer; ours are not compared with each other.
    expect(versusRows(rows).map((v) => [v.workload, v.peer, v.throughput])).toEqual([
      [WORKLOAD.get64, CLIENT.nzc, 1.1],
      [`${WORKLOAD.get64} (${CLIENT.oursCoalesced})`, CLIENT.nzc, 10],
    ]);
  });

  it('a target whose rows are missing is not measured, not missed', () => {
    expect(verdict([row(WORKLOAD.get64, CLIENT.ours, 10_000)], 'getData, 64 outstanding: throughput')).toBe('not measured');
    expect(verdict([], '1,000 waiters')).toBe('not measured');
  });

  it('leader failover: the slowest within the session timeout plus one round trip; on a partition the old leader told first', () => {
    const f = (how: 'SIGKILL' | 'partition', max: number, minGapMs?: number) =>
      row(WORKLOAD.leaderFailover(how, 2000), CLIENT.ours, 0.5, { metrics: { maxOverTimeoutPlusRtt: max, maxMs: 2000 * max, sessionTimeoutMs: 2000, ...(minGapMs === undefined ? {} : { minGapMs, gapMs: minGapMs }) } });
    expect(verdict([f('SIGKILL', 1)], 'leader failover, SIGKILL: every failover')).toBe('met');
    expect(verdict([f('SIGKILL', 1.01)], 'leader failover, SIGKILL: every failover')).toBe('missed');
    expect(verdict([f('partition', 1, 120)], 'leader failover, partition: the old leader told')).toBe('met');
    expect(verdict([f('partition', 1, -3)], 'leader failover, partition: the old leader told')).toBe('missed');
    expect(verdict([f('SIGKILL', 1)], 'leader failover, partition: every failover')).toBe('not measured');
  });

  it('LeaderLatch with 100 participants must wake exactly one participant in every change', () => {
    const latch = (min: number, max: number) => row(WORKLOAD.leaderLatch(100), CLIENT.ours, 100, { metrics: { wokenMin: min, wokenMax: max, wokenPerChange: (min + max) / 2 } });
    expect(verdict([latch(1, 1)], 'LeaderLatch, 100 participants')).toBe('met');
    expect(verdict([latch(1, 2)], 'LeaderLatch, 100 participants')).toBe('missed');
    expect(verdict([latch(0, 1)], 'LeaderLatch, 100 participants')).toBe('missed');
  });

  it('1,000 waiters must wake exactly one waiter per release', () => {
    const w = (n: number) => row(WORKLOAD.waiters(1000), CLIENT.ours, 800, { metrics: { waiterNotificationsPerRelease: n } });
    expect(verdict([w(1)], '1,000 waiters')).toBe('met');
    expect(verdict([w(1.001)], '1,000 waiters')).toBe('missed');
  });
});

describe('bench report - tables', () => {
  it('gives each peer its own ratio against ours', () => {
    const rows = [row(WORKLOAD.get1, CLIENT.ours, 8000, { latencies: [100], cpuPerOp: 20 }), row(WORKLOAD.get1, CLIENT.nzc, 4000, { latencies: [200], cpuPerOp: 40 }), row(WORKLOAD.get1, CLIENT.java, 16_000, { latencies: [50], cpuPerOp: 80 })];
    const vs = versusRows(rows);
    expect(vs.map((v) => [v.peer, v.throughput, v.p50, v.cpu])).toEqual([
      [CLIENT.nzc, 2, 0.5, 0.5],
      [CLIENT.java, 0.5, 2, 0.25],
    ]);
  });

  it('prints a table per group, the skipped peers and the targets', () => {
    const md = renderMarkdown([row(WORKLOAD.get1, CLIENT.ours, 8000, { latencies: [100] })], { ...meta, skipped: { Curator: 'no javac' } });
    expect(md).toContain('### Raw client');
    expect(md).not.toContain('### Locks');
    expect(md).toContain('Skipped Curator: no javac.');
    expect(md).toMatch(/\| getData 100 B, 1 outstanding \| ours \| 8,000 ops \(8,000-8,000\) \| 100 \|/);
    expect(md).toContain('### Targets');
  });

  it('prints rates below 10 per second with two decimals (a failover takes seconds)', () => {
    const md = renderMarkdown([row(WORKLOAD.leaderFailover('SIGKILL', 2000), CLIENT.ours, 0.43)], meta);
    expect(md).toContain('| leader failover, SIGKILL, session 2,000 ms | ours | 0.43 ops (0.43-0.43) |');
  });
});

import { describe, expect, it } from 'vitest';
import { CLIENT, CURVE, WORKLOAD, curvePoint } from './names.js';
import { curves, evaluateTargets, renderMarkdown, versusRows, type ReportMeta } from './report.js';
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

  it('waiters: every point of the curve must wake at most one waiter per release', () => {
    const w = (n: number, wakes: number) => row(curvePoint(CURVE.waiters, n), CLIENT.ours, 800, { metrics: { waiterNotificationsPerRelease: wakes } });
    const target = 'waiters on one lock, every point';
    expect(verdict([w(100, 1), w(1000, 1)], target)).toBe('met');
    expect(verdict([w(100, 1), w(1000, 1.001)], target)).toBe('missed');
    // A hand-off needs no notification when the waiter finds its predecessor gone as it sets the watch.
    expect(verdict([w(100, 0.99), w(1000, 1)], target)).toBe('met');
    // A point of another pass does not count; no point at all is not measured.
    expect(verdict([w(100, 1), row(`${curvePoint(CURVE.waiters, 1000)} (3-node)`, CLIENT.ours, 1, { metrics: { waiterNotificationsPerRelease: 2 } })], target)).toBe('met');
    expect(verdict([], target)).toBe('not measured');
    expect(evaluateTargets([w(100, 1), w(1000, 1)]).find((t) => t.target.startsWith(target))?.measured).toBe('1.000 at n = 100, 1,000');
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

describe('bench report - scale curves', () => {
  const point = (curve: (typeof CURVE)[keyof typeof CURVE], n: number, client: string, perSec: number, metrics: Record<string, number>, suffix = '') =>
    ({ ...row(curvePoint(curve, n) + suffix, client, perSec, { metrics }), group: 'scale', unit: 'hand-offs' }) as Row;
  const rows = [
    point(CURVE.waiters, 1000, CLIENT.ours, 400, { heapKiBPerWaiter: 5 }),
    point(CURVE.waiters, 1000, CLIENT.curator, 200, { threads: 1012, heapKiBPerWaiter: 10 }),
    point(CURVE.waiters, 100, CLIENT.curator, 300, { threads: 112, heapKiBPerWaiter: 20 }),
    point(CURVE.waiters, 100, CLIENT.ours, 600, { sample: 5, heapKiBPerWaiter: 8 }),
    point(CURVE.waiters, 10_000, CLIENT.ours, 100, { heapKiBPerWaiter: 4 }),
    point(CURVE.waiters, 100, CLIENT.ours, 50, { heapKiBPerWaiter: 9 }, ' (3-node)'),
    row(WORKLOAD.get1, CLIENT.ours, 8000),
  ];

  it('gathers the points of a curve by pass, n ascending, ours first', () => {
    const cs = curves(rows);
    expect(cs.map((c) => [c.curve, c.suffix, c.ns, c.clients])).toEqual([
      [CURVE.waiters, '', [100, 1000, 10_000], [CLIENT.ours, CLIENT.curator]],
      [CURVE.waiters, ' (3-node)', [100], [CLIENT.ours]],
    ]);
    expect(cs[0]!.row(10_000, CLIENT.curator)).toBeUndefined();
    expect(cs[0]!.row(1000, CLIENT.curator)?.summary.opsPerSec.median).toBe(200);
  });

  it('prints a table per curve: a line per n, each column per client and ours / peer; curve rows stay out of the other tables', () => {
    const md = renderMarkdown(rows, { ...meta, skipped: { [`${CLIENT.curator}, ${CURVE.waiters}: n >= 10,000`]: 'thread 9,001 of 10,000 could not start' } });
    expect(md).toContain('#### waiters on one lock\n');
    expect(md).toContain('#### waiters on one lock (3-node)');
    // Key costs first whatever order the metrics came in; no ratio for a count both report (sample).
    expect(md).toContain('| n | hand-offs/s ours | hand-offs/s Curator | hand-offs/s ours / Curator | CPU µs/op ours | CPU µs/op Curator | CPU µs/op ours / Curator | heapKiBPerWaiter ours | heapKiBPerWaiter Curator | heapKiBPerWaiter ours / Curator | threads Curator | sample ours |');
    expect(md).toContain('| 100 | 600 | 300 | 2.00x | 10.00 | 10.00 | 1.00x | 8.00 | 20.00 | 0.40x | 112 | 5.00 |');
    expect(md).toContain('| 10,000 | 100 | - | - | 10.00 | - | - | 4.00 | - | - | - | - |');
    expect(md).toContain('Not run: Curator, waiters on one lock: n >= 10,000 (thread 9,001 of 10,000 could not start).');
    // The generic tables hold the other rows only.
    expect(md).toContain('### Raw client');
    expect(md).not.toContain('### Scale\n');
    expect(md).not.toMatch(/\| waiters on one lock: n = /);
    expect(versusRows(rows)).toEqual([]);
  });
});

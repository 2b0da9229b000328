import { describe, expect, it } from 'vitest';
import { CLIENT, CURVE, curvePoint } from './names.js';
import type { ReportMeta } from './report.js';
import { summarize, type Row } from './stats.js';
import { escapeXml, logX, ninesX, renderScaleSvg, renderSvg } from './svg.js';

const meta: ReportMeta = { date: '2026-11-22T00:00:00.000Z', node: 'v20', server: 'test', connect: 'local', reps: 1, quick: false, skipped: {} };
const row = (workload: string, client: string, ops: number, latencies: number[] = []): Row => ({
  group: 'raw',
  workload,
  client,
  unit: 'ops',
  summary: summarize([{ ops, seconds: 1, latenciesUs: latencies, cpuUs: 1 }]),
});

/** Every element opened is closed in order (a well-formedness check without a parser). */
function wellFormed(svg: string): boolean {
  const stack: string[] = [];
  for (const m of svg.matchAll(/<(\/?)([a-zA-Z]+)[^>]*?(\/?)>/g)) {
    const [, close, name, selfClosing] = m;
    if (selfClosing) continue;
    if (close) {
      if (stack.pop() !== name) return false;
    } else stack.push(name!);
  }
  return stack.length === 0;
}

describe('bench chart', () => {
  const rows = [row('a<b&c', CLIENT.ours, 2000, [100, 200, 300]), row('a<b&c', CLIENT.nzc, 1000, [150, 250, 400]), row('other', CLIENT.ours, 50), row('other', CLIENT.curator, 0)];

  it('is well-formed, escapes text, and draws one bar per row with throughput', () => {
    const svg = renderSvg(rows, meta);
    expect(wellFormed(svg)).toBe(true);
    expect(svg).toContain('a&lt;b&amp;c');
    expect(svg).not.toContain('a<b&c');
    expect(svg.match(/class="bar"/g)).toHaveLength(3);
    expect(svg.match(/class="line"/g)).toHaveLength(2);
  });

  it('scales each workload to its fastest client', () => {
    const svg = renderSvg(rows, meta);
    const widths = [...svg.matchAll(/class="bar" x="\d+" y="[\d.]+" width="([\d.]+)"/g)].map((m) => Number(m[1]));
    expect(widths[0]).toBe(480); // ours on a<b&c, the fastest
    expect(widths[1]).toBe(240); // half of it
    expect(widths[2]).toBe(480); // ours alone on "other"
  });

  it('is the same for the same input', () => {
    expect(renderSvg(rows, meta)).toBe(renderSvg(rows, meta));
  });

  it('places percentiles on a nines scale and escapes quotes', () => {
    expect(ninesX(90)).toBeCloseTo(1);
    expect(ninesX(99.9)).toBeCloseTo(3);
    expect(escapeXml('"<&>"')).toBe('&quot;&lt;&amp;&gt;&quot;');
  });
});

describe('bench scale chart', () => {
  const point = (curve: (typeof CURVE)[keyof typeof CURVE], n: number, client: string, ops: number, metrics: Record<string, number>): Row => ({
    group: 'scale',
    workload: curvePoint(curve, n),
    client,
    unit: 'acquisitions',
    summary: summarize([{ ops, seconds: 1, latenciesUs: [], cpuUs: 1, metrics }]),
  });
  const rows = [
    point(CURVE.locksHeld, 1000, CLIENT.ours, 1400, { heapKiBPerLock: 4 }),
    point(CURVE.locksHeld, 10_000, CLIENT.ours, 1300, { heapKiBPerLock: 4 }),
    point(CURVE.locksHeld, 100_000, CLIENT.ours, 1200, { heapKiBPerLock: 2 }),
    point(CURVE.locksHeld, 1000, CLIENT.curator, 1000, { heapKiBPerLock: 1 }),
    point(CURVE.locksHeld, 10_000, CLIENT.curator, 900, { heapKiBPerLock: 1 }),
    row('other', CLIENT.ours, 50),
  ];

  it('draws a panel per key cost present, a line per client with a point per n', () => {
    const svg = renderScaleSvg(rows, meta)!;
    expect(wellFormed(svg)).toBe(true);
    // heap per lock and acquisitions per second (no rssKiBPerLock in these rows).
    expect(svg).toContain('locks held on one session: heap per lock held, KiB');
    expect(svg).toContain('locks held on one session: acquisitions per second');
    expect(svg).not.toContain('resident memory');
    expect(svg.match(/class="curve"/g)).toHaveLength(4);
    expect(svg.match(/class="point"/g)).toHaveLength(10);
    expect(svg).toContain('<title>Curator, n = 10,000: 900</title>');
  });

  it('places n on a log axis, the ends inside the frame', () => {
    const mid = logX(10_000, 1000, 100_000);
    expect(mid).toBeCloseTo(0.5);
    expect(logX(1000, 1000, 100_000)).toBeGreaterThan(0);
    expect(logX(100_000, 1000, 100_000)).toBeLessThan(1);
    expect(logX(5, 5, 5)).toBe(0.5);
    const xs = [...renderScaleSvg(rows, meta)!.matchAll(/<circle class="point" cx="([\d.]+)"/g)].slice(0, 3).map((m) => Number(m[1]));
    expect(xs[1]! - xs[0]!).toBeCloseTo(xs[2]! - xs[1]!, 0);
  });

  it('is undefined without curve points', () => {
    expect(renderScaleSvg([row('other', CLIENT.ours, 50)], meta)).toBeUndefined();
  });
});

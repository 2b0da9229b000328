/**
 * The bench charts, standalone SVGs (no scripts, no external fonts): throughput per workload, ours
 * against the peers, and latency distributions per workload; and the scale curves, each curve's
 * key costs against n on a log axis.
 */
import { CLIENT } from './names.js';
import { CURVE_KEYS, curveValue, curves, type ReportMeta } from './report.js';
import type { Row } from './stats.js';

const COLOURS: Readonly<Record<string, string>> = {
  [CLIENT.ours]: '#1f77b4',
  [CLIENT.oursCoalesced]: '#17becf',
  [CLIENT.nzc]: '#ff7f0e',
  [CLIENT.java]: '#2ca02c',
  [CLIENT.curator]: '#d62728',
};
const colour = (client: string) => COLOURS[client] ?? '#7f7f7f';

/** Escapes text for XML content and attributes. */
export function escapeXml(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

const fmt = (n: number) => (n >= 100 ? Math.round(n).toLocaleString('en-US') : n >= 10 ? n.toFixed(1) : n.toFixed(2));

const WIDTH = 960;
const LABEL_W = 330;
const BAR_W = 480;
const BAR_H = 14;
const PANEL_W = 300;
const PANEL_H = 190;

/** The chart for a run's rows. */
export function renderSvg(rows: readonly Row[], meta: ReportMeta): string {
  const parts: string[] = [];
  let y = 30;
  const text = (tx: number, ty: number, s: string, attrs = '') => parts.push(`<text x="${tx}" y="${ty}"${attrs ? ` ${attrs}` : ''}>${escapeXml(s)}</text>`);
  text(10, y, `@zk bench, ${meta.date.slice(0, 19).replace('T', ' ')}: ${meta.server}, Node ${meta.node}, ${meta.reps} repetitions`, 'font-size="15" font-weight="bold"');
  y += 22;

  // Legend: the clients present, in a fixed order.
  const clients = [...new Set(rows.map((r) => r.client))].sort((a, b) => order(a) - order(b));
  let lx = 10;
  for (const c of clients) {
    parts.push(`<rect x="${lx}" y="${y - 10}" width="12" height="12" fill="${colour(c)}"/>`);
    text(lx + 16, y, c);
    lx += 24 + c.length * 7;
  }
  y += 26;

  // (a) Throughput: per workload, bars scaled to that workload's largest value.
  text(10, y, 'Throughput per workload (each workload scaled to its fastest client; the figure is per second)', 'font-size="13" font-weight="bold"');
  y += 14;
  const workloads = [...new Set(rows.map((r) => r.workload))];
  for (const w of workloads) {
    const group = rows.filter((r) => r.workload === w && r.summary.opsPerSec.median > 0).sort((a, b) => order(a.client) - order(b.client));
    if (!group.length) continue;
    const max = Math.max(...group.map((r) => r.summary.opsPerSec.median));
    const top = y + 4;
    group.forEach((r, i) => {
      const by = top + i * (BAR_H + 2);
      const len = Math.max(1, (r.summary.opsPerSec.median / max) * BAR_W);
      parts.push(`<rect class="bar" x="${LABEL_W}" y="${by}" width="${len.toFixed(1)}" height="${BAR_H}" fill="${colour(r.client)}"><title>${escapeXml(`${w} / ${r.client}: ${fmt(r.summary.opsPerSec.median)} ${r.unit}/s`)}</title></rect>`);
      text(LABEL_W + len + 4, by + BAR_H - 3, `${fmt(r.summary.opsPerSec.median)} ${r.unit}/s`, 'font-size="11"');
    });
    const h = group.length * (BAR_H + 2);
    text(LABEL_W - 8, top + h / 2 + 4, w, 'font-size="12" text-anchor="end"');
    y = top + h + 8;
  }
  y += 20;

  // (b) Latency distributions: one panel per workload with latencies.
  const withLatency = workloads.filter((w) => rows.some((r) => r.workload === w && r.summary.distribution?.length));
  if (withLatency.length) {
    text(10, y, 'Latency distributions (µs; x: percentile on a nines scale)', 'font-size="13" font-weight="bold"');
    y += 16;
    const perRow = Math.floor(WIDTH / (PANEL_W + 20));
    withLatency.forEach((w, i) => {
      const px = 10 + (i % perRow) * (PANEL_W + 20);
      const py = y + Math.floor(i / perRow) * (PANEL_H + 40);
      parts.push(...panel(w, rows.filter((r) => r.workload === w && r.summary.distribution?.length), px, py));
    });
    y += Math.ceil(withLatency.length / perRow) * (PANEL_H + 40);
  }
  const height = y + 10;
  return svgDocument(height, parts);
}

const order = (client: string) => {
  const i = Object.values(CLIENT).indexOf(client as never);
  return i < 0 ? 99 : i;
};

/** x position of a percentile on the nines scale: -log10(1 - p/100), p99.9 at 3. */
export function ninesX(p: number): number {
  return -Math.log10(1 - Math.min(p, 99.99) / 100);
}

function panel(workload: string, rows: readonly Row[], px: number, py: number): string[] {
  const out: string[] = [];
  const plotX = px + 45;
  const plotY = py + 20;
  const plotW = PANEL_W - 55;
  const plotH = PANEL_H - 45;
  const all = rows.flatMap((r) => r.summary.distribution!.map(([, v]) => v));
  const maxV = Math.max(...all, 1);
  const maxX = ninesX(99.9);
  const sx = (p: number) => plotX + (ninesX(p) / maxX) * plotW;
  const sy = (v: number) => plotY + plotH - (v / maxV) * plotH;
  out.push(`<text x="${px}" y="${py + 10}" font-size="12" font-weight="bold">${escapeXml(workload)}</text>`);
  out.push(`<rect x="${plotX}" y="${plotY}" width="${plotW}" height="${plotH}" fill="none" stroke="#ccc"/>`);
  for (const p of [50, 90, 99, 99.9]) {
    out.push(`<line x1="${sx(p).toFixed(1)}" y1="${plotY}" x2="${sx(p).toFixed(1)}" y2="${plotY + plotH}" stroke="#eee"/>`);
    out.push(`<text x="${sx(p).toFixed(1)}" y="${plotY + plotH + 14}" font-size="10" text-anchor="middle">p${p}</text>`);
  }
  for (const f of [0, 0.5, 1]) {
    out.push(`<text x="${plotX - 4}" y="${(sy(maxV * f) + 4).toFixed(1)}" font-size="10" text-anchor="end">${fmt(maxV * f)}</text>`);
  }
  for (const r of rows) {
    const pts = r.summary.distribution!.map(([p, v]) => `${sx(p).toFixed(1)},${sy(v).toFixed(1)}`).join(' ');
    out.push(`<polyline class="line" points="${pts}" fill="none" stroke="${colour(r.client)}" stroke-width="2"><title>${escapeXml(`${workload} / ${r.client}`)}</title></polyline>`);
  }
  return out;
}

const CURVE_PANEL_W = 460;
const CURVE_PANEL_H = 240;

/**
 * The scale curves' chart: a panel per curve and key cost ({@link CURVE_KEYS}), the cost against
 * n on a log x axis (y linear from 0), a line per client. Undefined when no curve ran.
 */
export function renderScaleSvg(rows: readonly Row[], meta: ReportMeta): string | undefined {
  const panels = curves(rows).flatMap((c) =>
    (CURVE_KEYS[c.curve].length ? CURVE_KEYS[c.curve] : [{ metric: 'perSecond', label: `${c.unit} per second` }])
      .filter((k) => c.clients.some((client) => c.ns.some((n) => curveValue(c.row(n, client), k.metric) !== undefined)))
      .map((k) => ({ title: `${c.curve}${c.suffix}: ${k.label}`, ns: c.ns, lines: c.clients.map((client) => ({ client, points: c.ns.flatMap((n) => { const v = curveValue(c.row(n, client), k.metric); return v === undefined || !Number.isFinite(v) ? [] : [[n, v] as const]; }) })).filter((l) => l.points.length) })),
  );
  if (!panels.length) return undefined;
  const parts: string[] = [];
  const text = (tx: number, ty: number, s: string, attrs = '') => parts.push(`<text x="${tx}" y="${ty}"${attrs ? ` ${attrs}` : ''}>${escapeXml(s)}</text>`);
  const reps = [...new Set(curves(rows).flatMap((c) => c.ns.flatMap((n) => c.clients.map((client) => c.row(n, client)?.summary.reps ?? 0))))].filter((r) => r > 0).sort((a, b) => a - b);
  text(10, 30, `@zk bench scale curves, ${meta.date.slice(0, 19).replace('T', ' ')}: ${meta.server}, Node ${meta.node}, ${reps.join(' or ')} repetition${reps.length === 1 && reps[0] === 1 ? '' : 's'} per point`, 'font-size="15" font-weight="bold"');
  const clients = [...new Set(panels.flatMap((p) => p.lines.map((l) => l.client)))].sort((a, b) => order(a) - order(b));
  let lx = 10;
  for (const c of clients) {
    parts.push(`<rect x="${lx}" y="42" width="12" height="12" fill="${colour(c)}"/>`);
    text(lx + 16, 52, c);
    lx += 24 + c.length * 7;
  }
  text(lx + 10, 52, 'x: n (log scale); y: the cost, from 0; medians over the repetitions', 'font-size="11" fill="#555"');
  const top = 70;
  panels.forEach((p, i) => parts.push(...curvePanel(p, 10 + (i % 2) * (CURVE_PANEL_W + 20), top + Math.floor(i / 2) * (CURVE_PANEL_H + 20))));
  const height = top + Math.ceil(panels.length / 2) * (CURVE_PANEL_H + 20) + 10;
  return svgDocument(height, parts);
}

/** x of `n` on a log axis over [lo, hi] (a single point sits in the middle), as a fraction of the width. */
export function logX(n: number, lo: number, hi: number): number {
  if (hi <= lo) return 0.5;
  // Half a step of margin either side, so the end points are not on the frame.
  const pad = 0.08 * (Math.log10(hi) - Math.log10(lo));
  return (Math.log10(n) - Math.log10(lo) + pad) / (Math.log10(hi) - Math.log10(lo) + 2 * pad);
}

function curvePanel(p: { title: string; ns: readonly number[]; lines: ReadonlyArray<{ client: string; points: ReadonlyArray<readonly [number, number]> }> }, px: number, py: number): string[] {
  const out: string[] = [];
  const plotX = px + 55;
  const plotY = py + 22;
  const plotW = CURVE_PANEL_W - 70;
  const plotH = CURVE_PANEL_H - 50;
  const lo = Math.min(...p.ns);
  const hi = Math.max(...p.ns);
  const maxV = Math.max(...p.lines.flatMap((l) => l.points.map(([, v]) => v)), 0) * 1.1 || 1;
  const sx = (n: number) => plotX + logX(n, lo, hi) * plotW;
  const sy = (v: number) => plotY + plotH - (Math.max(0, v) / maxV) * plotH;
  out.push(`<text x="${px}" y="${py + 12}" font-size="12" font-weight="bold">${escapeXml(p.title)}</text>`);
  out.push(`<rect x="${plotX}" y="${plotY}" width="${plotW}" height="${plotH}" fill="none" stroke="#ccc"/>`);
  for (const n of p.ns) {
    out.push(`<line x1="${sx(n).toFixed(1)}" y1="${plotY}" x2="${sx(n).toFixed(1)}" y2="${plotY + plotH}" stroke="#eee"/>`);
    out.push(`<text x="${sx(n).toFixed(1)}" y="${plotY + plotH + 14}" font-size="10" text-anchor="middle">${n.toLocaleString('en-US')}</text>`);
  }
  for (const f of [0, 0.5, 1]) {
    out.push(`<text x="${plotX - 4}" y="${(sy(maxV * f) + 4).toFixed(1)}" font-size="10" text-anchor="end">${fmt(maxV * f)}</text>`);
  }
  for (const l of p.lines) {
    const pts = l.points.map(([n, v]) => `${sx(n).toFixed(1)},${sy(v).toFixed(1)}`).join(' ');
    out.push(`<polyline class="curve" points="${pts}" fill="none" stroke="${colour(l.client)}" stroke-width="2"><title>${escapeXml(`${p.title} / ${l.client}`)}</title></polyline>`);
    for (const [n, v] of l.points) {
      out.push(`<circle class="point" cx="${sx(n).toFixed(1)}" cy="${sy(v).toFixed(1)}" r="3" fill="${colour(l.client)}"><title>${escapeXml(`${l.client}, n = ${n.toLocaleString('en-US')}: ${fmt(v)}`)}</title></circle>`);
    }
  }
  return out;
}

/** A whole SVG document, WIDTH wide and `height` high on white, around `parts`. */
function svgDocument(height: number, parts: readonly string[]): string {
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" viewBox="0 0 ${WIDTH} ${height}" font-family="sans-serif" font-size="12">`,
    `<rect width="${WIDTH}" height="${height}" fill="white"/>`,
    ...parts,
    '</svg>',
    '',
  ].join('\n');
}

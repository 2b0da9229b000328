/**
 * Bench statistics: percentiles of latency samples, throughput, client CPU per operation, and
 * medians with spread over repetitions.
 */

/** One repetition of a workload. */
export interface Sample {
  /** What the workload counts (operations, hand-offs, acquisitions...). */
  readonly ops: number;
  readonly seconds: number;
  /** Per-operation latencies in µs (operations with one outstanding; hand-off gaps for contended locks). */
  readonly latenciesUs: number[];
  /** Process CPU (user + system) of the client during the run, µs. */
  readonly cpuUs: number;
  /** Workload-specific figures of this repetition (e.g. `notificationsPerRelease`, `heapMiB`). */
  readonly metrics?: Readonly<Record<string, number>>;
}

/** A median with the smallest and largest repetition. */
export interface Spread {
  readonly median: number;
  readonly min: number;
  readonly max: number;
}

/** The percentiles the latency distribution (and the SVG chart) is drawn from. */
export const DISTRIBUTION = [1, 5, 10, 25, 50, 75, 90, 95, 99, 99.9] as const;

/** Repetitions of one workload by one client, summarised. */
export interface Summary {
  readonly reps: number;
  readonly opsPerSec: Spread;
  readonly cpuPerOp: Spread;
  readonly p50?: Spread | undefined;
  readonly p99?: Spread | undefined;
  readonly p999?: Spread | undefined;
  /** [percentile, median µs over repetitions] for each of DISTRIBUTION, when latencies were recorded. */
  readonly distribution?: ReadonlyArray<readonly [number, number]> | undefined;
  /** Each metric of the samples as median with spread. */
  readonly metrics: Readonly<Record<string, Spread>>;
}

/** One line of the report: a workload, a client, its summary. */
export interface Row {
  /** `raw` client operations, `locks`, or `scale`. */
  readonly group: 'raw' | 'locks' | 'scale';
  readonly workload: string;
  /** `ours`, `node-zookeeper-client`, `ZooKeeper Java client`, `Curator`. */
  readonly client: string;
  /** What ops/s counts: `ops`, `hand-offs`, `acquisitions`, `connects`... */
  readonly unit: string;
  readonly summary: Summary;
}

/** The p-th percentile (0..100) of sorted values. */
export function percentile(sorted: ArrayLike<number>, p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i] as number;
}

/** Median, min and max of repetitions' values. */
export function spread(values: readonly number[]): Spread {
  const s = Float64Array.from(values).sort();
  return { median: percentile(s, 50), min: s[0] ?? Number.NaN, max: s[s.length - 1] ?? Number.NaN };
}

/** Summary of repetitions: ops/s, p50/p99/p999 (µs), CPU µs per op and metrics, each as median with spread. */
export function summarize(samples: readonly Sample[]): Summary {
  const opsPerSec = spread(samples.map((s) => s.ops / s.seconds));
  const cpuPerOp = spread(samples.map((s) => s.cpuUs / s.ops));
  const lat = samples.filter((s) => s.latenciesUs.length > 0).map((s) => Float64Array.from(s.latenciesUs).sort());
  const p = (q: number) => (lat.length ? spread(lat.map((l) => percentile(l, q))) : undefined);
  const names = [...new Set(samples.flatMap((s) => Object.keys(s.metrics ?? {})))];
  const metrics = Object.fromEntries(names.map((n) => [n, spread(samples.flatMap((s) => (s.metrics?.[n] === undefined ? [] : [s.metrics[n]!])))]));
  return {
    reps: samples.length,
    opsPerSec,
    cpuPerOp,
    p50: p(50),
    p99: p(99),
    p999: p(99.9),
    distribution: lat.length ? DISTRIBUTION.map((q) => [q, p(q)!.median] as const) : undefined,
    metrics,
  };
}

/** The median of unsorted values (µs lists of one repetition). */
export function median(values: readonly number[]): number {
  return percentile(Float64Array.from(values).sort(), 50);
}

/**
 * One repetition around `fn`: the process's CPU (user + system) and the wall time it took, with
 * the ops, latencies and metrics it returns (`seconds` overrides the wall time, for fixed windows).
 */
export async function timed(fn: () => Promise<{ ops: number; latenciesUs?: number[]; metrics?: Record<string, number>; seconds?: number }>): Promise<Sample> {
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const r = await fn();
  const seconds = r.seconds ?? (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  return { ops: r.ops, seconds, latenciesUs: r.latenciesUs ?? [], cpuUs: cpu.user + cpu.system, ...(r.metrics ? { metrics: r.metrics } : {}) };
}

/** Runs `op` `count` times with `outstanding` requests in flight; records latencies when outstanding is 1. */
export function measure(count: number, outstanding: number, op: () => Promise<unknown>): Promise<Sample> {
  return timed(async () => {
    const latenciesUs: number[] = [];
    if (outstanding === 1) {
      for (let i = 0; i < count; i++) {
        const s = performance.now();
        await op();
        latenciesUs.push((performance.now() - s) * 1000);
      }
    } else {
      let started = 0;
      const lane = async () => {
        while (started < count) {
          started++;
          await op();
        }
      };
      await Promise.all(Array.from({ length: outstanding }, lane));
    }
    return { ops: count, latenciesUs };
  });
}

/**
 * `count` sessions, one after another: each opened (timed: the latency is the open alone), then
 * closed with what `open` returned, the close awaited before the next open.
 */
export function connectLoop(count: number, open: () => Promise<() => Promise<void> | void>): Promise<Sample> {
  return timed(async () => {
    const latenciesUs: number[] = [];
    for (let i = 0; i < count; i++) {
      const t0 = performance.now();
      const close = await open();
      latenciesUs.push((performance.now() - t0) * 1000);
      await close();
    }
    return { ops: count, latenciesUs };
  });
}

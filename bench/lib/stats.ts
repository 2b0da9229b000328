/**
 * Bench statistics: percentiles of latency samples, throughput, client CPU per operation, and
 * medians with spread over repetitions.
 */

/** One repetition of a workload. */
export interface Sample {
  readonly ops: number;
  readonly seconds: number;
  /** Per-operation latencies in µs (for workloads with one outstanding request). */
  readonly latenciesUs: number[];
  /** Process CPU (user + system) of the client during the run, µs. */
  readonly cpuUs: number;
}

/** The p-th percentile (0..100) of sorted values. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i] as number;
}

/** Median, min and max of repetitions' values. */
export function spread(values: readonly number[]): { median: number; min: number; max: number } {
  const s = [...values].sort((a, b) => a - b);
  return { median: percentile(s, 50), min: s[0] ?? Number.NaN, max: s[s.length - 1] ?? Number.NaN };
}

/** Summary of repetitions: ops/s, p50/p99/p999 (µs), CPU µs per op, each as median with spread. */
export function summarize(samples: readonly Sample[]) {
  const opsPerSec = spread(samples.map((s) => s.ops / s.seconds));
  const cpuPerOp = spread(samples.map((s) => s.cpuUs / s.ops));
  const lat = samples.filter((s) => s.latenciesUs.length > 0).map((s) => [...s.latenciesUs].sort((a, b) => a - b));
  const p = (q: number) => (lat.length ? spread(lat.map((l) => percentile(l, q))) : undefined);
  return { opsPerSec, cpuPerOp, p50: p(50), p99: p(99), p999: p(99.9) };
}

/** Runs `op` `count` times with `outstanding` requests in flight; records latencies when outstanding is 1. */
export async function measure(count: number, outstanding: number, op: () => Promise<unknown>): Promise<Sample> {
  const latenciesUs: number[] = [];
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
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
  const seconds = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  return { ops: count, seconds, latenciesUs, cpuUs: cpu.user + cpu.system };
}

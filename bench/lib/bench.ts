/**
 * The bench's running context: repetitions interleaved across clients, one warm-up each, rows
 * collected for the report, a progress line on stderr.
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { summarize, type Row, type Sample } from './stats.js';

/** One repetition of a workload by one client; `warmup` runs are not reported (they may be shorter). */
export type Repetition = (warmup: boolean) => Promise<Sample>;

/** Settings and collected rows of a bench run. */
export class Bench {
  readonly rows: Row[] = [];
  /** Peers that were not run, with the reason. */
  readonly skipped: Record<string, string> = {};
  /** Appended to every workload name (a pass on another ensemble: ` (3-node)`). */
  suffix = '';
  readonly #reps: number;
  readonly #only: RegExp | undefined;
  #select: RegExp | undefined;
  #step = 0;

  /**
   * @param reps repetitions per workload and client
   * @param scale multiplies operation counts and durations (`--quick` uses 0.2)
   * @param only runs only the workloads whose name matches
   */
  constructor(reps: number, readonly scale: number, only?: RegExp) {
    this.#reps = reps;
    this.#only = only;
  }

  /** True when `workload` is selected by `--only` and by {@link Bench.select}. */
  wants(workload: string): boolean {
    return (this.#only === undefined || this.#only.test(workload)) && (this.#select === undefined || this.#select.test(workload));
  }

  /** Narrows the following workloads to those matching `pattern` (besides `--only`). */
  select(pattern: RegExp | undefined): void {
    this.#select = pattern;
  }

  /** `n` scaled, at least `min`. */
  n(n: number, min = 1): number {
    return Math.max(min, Math.round(n * this.scale));
  }

  /**
   * Runs each client's repetitions interleaved (A B, then B A, ...) after one warm-up each, so a
   * server that warms up (its JIT) or drifts over the run favours no client. `reps` overrides
   * the run's repetitions (for slow scale workloads).
   */
  async compare(group: Row['group'], workload: string, unit: string, clients: ReadonlyArray<readonly [string, Repetition]>, reps = this.#reps): Promise<void> {
    if (!this.wants(workload) || clients.length === 0) return;
    workload += this.suffix;
    this.#step++;
    for (const [client, rep] of clients) {
      this.#progress(`${workload} / ${client}: warm-up`);
      await rep(true);
    }
    const samples = clients.map((): Sample[] => []);
    for (let r = 0; r < reps; r++) {
      const order = clients.map((_, i) => (r % 2 === 0 ? i : clients.length - 1 - i));
      for (const i of order) {
        this.#progress(`${workload} / ${clients[i]![0]}: ${r + 1}/${reps}`);
        samples[i]!.push(await clients[i]![1](false));
      }
    }
    clients.forEach(([client], i) => {
      const row: Row = { group, workload, client, unit, summary: summarize(samples[i]!) };
      this.rows.push(row);
      const rate = row.summary.opsPerSec.median;
      this.#progress(`${workload} / ${client}: ${rate < 10 ? rate.toFixed(2) : Math.round(rate).toLocaleString('en-US')} ${unit}/s`, true);
    });
  }

  #progress(text: string, done = false): void {
    const line = `[${this.#step}] ${text}`;
    if (process.stderr.isTTY) process.stderr.write(`\r\x1b[K${line}${done ? '\n' : ''}`);
    else if (done) process.stderr.write(`${line}\n`);
  }
}

/** Counts messages on a diagnostics channel while `fn` runs. */
export async function counting<T>(name: string, fn: () => Promise<T>): Promise<{ result: T; count: number }> {
  let count = 0;
  const onMessage = () => {
    count++;
  };
  subscribe(name, onMessage);
  try {
    const result = await fn();
    return { result, count };
  } finally {
    unsubscribe(name, onMessage);
  }
}

/** Heap in use after a full collection when `--expose-gc` is on (the bench's npm script sets it), MiB. */
export function heapMiB(): number {
  (globalThis as { gc?: () => void }).gc?.();
  return process.memoryUsage().heapUsed / 2 ** 20;
}

/**
 * A private server process the harness started (Postgres, Redis, the KDC): killed if the test
 * process exits first, the tail of its output kept for error messages, stopped with a signal and
 * then SIGKILL after a grace, its directory removed.
 */
import type { ChildProcess } from 'node:child_process';
import { rmSync } from 'node:fs';

/** What {@link superviseChild} gives back. */
export interface SupervisedChild {
  /** The last 8,000 characters the process wrote (the streams that were piped). */
  output(): string;
  /** Stops it (`signal`, then SIGKILL after the grace) and removes its directory; idempotent. */
  stop(): Promise<void>;
}

const running = new Set<ChildProcess>();
let hooked = false;

/** Supervises `child`, whose files are under `dir`. */
export function superviseChild(child: ChildProcess, dir: string, options: { signal?: NodeJS.Signals; graceMs?: number } = {}): SupervisedChild {
  running.add(child);
  if (!hooked) {
    hooked = true;
    process.once('exit', () => {
      for (const c of running) c.kill('SIGKILL');
    });
  }
  let out = '';
  const keep = (d: Buffer) => (out = (out + d.toString()).slice(-8000));
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    output: () => out,
    stop: async () => {
      if (running.delete(child)) {
        child.kill(options.signal ?? 'SIGTERM');
        await Promise.race([exited, new Promise((r) => setTimeout(r, options.graceMs ?? 5_000))]);
        child.kill('SIGKILL');
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

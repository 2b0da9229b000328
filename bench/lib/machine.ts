/** The machine a bench run measured on, for the report and the results page. */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { cpus, release, totalmem } from 'node:os';

/** What the results page says about the machine. */
export interface Machine {
  /** The CPU's model name. */
  readonly cpu: string;
  readonly cores: number;
  readonly memoryGiB: number;
  /** The distribution and the kernel. */
  readonly os: string;
}

/** The machine this process runs on. */
export function machineOf(): Machine {
  let distro = process.platform as string;
  try {
    distro = /^PRETTY_NAME="?([^"\n]*)/m.exec(readFileSync('/etc/os-release', 'utf8'))?.[1] ?? distro;
  } catch {
    // not Linux: the platform's name will do
  }
  return { cpu: cpus()[0]?.model.trim() ?? 'unknown CPU', cores: cpus().length, memoryGiB: Math.round(totalmem() / 2 ** 30), os: `${distro}, kernel ${release()}` };
}

/** The commit the bench was built from, marked when the working tree had changes; undefined outside a git checkout. */
export function commitOf(dir: string): string | undefined {
  try {
    const head = execFileSync('git', ['-C', dir, 'rev-parse', '--short', 'HEAD'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    const dirty = execFileSync('git', ['-C', dir, 'status', '--porcelain', '--untracked-files=no'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim() !== '';
    return dirty ? `${head} (with uncommitted changes)` : head;
  } catch {
    return undefined;
  }
}

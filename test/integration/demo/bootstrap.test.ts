import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// The README's commands go through the bootstrap; on a ready checkout (dependencies installed,
// build current: the test command has just done both) every step must find its result there.
const ROOT = fileURLToPath(new URL('../../..', import.meta.url));

function bootstrap(args: string[], env: NodeJS.ProcessEnv = process.env): Promise<{ code: number | null; stdout: string; stderr: string; ms: number }> {
  const started = performance.now();
  const child = spawn(process.execPath, [join(ROOT, 'scripts', 'bootstrap.mjs'), ...args], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve) => child.once('exit', (code) => resolve({ code, stdout, stderr, ms: performance.now() - started })));
}

describe('bootstrap - a ready checkout', () => {
  it('runs the action at once and prints nothing of its own', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'zk-bootstrap-'));
    try {
      const status = await bootstrap(['zk', 'status', '--dir', dir]);
      expect(status.stderr).toBe('');
      expect(status.stdout).toBe('not running\n');
      expect(status.code).toBe(1); // `status` says so when nothing runs
      // no pnpm, no npm: the checks and a no-op `tsc -b` only
      expect(status.ms).toBeLessThan(5000);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('still reports what it cannot do (control: an unknown action)', async () => {
    const res = await bootstrap(['nonsense']);
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(/^\[bootstrap\] unknown action nonsense/);
  });
});

import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { connectString } from '../../harness/fixtures.js';

// The README's first command runs this script (built by the test command before testing).
const DEMO = fileURLToPath(new URL('../../../scripts/dist/demo.js', import.meta.url));

describe('demo - the README command', () => {
  it('runs its three scenes against a server and prints the summary', async () => {
    const child = spawn(process.execPath, [DEMO], { env: { ...process.env, ZK_CONNECT: connectString() }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    expect(code, out).toBe(0);
    expect(out).toMatch(/FIFO: alpha -> bravo -> charlie -> delta; fencing tokens strictly increasing/);
    expect(out).toMatch(/SIGKILL: the lock passed from echo to foxtrot \d+\.\d s after the kill/);
    expect(out).toMatch(/read-write: reader-1 \+ reader-2 -> writer -> reader-3 \(queue order/);
  }, 90_000);
});

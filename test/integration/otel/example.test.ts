/**
 * examples/otel-lock-handoff.ts run as a user would (the built file, a child process, ZK_CONNECT
 * set to a fresh chroot): it prints the ConsoleSpanExporter's spans and the hand-off as a tree,
 * and exits 0 when the second worker's fencing token is above the first's.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { connectString, TestSpace } from '../../harness/fixtures.js';

const EXAMPLE = fileURLToPath(new URL('../../../examples/dist/otel-lock-handoff.js', import.meta.url));

let space: TestSpace;
beforeEach(async () => {
  space = new TestSpace();
  await space.admin();
});
afterEach(async () => {
  await space.close();
});

it('examples/otel-lock-handoff prints the console spans and the hand-off trace, and exits 0', async () => {
  const { code, stdout, stderr } = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = execFile(process.execPath, [EXAMPLE], { env: { ...process.env, ZK_CONNECT: `${connectString()}${space.root}` }, timeout: 20_000 }, (_e, stdout, stderr) =>
      resolve({ code: child.exitCode, stdout, stderr }),
    );
  });
  expect(code, `${stdout}\n${stderr}`).toBe(0);
  expect(stderr).toBe('');
  // The ConsoleSpanExporter's records.
  expect(stdout).toContain("name: 'lock.acquire mutex /examples/otel/lock'");
  expect(stdout).toContain("'db.system.name': 'zookeeper'");
  // The tree: each job's wait (positions 0 and 1) with its requests under it, then its hold.
  const trace = stdout.slice(stdout.indexOf('The lock hand-off as a trace'));
  console.log(trace);
  const lines = trace.split('\n');
  const at = (re: RegExp) => lines.findIndex((l) => re.test(l));
  expect(at(/^\s*\+\d+ms\s+\S+ms  job worker-a$/)).toBeGreaterThan(0);
  expect(at(/^ .* {4}lock\.acquire mutex \/examples\/otel\/lock  \[position=0 fencing_token=\d+ outcome=acquired\]$/)).toBeGreaterThan(0);
  expect(at(/^ .* {4}lock\.acquire mutex \/examples\/otel\/lock  \[position=1 fencing_token=\d+ outcome=acquired\]$/)).toBeGreaterThan(0);
  expect(at(/ {6}create \/examples\/otel\/lock\/_c_\*-lock-\*$/)).toBeGreaterThan(0);
  expect(lines.filter((l) => /lock\.hold mutex \/examples\/otel\/lock  \[fencing_token=\d+ links=1\]$/.test(l))).toHaveLength(2);
  expect(trace).toMatch(/fencing tokens: worker-a \d+, worker-b \d+/);
});

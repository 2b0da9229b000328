import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { compileCurator, curatorMissing, waitFor } from '../../harness/index.js';
import { connectString, TestSpace } from '../../harness/fixtures.js';

/*
 * Runs each program of examples/ as a user would: the built file (the test command builds
 * first), a child process, ZK_CONNECT set, here to a fresh chroot per example.
 */
const EXAMPLES = fileURLToPath(new URL('../../../examples/', import.meta.url));

let space: TestSpace;
const running = new Set<ChildProcess>();

beforeEach(async () => {
  space = new TestSpace();
  await space.admin(); // creates the chroot the examples connect into
});

afterEach(async () => {
  for (const child of running) child.kill('SIGKILL'); // a failed test leaves no process behind
  running.clear();
  await space.close();
});

interface Run {
  out: () => string;
  err: () => string;
  exit: Promise<number>;
}

function start(command: string, args: string[]): Run {
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ZK_CONNECT: `${connectString()}${space.root}` } });
  running.add(child);
  let out = '';
  let err = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const exit = new Promise<number>((resolve) =>
    child.once('exit', (code, signal) => {
      running.delete(child);
      resolve(code ?? (signal ? -1 : 0));
    }),
  );
  return { out: () => out, err: () => err, exit };
}

function example(name: string, ...args: string[]): Run {
  return start(process.execPath, [join(EXAMPLES, 'dist', `${name}.js`), ...args]);
}

/** Waits for the run to exit; fails with its output when the code is not `code`. */
async function exited(run: Run, code = 0): Promise<string> {
  const got = await run.exit;
  if (got !== code) throw new Error(`exit ${got}, expected ${code}\nstdout:\n${run.out()}\nstderr:\n${run.err()}`);
  return run.out();
}

describe('examples - cron-once', () => {
  it('exactly one of four processes started for one slot runs the job; a late starter skips it too', async () => {
    const runs = [1, 2, 3, 4].map(() => example('cron-once', '2026-11-23T02:00'));
    const outs = await Promise.all(runs.map((r) => exited(r)));
    expect(outs.filter((o) => o.startsWith('ran nightly-report 2026-11-23T02:00 with fencing token'))).toHaveLength(1);
    expect(outs.filter((o) => o.startsWith('skipped nightly-report 2026-11-23T02:00:'))).toHaveLength(3);

    // After the winner released the lock, the lock alone would let a late starter run it again.
    expect(await exited(example('cron-once', '2026-11-23T02:00'))).toMatch(/^skipped nightly-report 2026-11-23T02:00: it already ran/);
    // The next slot runs.
    expect(await exited(example('cron-once', '2026-11-23T02:01'))).toMatch(/^ran nightly-report 2026-11-23T02:01 /);
    const admin = await space.admin();
    expect((await admin.getChildren(`${space.root}/cron/nightly-report/runs`)).sort()).toEqual(['2026-11-23T02:00', '2026-11-23T02:01']);
  });
});

describe('examples - leader-worker', () => {
  it('three workers lead one at a time, each term with a token of its own, and all exit', async () => {
    const outs = await Promise.all(['a', 'b', 'c'].map((id) => exited(example('leader-worker', id, '3'))));
    const tokens = outs.map((out, i) => {
      const id = ['a', 'b', 'c'][i]!;
      const token = /^(\S+) leading with fencing token (\d+)$/m.exec(out);
      expect(token?.[1]).toBe(id);
      expect(out.match(new RegExp(`^${id} unit \\d written with fencing token ${token![2]}$`, 'gm'))).toHaveLength(3);
      expect(out).toContain(`${id} done, stepping down`);
      return token![2];
    });
    expect(new Set(tokens).size).toBe(3);
  });

  it('a leader whose node is deleted stops its work at once and exits with 1', async () => {
    const run = example('leader-worker', 'solo', '1000');
    await waitFor('the worker to lead', () => (run.out().includes('solo unit 1 written') ? true : undefined));
    const admin = await space.admin();
    const election = `${space.root}/services/report-worker/leader`;
    for (const node of await admin.getChildren(election)) await admin.delete(`${election}/${node}`);
    const out = await exited(run, 1);
    expect(out).toMatch(/^solo stopped: .*revoked: the lock node was deleted\b/m);
    expect(out).not.toContain('solo unit 1000');
  });
});

describe('examples - fenced-write', () => {
  it('the store and the fenced transaction both refuse the stale holder', async () => {
    const out = await exited(example('fenced-write'));
    const alice = /^alice wrote with token (\d+)$/m.exec(out)![1]!;
    const bob = /^bob wrote with token (\d+)$/m.exec(out)![1]!;
    expect(BigInt(bob)).toBeGreaterThan(BigInt(alice));
    expect(out).toContain(`store refused alice: stale fencing token ${alice} (highest seen ${bob})`);
    expect(out).toMatch(/^zookeeper refused alice: .*NONODE/m);
    expect(out).toContain('refused 2 of 2 stale writes; store has "bob v2", zookeeper has "bob v2"');
  });
});

/** Checks the shared file of node-and-curator: every enter is followed by the same side's leave. Returns who held, in order. */
function holders(lines: string[]): string[] {
  const order: string[] = [];
  for (let i = 0; i < lines.length; i += 2) {
    const enter = /^enter (\w+) (\d+)$/.exec(lines[i]!);
    if (!enter || lines[i + 1] !== `leave ${enter[1]} ${enter[2]}`) throw new Error(`line ${i + 1}: "${lines[i]}" is not followed by its leave (got "${lines[i + 1]}")`);
    order.push(enter[1]!);
  }
  return order;
}

describe('examples - node-and-curator', () => {
  it('the exclusion check refuses overlapping holds (negative control)', () => {
    expect(holders(['enter node 1', 'leave node 1', 'enter curator 1', 'leave curator 1'])).toEqual(['node', 'curator']);
    expect(() => holders(['enter node 1', 'enter curator 1', 'leave node 1', 'leave curator 1'])).toThrow(/not followed by its leave/);
    expect(() => holders(['enter node 1'])).toThrow(/not followed by its leave/);
  });

  it.skipIf(curatorMissing() !== undefined)('a Curator InterProcessMutex and a Node Mutex take turns on one path', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'zk-example-turns-'));
    const compiled = compileCurator([join(EXAMPLES, 'CuratorTurns.java')]);
    try {
      const file = join(dir, 'turns.log');
      const java = start('java', ['-cp', compiled.classpath, 'CuratorTurns', '3', file]);
      const node = example('node-and-curator', '3', file);
      expect(await exited(java)).toContain('curator done');
      expect(await exited(node)).toContain('node done');
      const order = holders(readFileSync(file, 'utf8').trimEnd().split('\n'));
      expect(order.filter((who) => who === 'node')).toHaveLength(3);
      expect(order.filter((who) => who === 'curator')).toHaveLength(3);
      // They took turns: the hold changed hands more than once (strictly alternating when neither lags).
      expect(order.filter((who, i) => i > 0 && who !== order[i - 1]).length).toBeGreaterThan(1);
    } finally {
      compiled.remove();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

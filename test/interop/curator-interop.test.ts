/**
 * Curator (Java) and our locks on the same paths: several Java and several Node processes, each
 * taking the lock many times, checked for exclusion without clocks (marker files created with
 * exclusive create inside every critical section), and the queue order shared across languages.
 */
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Mutex } from '@zk/locks';
import { waitFor } from '../harness/index.js';
import { connectString, TestSpace } from '../harness/fixtures.js';

const CURATOR = '/usr/share/java/curator-recipes.jar';
const haveJava = spawnSync('javac', ['-version'], { stdio: 'ignore' }).status === 0 && existsSync(CURATOR);
const NODE_PARTICIPANT = fileURLToPath(new URL('./node-lock-participant.mjs', import.meta.url));
const JAVA_SOURCE = fileURLToPath(new URL('./java/CuratorLockParticipant.java', import.meta.url));

let classpath = '';
let space: TestSpace;
const running = new Set<ChildProcess>();

beforeAll(() => {
  if (!haveJava) return;
  const out = mkdtempSync(join(tmpdir(), 'zk-interop-'));
  execFileSync('javac', ['-d', out, '-cp', CURATOR, JAVA_SOURCE], { stdio: 'inherit' });
  classpath = [out, CURATOR, '/usr/share/java/slf4j-nop.jar'].join(':');
}, 120_000);

beforeEach(async () => {
  space = new TestSpace();
  await space.admin();
});

afterEach(async () => {
  for (const p of running) p.kill('SIGKILL');
  running.clear();
  await space.close();
});

interface Result {
  id: string;
  acquisitions: number;
  violations: number;
}

function participant(lang: 'java' | 'node', args: string[]): { proc: ChildProcess; result: () => Promise<Result>; exit: Promise<number | null>; out: () => string } {
  const connect = `${connectString()}${space.root}`;
  const proc = lang === 'java' ? spawn('java', ['-cp', classpath, 'CuratorLockParticipant', connect, ...args]) : spawn(process.execPath, [NODE_PARTICIPANT, connect, ...args]);
  running.add(proc);
  let out = '';
  let err = '';
  proc.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  proc.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const exit = new Promise<number | null>((resolve) =>
    proc.once('exit', (code) => {
      running.delete(proc);
      resolve(code);
    }),
  );
  // Parsed only when asked for (a `hold` participant prints no result line).
  const result = () =>
    exit.then((code) => {
      if (code !== 0) throw new Error(`${lang} participant exited ${code}: ${err.slice(-2000)}`);
      return JSON.parse(out.trim().split('\n').at(-1) ?? '') as Result;
    });
  return { proc, result, exit, out: () => out };
}

describe.skipIf(!haveJava)('interop - Curator 5 and @zk/locks on the same paths', () => {
  it('InterProcessMutex and Mutex exclude each other: 3 Java + 3 Node processes, 600 acquisitions', async () => {
    const markers = mkdtempSync(join(tmpdir(), 'zk-markers-'));
    const runs = [
      ...['j1', 'j2', 'j3'].map((id) => participant('java', ['/interop/mutex', 'mutex', '100', markers, id])),
      ...['n1', 'n2', 'n3'].map((id) => participant('node', ['/interop/mutex', 'mutex', '100', markers, id])),
    ];
    const results = await Promise.all(runs.map((r) => r.result()));
    console.log(`interop mutex: ${JSON.stringify(results)}`);
    expect(results.reduce((n, r) => n + r.acquisitions, 0)).toBe(600);
    expect(results.map((r) => r.violations)).toEqual([0, 0, 0, 0, 0, 0]);
    expect(await (await space.admin()).getChildren(`${space.root}/interop/mutex`)).toEqual([]);
  }, 180_000);

  it('InterProcessReadWriteLock and ReadWriteLock keep readers and writers apart: 2 Java + 2 Node, mixed holds', async () => {
    const markers = mkdtempSync(join(tmpdir(), 'zk-markers-'));
    const runs = [
      ...['j1', 'j2'].map((id) => participant('java', ['/interop/rw', 'rw', '100', markers, id])),
      ...['n1', 'n2'].map((id) => participant('node', ['/interop/rw', 'rw', '100', markers, id])),
    ];
    const results = await Promise.all(runs.map((r) => r.result()));
    console.log(`interop read-write: ${JSON.stringify(results)}`);
    expect(results.reduce((n, r) => n + r.acquisitions, 0)).toBe(400);
    expect(results.map((r) => r.violations)).toEqual([0, 0, 0, 0]);
  }, 180_000);

  it('Java and Node waiters share one queue order: Node holds, Java queues, Node queues; hand-over goes Java then Node', async () => {
    const [a, b] = await Promise.all([space.client(), space.client()]);
    const first = await new Mutex(a, '/interop/order').acquire();
    const java = participant('java', ['/interop/order', 'hold']);
    const admin = await space.admin();
    await waitFor('the Java waiter to queue', async () => ((await admin.getChildren(`${space.root}/interop/order`)).length === 2 ? true : undefined), 30_000, 20);
    const names = (await admin.getChildren(`${space.root}/interop/order`)).sort();
    expect(names.every((n) => /^_c_[0-9a-f-]{36}-lock-\d{10}$/.test(n))).toBe(true);
    let nodeHolds = false;
    const second = new Mutex(b, '/interop/order').acquire().then((l) => ((nodeHolds = true), l));
    await waitFor('the Node waiter to queue', async () => ((await admin.getChildren(`${space.root}/interop/order`)).length === 3 ? true : undefined), 30_000, 20);
    await first.release();
    await waitFor('Java to hold the lock', () => (java.out().includes('ACQUIRED') ? true : undefined), 30_000, 20);
    expect(nodeHolds).toBe(false);
    java.proc.stdin!.write('release\n');
    const lease = await second;
    await lease.release();
    expect(await java.exit).toBe(0);
    expect(java.out()).toContain('RELEASED');
  }, 120_000);
});

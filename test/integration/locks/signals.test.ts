/**
 * Ctrl-C while holding a lock (issue 37 item 2): a process stopped by SIGINT without a word to the
 * server leaves its lock node until the session expires, a whole session timeout later;
 * closeOnSignals ends the session first, so the lock passes on at once, and exits 130.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ZooKeeper } from '@zk/protocol';
import { Mutex } from '@zk/locks';
import { connectString, TestSpace } from '../../harness/fixtures.js';

const SCRIPT = fileURLToPath(new URL('./signal-holder.mjs', import.meta.url));
/** The holder's session timeout: long enough to tell "at once" from "after T" apart. */
const T = 6000;

let space: TestSpace;
let zk: ZooKeeper;
const children = new Set<ChildProcess>();

beforeEach(async () => {
  space = new TestSpace();
  zk = await space.client();
});

afterEach(async () => {
  for (const c of children) c.kill('SIGKILL');
  children.clear();
  await space.close();
});

interface Child {
  child: ChildProcess;
  /** Resolves with the first line matching `word ...`: its fields. */
  line: Promise<string[]>;
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>;
}

function start(mode: string, path = ''): Child {
  const child = spawn(process.execPath, [SCRIPT, mode, `${connectString()}${space.root}`, path, String(T)], { stdio: ['ignore', 'pipe', 'inherit'] });
  children.add(child);
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal, at: performance.now() })));
  const line = new Promise<string[]>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /^(HELD|READY)\b(.*)\n/m.exec(out);
      if (m) resolve(m[2]!.trim().split(' '));
    });
    child.once('exit', (code) => reject(new Error(`${mode} holder exited (${code}) before it was ready`)));
  });
  return { child, line, exit };
}

describe('signals - closeOnSignals', () => {
  it('signals - a holder stopped with SIGINT: the lock node is gone at once, a waiter takes the lock well under T, exit code 130', async () => {
    const holder = start('helper', '/locks/ctrl-c');
    const [node] = await holder.line;
    const waiting = new Mutex(zk, '/locks/ctrl-c').acquire({ timeout: T });
    const sent = performance.now();
    holder.child.kill('SIGINT');
    const lease = await waiting;
    const handedOn = performance.now() - sent;
    const exit = await holder.exit;
    expect({ code: exit.code, signal: exit.signal }).toEqual({ code: 130, signal: null });
    expect(await zk.exists(node!)).toBeNull();
    expect(handedOn).toBeLessThan(T / 4);
    await lease.release();
  });

  it('signals - negative control, no helper: the holder dies by SIGINT and its node stays until the session timeout', async () => {
    const holder = start('none', '/locks/ctrl-c');
    const [node] = await holder.line;
    const path = node!;
    holder.child.kill('SIGINT');
    const exit = await holder.exit;
    expect({ code: exit.code, signal: exit.signal }).toEqual({ code: null, signal: 'SIGINT' });
    await new Promise((r) => setTimeout(r, T / 2));
    expect(await zk.exists(path)).not.toBeNull(); // still blocking the lock at T/2
    const taken = await new Mutex(zk, '/locks/ctrl-c').acquire({ timeout: 2 * T });
    expect(performance.now() - exit.at).toBeGreaterThan(T * 0.8); // passed on only once the session expired
    await taken.release();
  });

  it('signals - a second SIGINT exits at once while the closes still run', async () => {
    const stuck = start('stuck');
    await stuck.line;
    stuck.child.kill('SIGINT');
    await new Promise((r) => setTimeout(r, 300));
    expect(stuck.child.exitCode).toBeNull(); // waiting for a close that never ends
    const second = performance.now();
    stuck.child.kill('SIGINT');
    const exit = await stuck.exit;
    expect(exit.code).toBe(130);
    expect(exit.at - second).toBeLessThan(2000);
  });

  it('signals - the listeners do not keep the process alive', async () => {
    const idle = start('idle');
    await idle.line;
    expect((await idle.exit).code).toBe(0);
  });
});

/**
 * A holder paused past its lease (issue 41, "a holder-side check that reads the clock"): a process
 * SIGSTOPped for longer than its session timeout, then SIGCONTed, runs its pending continuation
 * before any of its timers, so a check that reads the flag those timers set still says "held"
 * while another client holds the lock. `held` and `assertHeld()` compare the clock with the
 * lease's deadline instead: the first check after the pause refuses. Each run also reads the
 * timer-set flag (`signal.aborted`) at the same point, before the check: it must still be false,
 * or the run would not show the clock check doing anything (the check before issue 41 read only
 * that flag).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ZooKeeper } from '@zk/protocol';
import { Mutex } from '@zk/locks';
import { connectString, TestSpace } from '../../harness/fixtures.js';

const SCRIPT = fileURLToPath(new URL('./paused-holder.mjs', import.meta.url));
/** The holder's session timeout, and how long it is stopped: well past it (the server expires the session meanwhile). */
const T = 2000;
const PAUSE = 5000;

let space: TestSpace;
let zk: ZooKeeper;
const children = new Set<ChildProcess>();

beforeEach(async () => {
  space = new TestSpace();
  zk = await space.client();
});

afterEach(async () => {
  for (const c of children) {
    c.kill('SIGCONT');
    c.kill('SIGKILL');
  }
  children.clear();
  await space.close();
});

/** Starts the holder; `line(word)` resolves with the fields of its first line starting with `word`. */
function start(path: string): { child: ChildProcess; line(word: string): Promise<string[]> } {
  const child = spawn(process.execPath, [SCRIPT, `${connectString()}${space.root}`, path, String(T)], { stdio: ['pipe', 'pipe', 'inherit'] });
  children.add(child);
  let out = '';
  const waiting = new Set<() => void>();
  child.stdout!.on('data', (d: Buffer) => {
    out += d.toString();
    for (const w of [...waiting]) w();
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return {
    child,
    line: (word) =>
      new Promise((resolve, reject) => {
        const look = () => {
          const m = new RegExp(`^${word}\\b(.*)$`, 'm').exec(out);
          if (!m) return;
          waiting.delete(look);
          resolve(m[1]!.trim().split(' '));
        };
        waiting.add(look);
        look();
        void exited.then((code) => {
          if (waiting.delete(look)) reject(new Error(`the holder exited (${code}) before saying ${word}; it said: ${out}`));
        });
      }),
  };
}

describe('lease clock - a holder paused past its deadline (SIGSTOP, SIGCONT)', () => {
  it('lease clock - stopped while it awaits a read: its first assertHeld() after SIGCONT throws lost, while the timer-set flag still says held', async () => {
    const path = '/locks/paused';
    const holder = start(path);
    const [token, granted] = await holder.line('HELD');
    expect(Number(granted)).toBeLessThanOrEqual(T); // the server granted the short timeout: the pause is well past it
    await holder.line('WAITING');
    holder.child.kill('SIGSTOP');
    const stoppedAt = performance.now();

    // While it is stopped, its session expires and another client takes the lock: the write the
    // paused holder is about to make would be a stale one.
    const taken = await new Mutex(zk, path).acquire({ timeout: 4 * PAUSE });
    expect(taken.fencingToken > BigInt(token!)).toBe(true);
    const left = PAUSE - (performance.now() - stoppedAt);
    if (left > 0) await new Promise((r) => setTimeout(r, left));

    holder.child.stdin!.write('row\n'); // the read's result, there when it resumes
    holder.child.kill('SIGCONT');
    const check = (await holder.line('CHECK')).join(' ');
    // The control: at that point no timer or session event has run, so the flag they set still
    // says the lease is held; the check before issue 41 (that flag alone) would have let it write.
    expect(check).toMatch(/^aborted-before=false /);
    // The clock check refused, as lost, and aborted the lease right there.
    expect(check).toMatch(/ held=false REFUSED LeaseLostError lost lease on \/locks\/paused lost: the lease's deadline passed \d+ ms ago, found by reading the clock before any timer said so \(the process was paused, or its event loop blocked\)/);
    expect(check).not.toMatch(/WROTE/);
    await taken.release();
  });
});

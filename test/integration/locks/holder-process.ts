/**
 * A holder in its own process, for the tests that SIGKILL one: a lock, a permit or leadership
 * held by a process that dies without sending closeSession, so what it held passes on only when
 * the server expires its session. Used by failure.test.ts (holder.mjs), leader.test.ts
 * (leader-holder.mjs) and semaphore.test.ts (the interop semaphore participant's hold run).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { afterEach, beforeEach, expect } from 'vitest';
import { TestSpace } from '../../harness/fixtures.js';

/** Every holder process not yet exited, with its exit: {@link killHolders} ends them after each test. */
const running = new Map<ChildProcess, Promise<void>>();

/** A holder process that has printed what it holds. */
export interface HolderProcess {
  /** The fencing token of what it holds. */
  readonly token: bigint;
  /** The session timeout the server granted it (ms). */
  readonly sessionTimeout: number;
  /** SIGKILLs the process; resolves once it has exited. */
  kill(): Promise<void>;
}

/**
 * Runs `node script ...args` and resolves once it prints the line `<word> <fencingToken>
 * <sessionTimeout>`; rejects if it exits first. Its stdin stays open (a hold run of a participant
 * releases when stdin gives it a line or ends); its stderr goes to the test's.
 */
export function startHolder(script: string, args: string[], word: string): Promise<HolderProcess> {
  const child = spawn(process.execPath, [script, ...args], { stdio: ['pipe', 'pipe', 'inherit'] });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  running.set(child, exited);
  void exited.then(() => running.delete(child));
  const line = new RegExp(`^${word} (\\d+) (\\d+)\\n`, 'm');
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      const m = line.exec(out);
      if (!m) return;
      resolve({
        token: BigInt(m[1]!),
        sessionTimeout: Number(m[2]),
        kill: async () => {
          child.kill('SIGKILL');
          await exited;
        },
      });
    });
    child.once('exit', (code) => reject(new Error(`${script} exited with ${code} before printing ${word}`)));
  });
}

/** SIGKILLs every holder process still running (a failed test leaves none behind) and waits until they are gone. */
export async function killHolders(): Promise<void> {
  for (const child of running.keys()) child.kill('SIGKILL');
  await Promise.all(running.values());
}

/**
 * The per-test hooks of a suite that starts holder processes, registered where it is called: a
 * fresh {@link TestSpace} before each test (handed to `set`); after it, every holder process
 * killed and no watch left behind.
 */
export function holderSuiteHooks(set: (space: TestSpace) => void): void {
  let space: TestSpace;
  beforeEach(() => {
    space = new TestSpace();
    set(space);
  });
  afterEach(async () => {
    await killHolders();
    expect((await space.close()).leakedWatches).toBe(0);
  });
}

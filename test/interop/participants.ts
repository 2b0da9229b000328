/**
 * Participant processes of the interop suites: a Java program on Debian's Curator jars or a Node
 * script on the built packages, driven line by line over stdin/stdout. Shared by every recipe's
 * interop test (curator.test.ts, and one file per recipe).
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, beforeEach, expect } from 'vitest';
import { waitFor } from '../harness/index.js';
import { TestSpace } from '../harness/fixtures.js';
import { compileCurator, TEST_JVM_OPTIONS, type CompiledJava } from '../harness/java.js';

/** Where Node participants run (so `@zk/*` resolve to the built workspace packages). */
const TEST_DIR = fileURLToPath(new URL('..', import.meta.url));

/** What every Java participant shares (connect, line protocol, marker files): compiled with each suite's sources. */
const JAVA_SHARED = fileURLToPath(new URL('./java/Interop.java', import.meta.url));

/** A v4 UUID, as both Java's UUID.randomUUID() and node:crypto's randomUUID() make them (Curator's protected node names carry one). */
export const UUID = '[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}';

/** Every participant not yet exited: kill them in `afterEach` with {@link killAll}. */
export const started = new Set<Participant>();

/** The JSON result line of a counted run. */
export interface Result {
  id: string;
  acquisitions: number;
  violations: number;
}

/** One participant process; its stdout lines can be awaited. */
export class Participant {
  readonly proc: ChildProcessWithoutNullStreams;
  readonly exited: Promise<number | null>;
  #out = '';
  #err = '';
  #exitCode: number | null | undefined;
  #waiters: (() => void)[] = [];

  /** `lang` names the process in errors and hand-over counts; `command`/`args` start it (a `java` command with the tests' JVM options first). */
  constructor(
    readonly lang: 'java' | 'node',
    command: string,
    args: string[],
  ) {
    this.proc = spawn(command, command === 'java' ? [...TEST_JVM_OPTIONS, ...args] : args, { cwd: TEST_DIR });
    started.add(this);
    this.proc.stdout.on('data', (d: Buffer) => {
      this.#out += d.toString();
      this.#wake();
    });
    this.proc.stderr.on('data', (d: Buffer) => (this.#err += d.toString()));
    this.exited = new Promise((resolve) =>
      this.proc.once('close', (code) => {
        this.#exitCode = code;
        started.delete(this);
        this.#wake();
        resolve(code);
      }),
    );
  }

  /** A Java participant: `mainClass` from `compiled`. */
  static java(compiled: CompiledJava, mainClass: string, args: string[]): Participant {
    return new Participant('java', 'java', ['-cp', compiled.classpath, mainClass, ...args]);
  }

  /** A Node participant: the `.mjs` script at `script` (an absolute path). */
  static node(script: string, args: string[]): Participant {
    return new Participant('node', process.execPath, [script, ...args]);
  }

  /** The lines printed so far. */
  get lines(): string[] {
    return this.#out.split('\n').filter((l) => l !== '');
  }

  /** What the process wrote to stderr (the last 2,000 characters). */
  get stderr(): string {
    return this.#err.slice(-2000);
  }

  /** Resolves once the process has printed `line`; rejects if it exits first. */
  until(line: string): Promise<void> {
    return this.untilMatch((l) => l === line, line).then(() => undefined);
  }

  /** Resolves with the first printed line that `match` accepts; rejects if the process exits first. */
  untilMatch(match: (line: string) => boolean, what = 'the expected line'): Promise<string> {
    return new Promise((resolve, reject) => {
      const check = () => {
        const found = this.lines.find(match);
        if (found !== undefined) return resolve(found);
        if (this.#exitCode !== undefined) return reject(new Error(`${this.lang} participant exited ${this.#exitCode} before ${what}: ${this.stderr}`));
        this.#waiters.push(check);
      };
      check();
    });
  }

  /** Writes one line to the process's stdin. */
  send(line: string): void {
    this.proc.stdin.write(`${line}\n`);
  }

  /** Sends `command` and resolves with the next line printed after it; rejects if the process exits first. */
  reply(command: string, timeoutMs = 30_000): Promise<string> {
    const n = this.lines.length;
    this.send(command);
    return waitFor(`the answer to ${command}`, () => {
      if (this.proc.exitCode !== null) throw new Error(`${this.lang} participant exited ${this.proc.exitCode}: ${this.stderr}`);
      return this.lines.length > n ? this.lines[n] : undefined;
    }, timeoutMs, 5);
  }

  /** The final JSON line of a counted run; rejects unless the process exited 0. */
  async result<T = Result>(): Promise<T> {
    const code = await this.exited;
    if (code !== 0) throw new Error(`${this.lang} participant exited ${code}: ${this.stderr}`);
    return JSON.parse(this.lines.at(-1) ?? '') as T;
  }

  #wake(): void {
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const w of waiters) w();
  }
}

/** SIGKILLs every participant still running and waits until they are gone. */
export async function killAll(): Promise<void> {
  for (const p of started) p.proc.kill('SIGKILL');
  await Promise.all([...started].map((p) => p.exited));
}

/** How often consecutive entries of a hold log pass from one language to the other (ids start with `j` or `n`). */
export function handOvers(holds: readonly { id: string }[]): { javaToNode: number; nodeToJava: number } {
  let javaToNode = 0;
  let nodeToJava = 0;
  for (let i = 1; i < holds.length; i++) {
    const [a, b] = [holds[i - 1]!.id[0], holds[i]!.id[0]];
    if (a === 'j' && b === 'n') javaToNode++;
    if (a === 'n' && b === 'j') nodeToJava++;
  }
  return { javaToNode, nodeToJava };
}

/** Holds per participant id, counted from a hold log rather than taken from the participants. */
export function holdsById(holds: readonly { id: string }[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const h of holds) counts[h.id] = (counts[h.id] ?? 0) + 1;
  return counts;
}

/** The children of `path` in the test's namespace in creation order (by their 10-digit sequence suffix); [] when it does not exist. */
export async function queue(space: TestSpace, path: string): Promise<string[]> {
  const admin = await space.admin();
  const children = await admin.getChildren(`${space.root}${path}`).catch(() => [] as string[]);
  return children.sort((a, b) => (a.slice(-10) < b.slice(-10) ? -1 : 1));
}

/** Waits until `path` has exactly `n` children; resolves with them in creation order. */
export function queued(space: TestSpace, path: string, n: number): Promise<string[]> {
  return waitFor(`${n} nodes under ${path}`, async () => {
    const q = await queue(space, path);
    return q.length === n ? q : undefined;
  }, 30_000, 20);
}

/** What {@link contend} collects. */
export interface Contention<H> {
  /** Each participant's result line, in the order they were started. */
  results: Result[];
  /** The holds in the order they happened, from the shared append-only log. */
  holds: H[];
  /** From the start line to the last result. */
  ms: number;
}

/**
 * A counted run: `start(markerDir)` spawns the participants on one fresh marker directory; once
 * every one has printed READY they are all sent the start line at once, so they contend from the
 * same moment. Collects their results and the shared hold log, whose `<id> <value>` lines `parse`
 * turns into holds; removes the marker directory on every exit.
 */
export async function contend<H>(start: (markers: string) => Participant[], parse: (id: string, value: string) => H): Promise<Contention<H>> {
  const markers = mkdtempSync(join(tmpdir(), 'zk-interop-markers-'));
  try {
    const ps = start(markers);
    await Promise.all(ps.map((p) => p.until('READY')));
    const t0 = performance.now();
    for (const p of ps) p.send('go');
    const results = await Promise.all(ps.map((p) => p.result()));
    const ms = Math.round(performance.now() - t0);
    const holds = readFileSync(join(markers, 'log'), 'utf8')
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => {
        const [id = '', value = ''] = l.split(' ');
        return parse(id, value);
      });
    return { results, holds, ms };
  } finally {
    rmSync(markers, { recursive: true, force: true });
  }
}

/**
 * The hooks every interop suite needs, registered in the calling `describe`: compiles `sources`
 * with the shared java/Interop.java against Curator once (handing the classes to `set.compiled`), gives each test a fresh
 * {@link TestSpace} (`set.space`), and after each test kills the participants still running and
 * requires that no watch was left behind.
 */
export function interopHooks(sources: string[], set: { compiled(c: CompiledJava): void; space(s: TestSpace): void }): void {
  let compiled: CompiledJava | undefined;
  let space: TestSpace | undefined;
  beforeAll(() => {
    compiled = compileCurator([JAVA_SHARED, ...sources]);
    set.compiled(compiled);
  }, 120_000);
  afterAll(() => {
    compiled?.remove();
  });
  beforeEach(async () => {
    space = new TestSpace();
    set.space(space);
    await space.admin();
  });
  afterEach(async () => {
    await killAll();
    const { leakedWatches } = await space!.close();
    expect(leakedWatches).toBe(0);
  });
}

/**
 * A participant process that speaks in lines on stdout (the leader workloads' Node and Curator
 * participants): each line is stamped with `performance.now()` when it arrives, and can be awaited
 * by its first word.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { createInterface } from 'node:readline';

/** A line a child printed and when this process read it (`performance.now()`, ms). */
export interface Line {
  readonly text: string;
  readonly at: number;
}

/** How much of a child's stderr errors carry. */
const STDERR_KEEP = 2048;

/** Children not yet exited, killed if this process exits first. */
const live = new Set<ChildProcessWithoutNullStreams>();
let exitHook = false;

/** One child process and its stdout lines. */
export class LineChild {
  readonly child: ChildProcessWithoutNullStreams;
  readonly #name: string;
  readonly #lines: Line[] = [];
  readonly #waiters = new Set<{ word: string; resolve: (l: Line) => void; reject: (e: Error) => void }>();
  readonly #exited: Promise<void>;
  #exit: string | undefined;
  #stderr = '';

  /** Starts `command args`; `name` labels its errors. */
  constructor(name: string, command: string, args: readonly string[]) {
    this.#name = name;
    this.child = spawn(command, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    live.add(this.child);
    if (!exitHook) {
      exitHook = true;
      process.on('exit', () => {
        for (const c of live) c.kill('SIGKILL');
      });
    }
    this.child.stdin.on('error', () => undefined);
    this.child.stderr.setEncoding('utf8');
    this.child.stderr.on('data', (d: string) => (this.#stderr = (this.#stderr + d).slice(-STDERR_KEEP)));
    createInterface({ input: this.child.stdout, crlfDelay: Infinity }).on('line', (text) => {
      const line = { text, at: performance.now() };
      for (const w of this.#waiters) {
        if (text === w.word || text.startsWith(`${w.word} `)) {
          this.#waiters.delete(w);
          return w.resolve(line);
        }
      }
      this.#lines.push(line);
    });
    this.#exited = new Promise((resolve) => {
      const done = (why: string) => {
        if (this.#exit !== undefined) return;
        this.#exit = why;
        live.delete(this.child);
        for (const w of this.#waiters) w.reject(this.#error(`exited (${why}) before printing ${w.word}`));
        this.#waiters.clear();
        resolve();
      };
      this.child.once('error', (e) => done(e.message));
      this.child.once('close', (code, signal) => done(String(code ?? signal)));
    });
  }

  /**
   * The first line (not yet taken) whose first word is `word`, waiting up to `timeoutMs` for it.
   * Rejects when the child exits first or the time runs out.
   */
  line(word: string, timeoutMs = 30_000): Promise<Line> {
    const i = this.#lines.findIndex((l) => l.text === word || l.text.startsWith(`${word} `));
    if (i >= 0) return Promise.resolve(this.#lines.splice(i, 1)[0]!);
    if (this.#exit !== undefined) return Promise.reject(this.#error(`exited (${this.#exit}) before printing ${word}`));
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#waiters.delete(waiter);
        reject(this.#error(`printed no ${word} line within ${timeoutMs} ms`));
      }, timeoutMs);
      const waiter = {
        word,
        resolve: (l: Line) => (clearTimeout(timer), resolve(l)),
        reject: (e: Error) => (clearTimeout(timer), reject(e)),
      };
      this.#waiters.add(waiter);
    });
  }

  /** Writes one line to the child's stdin. */
  send(line: string): void {
    this.child.stdin.write(`${line}\n`);
  }

  /** Kills the child with SIGKILL and resolves once it has exited. */
  async kill(): Promise<void> {
    if (this.#exit === undefined) this.child.kill('SIGKILL');
    await this.#exited;
  }

  /** Ends its stdin (the participant then leaves and exits) and waits `graceMs` for it, then kills it. */
  async end(graceMs = 10_000): Promise<void> {
    this.child.stdin.end();
    const timer = setTimeout(() => this.child.kill('SIGKILL'), graceMs);
    await this.#exited;
    clearTimeout(timer);
  }

  #error(what: string): Error {
    const tail = this.#stderr.trim();
    return new Error(`${this.#name} ${what}${tail ? `\n--- stderr ---\n${tail}` : ''}`);
  }
}

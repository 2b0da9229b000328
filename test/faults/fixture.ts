/**
 * The fault suite's fixture: participant processes, their history, and the guarded resource.
 * Shared by nemeses.test.ts, the soak and network.test.ts. Does not use vitest (pass connect
 * strings in; `connectString()` from ../harness/fixtures.js gives the shared server's).
 *
 * ```ts
 * const fx = await FaultFixture.start({ root: space.root });      // starts a GuardedResource
 * const p = fx.spawn({ who: 'p0', connect: '127.0.0.1:2181', durationMs: 10_000, workMs: 20 });
 * p.kill();            // SIGKILL, logs { kind: 'killed' }
 * p.pause();           // SIGSTOP; p.resume() SIGCONT: { kind: 'paused', from, to } (to: first line after)
 * await fx.exited();   // every participant spawned so far has exited
 * const verdict = fx.check();                 // checkHistory(fx.history(), { sessionTimeoutMs })
 * const row = fx.row('my nemesis', verdict);  // a NemesisRow for recordRow (summary.ts)
 * const problems = fx.problems(verdict, { minPerSecond: 2 }); // [] when all is well
 * await fx.close();    // kills what still runs, stops the resource
 * ```
 *
 * - Participants (participant.mjs, on the built packages: run `tsc -b` first) log JSON lines;
 *   the fixture parses them into `fx.events` (acquired, released, lost, error); `fx.attach()`
 *   adopts any other process that prints the same lines (a Java participant). A participant
 *   that exits with a non-zero code, or prints a line that is not an event, adds an `error`
 *   event; so does a crash. `fx.holder()` is who holds the lock now, by the log.
 * - `GuardedResource` (resource.ts: an HTTP server on 127.0.0.1) remembers the highest fencing token it
 *   accepted and refuses lower ones; `writes` logs every write, accepted or not. A fixture with a
 *   `capacity` above 1 (a semaphore's permits) cannot fence that way (a lease node's zxid does not
 *   order the holders of different permits): its resource asks ZooKeeper whether the writer's
 *   lease node still exists with that token, and its log is checked by counting the tokens
 *   writing at once (checkCapacityWrites).
 * - `fx.problems()` lists what makes a run fail: checker violations, stale writes accepted,
 *   and an acquisition rate below the nemesis's minimum, with the participants' errors (counted
 *   by message) so a stalled run says why.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { ZooKeeper } from '@zk/protocol';
import { checkHistory, type HistoryEvent, type ResourceWrite, type Verdict } from './checker.js';
import { GuardedResource, leaseAlive, type LeaseCheck } from './resource.js';
import type { NemesisRow } from './summary.js';

/** The participant script. */
export const PARTICIPANT = fileURLToPath(new URL(import.meta.url.includes('/test/dist/') ? '../../faults/participant.mjs' : './participant.mjs', import.meta.url));
/** The session timeout participants ask for unless told otherwise, ms. */
export const SESSION_TIMEOUT = 2000;

/**
 * How a participant takes the lock: a Mutex, either side of a ReadWriteLock at random, a term of
 * leadership of a LeaderLatch or a LeaderSelector, a permit of a Semaphore (of the fixture's
 * `capacity` permits), or not at all (a broken participant).
 */
export type ParticipantKind = 'mutex' | 'rw' | 'latch' | 'selector' | 'semaphore' | 'cheat';

/** What to spawn. */
export interface ParticipantOptions {
  /** Its name in the history (unique within a fixture). */
  who: string;
  /** Servers to connect to, without the chroot (the fixture appends its root). */
  connect: string;
  /** It stops taking the lock after this long, ms. */
  durationMs: number;
  /** Sleep after each of the three writes of a hold, ms (0 for the fastest hand-overs). */
  workMs: number;
  /** Requested session timeout, ms (default {@link SESSION_TIMEOUT}). */
  sessionTimeoutMs?: number;
  kind?: ParticipantKind;
  /** A semaphore participant's permits (default: the fixture's capacity; more only for a control). */
  permits?: number;
  /** Its client's `leaseProof` and `serverTickTime` options (default: the environment's ZK_LEASE_PROOF, ZK_SERVER_TICK_TIME). */
  leaseProof?: 'auto' | 'write' | 'sync' | 'off';
  serverTickTime?: number;
}

/** A spawned participant. */
export interface Participant {
  readonly who: string;
  readonly proc: ChildProcess;
  /** Resolves when the process has exited. */
  readonly exited: Promise<void>;
  /** True until it exited. */
  readonly running: boolean;
  /** SIGKILL, logged as a `killed` event. */
  kill(): void;
  /**
   * SIGSTOP. The pause is logged as a `paused` event {from, to} once the participant is seen
   * running again after {@link resume}: `to` is its first logged line after SIGCONT (or its exit).
   */
  pause(): void;
  /**
   * SIGUSR2: the participant stops itself just before its next write in a hold where it wrote
   * already (participant.mjs); resolves once it logged that it stops (the pause's `from`), a pause
   * that {@link resume} ends as one from {@link pause}. Rejects after `timeoutMs`.
   */
  stopBeforeWrite(timeoutMs: number): Promise<void>;
  /** SIGCONT. */
  resume(): void;
}

/** Progress requirement of a nemesis. */
export interface ProgressRequirement {
  /** Minimum acquisitions per second of the run. */
  minPerSecond: number;
}

/** Participants, their merged history and the guarded resource of one nemesis run. */
export class FaultFixture {
  /** The history so far (pauses are added when they end). */
  readonly events: HistoryEvent[] = [];
  readonly participants: Participant[] = [];
  readonly resource: GuardedResource;
  readonly root: string;
  readonly lockPath: string;
  /** When the fixture started (for the rate), ms since the epoch. */
  readonly startedAt = Date.now();
  #sessionTimeoutMs = SESSION_TIMEOUT;
  /** Pauses not yet over: stopped, or continued (`cont`) but not yet seen running. */
  readonly #openPauses = new Map<string, { from: bigint; cont: bigint | undefined }>();
  /** Called (and dropped) on the next participant line: awaitHolder()'s wake-ups. */
  #onLine: (() => void)[] = [];

  /** Holders allowed at once: 1, or a semaphore's permits. */
  readonly capacity: number;
  /** The resource's client (capacity > 1). */
  readonly #zk: ZooKeeper | undefined;

  private constructor(resource: GuardedResource, root: string, lockPath: string, zk: ZooKeeper | undefined) {
    this.resource = resource;
    this.root = root;
    this.lockPath = lockPath;
    this.capacity = resource.capacity;
    this.#zk = zk;
  }

  /**
   * A fixture with its own guarded resource; participants connect under chroot `root` and lock
   * `lockPath`. With `capacity` > 1 (semaphore participants share that many permits) the
   * resource checks each write's lease with a client of its own on `connect` (same chroot).
   */
  static async start(options: { root: string; lockPath?: string; capacity?: number; connect?: string }): Promise<FaultFixture> {
    const capacity = options.capacity ?? 1;
    let zk: ZooKeeper | undefined;
    if (capacity > 1) {
      if (!options.connect) throw new Error('a fixture with a capacity above 1 needs `connect` for its resource\'s lease checks');
      zk = await ZooKeeper.connect(`${options.connect}${options.root}`, { sessionTimeout: 10_000 });
    }
    const client = zk;
    const alive: LeaseCheck | undefined = client && ((token, node) => leaseAlive(client, token, node));
    return new FaultFixture(await GuardedResource.start({ capacity, alive }), options.root, options.lockPath ?? '/faults/lock', zk);
  }

  /** Spawns a participant (participant.mjs). */
  spawn(o: ParticipantOptions): Participant {
    const sessionTimeout = o.sessionTimeoutMs ?? SESSION_TIMEOUT;
    const args = [PARTICIPANT, `${o.connect}${this.root}`, this.lockPath, o.who, String(o.durationMs), String(sessionTimeout), this.resource.url, String(o.workMs), o.kind ?? 'mutex', String(o.permits ?? this.capacity)];
    const env = { ...process.env, ...(o.leaseProof ? { ZK_LEASE_PROOF: o.leaseProof } : {}), ...(o.serverTickTime ? { ZK_SERVER_TICK_TIME: String(o.serverTickTime) } : {}) };
    return this.attach(o.who, spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'], env }), sessionTimeout);
  }

  /**
   * Adopts a participant process started elsewhere (a Curator participant, say) that prints the
   * same JSON lines on stdout (`{who, t, kind, ...}`, t from CLOCK_MONOTONIC in ns as a string)
   * and writes to `resource.url`; `sessionTimeoutMs` is the session timeout it asked for.
   */
  attach(who: string, proc: ChildProcess, sessionTimeoutMs: number): Participant {
    const o = { who };
    this.#sessionTimeoutMs = Math.min(this.#sessionTimeoutMs, sessionTimeoutMs);
    const error = (message: string) => this.events.push({ kind: 'error', who: o.who, t: process.hrtime.bigint(), message });
    let buffered = '';
    proc.stdout!.on('data', (d: Buffer) => {
      buffered += d.toString();
      const lines = buffered.split('\n');
      buffered = lines.pop() ?? '';
      for (const line of lines) {
        const stopping = stoppingAt(line);
        if (stopping !== undefined) {
          this.#openPauses.set(o.who, { from: stopping, cont: undefined });
          for (const wake of this.#onLine.splice(0)) wake();
          continue;
        }
        const e = parseEvent(line);
        if (e) {
          this.events.push(e);
          this.#seenRunning(o.who, e.t);
          for (const wake of this.#onLine.splice(0)) wake();
        }
        else if (line.trim()) error(`unparseable participant output: ${line.slice(0, 200)}`);
      }
    });
    let stderr = '';
    proc.stderr!.on('data', (d: Buffer) => {
      stderr = (stderr + d.toString()).slice(-2000);
      process.stderr.write(d);
    });
    let killed = false;
    let running = true;
    const exited = new Promise<void>((resolve) =>
      proc.once('exit', (code, signal) => {
        running = false;
        this.#seenRunning(o.who, process.hrtime.bigint());
        if (!killed && (code !== 0 || signal)) error(`exited with ${signal ?? `code ${code}`}${stderr ? `: ${stderr.trim().split('\n').slice(-3).join(' | ')}` : ''}`);
        resolve();
      }),
    );
    const p: Participant = {
      who: o.who,
      proc,
      exited,
      get running() {
        return running;
      },
      kill: () => {
        if (!running) return;
        killed = true;
        proc.kill('SIGKILL');
        this.events.push({ kind: 'killed', who: o.who, t: process.hrtime.bigint() });
      },
      pause: () => {
        proc.kill('SIGSTOP');
        const now = process.hrtime.bigint();
        this.#seenRunning(o.who, now);
        this.#openPauses.set(o.who, { from: now, cont: undefined });
      },
      stopBeforeWrite: async (timeoutMs) => {
        proc.kill('SIGUSR2');
        const until = Date.now() + timeoutMs;
        while (!this.#openPauses.has(o.who)) {
          if (Date.now() >= until || !running) throw new Error(`${o.who} did not stop itself before a write within ${timeoutMs} ms`);
          await new Promise<void>((resolve) => {
            const timer = setTimeout(resolve, Math.min(100, until - Date.now()));
            this.#onLine.push(() => {
              clearTimeout(timer);
              resolve();
            });
          });
        }
      },
      resume: () => {
        const open = this.#openPauses.get(o.who);
        // Stamped before the signal: the woken process may run (and stamp a line) on another core
        // before this one reads the clock again.
        if (open) open.cont ??= process.hrtime.bigint();
        proc.kill('SIGCONT');
      },
    };
    this.participants.push(p);
    return p;
  }

  /** Who holds the lock now by the log (acquired, and not yet released or killed), if anyone. */
  holder(): string | undefined {
    return this.holders()[0];
  }

  /**
   * Who holds the lock by the log, as soon as someone does: at once if someone holds it now, else
   * at the participant line that makes someone a holder; undefined if no one holds it by
   * `until` (ms since the epoch).
   */
  async awaitHolder(until: number): Promise<string | undefined> {
    for (;;) {
      const who = this.holder();
      if (who !== undefined || Date.now() >= until) return who;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, until - Date.now());
        this.#onLine.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  /** Everyone holding now by the log (a semaphore's permits: up to `capacity`), first acquired first. */
  holders(): string[] {
    const open = new Set<string>();
    for (const e of this.events) {
      if (e.kind === 'acquired') open.add(e.who);
      else if (e.kind === 'released' || e.kind === 'killed') open.delete(e.who);
    }
    return [...open];
  }

  /** The participant named `who`. */
  get(who: string): Participant | undefined {
    return this.participants.find((p) => p.who === who);
  }

  /** Resolves when every participant spawned so far has exited. */
  async exited(): Promise<void> {
    await Promise.all(this.participants.map((p) => p.exited));
  }

  /**
   * A pause ends when the participant is seen running after SIGCONT: at its first logged line
   * (stamped by the participant itself), or when it exits. SIGCONT only makes a process
   * runnable: until it has run, it can learn nothing (not even that its session expired), so an
   * acquire between the SIGCONT and its first sign of life is still one it slept through.
   */
  #seenRunning(who: string, t: bigint): void {
    const open = this.#openPauses.get(who);
    if (!open || open.cont === undefined || t < open.cont) return;
    this.#openPauses.delete(who);
    this.events.push({ kind: 'paused', who, t: open.from, from: open.from, to: t });
  }

  /** The history, with pauses still open counted up to now. */
  history(): HistoryEvent[] {
    const now = process.hrtime.bigint();
    return [...this.events, ...[...this.#openPauses].map(([who, { from }]): HistoryEvent => ({ kind: 'paused', who, t: from, from, to: now }))];
  }

  /** The checker's verdict on the history (with the smallest session timeout asked for). */
  check(): Verdict {
    return checkHistory(this.history(), { sessionTimeoutMs: this.#sessionTimeoutMs, capacity: this.capacity });
  }

  /** `error` events counted by message (digits folded, so paths and numbers group), most frequent first. */
  errorCounts(): [message: string, count: number][] {
    const counts = new Map<string, number>();
    for (const e of this.events) if (e.kind === 'error') counts.set(e.message.replace(/\d+/g, 'N'), (counts.get(e.message.replace(/\d+/g, 'N')) ?? 0) + 1);
    return [...counts].sort((a, b) => b[1] - a[1]);
  }

  /** Run time so far, ms. */
  get durationMs(): number {
    return Date.now() - this.startedAt;
  }

  /** The summary row of this run (see summary.ts). */
  row(nemesis: string, verdict: Verdict): NemesisRow {
    return {
      nemesis,
      processes: this.participants.length,
      acquisitions: verdict.acquisitions,
      violations: verdict.violations.length + this.resource.staleAccepted,
      longestDetectionMs: Math.round(verdict.longestLostDetectionMs),
      staleRejected: this.resource.staleRejected,
      staleAccepted: this.resource.staleAccepted,
      participantErrors: verdict.errors,
      durationMs: this.durationMs,
    };
  }

  /**
   * What makes the run fail: the checker's violations (the first 20), stale writes the fenced
   * resource accepted, and, with `progress`, fewer acquisitions per second than required (with
   * the participants' errors by message).
   */
  problems(verdict: Verdict, progress?: ProgressRequirement): string[] {
    const out = verdict.violations.slice(0, 20);
    if (verdict.violations.length > 20) out.push(`... and ${verdict.violations.length - 20} more violations`);
    out.push(...this.resource.fenceViolations().slice(0, 5));
    if (progress) {
      const rate = verdict.acquisitions / (this.durationMs / 1000);
      if (!(rate >= progress.minPerSecond)) {
        const errors = this.errorCounts().slice(0, 8).map(([m, c]) => `${c}x ${m}`);
        out.push(`progress: ${verdict.acquisitions} acquisitions in ${(this.durationMs / 1000).toFixed(1)} s = ${rate.toFixed(2)}/s, below the minimum ${progress.minPerSecond}/s; participant errors: ${errors.length ? errors.join('; ') : 'none'}`);
      }
    }
    return out;
  }

  /** Kills (SIGCONT, SIGKILL) every participant still running and stops the resource. */
  async close(): Promise<void> {
    for (const p of this.participants) {
      if (!p.running) continue;
      p.proc.kill('SIGCONT');
      p.kill();
    }
    await this.exited();
    await this.resource.close();
    await this.#zk?.close();
  }
}

/**
 * Writes a run's history and the resource's writes to `file` as JSON lines (bigints as strings),
 * time-ordered: the evidence kept when a nemesis run failed.
 */
export function writeEvidence(file: string, events: readonly HistoryEvent[], writes: readonly ResourceWrite[]): void {
  const lines = [...events.map((e) => ({ ...e, source: 'history' })), ...writes.map((w) => ({ kind: 'write', ...w, source: 'resource' }))];
  lines.sort((a, b) => (a.t < b.t ? -1 : a.t > b.t ? 1 : 0));
  writeFileSync(file, lines.map((l) => JSON.stringify(l, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v))).join('\n') + '\n');
}

/** The time a participant line `{kind: 'stopping'}` was stamped (it stops itself next: participant.mjs); undefined for any other line. */
function stoppingAt(line: string): bigint | undefined {
  if (!line.includes('"stopping"')) return undefined;
  try {
    const e = JSON.parse(line) as { kind?: unknown; t?: unknown };
    return e.kind === 'stopping' && typeof e.t === 'string' ? BigInt(e.t) : undefined;
  } catch {
    return undefined;
  }
}

/** Parses one participant line into an event; undefined if it is not one. */
export function parseEvent(line: string): HistoryEvent | undefined {
  let e: { kind?: unknown; who?: unknown; t?: unknown; token?: unknown; mode?: unknown; message?: unknown };
  try {
    e = JSON.parse(line) as typeof e;
  } catch {
    return undefined;
  }
  if (typeof e.who !== 'string' || typeof e.t !== 'string') return undefined;
  const who = e.who;
  const t = BigInt(e.t);
  switch (e.kind) {
    case 'acquired':
      return { kind: 'acquired', who, t, token: BigInt(String(e.token)), mode: e.mode === 'read' ? 'read' : 'write' };
    case 'released':
    case 'lost':
      return { kind: e.kind, who, t };
    case 'error':
      return { kind: 'error', who, t, message: String(e.message) };
    default:
      return undefined;
  }
}

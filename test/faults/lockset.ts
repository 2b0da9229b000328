/**
 * A Jepsen-style lock-set workload (issue 21 part 3): under a Mutex each holder reads a register
 * (a list), appends its own next item and writes it back (lockset-participant.mjs). At the end
 * every acknowledged item must be in the register exactly once. A holder that wakes up from a
 * pause, or that kept working on a server cut off from the quorum, writes back the list it read
 * before another holder appended: without fencing that write erases the other's items (the
 * negative control must lose items); with `lease.fenced()` (znode) or a store that refuses lower
 * fencing tokens, it is refused.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import { fileURLToPath } from 'node:url';
import { ZooKeeper } from '@zk/protocol';
import type { ServerHandle, ZooKeeperEnsemble } from '../harness/zookeeper.js';

/** How the register is kept and written (see lockset-participant.mjs). */
export type LockSetVariant = 'znode-fenced' | 'znode-plain' | 'store-fenced' | 'store-plain' | 'pg-fenced' | 'pg-plain' | 'redis-fenced' | 'redis-plain';

/** The participant script. */
export const LOCKSET_PARTICIPANT = fileURLToPath(new URL(import.meta.url.includes('/test/dist/') ? '../../faults/lockset-participant.mjs' : './lockset-participant.mjs', import.meta.url));

/**
 * An external register on 127.0.0.1 (GET reads, PUT replaces). `fenced`: every call carries the
 * holder's fencing token (`?token=`) and a call with a token lower than the highest seen, reads
 * included, is refused with 409; a read raises the bar too, so a stale holder cannot write back
 * what it read before the next holder's read.
 */
export class RegisterStore {
  items: string[] = [];
  highest = -1n;
  refused = 0;
  readonly #server: Server;
  url = '';

  private constructor(readonly fenced: boolean) {
    this.#server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const token = new URL(req.url ?? '/', 'http://x').searchParams.get('token');
        if (this.fenced) {
          const t = BigInt(token ?? '-1');
          if (t < this.highest) {
            this.refused++;
            res.writeHead(409).end(`token ${t} < ${this.highest}`);
            return;
          }
          this.highest = t;
        }
        if (req.method === 'PUT') this.items = JSON.parse(Buffer.concat(chunks).toString()) as string[];
        res.writeHead(200).end(JSON.stringify(this.items));
      });
    });
  }

  static async start(fenced: boolean): Promise<RegisterStore> {
    const s = new RegisterStore(fenced);
    await new Promise<void>((resolve) => s.#server.listen(0, '127.0.0.1', resolve));
    const addr = s.#server.address();
    if (addr === null || typeof addr === 'string') throw new Error('no address');
    s.url = `http://127.0.0.1:${addr.port}/register`;
    return s;
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.#server.close(() => resolve()));
  }
}

/** The verdict on one run. */
export interface LockSetVerdict {
  acked: number;
  /** Acknowledged items not in the final register. */
  missing: string[];
  /** Items in the final register more than once. */
  duplicated: string[];
  finalSize: number;
}

/** Every acknowledged item must be in `final` exactly once. */
export function checkLockSet(acked: readonly string[], final: readonly string[]): LockSetVerdict {
  const counts = new Map<string, number>();
  for (const item of final) counts.set(item, (counts.get(item) ?? 0) + 1);
  return {
    acked: acked.length,
    missing: acked.filter((i) => !counts.has(i)),
    duplicated: [...counts].filter(([, n]) => n > 1).map(([i]) => i),
    finalSize: final.length,
  };
}

/** One logged line of a participant. */
export interface LockSetLine {
  who: string;
  t: string;
  kind: 'acquired' | 'read' | 'ack' | 'rejected' | 'released' | 'error';
  item?: string;
  message?: string;
}

/** Participants of one run, their lines, and waits on them. */
export class LockSetRun {
  readonly lines: LockSetLine[] = [];
  readonly #procs = new Map<string, ChildProcess>();
  readonly #exits: Promise<void>[] = [];
  #onLine: Array<() => void> = [];

  constructor(
    readonly variant: LockSetVariant,
    readonly register: string,
    readonly lockPath: string,
  ) {}

  /** Starts a participant connected to `connect` (with its chroot) for `durationMs`. */
  spawn(who: string, connect: string, o: { durationMs: number; sessionTimeoutMs: number; workMs: number; env?: Record<string, string> }): void {
    const proc = spawn(process.execPath, [LOCKSET_PARTICIPANT, connect, this.lockPath, who, String(o.durationMs), String(o.sessionTimeoutMs), this.variant, this.register, String(o.workMs)], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...o.env } });
    this.#procs.set(who, proc);
    let buf = '';
    proc.stdout?.on('data', (d: Buffer) => {
      buf += d.toString();
      let nl: number;
      while ((nl = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        try {
          this.lines.push(JSON.parse(line) as LockSetLine);
        } catch {
          this.lines.push({ who, t: '0', kind: 'error', message: `not a line: ${line}` });
        }
        for (const f of this.#onLine.splice(0)) f();
      }
    });
    let err = '';
    proc.stderr?.on('data', (d: Buffer) => (err = (err + d.toString()).slice(-2000)));
    this.#exits.push(
      new Promise<void>((resolve) =>
        proc.once('exit', (code, signal) => {
          if (code !== 0 && signal !== 'SIGKILL') this.lines.push({ who, t: '0', kind: 'error', message: `exit ${code ?? signal}: ${err}` });
          resolve();
        }),
      ),
    );
  }

  /** Resolves with the first line (from `from` on) that `match` accepts, or rejects after `timeoutMs`. */
  async awaitLine(match: (l: LockSetLine) => boolean, timeoutMs: number, from = this.lines.length): Promise<LockSetLine> {
    const deadline = performance.now() + timeoutMs;
    for (let i = from; ; ) {
      for (; i < this.lines.length; i++) if (match(this.lines[i]!)) return this.lines[i]!;
      const left = deadline - performance.now();
      if (left <= 0) throw new Error(`no matching participant line within ${timeoutMs} ms; each participant's last lines: ${this.lastLines(4)}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.#onLine.push(() => (clearTimeout(timer), resolve()));
      });
    }
  }

  /** Each participant's last `n` lines (the busy ones would crowd a quiet one out of the last lines overall). */
  lastLines(n: number): string {
    const by = new Map<string, LockSetLine[]>();
    for (const l of this.lines) by.set(l.who, [...(by.get(l.who) ?? []), l].slice(-n));
    return [...by.values()].flat().map((l) => JSON.stringify(l)).join(' ');
  }

  /** SIGSTOP / SIGCONT of one participant. */
  signal(who: string, sig: 'SIGSTOP' | 'SIGCONT' | 'SIGKILL'): void {
    this.#procs.get(who)?.kill(sig);
  }

  /** Waits until every participant has exited. */
  async exited(): Promise<void> {
    await Promise.all(this.#exits);
  }

  /**
   * The SIGSTOP fault, `pauses` times: a holder that has read the register and not yet written it
   * back is stopped for `pauseMs` (the fault: longer than the session), then resumed until its
   * write is acknowledged or refused. Returns the acknowledgements others made during the pauses.
   */
  async pauseReaders(pauses: number, pauseMs: number): Promise<number> {
    let acksDuringPauses = 0;
    for (let k = 0; k < pauses; k++) {
      const { who } = await this.awaitLine((l) => l.kind === 'read', 20_000);
      this.signal(who, 'SIGSTOP');
      const from = this.lines.length;
      await new Promise((r) => setTimeout(r, pauseMs)); // the pause is the fault: it outlives the session
      acksDuringPauses += this.lines.slice(from).filter((l) => l.kind === 'ack' && l.who !== who).length;
      const woke = this.lines.length;
      this.signal(who, 'SIGCONT');
      await this.awaitLine((l) => l.who === who && (l.kind === 'ack' || l.kind === 'rejected'), 20_000, woke);
    }
    return acksDuringPauses;
  }

  /**
   * The cut-off schedule: a victim connected to `follower` alone (working 2.5 T between its read
   * and its write) and two others through `rest`; `strikes` times, once the victim has read, its
   * server is cut off from the other servers until the victim's write is acknowledged or refused,
   * then healed and the quorum awaited. Returns the acknowledgements others made during the cuts.
   * Every link is healed and every process killed before it returns or throws.
   */
  async cutOffReaders(ensemble: ZooKeeperEnsemble, follower: ServerHandle, rest: string, o: { strikes: number; sessionTimeoutMs: number; env: Record<string, string> }): Promise<number> {
    const T = o.sessionTimeoutMs;
    // The participants outlive any schedule (every one is killed below): a strike that waited out a
    // slow rejoin must still find a victim that reads again.
    const durationMs = o.strikes * 120_000;
    this.spawn('victim', follower.connectString, { durationMs, sessionTimeoutMs: T, workMs: 2.5 * T, env: o.env });
    for (let i = 0; i < 2; i++) this.spawn(`p${i}`, rest, { durationMs, sessionTimeoutMs: T, workMs: 50, env: o.env });
    let acksDuringCuts = 0;
    // Where the next strike looks for the victim's read: after the last strike's end, not after
    // whatever was logged when the wait began. The victim reconnects once its server has rejoined
    // and may read before the quorum wait below has seen that server serve; a read missed that
    // way left the strike waiting for a next read that never came (the victim's time ran out).
    let searchFrom = 0;
    // A read at most T/2 old: the cut must come well before the victim's write (2.5 T after its
    // read), so that its lease is lost while it works.
    const fresh = (l: LockSetLine) => process.hrtime.bigint() - BigInt(l.t) <= BigInt(Math.round(T / 2)) * 1_000_000n;
    try {
      for (let k = 0; k < o.strikes; k++) {
        const read = await this.awaitLine((l) => l.who === 'victim' && l.kind === 'read' && fresh(l), 30_000, searchFrom);
        const from = this.lines.indexOf(read);
        ensemble.links!.isolate(follower.id, 'hold');
        // Cut until the victim has written (or been refused): the others take the lock meanwhile.
        const end = await this.awaitLine((l) => l.who === 'victim' && (l.kind === 'ack' || l.kind === 'rejected'), 30_000, from);
        searchFrom = this.lines.indexOf(end) + 1;
        acksDuringCuts += this.lines.slice(from).filter((l) => l.kind === 'ack' && l.who !== 'victim').length;
        ensemble.links!.heal();
        await ensemble.waitForQuorum(undefined, { all: true });
      }
    } finally {
      ensemble.links!.heal();
      this.kill();
      await this.exited();
    }
    return acksDuringCuts;
  }

  /** Kills whatever still runs. */
  kill(): void {
    for (const p of this.#procs.values()) if (p.exitCode === null) p.kill('SIGKILL');
  }

  /** The acknowledged items. */
  acked(): string[] {
    return this.lines.filter((l) => l.kind === 'ack').map((l) => l.item!);
  }

  /** Errors and refusals, counted by message (for a run that says why it stalled). */
  problems(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const l of this.lines) {
      if (l.kind !== 'error' && l.kind !== 'rejected') continue;
      const key = `${l.kind}: ${(l.message ?? '').slice(0, 120)}`;
      out[key] = (out[key] ?? 0) + 1;
    }
    return out;
  }
}

/** The register's final content: the store's, or the znode's read after a sync through `connect`. */
export async function finalRegister(variant: LockSetVariant, register: string, connect: string, store?: RegisterStore): Promise<string[]> {
  if (variant.startsWith('store')) return store!.items;
  const zk = await ZooKeeper.connect(connect, { sessionTimeout: 10_000 });
  try {
    await zk.sync(register);
    const { data } = await zk.getData(register);
    return data.length === 0 ? [] : (JSON.parse(data.toString()) as string[]);
  } finally {
    await zk.close();
  }
}

/**
 * The history checker of the fault suite. Participants (separate processes on one machine) log
 * what happened with CLOCK_MONOTONIC timestamps (`process.hrtime.bigint()`, comparable across
 * processes of one machine); the guarded resources log which writes they accepted. Pure.
 */

/** One logged event. Times are nanoseconds of CLOCK_MONOTONIC. */
export type HistoryEvent =
  /** `acquire()` returned: the participant believes it holds the lock from `t`. */
  | { readonly kind: 'acquired'; readonly who: string; readonly t: bigint; readonly token: bigint; readonly mode?: 'read' | 'write' }
  /** The participant called `release()` at `t` (it stopped believing it holds the lock). */
  | { readonly kind: 'released'; readonly who: string; readonly t: bigint }
  /** The lease's signal aborted at `t`. */
  | { readonly kind: 'lost'; readonly who: string; readonly t: bigint }
  /** The participant was killed (SIGKILL) at `t`: it can act no more. */
  | { readonly kind: 'killed'; readonly who: string; readonly t: bigint }
  /**
   * The harness stopped the participant (SIGSTOP) at `from`; `to` is when it was seen running
   * again after SIGCONT (its first logged line: a continued process has not necessarily run yet).
   */
  | { readonly kind: 'paused'; readonly who: string; readonly t: bigint; readonly from: bigint; readonly to: bigint }
  /** The participant reported an error (a failed acquire, a session it could not open, a crash). */
  | { readonly kind: 'error'; readonly who: string; readonly t: bigint; readonly message: string };

/** A write the resource accepted or rejected. */
export interface ResourceWrite {
  readonly who: string;
  readonly t: bigint;
  readonly token: bigint;
  readonly accepted: boolean;
}

/** What the checker found. */
export interface Verdict {
  readonly acquisitions: number;
  readonly violations: string[];
  /**
   * Longest excused overlap, ms: from the next holder's acquire to the paused old holder's
   * signal aborting (or its release, if it released first). 0 when no overlap was excused.
   */
  readonly longestLostDetectionMs: number;
  /** Overlaps excused because the old holder was paused (SIGSTOP) when the next one acquired. */
  readonly pausedOverlaps: number;
  /** `error` events in the history. */
  readonly errors: number;
}

/** Options of {@link checkHistory}. */
export interface CheckOptions {
  /**
   * The session timeout the participants asked for, ms. With it, a holder killed (SIGKILL) whose
   * lock went to another participant sooner than half of it after the kill is a violation: its
   * session could not have expired yet (the server heard from it at most T/3 before the kill).
   */
  readonly sessionTimeoutMs?: number;
}

interface Hold {
  who: string;
  from: bigint;
  to: bigint | undefined;
  token: bigint;
  mode: 'read' | 'write';
  lostAt: bigint | undefined;
  killedAt: bigint | undefined;
}

const ms = (ns: bigint) => (Number(ns) / 1e6).toFixed(1);

/**
 * Checks a history. Exclusion: two holds overlap when the second was acquired while the first
 * still believed it held the lock (not both reads). Every overlap is a violation except:
 * - the old holder's signal had aborted by the new acquire (it knew it had lost the lock);
 * - the old holder was paused (a `paused` event covers the new acquire): no client can prevent
 *   that; its detection window (new acquire to the old holder's signal) is reported, and the
 *   fenced resource must reject its writes (the caller checks that).
 * A late signal (aborted after the new acquire, not paused) is a violation. A hold ended by
 * SIGKILL whose lock was acquired by another within T/2 of the kill is a violation too (with
 * `sessionTimeoutMs`). Fencing tokens must strictly increase from one exclusive holder to the next.
 */
export function checkHistory(events: readonly HistoryEvent[], options: CheckOptions = {}): Verdict {
  const sorted = [...events].sort((a, b) => (a.t < b.t ? -1 : a.t > b.t ? 1 : 0));
  const pauses = new Map<string, { from: bigint; to: bigint }[]>();
  const open = new Map<string, Hold>();
  const holds: Hold[] = [];
  let errors = 0;
  for (const e of sorted) {
    if (e.kind === 'paused') {
      pauses.set(e.who, [...(pauses.get(e.who) ?? []), { from: e.from, to: e.to }]);
    } else if (e.kind === 'error') {
      errors++;
    } else if (e.kind === 'acquired') {
      const h: Hold = { who: e.who, from: e.t, to: undefined, token: e.token, mode: e.mode ?? 'write', lostAt: undefined, killedAt: undefined };
      open.set(e.who, h);
      holds.push(h);
    } else {
      const h = open.get(e.who);
      if (!h) continue;
      if (e.kind === 'lost') {
        h.lostAt ??= e.t;
        continue;
      }
      h.to = e.t;
      if (e.kind === 'killed') h.killedAt = e.t;
      open.delete(e.who);
    }
  }
  const end = sorted.length ? sorted[sorted.length - 1]!.t : 0n;
  for (const h of holds) h.to ??= end;
  const pausedAt = (who: string, t: bigint) => (pauses.get(who) ?? []).some((p) => p.from <= t && t <= p.to);
  const violations: string[] = [];
  let longest = 0;
  let pausedOverlaps = 0;
  const ordered = [...holds].sort((a, b) => (a.from < b.from ? -1 : a.from > b.from ? 1 : 0));
  const conflict = (a: Hold, b: Hold) => a.mode === 'write' || b.mode === 'write';
  for (let i = 0; i < ordered.length; i++) {
    const a = ordered[i]!;
    for (let j = i + 1; j < ordered.length && ordered[j]!.from < a.to!; j++) {
      const b = ordered[j]!;
      if (!conflict(a, b)) continue;
      // b took the lock while a still believed it held it.
      if (a.lostAt !== undefined && a.lostAt <= b.from) continue; // a already knew it had lost it
      if (pausedAt(a.who, b.from)) {
        pausedOverlaps++;
        longest = Math.max(longest, Number((a.lostAt ?? a.to!) - b.from) / 1e6);
        continue;
      }
      const signal = a.lostAt === undefined ? `${a.who}'s lease signal never aborted` : `${a.who}'s lease signal aborted only ${ms(a.lostAt - b.from)} ms later`;
      violations.push(`${a.who} (token ${a.token}) and ${b.who} (token ${b.token}) held the lock together for ${ms(a.to! - b.from)} ms, and ${signal}`);
    }
    if (a.killedAt !== undefined && options.sessionTimeoutMs !== undefined) {
      const early = a.killedAt + BigInt(Math.round((options.sessionTimeoutMs / 2) * 1e6));
      const next = ordered.find((b) => b.from >= a.killedAt! && b.from < early && conflict(a, b));
      if (next) violations.push(`${next.who} (token ${next.token}) acquired ${ms(next.from - a.killedAt)} ms after ${a.who} (token ${a.token}) was killed holding the lock, before its session (timeout ${options.sessionTimeoutMs} ms) could expire`);
    }
  }
  const exclusive = ordered.filter((h) => h.mode === 'write');
  for (let i = 1; i < exclusive.length; i++) {
    if (exclusive[i]!.token <= exclusive[i - 1]!.token) violations.push(`fencing token did not grow: ${exclusive[i - 1]!.who} had ${exclusive[i - 1]!.token}, then ${exclusive[i]!.who} got ${exclusive[i]!.token}`);
  }
  return { acquisitions: holds.length, violations, longestLostDetectionMs: longest, pausedOverlaps, errors };
}

/**
 * Checks a fenced resource's log: it never accepted a write whose token was lower than one it
 * had accepted before (a stale holder).
 */
export function checkFenced(writes: readonly ResourceWrite[]): string[] {
  const violations: string[] = [];
  let highest = -1n;
  for (const w of [...writes].sort((a, b) => (a.t < b.t ? -1 : 1))) {
    if (!w.accepted) continue;
    if (w.token < highest) violations.push(`accepted a stale write from ${w.who} with token ${w.token} after token ${highest}`);
    if (w.token > highest) highest = w.token;
  }
  return violations;
}

/** Writes an unfenced resource accepted from two holders interleaved: the damage fencing prevents. */
export function interleavedWriters(writes: readonly ResourceWrite[]): number {
  let switches = 0;
  const sorted = [...writes].filter((w) => w.accepted).sort((a, b) => (a.t < b.t ? -1 : 1));
  const tokenSeenAgain = new Set<bigint>();
  let last: bigint | undefined;
  for (const w of sorted) {
    if (last !== undefined && w.token !== last && tokenSeenAgain.has(w.token)) switches++;
    tokenSeenAgain.add(w.token);
    last = w.token;
  }
  return switches;
}

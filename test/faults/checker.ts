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
  | { readonly kind: 'killed'; readonly who: string; readonly t: bigint };

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
  /** Longest time from a lease being taken over to its old holder's signal aborting, ms. */
  readonly longestLostDetectionMs: number;
}

interface Hold {
  who: string;
  from: bigint;
  to: bigint | undefined;
  token: bigint;
  mode: 'read' | 'write';
  lostAt: bigint | undefined;
}

/**
 * Checks a history: no two exclusive holds overlap (and no read overlaps a write); fencing
 * tokens strictly increase from one exclusive holder to the next; a hold that was taken over
 * (the next holder acquired while it still believed it held the lock) had its signal aborted;
 * its detection window is reported.
 */
export function checkHistory(events: readonly HistoryEvent[]): Verdict {
  const sorted = [...events].sort((a, b) => (a.t < b.t ? -1 : a.t > b.t ? 1 : 0));
  const open = new Map<string, Hold>();
  const holds: Hold[] = [];
  for (const e of sorted) {
    if (e.kind === 'acquired') {
      const h: Hold = { who: e.who, from: e.t, to: undefined, token: e.token, mode: e.mode ?? 'write', lostAt: undefined };
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
      open.delete(e.who);
    }
  }
  const end = sorted.length ? sorted[sorted.length - 1]!.t : 0n;
  for (const h of holds) h.to ??= end;
  const violations: string[] = [];
  let longest = 0;
  const ordered = [...holds].sort((a, b) => (a.from < b.from ? -1 : 1));
  for (let i = 0; i < ordered.length; i++) {
    const a = ordered[i]!;
    for (let j = i + 1; j < ordered.length && ordered[j]!.from < a.to!; j++) {
      const b = ordered[j]!;
      if (a.mode === 'read' && b.mode === 'read') continue;
      // b took the lock while a still believed it held it. Legitimate only if a's lease was
      // already lost (its session gone): then it is the paused-holder case, and the window
      // between b's acquire and a's signal is what the lease can promise.
      if (a.lostAt !== undefined && a.lostAt <= b.from) continue;
      if (a.lostAt !== undefined) {
        longest = Math.max(longest, Number(a.lostAt - b.from) / 1e6);
        continue;
      }
      violations.push(`${a.who} (token ${a.token}) and ${b.who} (token ${b.token}) held the lock together for ${(Number(a.to! - b.from) / 1e6).toFixed(1)} ms, and ${a.who}'s lease signal never aborted`);
    }
  }
  const exclusive = ordered.filter((h) => h.mode === 'write');
  for (let i = 1; i < exclusive.length; i++) {
    if (exclusive[i]!.token <= exclusive[i - 1]!.token) violations.push(`fencing token did not grow: ${exclusive[i - 1]!.who} had ${exclusive[i - 1]!.token}, then ${exclusive[i]!.who} got ${exclusive[i]!.token}`);
  }
  return { acquisitions: holds.length, violations, longestLostDetectionMs: longest };
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

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
   * The session timeout the participants asked for, ms. With it, a holder killed (SIGKILL) is
   * counted as still holding for half of it after the kill: its session could not have expired
   * yet (the server heard from it at most T/3 before the kill), so an acquire in that window that
   * needed its place is a violation.
   */
  readonly sessionTimeoutMs?: number;
  /**
   * How many holders may hold at once: 1 (default) for a lock or a leader election, N for a
   * semaphore with N permits. With N > 1 every hold counts as one permit whatever its mode, and
   * fencing tokens are checked per holder (a lease node's creation zxid orders the nodes, not the
   * holders of different permits: see {@link checkCapacityWrites}).
   */
  readonly capacity?: number;
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
const byFrom = (a: Hold, b: Hold) => (a.from < b.from ? -1 : a.from > b.from ? 1 : 0);

/**
 * Checks a history. Exclusion is counted: when a participant acquires, every other hold it
 * conflicts with that was still believed held at that moment (acquired before, not yet released
 * or killed) takes a place, and there are `capacity` places (1 unless told: a lock, a leader
 * election; N: a semaphore's permits; two reads never conflict). Not counted:
 * - a hold whose signal had aborted by the new acquire (its holder knew it had lost it);
 * - a hold whose holder was paused (a `paused` event covers the new acquire): no client can
 *   prevent that; when counting it would have gone over capacity, the overlap is excused, its
 *   detection window (new acquire to the old holder's signal) is reported, and the fenced
 *   resource must reject its writes (the caller checks that).
 * A late signal (aborted after the new acquire, not paused) therefore still counts: a violation
 * when it puts the count over capacity. With `sessionTimeoutMs`, a holder killed (SIGKILL) still
 * takes its place for T/2 after the kill, so an acquire in that window that needed its place is a
 * violation too. Fencing tokens must strictly increase from one exclusive holder to the next
 * (capacity 1); with capacity N, no two holds may share a token and each participant's tokens
 * must grow.
 */
export function checkHistory(events: readonly HistoryEvent[], options: CheckOptions = {}): Verdict {
  const capacity = options.capacity ?? 1;
  if (!Number.isInteger(capacity) || capacity < 1) throw new RangeError(`checkHistory: capacity must be an integer >= 1, got ${capacity}`);
  const { holds, pauses, errors } = holdsOf(events, capacity);
  const pausedAt = (who: string, t: bigint) => (pauses.get(who) ?? []).some((p) => p.from <= t && t <= p.to);
  const conflict = (a: Hold, b: Hold) => a.mode === 'write' || b.mode === 'write';
  const expiry = options.sessionTimeoutMs === undefined ? undefined : BigInt(Math.round((options.sessionTimeoutMs / 2) * 1e6));
  const violations: string[] = [];
  let longest = 0;
  let pausedOverlaps = 0;
  const ordered = [...holds].sort(byFrom);
  // A sweep in acquire order: `live` are the holds acquired earlier and not yet over; `ghosts`
  // the killed ones whose session could not have expired yet.
  let live: Hold[] = [];
  let ghosts: Hold[] = [];
  const reportedKills = new Set<Hold>();
  for (const b of ordered) {
    live = live.filter((a) => a.to! > b.from);
    ghosts = expiry === undefined ? [] : ghosts.filter((a) => b.from < a.killedAt! + expiry);
    const believed: Hold[] = [];
    const paused: Hold[] = [];
    for (const a of live) {
      if (!conflict(a, b)) continue;
      if (a.lostAt !== undefined && a.lostAt <= b.from) continue; // a already knew it had lost it
      (pausedAt(a.who, b.from) ? paused : believed).push(a);
    }
    const dead = ghosts.filter((a) => a.killedAt! <= b.from && conflict(a, b));
    if (paused.length > 0 && believed.length + dead.length + paused.length >= capacity) {
      pausedOverlaps += capacity === 1 ? paused.length : 1;
      for (const a of paused) longest = Math.max(longest, Number((a.lostAt ?? a.to!) - b.from) / 1e6);
    }
    if (believed.length + dead.length >= capacity) violations.push(...overCapacity(b, believed, dead, capacity, reportedKills, options.sessionTimeoutMs));
    live.push(b);
    if (b.killedAt !== undefined && expiry !== undefined) ghosts.push(b);
  }
  violations.push(...tokenViolations(ordered, capacity));
  return { acquisitions: holds.length, violations, longestLostDetectionMs: longest, pausedOverlaps, errors };
}

/** The holds of a history (each from `acquired` to `released`/`killed`, or the end), its pauses by participant and its error count. */
function holdsOf(events: readonly HistoryEvent[], capacity: number): { holds: Hold[]; pauses: Map<string, { from: bigint; to: bigint }[]>; errors: number } {
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
      const h: Hold = { who: e.who, from: e.t, to: undefined, token: e.token, mode: capacity > 1 ? 'write' : (e.mode ?? 'write'), lostAt: undefined, killedAt: undefined };
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
  return { holds, pauses, errors };
}

/** Why `b`'s acquire went over capacity: the holds that still believed they held, and the killed ones whose session lived. */
function overCapacity(b: Hold, believed: readonly Hold[], dead: readonly Hold[], capacity: number, reportedKills: Set<Hold>, sessionTimeoutMs: number | undefined): string[] {
  const signal = (a: Hold) => (a.lostAt === undefined ? `${a.who}'s lease signal never aborted` : `${a.who}'s lease signal aborted only ${ms(a.lostAt - b.from)} ms later`);
  const killed = (a: Hold) => `${ms(b.from - a.killedAt!)} ms after ${a.who} (token ${a.token}) was killed holding the lock, before its session (timeout ${sessionTimeoutMs} ms) could expire`;
  if (capacity === 1) {
    // One holder at a time: name each pair (a killed holder's successor only once).
    const out = believed.map((a) => `${a.who} (token ${a.token}) and ${b.who} (token ${b.token}) held the lock together for ${ms((a.to! < b.to! ? a.to! : b.to!) - b.from)} ms, and ${signal(a)}`);
    for (const a of dead) {
      if (reportedKills.has(a)) continue;
      reportedKills.add(a);
      out.push(`${b.who} (token ${b.token}) acquired ${killed(a)}`);
    }
    return out;
  }
  const others = [...believed.map((a) => `${a.who} (token ${a.token}; ${signal(a)})`), ...dead.map((a) => `${a.who} (token ${a.token}; killed ${ms(b.from - a.killedAt!)} ms before, its session could not have expired)`)];
  return [`${b.who} (token ${b.token}) acquired while ${others.length} others held: ${believed.length + dead.length + 1} holders at once, over the capacity of ${capacity}: ${others.join(', ')}`];
}

/**
 * Capacity 1: tokens grow strictly from one exclusive holder to the next. Capacity N: a token is
 * a lease node's creation zxid, so no two holds share one and each participant's grow (a node
 * created later has a larger zxid); holders of different permits are not ordered by them.
 */
function tokenViolations(ordered: readonly Hold[], capacity: number): string[] {
  const out: string[] = [];
  if (capacity === 1) {
    const exclusive = ordered.filter((h) => h.mode === 'write');
    for (let i = 1; i < exclusive.length; i++) {
      if (exclusive[i]!.token <= exclusive[i - 1]!.token) out.push(`fencing token did not grow: ${exclusive[i - 1]!.who} had ${exclusive[i - 1]!.token}, then ${exclusive[i]!.who} got ${exclusive[i]!.token}`);
    }
    return out;
  }
  const owner = new Map<bigint, string>();
  const last = new Map<string, bigint>();
  for (const h of ordered) {
    const other = owner.get(h.token);
    if (other !== undefined) out.push(`fencing token ${h.token} held twice: by ${other}, then by ${h.who}`);
    owner.set(h.token, h.who);
    const previous = last.get(h.who);
    if (previous !== undefined && h.token <= previous) out.push(`fencing token did not grow: ${h.who} had ${previous}, then got ${h.token}`);
    last.set(h.who, h.token);
  }
  return out;
}

/**
 * The most holds believed at once in a history (acquired, not yet released or killed; a lost
 * signal does not end a hold here): a semaphore run must reach its permits, or it never tested
 * its capacity.
 */
export function peakHolders(events: readonly HistoryEvent[]): number {
  const sorted = [...events].sort((a, b) => (a.t < b.t ? -1 : a.t > b.t ? 1 : 0));
  const open = new Set<string>();
  let peak = 0;
  for (const e of sorted) {
    if (e.kind === 'acquired') open.add(e.who);
    else if (e.kind === 'released' || e.kind === 'killed') open.delete(e.who);
    peak = Math.max(peak, open.size);
  }
  return peak;
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

/**
 * Checks the log of a resource shared by `capacity` holders at once (a semaphore's permits),
 * where a single highest-token rule cannot work: a lease node's zxid orders the nodes, not the
 * holders of different permits (an older holder may still hold legitimately while newer ones
 * write). Each token's accepted writes span an interval, from its first to its last; at no moment
 * may more than `capacity` of them overlap. A stale write accepted while `capacity` current holders
 * were writing shows up as one too many.
 */
export function checkCapacityWrites(writes: readonly ResourceWrite[], capacity: number): string[] {
  const spans = new Map<bigint, { who: string; from: bigint; to: bigint }>();
  for (const w of writes) {
    if (!w.accepted) continue;
    const s = spans.get(w.token);
    if (!s) spans.set(w.token, { who: w.who, from: w.t, to: w.t });
    else {
      if (w.t < s.from) s.from = w.t;
      if (w.t > s.to) s.to = w.t;
    }
  }
  const ordered = [...spans].sort((a, b) => (a[1].from < b[1].from ? -1 : a[1].from > b[1].from ? 1 : 0));
  const violations: string[] = [];
  let live: [bigint, { who: string; from: bigint; to: bigint }][] = [];
  for (const entry of ordered) {
    live = live.filter(([, s]) => s.to >= entry[1].from);
    if (live.length >= capacity) violations.push(`accepted writes of ${live.length + 1} tokens at once, over the capacity of ${capacity}: ${[...live, entry].map(([t, s]) => `${s.who} (token ${t})`).join(', ')}`);
    live.push(entry);
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

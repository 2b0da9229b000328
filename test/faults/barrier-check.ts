/**
 * The double-barrier workload of the fault suite (double-barrier.test.ts): the events members
 * (barrier-member.mjs) and the harness log, and the checker of the barrier's promises under
 * failure. Pure apart from the member script's path.
 */
import { fileURLToPath } from 'node:url';

/** The member script. */
export const BARRIER_MEMBER = fileURLToPath(new URL(import.meta.url.includes('/test/dist/') ? '../../faults/barrier-member.mjs' : './barrier-member.mjs', import.meta.url));

/** One event; times are nanoseconds of CLOCK_MONOTONIC (comparable across the processes of one machine). */
export type BarrierEvent =
  /** A member's log: it began (`entering`, `leaving`), passed (`entered`, `left`) or gave up on a wait (`*-failed`) in `round`. */
  | { readonly who: string; readonly t: bigint; readonly kind: 'entering' | 'entered' | 'enter-failed' | 'leaving' | 'left' | 'leave-failed'; readonly round: number; readonly message?: string }
  /** The harness SIGKILLed the member at `t`. */
  | { readonly who: string; readonly t: bigint; readonly kind: 'killed' }
  /** The harness cut the member off from the server from `t` to `to`, for longer than its session timeout (its session expired). */
  | { readonly who: string; readonly t: bigint; readonly kind: 'isolated'; readonly to: bigint };

/** Options of {@link checkBarrier}. */
export interface BarrierCheckOptions {
  /** The barrier's member count. */
  members: number;
  /** The members' session timeout, ms: a dead member's node goes at most about this long after its death. */
  sessionTimeoutMs: number;
  /** How long a live member may still wait once nothing it waits for is missing, ms. */
  boundMs: number;
}

/** What {@link checkBarrier} found. */
export interface BarrierVerdict {
  /** Enters that passed. */
  readonly entered: number;
  /** Leaves that completed. */
  readonly left: number;
  /** The longest a wait went on once nothing it waited for was missing, ms. */
  readonly longestWaitMs: number;
  readonly violations: string[];
}

interface Wait {
  s: bigint;
  f?: bigint;
  failed?: string;
}
interface Visit {
  enters: Wait[];
  leaves: Wait[];
}

const ms = (ns: bigint) => Math.round(Number(ns) / 1e6);
const max = (a: bigint, b: bigint) => (a > b ? a : b);

/**
 * A double barrier's promises, checked round by round (each round is one barrier):
 * - nobody passes `enter` before `members` members had begun entering that round;
 * - nobody completes `leave` while a member that entered that round had neither begun leaving,
 *   nor died (killed, or cut off beyond its session timeout);
 * - no live member waits forever: every enter and leave of a member that was neither killed
 *   during it nor cut off completes, within `boundMs` of the moment nothing it waits for is
 *   missing: for an enter, the arrival of the round's last member that passed; for a leave, each
 *   other member's start of its leave, or its death plus the session timeout (its ephemeral node
 *   goes with its session).
 */
export function checkBarrier(events: readonly BarrierEvent[], options: BarrierCheckOptions): BarrierVerdict {
  const sorted = [...events].sort((a, b) => (a.t < b.t ? -1 : a.t > b.t ? 1 : 0));
  const rounds = new Map<number, Map<string, Visit>>();
  const killed = new Map<string, bigint>();
  const isolated = new Map<string, { from: bigint; to: bigint }[]>();
  const T = BigInt(options.sessionTimeoutMs) * 1_000_000n;
  const bound = BigInt(options.boundMs) * 1_000_000n;
  const violations: string[] = [];
  let entered = 0;
  let left = 0;
  for (const e of sorted) {
    if (e.kind === 'killed') {
      killed.set(e.who, e.t);
      continue;
    }
    if (e.kind === 'isolated') {
      isolated.set(e.who, [...(isolated.get(e.who) ?? []), { from: e.t, to: e.to }]);
      continue;
    }
    let round = rounds.get(e.round);
    if (!round) rounds.set(e.round, (round = new Map()));
    let v = round.get(e.who);
    if (!v) round.set(e.who, (v = { enters: [], leaves: [] }));
    const waits = e.kind.startsWith('enter') ? v.enters : v.leaves;
    if (e.kind === 'entering' || e.kind === 'leaving') waits.push({ s: e.t });
    else {
      const w = waits.at(-1);
      if (!w || w.f !== undefined || w.failed !== undefined) {
        violations.push(`${e.who} logged ${e.kind} in round ${e.round} without a wait begun`);
        continue;
      }
      if (e.kind.endsWith('failed')) w.failed = e.message ?? 'failed';
      else w.f = e.t;
    }
    if (e.kind === 'entered') {
      entered++;
      const arrived = [...round.values()].filter((o) => o.enters.some((w) => w.s <= e.t)).length;
      if (arrived < options.members) violations.push(`${e.who} passed enter of round ${e.round} when only ${arrived} of ${options.members} members had begun entering`);
    }
    if (e.kind === 'left') {
      left++;
      for (const [o, ov] of round) {
        if (o === e.who || !ov.enters.some((w) => w.f !== undefined)) continue;
        if (ov.leaves.some((w) => w.s <= e.t) || deadBy(o, e.t)) continue;
        violations.push(`${e.who} completed leave of round ${e.round} while ${o}, inside, had not begun leaving`);
      }
    }
  }
  /** When `who` died (killed, or the start of a cut beyond its session) at or before `t`. */
  function deadBy(who: string, t: bigint): bigint | undefined {
    const k = killed.get(who);
    if (k !== undefined && k <= t) return k;
    return (isolated.get(who) ?? []).find((c) => c.from <= t)?.from;
  }
  const excused = (who: string, w: Wait) => {
    const k = killed.get(who);
    if (k !== undefined && k >= w.s && (w.f === undefined || k <= w.f)) return true;
    return (isolated.get(who) ?? []).some((c) => c.from <= (w.f ?? c.to) && c.to >= w.s);
  };
  let longest = 0n;
  for (const [r, round] of rounds) {
    const passedArrivals = [...round.values()].flatMap((o) => o.enters.filter((w) => w.f !== undefined).map((w) => w.s));
    const lastArrival = passedArrivals.reduce(max, 0n);
    for (const [who, v] of round) {
      for (const [what, waits] of [['enter', v.enters], ['leave', v.leaves]] as const) {
        for (const w of waits) {
          if (excused(who, w)) continue;
          if (w.f === undefined) {
            violations.push(`${who}'s ${what} of round ${r} never completed${w.failed ? ` (${w.failed})` : ''}`);
            continue;
          }
          let ready = max(w.s, what === 'enter' ? lastArrival : 0n);
          if (what === 'leave') {
            for (const [o, ov] of round) {
              if (o === who || !ov.enters.some((x) => x.f !== undefined)) continue;
              const begun = ov.leaves.find((x) => x.s <= w.f!)?.s;
              const died = deadBy(o, w.f);
              // Dead before it could delete its node: the node goes with the session.
              const gone = died !== undefined && (begun === undefined || died >= begun) ? died + T : begun;
              if (gone !== undefined) ready = max(ready, gone); // undefined: reported above
            }
          }
          const late = w.f - ready;
          if (late > longest) longest = late;
          if (late > bound) violations.push(`${who}'s ${what} of round ${r} completed ${ms(late)} ms after nothing it waited for was missing (bound ${options.boundMs} ms)`);
        }
      }
    }
  }
  return { entered, left, longestWaitMs: ms(longest), violations };
}

/** Parses a member's stdout lines into events (`ready`, `done` and lines that are not events are skipped). */
export function parseBarrierLines(lines: readonly string[]): BarrierEvent[] {
  const out: BarrierEvent[] = [];
  for (const line of lines) {
    let o: { who: string; t: string; kind: string; round?: number; message?: string };
    try {
      o = JSON.parse(line) as typeof o;
    } catch {
      continue;
    }
    if (o.round === undefined) continue;
    out.push({ who: o.who, t: BigInt(o.t), kind: o.kind as 'entering', round: o.round, ...(o.message === undefined ? {} : { message: o.message }) });
  }
  return out;
}

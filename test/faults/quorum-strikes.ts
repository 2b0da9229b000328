/**
 * A quorum strike analysed from the history (quorum.ts's header says what a strike is): whether
 * the victim held at the fault, when its place was taken, when it learned it had lost the lock,
 * and whether the strike tested anything.
 */
import type { HistoryEvent } from './checker.js';

/** What a strike did, stamped by the nemesis. */
export interface StrikeRecord {
  what: string;
  target: number;
  victim: string;
  /** Just before the fault, CLOCK_MONOTONIC ns. */
  faultAt: bigint;
  /** Just after the heal. */
  healedAt: bigint;
  /** Fault to the target no longer answering srvr as leader or follower, ms (undefined: it kept serving, or not watched). */
  servedMs: number | undefined;
  /** How long the fault's and the heal's calls took, ms (a server's stop and start). */
  faultCallMs: number;
  healCallMs: number;
}

/** One strike, analysed from the history. */
export interface StrikeResult {
  what: string;
  victim: string;
  /** The victim held the lock (by its log) when the fault came. */
  heldAtFault: boolean;
  /** Fault to the victim's `lost`, ms (undefined: none during the hold it had at the fault). */
  detectionMs?: number | undefined;
  /** Fault to the first acquisition that took the victim's place, ms. */
  takenMs?: number | undefined;
  /** `taken` minus `lost`, ms: how long before its place was taken the victim knew (negative: after). */
  marginMs?: number | undefined;
  /** Its place was taken before the fault was healed. */
  takenDuringFault: boolean;
  /**
   * The strike tested the lock: the victim held at the fault and its place was taken while it
   * still held it by its log, or after it had learned (`lost`) that it lost it.
   */
  tested: boolean;
  /** Its place was taken while it still believed it held the lock (no `lost` yet): two holders. */
  overlapped: boolean;
  /** How long the fault lasted, ms. */
  faultMs: number;
  /** Fault to the struck server no longer serving, ms (undefined: it served until the heal, or not watched). */
  servedMs?: number | undefined;
  /** How long the fault's and the heal's calls took, ms, when that was long (over 100 ms: a server's stop and start). */
  faultCallMs?: number | undefined;
  healCallMs?: number | undefined;
}

export const msOf = (ns: bigint) => Math.round(Number(ns) / 1e6);
export const byT = (a: HistoryEvent, b: HistoryEvent) => (a.t < b.t ? -1 : a.t > b.t ? 1 : 0);

/**
 * When the victim's place was taken after `from`, from the history (see {@link analyseStrike}):
 * with one holder at a time, the first acquisition by another participant that conflicts with
 * the victim's mode; with N permits, the first that makes N other holders at once, counting, as
 * the checker does, only holds whose signal had not aborted (a holder that learned it lost its
 * permit keeps "holding" by its log until its hold ends).
 */
export function takenAfter(sorted: readonly HistoryEvent[], victim: string, from: bigint, victimMode: 'read' | 'write', capacity: number): bigint | undefined {
  const open = new Map<string, { mode: 'read' | 'write'; lost: boolean }>();
  for (const e of sorted) {
    if (e.who === victim) continue;
    if (e.kind === 'released' || e.kind === 'killed') open.delete(e.who);
    const hold = open.get(e.who);
    if (e.kind === 'lost' && hold) hold.lost = true;
    if (e.kind !== 'acquired') continue;
    const mode = capacity > 1 ? 'write' : (e.mode ?? 'write');
    open.set(e.who, { mode, lost: false });
    if (e.t <= from) continue;
    if (capacity === 1 ? mode === 'write' || victimMode === 'write' : [...open.values()].filter((h) => !h.lost).length >= capacity) return e.t;
  }
  return undefined;
}

/**
 * A strike from the history: the victim's hold at the fault (its last acquisition before it, to
 * its release), its `lost` during that hold, and the first acquisition that took its place.
 */
export function analyseStrike(events: readonly HistoryEvent[], s: StrikeRecord, capacity: number): StrikeResult {
  const sorted = [...events].sort(byT);
  const mine = sorted.filter((e) => e.who === s.victim);
  const acquired = mine.filter((e) => e.kind === 'acquired' && e.t <= s.faultAt).at(-1);
  const end = acquired && mine.find((e) => (e.kind === 'released' || e.kind === 'killed') && e.t > acquired.t)?.t;
  const heldAtFault = acquired !== undefined && (end === undefined || end > s.faultAt);
  const lost = acquired && mine.find((e) => e.kind === 'lost' && e.t > acquired.t && (end === undefined || e.t <= end))?.t;
  const mode = acquired?.kind === 'acquired' ? (acquired.mode ?? 'write') : 'write';
  const taken = heldAtFault ? takenAfter(sorted, s.victim, s.faultAt, mode, capacity) : undefined;
  const heldWhenTaken = taken !== undefined && (end === undefined || taken < end);
  const learned = lost !== undefined;
  return {
    what: s.what,
    victim: s.victim,
    heldAtFault,
    detectionMs: lost !== undefined ? msOf(lost - s.faultAt) : undefined,
    takenMs: taken !== undefined ? msOf(taken - s.faultAt) : undefined,
    marginMs: taken !== undefined && lost !== undefined ? msOf(taken - lost) : undefined,
    takenDuringFault: taken !== undefined && taken < s.healedAt,
    tested: taken !== undefined && (heldWhenTaken || learned),
    overlapped: heldWhenTaken && (lost === undefined || lost > taken),
    faultMs: msOf(s.healedAt - s.faultAt),
    servedMs: s.servedMs,
    ...(s.faultCallMs > 100 ? { faultCallMs: s.faultCallMs } : {}),
    ...(s.healCallMs > 100 ? { healCallMs: s.healCallMs } : {}),
  };
}

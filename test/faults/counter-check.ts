/**
 * The counter workload of the fault suite (atomic-long.test.ts): the lines counter-participant.mjs
 * logs, and the checker of a counter's promise under failure. Pure.
 */
import { fileURLToPath } from 'node:url';

/** The participant script. */
export const COUNTER_PARTICIPANT = fileURLToPath(new URL(import.meta.url.includes('/test/dist/') ? '../../faults/counter-participant.mjs' : './counter-participant.mjs', import.meta.url));

/** One line of a counter participant (times: CLOCK_MONOTONIC ns, as text). */
export interface CounterLine {
  readonly who: string;
  readonly t: string;
  readonly kind: 'ready' | 'begin' | 'ok' | 'failed' | 'maybe' | 'error' | 'done';
  readonly pre?: string;
  readonly post?: string;
  readonly attempted?: string;
  readonly message?: string;
}

/** What {@link checkCounter} found. */
export interface CounterVerdict {
  /** Increments reported successful. */
  readonly succeeded: number;
  /** Increments whose outcome is unknown: rejected calls, and a `begin` cut short by a kill. */
  readonly maybe: number;
  /** Increments reported not applied (`succeeded: false`). */
  readonly failed: number;
  /** The counter's final value. */
  readonly final: bigint;
  readonly violations: string[];
}

/**
 * A counter's promise, checked against its final value: no increment reported successful is lost
 * and none is applied twice, so the final value (from `initial`) lies in [succeeded, succeeded +
 * maybe], where a maybe is an increment whose outcome the caller could not know (it rejected, or
 * its process was killed between `begin` and its outcome); every successful increment's post
 * value is unique, is its pre value plus one, and is at most the final value.
 */
export function checkCounter(lines: readonly CounterLine[], final: bigint, initial = 0n): CounterVerdict {
  const violations: string[] = [];
  let succeeded = 0;
  let maybe = 0;
  let failed = 0;
  const open = new Map<string, boolean>();
  const posts = new Map<string, string>();
  for (const l of lines) {
    if (l.kind === 'begin') {
      if (open.get(l.who)) maybe++; // (a restarted participant reuses no name; defensive)
      open.set(l.who, true);
      continue;
    }
    if (l.kind !== 'ok' && l.kind !== 'failed' && l.kind !== 'maybe') continue;
    open.set(l.who, false);
    if (l.kind === 'failed') failed++;
    else if (l.kind === 'maybe') maybe++;
    else {
      succeeded++;
      const post = BigInt(l.post!);
      if (post !== BigInt(l.pre!) + 1n) violations.push(`${l.who} reported ${l.pre} -> ${l.post}: not one more`);
      if (post > final) violations.push(`${l.who} reported post value ${post}, above the final value ${final}: an increment was lost`);
      const other = posts.get(l.post!);
      if (other !== undefined) violations.push(`post value ${l.post} reported twice (by ${other}, then by ${l.who}): two increments wrote the same value, one was lost`);
      posts.set(l.post!, l.who);
    }
  }
  maybe += [...open.values()].filter(Boolean).length; // killed mid-increment
  const applied = final - initial;
  if (applied < BigInt(succeeded)) violations.push(`final value ${final} counts ${applied} increments, fewer than the ${succeeded} reported successful: ${BigInt(succeeded) - applied} lost`);
  if (applied > BigInt(succeeded + maybe)) violations.push(`final value ${final} counts ${applied} increments, more than the ${succeeded} successful and ${maybe} unknown: ${applied - BigInt(succeeded + maybe)} applied twice`);
  return { succeeded, maybe, failed, final, violations };
}

/** Parses a participant's stdout lines (a line that is not JSON becomes an `error`). */
export function parseCounterLines(who: string, lines: readonly string[]): CounterLine[] {
  return lines.map((line) => {
    try {
      return JSON.parse(line) as CounterLine;
    } catch {
      return { who, t: '0', kind: 'error', message: `not a line: ${line}` } satisfies CounterLine;
    }
  });
}

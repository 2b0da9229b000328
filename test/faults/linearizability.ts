/**
 * A linearizability checker for registers (issue 39's register workload), in the style of Wing &
 * Gong (1993) with Lowe's memoisation, as Porcupine implements it (anishathalye/porcupine,
 * `checkSingle`): per key (P-compositionality: a history is linearizable when each key's is), a
 * depth-first search over the order in which operations take effect, each between its call and
 * its return, backtracking on a read that no order explains, and a cache of (operations already
 * placed, register value) so that no state is explored twice.
 *
 * The model: a register per key, initially `initial`; `write(v)` sets it; `read` returns it.
 * Writes carry unique values. A write whose outcome is unknown (ConnectionLoss, timeout: it may or
 * may not have been applied) has no return: it may take effect at any moment after its call, or
 * never (placed last, after every other operation, it affects nothing). Reads that failed are left
 * out (they returned nothing). Times are CLOCK_MONOTONIC (`process.hrtime.bigint()`, one clock for
 * every process of the machine), so operations of different processes are ordered by it; at equal
 * times, calls come before returns (taken as concurrent: no false violation from a tie).
 */

/** One operation on one key, as a participant logged it. */
export interface RegisterOp {
  readonly key: string;
  readonly kind: 'read' | 'write';
  /** The value written, or the value read (`null`: the register's initial value). */
  readonly value: string | null;
  /** Call time, ns (CLOCK_MONOTONIC). */
  readonly call: bigint;
  /** Return time, ns; undefined for a write whose outcome is unknown. */
  readonly ret: bigint | undefined;
  /** Who did it (for the report). */
  readonly who?: string;
}

/** The verdict on one key. */
export interface KeyVerdict {
  readonly key: string;
  readonly ops: number;
  /** `true`, `false`, or `'unknown'` when the search hit its budget. */
  readonly linearizable: boolean | 'unknown';
  /** On a violation: the operations around the point the search could go no further. */
  readonly witness?: readonly RegisterOp[];
}

/** The verdict on a history. */
export interface LinearizabilityVerdict {
  readonly ok: boolean;
  readonly keys: readonly KeyVerdict[];
  /** Keys whose history is not linearizable. */
  readonly violations: readonly KeyVerdict[];
}

interface Entry {
  readonly isCall: boolean;
  readonly id: number;
  readonly time: bigint;
  /** The call entry's matching return (undefined on returns). */
  match: Entry | undefined;
  prev: Entry | undefined;
  next: Entry | undefined;
}

/** Checks every key of `history` on its own; `budget`: most search steps per key before giving up ('unknown'). */
export function checkRegisters(history: readonly RegisterOp[], options: { initial?: string | null; budget?: number } = {}): LinearizabilityVerdict {
  const byKey = new Map<string, RegisterOp[]>();
  for (const op of history) {
    const list = byKey.get(op.key);
    if (list) list.push(op);
    else byKey.set(op.key, [op]);
  }
  const keys = [...byKey].map(([key, ops]) => checkKey(key, withoutUnseenWrites(ops), options.initial ?? null, options.budget ?? 5_000_000));
  const violations = keys.filter((k) => k.linearizable === false);
  return { ok: violations.length === 0 && keys.every((k) => k.linearizable === true), keys, violations };
}

/**
 * Leaves out the writes of unknown outcome whose value nobody read: placed last, after every other
 * operation, such a write changes no answer, so the history is linearizable with it exactly when
 * it is without it (and the search no longer tries it at every point after its call: a server cut
 * off from its leader leaves hundreds of them).
 */
function withoutUnseenWrites(ops: readonly RegisterOp[]): RegisterOp[] {
  const read = new Set(ops.filter((o) => o.kind === 'read').map((o) => o.value));
  return ops.filter((o) => o.kind === 'read' || o.ret !== undefined || read.has(o.value));
}

/** One key's history (see the file comment). */
export function checkKey(key: string, ops: readonly RegisterOp[], initial: string | null, budget: number): KeyVerdict {
  const n = ops.length;
  if (n === 0) return { key, ops: 0, linearizable: true };
  // A write without a return ends after everything else.
  let end = 0n;
  for (const op of ops) end = maxBig(end, op.ret ?? op.call);
  const entries: Entry[] = [];
  ops.forEach((op, id) => {
    const call: Entry = { isCall: true, id, time: op.call, match: undefined, prev: undefined, next: undefined };
    const ret: Entry = { isCall: false, id, time: op.ret ?? end + 1n, match: undefined, prev: undefined, next: undefined };
    call.match = ret;
    entries.push(call, ret);
  });
  entries.sort((a, b) => (a.time < b.time ? -1 : a.time > b.time ? 1 : a.isCall === b.isCall ? 0 : a.isCall ? -1 : 1));
  const head: Entry = { isCall: false, id: -1, time: -1n, match: undefined, prev: undefined, next: undefined };
  let last = head;
  for (const e of entries) {
    last.next = e;
    e.prev = last;
    last = e;
  }

  const placed = new Uint32Array(Math.ceil(n / 32));
  const seen = new Set<string>();
  const stack: Array<{ entry: Entry; state: string | null }> = [];
  let state = initial;
  let entry = head.next;
  let steps = 0;
  let deepest = 0;
  let stuckAt: Entry | undefined;
  while (head.next !== undefined) {
    if (++steps > budget) return { key, ops: n, linearizable: 'unknown' };
    if (entry === undefined) break;
    if (entry.isCall) {
      const op = ops[entry.id]!;
      const ok = op.kind === 'write' || op.value === state;
      const next = op.kind === 'write' ? op.value : state;
      if (ok) {
        placed[entry.id >>> 5]! |= 1 << (entry.id & 31);
        const memo = `${placed.join(',')}|${next ?? '\u0000'}`;
        if (!seen.has(memo)) {
          seen.add(memo);
          stack.push({ entry, state });
          state = next;
          lift(entry);
          if (stack.length > deepest) {
            deepest = stack.length;
            stuckAt = undefined;
          }
          entry = head.next;
          continue;
        }
        placed[entry.id >>> 5]! &= ~(1 << (entry.id & 31));
      }
      entry = entry.next;
    } else {
      // A return before its call was placed: this order cannot go on; undo the last placement.
      if (stack.length === deepest && stuckAt === undefined) stuckAt = entry;
      const top = stack.pop();
      if (top === undefined) return { key, ops: n, linearizable: false, witness: witness(ops, stuckAt ?? entry) };
      state = top.state;
      placed[top.entry.id >>> 5]! &= ~(1 << (top.entry.id & 31));
      unlift(top.entry);
      entry = top.entry.next;
    }
  }
  return { key, ops: n, linearizable: true };
}

/** Takes a call and its return out of the list (they were placed). */
function lift(call: Entry): void {
  call.prev!.next = call.next;
  if (call.next) call.next.prev = call.prev;
  const ret = call.match!;
  ret.prev!.next = ret.next;
  if (ret.next) ret.next.prev = ret.prev;
}

/** Puts them back, in the reverse order of {@link lift}. */
function unlift(call: Entry): void {
  const ret = call.match!;
  ret.prev!.next = ret;
  if (ret.next) ret.next.prev = ret;
  call.prev!.next = call;
  if (call.next) call.next.prev = call;
}

/** The operation whose return blocked the deepest order, and the operations overlapping it. */
function witness(ops: readonly RegisterOp[], at: Entry): RegisterOp[] {
  const blocked = ops[at.id]!;
  const end = blocked.ret ?? blocked.call;
  return [blocked, ...ops.filter((o) => o !== blocked && o.call <= end && (o.ret ?? end) >= blocked.call).slice(0, 8)];
}

function maxBig(a: bigint, b: bigint): bigint {
  return a > b ? a : b;
}

/**
 * Stale reads, counted for the report (the checker above is the verdict): a read that returned a
 * value already overwritten before it was called, i.e. a write of another value was called after
 * the value's own write returned, and returned before the read was called (for the initial value:
 * any write that returned before the read was called).
 */
export function staleReads(history: readonly RegisterOp[]): number {
  let stale = 0;
  const byKey = new Map<string, RegisterOp[]>();
  for (const op of history) (byKey.get(op.key) ?? byKey.set(op.key, []).get(op.key)!).push(op);
  for (const ops of byKey.values()) {
    const writes = ops.filter((o) => o.kind === 'write');
    const writeOf = new Map(writes.map((o) => [o.value, o]));
    for (const r of ops) {
      if (r.kind !== 'read') continue;
      const w = r.value === null ? undefined : writeOf.get(r.value);
      if (r.value !== null && w?.ret === undefined) continue;
      const after = w?.ret ?? -1n;
      if (writes.some((w2) => w2 !== w && w2.ret !== undefined && w2.call > after && w2.ret < r.call)) stale++;
    }
  }
  return stale;
}

/**
 * What the bench reads from a server's four-letter words: the watch notifications it has sent
 * (`mntr`) and who watches what (`wchp`).
 */

/** The sum of `zk_sum_node_{created,deleted,changed,children}_watch_count` in a `mntr` answer, or undefined when none is there. */
export function watchNotifications(mntr: string): number | undefined {
  let sum: number | undefined;
  for (const m of mntr.matchAll(/^zk_sum_node_(?:created|deleted|changed|children)_watch_count\s+(\d+)/gm)) sum = (sum ?? 0) + Number(m[1]);
  return sum;
}

/**
 * A `wchp` answer (each path, then a tab-indented `0x<session>` line per watcher) as sessions by
 * path; undefined for no answer or a refusal ("wchp is not executed because it is not in the
 * whitelist.").
 */
export function parseWchp(text: string | undefined): Map<string, Set<string>> | undefined {
  if (text === undefined) return undefined;
  if (!text.startsWith('/')) return text.trim() === '' ? new Map() : undefined;
  const watchers = new Map<string, Set<string>>();
  let current: Set<string> | undefined;
  for (const line of text.split('\n')) {
    if (line.startsWith('/')) watchers.set(line.trim(), (current = watchers.get(line.trim()) ?? new Set()));
    else if (line.trim().startsWith('0x')) current?.add(line.trim());
  }
  return watchers;
}

/** One session's connection in a `cons` answer: its last operation and when the server answered it. */
export interface ConsEntry {
  /** `lop`: the last operation's short name (PING, SETD, SYNC, GETC, ...). */
  readonly lastOp: string;
  /** `lresp`: when the last response was sent, ms on the server's monotonic clock (its own origin). */
  readonly lastResponseMs: number;
}

/**
 * A `cons` answer as connections by session id (`0x...`, as the server prints it); connections
 * still in their handshake (no `sid`) are left out. Undefined for a refusal or no answer.
 */
export function parseCons(text: string | undefined): Map<string, ConsEntry> | undefined {
  if (text === undefined || !text.trimStart().startsWith('/')) return text?.trim() === '' ? new Map() : undefined;
  const sessions = new Map<string, ConsEntry>();
  for (const m of text.matchAll(/[(,]sid=(0x[0-9a-f]+),lop=(\w+),.*?,lresp=(\d+)[,)]/g)) sessions.set(m[1]!, { lastOp: m[2]!, lastResponseMs: Number(m[3]) });
  return sessions;
}

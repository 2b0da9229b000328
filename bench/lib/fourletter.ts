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

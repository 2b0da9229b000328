/**
 * Queue node names and their order, as Curator 5.4's queues make and sort them (from the
 * bytecode of `DistributedQueue`, `DistributedPriorityQueue`, `DistributedDelayQueue`,
 * `DistributedIdQueue`). Every item is a PERSISTENT_SEQUENTIAL child of the queue path whose name
 * starts with `queue-` (Curator's `QUEUE_ITEM_NAME`; its consumers skip other children as
 * "foreign"); the server appends the 10-digit sequence. Pure functions only.
 *
 * - plain: `queue-<seq>`, taken in string order (`Collections.sort`);
 * - priority: `queue-<sign><8 hex digits><seq>`: `1` for a priority >= 0, else `0`, then the
 *   priority's 32 bits as upper-case hex (`priorityToString`); string order puts the lowest
 *   priority value first;
 * - delay: `queue-|<epoch ms, upper-case hex, at least 8 digits>|<seq>` (`epochToString`);
 *   ordered by that time only, an item not due yet is skipped until it is;
 * - id: `queue-|<id, '/' and '|' made '_'>|<seq>` (`fixId`); ordered by the name without the
 *   `|id|` part, i.e. by sequence (`parseId`'s `cleaned`).
 */

/** Curator's `QUEUE_ITEM_NAME`: the prefix of every item node. */
export const QUEUE_ITEM_NAME = 'queue-';
/** The separator of the delay and id queues' names. */
export const SEPARATOR = '|';

/** How a kind of queue orders its children and tells when one is due. */
export interface QueueLayout {
  /** The item children of `children`, in the order consumers take them. */
  order(children: readonly string[], now: number): string[];
  /** Ms until the item `name` may be taken (0 or less: now). */
  delay(name: string, now: number): number;
  /**
   * Whether an item put later always comes after every item there now (a FIFO queue: names in
   * sequence order). Then the rest of one listing can serve the next takes without listing again.
   */
  readonly appendOnly?: boolean;
}

function items(children: readonly string[]): string[] {
  return children.filter((c) => c.startsWith(QUEUE_ITEM_NAME));
}

/** Java's `String.compareTo` on these ASCII names is plain code-unit order. */
function byString(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The plain and priority queues: string order. */
export const PLAIN_LAYOUT: QueueLayout = {
  order: (children) => items(children).sort(byString),
  delay: () => 0,
};

/** The plain queue: string order is sequence order, so a new item comes after every item there. */
export const FIFO_LAYOUT: QueueLayout = { ...PLAIN_LAYOUT, appendOnly: true };

/** Curator's `priorityToString`: `1` or `0` for the sign, then the 32 bits as 8 upper-case hex digits. */
export function priorityToString(priority: number): string {
  return (priority >= 0 ? '1' : '0') + (priority >>> 0).toString(16).toUpperCase().padStart(8, '0');
}

/** Curator's `epochToString`: `|` + the time as upper-case hex (at least 8 digits) + `|`. */
export function epochToString(epochMs: number): string {
  return SEPARATOR + epochMs.toString(16).toUpperCase().padStart(8, '0') + SEPARATOR;
}

/**
 * Curator's `getEpoch`: the hex between the last two `|` of the name, else 0 (due now). A name
 * Curator cannot parse is due at once there too.
 */
export function epochOf(name: string): number {
  const last = name.lastIndexOf(SEPARATOR);
  const first = last > 0 ? name.lastIndexOf(SEPARATOR, last - 1) : -1;
  if (first <= 0 || last <= first + 1) return 0;
  const hex = name.slice(first + 1, last);
  if (!/^[0-9a-fA-F]+$/.test(hex)) return 0;
  const n = Number.parseInt(hex, 16);
  return Number.isSafeInteger(n) ? n : 0;
}

/** The delay queue: by due time (ties by sequence; Curator's sort is stable over an unordered listing). */
export const DELAY_LAYOUT: QueueLayout = {
  order: (children) =>
    items(children)
      .map((name) => ({ name, at: epochOf(name) }))
      .sort((a, b) => a.at - b.at || byString(a.name.slice(-10), b.name.slice(-10)))
      .map((e) => e.name),
  delay: (name, now) => epochOf(name) - now,
};

/** Curator's `fixId`: `/` and `|` become `_`. */
export function fixId(id: string): string {
  return id.replace(/[/|]/g, '_');
}

/**
 * Curator's `parseId`: the id between the first two `|`, and the name without `|id|` (`cleaned`);
 * a name without two `|` is its own id and cleaned name.
 */
export function parseId(name: string): { id: string; cleaned: string } {
  const first = name.indexOf(SEPARATOR);
  const second = first < 0 ? -1 : name.indexOf(SEPARATOR, first + 1);
  if (first < 0 || second < 0) return { id: name, cleaned: name };
  return { id: name.slice(first + 1, second), cleaned: name.slice(0, first) + name.slice(second + 1) };
}

/** The id queue: by the cleaned name (`queue-<seq>`), i.e. in put order. */
export const ID_LAYOUT: QueueLayout = {
  order: (children) =>
    items(children)
      .map((name) => ({ name, key: parseId(name).cleaned }))
      .sort((a, b) => byString(a.key, b.key))
      .map((e) => e.name),
  delay: () => 0,
};

/**
 * A new host list for a running session, and whether this client should move to rebalance:
 * the rule of the Java client's `StaticHostProvider.updateServerList` (ZOOKEEPER-1355). Pure;
 * the random source is injectable.
 *
 * When every client applies it to the same change, the expected number of clients per server is
 * the same for every server of the new list, and only as many clients move as must:
 * - the list grew and our server stays: we move, to one of the servers that are new, with
 *   probability 1 - old/new (old and new counted in servers), else stay;
 * - our server left the list: we must move; to a new server when the list grew, otherwise to a
 *   remaining one with the probability that brings each of them up to the new average, or to a
 *   new one;
 * - the list shrank or kept its size and our server stays: we stay (the others come to us).
 */
import type { HostAddress } from './hosts.js';
import { shuffleHosts } from './hosts.js';

/** What {@link planServerList} decided. */
export interface ServerListPlan {
  /** The new list in random order: the ring the session dials from now on. */
  readonly hosts: HostAddress[];
  /** True when the client should leave its current server (and resume its session on another). */
  readonly move: boolean;
  /**
   * When moving: the servers to try, in order (drawn with the probabilities above; each of the
   * new list once). Empty when staying.
   */
  readonly order: HostAddress[];
  /** Index in {@link hosts} of the server to try after the current one fails (when staying). */
  readonly nextIndex: number;
}

/**
 * Plans the switch from `previous` to `next` for a client on `current` (the server it is
 * connected to, or was last; `undefined` before any connection, taken as `previous[0]`).
 */
export function planServerList(previous: readonly HostAddress[], next: readonly HostAddress[], current: HostAddress | undefined, random: () => number = Math.random): ServerListPlan {
  const hosts = shuffleHosts(next, random);
  const mine = current ?? previous[0];
  const stays = mine !== undefined && hosts.some((h) => same(h, mine));
  // Servers of the new list that were already in the old one, and those that were not.
  const old = hosts.filter((h) => previous.some((p) => same(p, h)));
  const fresh = hosts.filter((h) => !previous.some((p) => same(p, h)));
  const before = previous.length;
  const after = hosts.length;
  let probNew: number;
  if (after > before) {
    // Growing: a client stays with probability before/after, so every old server keeps that
    // share of its clients (after/before of the average before, i.e. the new average).
    if (stays && random() > 1 - before / after) return stay(hosts, mine);
    probNew = 1;
  } else {
    if (stays) return stay(hosts, mine);
    // Shrinking: the clients of removed servers split between the remaining old servers (each
    // needs to grow from before- to after-average) and the new ones (which start empty).
    const denominator = after * (before - old.length);
    const probOld = denominator > 0 ? (old.length * (before - after)) / denominator : 0;
    probNew = 1 - probOld;
  }
  const order: HostAddress[] = [];
  let iNew = 0;
  let iOld = 0;
  while (iNew < fresh.length || iOld < old.length) {
    const takeNew = random() <= probNew;
    if (iNew < fresh.length && (takeNew || iOld >= old.length)) order.push(fresh[iNew++] as HostAddress);
    else order.push(old[iOld++] as HostAddress);
  }
  return { hosts, move: true, order, nextIndex: 0 };
}

function stay(hosts: HostAddress[], mine: HostAddress | undefined): ServerListPlan {
  const i = mine === undefined ? -1 : hosts.findIndex((h) => same(h, mine));
  return { hosts, move: false, order: [], nextIndex: (i + 1) % hosts.length };
}

function same(a: HostAddress, b: HostAddress): boolean {
  return a.port === b.port && a.host.toLowerCase() === b.host.toLowerCase();
}

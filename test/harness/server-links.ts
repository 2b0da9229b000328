/**
 * Server-to-server links through fault proxies: for every ordered pair of servers (i, j) one
 * {@link TcpProxy} in front of j's quorum port and one in front of j's election port, dialed only
 * by i (i's zoo.cfg names j at those proxies' ports). Faults then act between servers (the
 * ZAB quorum traffic and the leader election), not between clients and servers.
 *
 * Whichever server of a pair dialed, its bytes cross one of the pair's proxies: i -> j uses
 * proxy (i, j) "up" and proxy (j, i) "down". A fault on a link therefore acts on both proxies of
 * the pair, and on both their quorum and election ports.
 */
import { TcpProxy, type Latency } from './proxy.js';
import type { ServerPorts } from './local-install.js';

/**
 * How a cut link fails: `hold` keeps bytes silently (a stalled network: connections stay open,
 * nothing arrives until heal), `drop` discards them silently (a connection that lost bytes
 * delivers nothing more, see {@link ServerLinks.heal}), `reset` resets the open connections
 * (TCP RST) and refuses new ones (a partition the servers notice at once).
 */
export type LinkFault = 'hold' | 'drop' | 'reset';

/** How a one-way link fails: bytes held or discarded silently in one direction only. */
export type OneWayFault = 'hold' | 'drop';

/** The two proxies through which one server reaches another. */
export interface LinkProxies {
  /** In front of the target server's quorum port (the learner to leader connection, ZAB). */
  readonly quorum: TcpProxy;
  /** In front of the target server's election port (QuorumCnxManager, leader election). */
  readonly election: TcpProxy;
}

/** The protocol versions of QuorumCnxManager's initial message (3.6+; -65535 with multiAddress.enabled). */
const PROTOCOL_VERSIONS: ReadonlySet<bigint> = new Set([-65536n, -65535n]);
/** InitialMessage.parse rejects an address list longer than this. */
const MAX_ADDRESS_BYTES = 2048;

/**
 * Rewrites the election address in the initial message a server sends when it dials another's
 * election port (QuorumCnxManager.startConnection, 3.6+): `long protocolVersion`, `long sid`,
 * `int length`, `length` bytes of `host:port` (several joined by `|` under multiAddress), then
 * whatever follows. Returns `'need-more'` until the whole header is in `received`, and
 * `received` untouched when it is not that form (a pre-3.6 server sends its sid first).
 *
 * Why: QuorumCnxManager.handleConnection drops a connection from a lower sid and dials it back at
 * the election address named here, the dialer's real one; rewritten, the dial-back goes through
 * the proxy of the reverse pair like every other connection.
 */
export function rewriteElectionAddress(received: Buffer, address: string): Buffer | 'need-more' {
  if (received.length < 8) return 'need-more';
  if (!PROTOCOL_VERSIONS.has(received.readBigInt64BE(0))) return received;
  if (received.length < 20) return 'need-more';
  const length = received.readInt32BE(16);
  // A length the server would reject anyway: let it see the original and say why.
  if (length <= 0 || length > MAX_ADDRESS_BYTES) return received;
  if (received.length < 20 + length) return 'need-more';
  const replacement = Buffer.from(address, 'utf8');
  const header = Buffer.alloc(20);
  received.copy(header, 0, 0, 16);
  header.writeInt32BE(replacement.length, 16);
  return Buffer.concat([header, replacement, received.subarray(20 + length)]);
}

/**
 * The proxies between the servers of one local ensemble (`startZooKeeper({ serverLinks: true })`),
 * and the faults on them. Faults add up (a partition, then a one-way drop, ...) until
 * {@link heal}. Server ids count from 1.
 */
export class ServerLinks {
  /** Proxies by `from` then `to` server id. */
  readonly #proxies: ReadonlyMap<number, ReadonlyMap<number, LinkProxies>>;
  readonly #ids: readonly number[];

  private constructor(proxies: ReadonlyMap<number, ReadonlyMap<number, LinkProxies>>, ids: readonly number[]) {
    this.#proxies = proxies;
    this.#ids = ids;
  }

  /**
   * Starts the proxies of every ordered pair of `members`, listening on `options.ports`
   * (n * (n - 1) * 2 free ports, e.g. from `freePorts`; default: ports the OS chooses).
   * `options.learnerConnectMs`: how long a learner retries a refused connection to a leader's
   * quorum port, tickTime * initLimit (Learner.connectToLeader); the quorum proxies retry as long.
   */
  static async start(members: ReadonlyArray<{ id: number; ports: ServerPorts }>, options: { ports?: readonly number[]; learnerConnectMs?: number } = {}): Promise<ServerLinks> {
    const ports = options.ports;
    const need = members.length * (members.length - 1) * 2;
    if (ports && ports.length < need) throw new Error(`ServerLinks needs ${need} ports, got ${ports.length}`);
    const byFrom = new Map<number, Map<number, LinkProxies>>();
    const started: TcpProxy[] = [];
    let next = 0;
    const port = () => (ports ? { port: ports[next++] as number } : {});
    try {
      for (const from of members) {
        const row = new Map<number, LinkProxies>();
        byFrom.set(from.id, row);
        for (const to of members) {
          if (to.id === from.id) continue;
          // Only a leader listens on its quorum port, and a learner that finds it closed retries
          // (Learner.connectToLeader); the proxy accepts first, so it retries for the learner: a
          // reset right after a successful connect would send the learner back to the election.
          // Every link holds new connections with their bytes (deferConnect): a held connection
          // that reached its target would block that server's election listener, which reads
          // each initial message in turn (QuorumCnxManager.receiveConnection, syncLimit ticks).
          const quorum = await TcpProxy.start({ host: '127.0.0.1', port: to.ports.peer }, { ...port(), connectRetryMs: options.learnerConnectMs ?? 0, deferConnect: true });
          started.push(quorum);
          // The dialer `from` advertises its election address; `to` must dial back through its
          // own proxy to `from`, which exists once every proxy has started.
          const back = () => byFrom.get(to.id)?.get(from.id)?.election.port;
          const election = await TcpProxy.start(
            { host: '127.0.0.1', port: to.ports.election },
            {
              ...port(),
              deferConnect: true,
              rewriteFirstUp: (received) => {
                const p = back();
                return p === undefined ? received : rewriteElectionAddress(received, `127.0.0.1:${p}`);
              },
            },
          );
          started.push(election);
          row.set(to.id, { quorum, election });
        }
      }
    } catch (err) {
      await Promise.all(started.map((p) => p.close()));
      throw err;
    }
    return new ServerLinks(byFrom, members.map((m) => m.id));
  }

  /** The server ids. */
  get ids(): readonly number[] {
    return this.#ids;
  }

  /** The proxies through which server `from` reaches server `to`. */
  proxies(from: number, to: number): LinkProxies {
    const p = this.#proxies.get(from)?.get(to);
    if (!p) throw new RangeError(`no link from server ${from} to server ${to} (servers ${this.#ids.join(', ')})`);
    return p;
  }

  /** The ports at which server `from` reaches `to`'s quorum and election ports (its zoo.cfg's `server.<to>`). */
  portsFor(from: number, to: number): { peer: number; election: number } {
    const p = this.proxies(from, to);
    return { peer: p.quorum.port, election: p.election.port };
  }

  /** Every proxy's listening port. */
  get proxyPorts(): ReadonlySet<number> {
    return new Set(this.#all().map((p) => p.port));
  }

  /**
   * Cuts every link between servers of different groups; a server in no group is cut from all.
   * Links within a group are untouched.
   */
  partition(groups: readonly (readonly number[])[], fault: LinkFault = 'hold'): void {
    const groupOf = new Map<number, number>();
    groups.forEach((g, n) =>
      g.forEach((id) => {
        this.#check(id);
        if (groupOf.has(id)) throw new RangeError(`server ${id} is in two groups`);
        groupOf.set(id, n);
      }),
    );
    for (const [a, b] of this.#pairs()) {
      const ga = groupOf.get(a);
      if (ga === undefined || ga !== groupOf.get(b)) this.#cut(a, b, fault);
    }
  }

  /** Cuts server `id` from every other server: `partition([[id], others])`. */
  isolate(id: number, fault: LinkFault = 'hold'): void {
    this.#check(id);
    this.partition([[id], this.#ids.filter((x) => x !== id)], fault);
  }

  /**
   * Cuts every link between a server of `a` and one of `b`, except the bridge server's: it keeps
   * its links to both sides (it may be listed in either, both or neither).
   */
  bridge(a: readonly number[], b: readonly number[], bridgeId: number, fault: LinkFault = 'hold'): void {
    for (const id of [...a, ...b, bridgeId]) this.#check(id);
    for (const x of a) for (const y of b) if (x !== bridgeId && y !== bridgeId && x !== y) this.#cut(x, y, fault);
  }

  /** Only the bytes server `from` sends to server `to` are held or dropped; `to`'s replies flow. */
  oneWay(from: number, to: number, fault: OneWayFault = 'drop'): void {
    this.#check(from);
    this.#check(to);
    for (const p of this.#both(this.proxies(from, to))) (fault === 'hold' ? p.pause('up') : p.drop('up'));
    for (const p of this.#both(this.proxies(to, from))) (fault === 'hold' ? p.pause('down') : p.drop('down'));
  }

  /**
   * Delays every chunk by a random time in `range` (ms) in each direction (a round trip pays it
   * twice), on the links between the servers `between`, or on all links; `undefined` stops.
   */
  latency(range: Latency | undefined, between?: readonly [number, number]): void {
    const proxies = between ? [...this.#both(this.proxies(between[0], between[1])), ...this.#both(this.proxies(between[1], between[0]))] : this.#all();
    for (const p of proxies) p.setLatency(range, 'both');
  }

  /**
   * Undoes every fault: held bytes flow, nothing is dropped or refused, no latency. Connections
   * that lost bytes to `drop` are reset (a TCP stream with a hole delivers nothing more), so the
   * servers reconnect, as they would after a real network loses a connection.
   */
  heal(): void {
    for (const p of this.#all()) {
      p.undrop('both');
      p.cutHoled();
      p.setLatency(undefined, 'both');
      p.unblock(); // also resumes held bytes
    }
  }

  /** Stops every proxy (resetting its connections). */
  async close(): Promise<void> {
    await Promise.all(this.#all().map((p) => p.close()));
  }

  #cut(a: number, b: number, fault: LinkFault): void {
    for (const p of [...this.#both(this.proxies(a, b)), ...this.#both(this.proxies(b, a))]) {
      if (fault === 'hold') p.pause('both');
      else if (fault === 'drop') p.drop('both');
      else p.block();
    }
  }

  /** Every unordered pair of server ids. */
  *#pairs(): Generator<[number, number]> {
    for (const a of this.#ids) for (const b of this.#ids) if (a < b) yield [a, b];
  }

  #both(p: LinkProxies): TcpProxy[] {
    return [p.quorum, p.election];
  }

  #all(): TcpProxy[] {
    return [...this.#proxies.values()].flatMap((row) => [...row.values()].flatMap((p) => this.#both(p)));
  }

  #check(id: number): void {
    if (!this.#ids.includes(id)) throw new RangeError(`no server ${id} (servers ${this.#ids.join(', ')})`);
  }
}

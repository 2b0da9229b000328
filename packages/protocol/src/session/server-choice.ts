/**
 * Which server the session dials next: the ring of hosts in random order, rotated so a
 * reconnect starts with the next server; a server to go back to first (a read-write one found
 * while connected read-only, or the same one again); the order planned by a host-list update;
 * the servers that refused the multiRead probe; and, while connected read-only, the probe for a
 * read-write server.
 */
import type { Connection } from '../connection/connection.js';
import { probeReadWrite } from '../connection/transport.js';
import { resolveHost, type LookupFunction } from '../connection/resolve.js';
import { ConnectionLossError } from '../errors.js';
import { endpointLabel, shuffleHosts, type Endpoint, type HostAddress } from './hosts.js';
import { planServerList } from './host-provider.js';
import type { SessionState } from './state.js';

/** The hosts of one session and the order it tries them in. */
export class ServerChoice {
  /** Hosts in the order we try them; rotates so a reconnect starts with the next server. */
  #ring: HostAddress[];
  #ringIndex = 0;
  /** Rounds begun over the ring: counts up each time the ring index wraps to its start. */
  #round = 0;
  /** A server to try first on the next attempt, at that address: a read-write one found while connected read-only, or the same one again. */
  #preferred: Endpoint | undefined;
  /** After {@link update} chose to move: the servers to try first, in order (Java's reconfigMode). */
  #moveOrder: HostAddress[] = [];
  /** Servers (`host:port`) that refused or dropped the multiRead probe: not probed again by this client. */
  readonly #noMultiRead = new Set<string>();

  constructor(hosts: readonly HostAddress[]) {
    this.#ring = shuffleHosts(hosts);
  }

  /** The servers this session may use, in the order it dials them. */
  get hosts(): readonly HostAddress[] {
    return this.#ring;
  }

  /**
   * The host of the next attempt: the preferred server (then also the one address to dial), else
   * the next of a planned move, else the next of the ring (which then rotates).
   */
  next(): { host: HostAddress; preferred: Endpoint | undefined } {
    const preferred = this.#preferred;
    const host = preferred ?? this.#moveOrder.shift() ?? (this.#ring[this.#ringIndex % this.#ring.length] as HostAddress);
    if (preferred) this.#preferred = undefined;
    else if (host === this.#ring[this.#ringIndex % this.#ring.length]) {
      this.#ringIndex = (this.#ringIndex + 1) % this.#ring.length;
      if (this.#ringIndex === 0) this.#round++;
    }
    return { host, preferred };
  }

  /**
   * The round the next attempt begins, or undefined when it is inside one (or a preferred server
   * or a planned move comes first). An SRV host list is asked again once per round (connection/srv.ts).
   */
  roundStart(): number | undefined {
    return this.#preferred === undefined && this.#moveOrder.length === 0 && this.#ringIndex === 0 ? this.#round : undefined;
  }

  /** Replaces the ring (shuffled) between rounds, as a fresh SRV answer does; the round count goes on. */
  replace(hosts: readonly HostAddress[]): void {
    if (hosts.length === 0) return;
    this.#ring = shuffleHosts(hosts);
    this.#ringIndex = 0;
  }

  /** Replaces the host list by host-provider.ts's rule; true when the session should move off `current`. */
  update(hosts: readonly HostAddress[], current: Endpoint | undefined, random: () => number): boolean {
    const plan = planServerList(this.#ring, hosts, current, random);
    this.#ring = plan.hosts;
    this.#ringIndex = plan.nextIndex;
    this.#moveOrder = plan.order;
    this.#preferred = undefined;
    return plan.move;
  }

  /** Dial this address first next time. */
  prefer(endpoint: Endpoint): void {
    this.#preferred = endpoint;
  }

  /** A connection was adopted: a planned move is over. */
  adopted(): void {
    this.#moveOrder = [];
  }

  /** The server at `where` (`address:port`) has no multiRead: never probed again. */
  refusedMultiRead(where: string): void {
    this.#noMultiRead.add(where);
  }

  /** Whether the server at `where` refused the multiRead probe before. */
  hasNoMultiRead(where: string): boolean {
    return this.#noMultiRead.has(where);
  }
}

/** What the read-write probe reads of the session. */
export interface ProbedSession {
  connection(): Connection | undefined;
  state(): SessionState;
  /** The server of the live connection, or of the last one. */
  server(): Endpoint | undefined;
  readonly lookup: LookupFunction | undefined;
  readonly connectTimeout: number;
  debug(format: string, ...args: unknown[]): void;
}

/**
 * While connected to a read-only server, asks the other servers (`isro`) whether one is
 * read-write again, with a growing interval (200 ms doubling to 60 s, as the Java client's
 * pingRwServer); when one is, drops this connection and reconnects there.
 */
export class ReadWriteProbe {
  readonly #choice: ServerChoice;
  readonly #session: ProbedSession;
  #timer: NodeJS.Timeout | undefined;

  constructor(choice: ServerChoice, session: ProbedSession) {
    this.#choice = choice;
    this.#session = session;
  }

  /** Probes `delay` ms from now, and again later while `conn` is the session's read-only connection. */
  start(conn: Connection, delay: number): void {
    const s = this.#session;
    const readOnlyOn = () => s.connection() === conn && s.state() === 'connectedReadOnly';
    this.#timer = setTimeout(async () => {
      this.#timer = undefined;
      const timeoutMs = Math.min(1000, s.connectTimeout);
      for (const host of this.#choice.hosts) {
        if (!readOnlyOn()) return;
        const addresses = await resolveHost(host.host, host.port, { lookup: s.lookup, timeoutMs }).catch(() => []);
        for (const address of addresses) {
          if (!readOnlyOn()) return;
          if (address === s.server()?.address && host.port === s.server()!.port) continue;
          if ((await probeReadWrite(address, host.port, timeoutMs)) === 'rw' && s.connection() === conn) {
            const found = { host: host.host, port: host.port, address };
            this.#choice.prefer(found);
            s.debug('read-write server %s found; leaving the read-only one', endpointLabel(found));
            conn.destroy(new ConnectionLossError('moving to a read-write server'));
            return;
          }
        }
      }
      if (readOnlyOn()) this.start(conn, Math.min(delay * 2, 60_000));
    }, delay);
  }

  stop(): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
  }
}

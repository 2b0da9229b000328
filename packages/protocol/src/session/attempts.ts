/**
 * Getting the session a connection: the first connect's rounds over every host (until
 * `connectTimeout`), the reconnect loop with the session's one back-off, one attempt (the next
 * host's name resolved again, each of its addresses dialed by dial.ts until one takes), an SRV
 * host list asked again once a round, and the evidence a failed reconnect leaves of a serving
 * server behind the session's last zxid (session-end.ts). What a connection that took does to
 * the session is the session's (its `took`).
 */
import type { Connection } from '../connection/connection.js';
import { resolveHost } from '../connection/resolve.js';
import { AuthFailedError, SessionClosedRequireSaslAuthError, SessionExpiredError } from '../errors.js';
import { Backoff } from './backoff.js';
import { ConnectFailures } from './connect-failures.js';
import { openConnection, type DialingSession } from './dial.js';
import { dialOrder, endpointLabel, type Endpoint, type HostAddress } from './hosts.js';
import type { SessionOptions } from './options.js';
import type { ServerChoice } from './server-choice.js';
import { findServerBehind, type ServerBehind } from './session-end.js';
import { isConnected, isTerminal } from './state.js';
import type { StateKeeper } from './state-keeper.js';

/** What the attempts need of the session, and what they tell it. */
export interface AttemptingSession {
  readonly options: SessionOptions;
  readonly servers: ServerChoice;
  readonly dialing: DialingSession;
  readonly keeper: StateKeeper;
  /** The server of the live connection, or of the last one (its address is dialed first when its host comes round). */
  lastHost(): Endpoint | undefined;
  sessionId(): bigint;
  lastZxid(): bigint;
  /** A dial took: `dialedAt` is when it began; `prove` is set on reconnects (a reply proved the connection). */
  took(conn: Connection, host: Endpoint, dialedAt: number, prove: boolean): void;
  /** The session is over; `cause` is how the client learnt it (the server's answer, or a server behind our zxid). */
  expire(cause: unknown): void;
  debug(format: string, ...args: unknown[]): void;
}

/** One session's connection attempts. */
export class Attempts {
  readonly #session: AttemptingSession;
  /** One back-off for the whole session's reconnects: reset only by a connection that proved stable (the session's call). */
  readonly backoff = new Backoff();
  /** The last round whose host list was asked again ({@link #refreshHosts}). */
  #refreshedRound = 0;
  /** A serving server found behind our last zxid since the last connection that took (#checkBehind). */
  #behind: ServerBehind | undefined;

  constructor(session: AttemptingSession) {
    this.#session = session;
  }

  /**
   * The first connect: servers are tried in rounds, with back-off between rounds, until
   * `connectTimeout` has passed (at least one full round), so a client started during a leader
   * election, when servers refuse clients, still gets in. Resolves with undefined once a
   * connection took, else with the ConnectionLoss to fail with, naming the hosts and the distinct
   * errors (in `cause`). Throws on abort, and when a server ends the session or refuses its
   * credentials.
   */
  async connect(signal?: AbortSignal): Promise<Error | undefined> {
    const { options, servers } = this.#session;
    const errors: unknown[] = [];
    // Each failure is folded in at once: a refused port fails the same way every round.
    const failures = new ConnectFailures(options.hosts);
    const deadline = performance.now() + options.connectTimeout;
    const pause = new Backoff({ initial: 100, max: 1000 });
    pause.next(); // no pause before the first round
    for (let attempt = 1; ; attempt++) {
      signal?.throwIfAborted();
      const tried = await this.#attempt(signal, errors);
      if (tried === true) return undefined;
      failures.add(errors.splice(0), tried);
      // Every host failed in a way another round cannot change (connect-failures.ts).
      if (failures.definitive(servers.hosts)) break;
      if (attempt % servers.hosts.length !== 0) continue;
      const left = deadline - performance.now();
      if (left <= 0) break;
      await sleep(Math.min(left, pause.next()));
    }
    signal?.throwIfAborted();
    return failures.error(servers.hosts);
  }

  /** After a drop: attempts, with the back-off between them, until connected or the session is over. */
  async reconnect(): Promise<void> {
    const { keeper } = this.#session;
    const errors: unknown[] = [];
    while (!isTerminal(keeper.state) && !isConnected(keeper.state)) {
      const delay = this.backoff.next();
      if (delay > 0) await sleep(delay);
      if (isTerminal(keeper.state)) return;
      try {
        if ((await this.#attempt(undefined, errors, true)) === true) return;
      } catch {
        return; // expired or auth failed: the state says so
      }
      keeper.lastFailure = errors.at(-1);
      // A serving server behind our last zxid, and no server took the session back within its
      // timeout: the ensemble lost what the session saw, the session with it (#checkBehind).
      if (this.#behind && keeper.state === 'lost') return this.#session.expire(this.#behind);
      if (errors.length > 64) errors.splice(0, errors.length - 64);
    }
  }

  /**
   * One connection attempt to the next host in the ring: its name resolved now (every round
   * resolves again, so a replaced server is found at its new address), then each of its
   * addresses in {@link dialOrder} until one takes. A name that does not resolve fails the
   * attempt with the resolver's error. True when a connection took, else the host tried.
   */
  async #attempt(signal: AbortSignal | undefined, errors: unknown[], prove = false): Promise<true | HostAddress> {
    const { options, keeper } = this.#session;
    await this.#refreshHosts(signal, errors);
    const { host, preferred } = this.#session.servers.next();
    let endpoints: Endpoint[];
    if (preferred) endpoints = [preferred];
    else {
      try {
        const addresses = await resolveHost(host.host, host.port, { lookup: options.lookup, timeoutMs: options.connectTimeout, signal });
        endpoints = dialOrder(host, addresses, this.#session.lastHost());
      } catch (err) {
        this.#session.debug('%s', (err as Error)?.message);
        errors.push(err);
        return host;
      }
    }
    for (const endpoint of endpoints) {
      if (signal?.aborted || keeper.state === 'closed') return host;
      if (await this.#dial(endpoint, signal, errors, prove)) return true;
    }
    return host;
  }

  /**
   * A host list that is asked again (`refreshHosts`: an SRV record) is, once at the start of every
   * round but the first (whose list the connect asked for). A failed answer keeps the list, and
   * counts as that attempt's error.
   */
  async #refreshHosts(signal: AbortSignal | undefined, errors: unknown[]): Promise<void> {
    const { options, servers } = this.#session;
    const refresh = options.refreshHosts;
    const round = servers.roundStart();
    if (refresh === undefined || round === undefined || round === 0 || round === this.#refreshedRound) return;
    this.#refreshedRound = round;
    try {
      servers.replace(await refresh(signal));
    } catch (err) {
      this.#session.debug('%s', (err as Error)?.message);
      errors.push(err);
    }
  }

  /** Dials one address of a host, handshakes and re-arms (dial.ts). True when the connection took. */
  async #dial(host: Endpoint, signal: AbortSignal | undefined, errors: unknown[], prove: boolean): Promise<boolean> {
    const dialedAt = performance.now();
    let conn: Connection;
    try {
      conn = await openConnection(host, this.#session.dialing, signal, prove);
    } catch (err) {
      if (err instanceof SessionExpiredError) {
        this.#session.expire(err);
        throw err;
      }
      if (err instanceof AuthFailedError || err instanceof SessionClosedRequireSaslAuthError) {
        this.#session.keeper.transition('authFailed', err);
        throw err;
      }
      this.#session.debug('connect to %s failed: %s', endpointLabel(host), (err as Error)?.message);
      errors.push(err);
      if (prove) await this.#checkBehind(host, err);
      return false;
    }
    this.#behind = undefined;
    this.#session.took(conn, host, dialedAt, prove);
    return true;
  }

  /**
   * After a failed attempt: whether it was a serving server behind the session's last zxid
   * (session-end.ts), kept as evidence until a connection takes. Once the session is also
   * `lost`, such a server means the ensemble lost what the session saw, the session with it
   * ({@link reconnect}). Not over TLS (the `srvr` probe is plain TCP).
   */
  async #checkBehind(server: Endpoint, attempt: unknown): Promise<void> {
    const { options } = this.#session;
    const ours = this.#session.lastZxid();
    if (ours === 0n || this.#session.sessionId() === 0n || options.tls) return;
    const behind = await findServerBehind(server, ours, attempt, Math.min(options.connectTimeout, 2000));
    if (behind === undefined) return;
    this.#session.debug('%s (%s) is at zxid 0x%s, behind our 0x%s', endpointLabel(server), behind.stat.mode, behind.stat.zxid.toString(16), ours.toString(16));
    this.#behind = behind;
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

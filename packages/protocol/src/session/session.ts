/**
 * The session across connections: which server to try (server-choice.ts), the attempts in rounds
 * and the reconnects with one back-off, adopting the connection dial.ts opened (resumed with
 * sessionId + password + lastZxidSeen after a drop, credentials and watches sent again), loss
 * inference and the quorum proof's deadlines, and the request path, which gives the proof its
 * evidence (proof-evidence.ts). The public state lives in state-keeper.ts, the ordered delivery
 * of watch events in event-delivery.ts.
 */
import { Connection, type Reply, type RequestOptions } from '../connection/connection.js';
import type { ServerGeneration } from '../connection/generation.js';
import { resolveHost } from '../connection/resolve.js';
import { OpCode, Xid } from '../constants.js';
import type { JuteReader } from '../jute/reader.js';
import type { JuteWriter } from '../jute/writer.js';
import { writeAuthPacket } from '../jute/proto.js';
import { AuthFailedError, ConnectionLossError, fromCode, SessionExpiredError } from '../errors.js';
import { debug, debugEnabled } from '../diagnostics.js';
import { Backoff } from './backoff.js';
import type { Endpoint, HostAddress } from './hosts.js';
import { dialOrder, endpointLabel } from './hosts.js';
import { isConnected, isTerminal, type SessionState } from './state.js';
import { WatchRegistry } from './watches.js';
import { ConnectFailures } from './connect-failures.js';
import { QuorumProof, type LeaseProofMode } from './quorum-proof.js';
import { EventDelivery } from './event-delivery.js';
import { PROVES, sendProofRequest, type ProofSender } from './proof-evidence.js';
import { openConnection, type DialingSession } from './dial.js';
import type { SessionOptions } from './options.js';
import { ReadWriteProbe, ServerChoice } from './server-choice.js';
import { StateKeeper, type StateListener } from './state-keeper.js';
import { findServerBehind, type ServerBehind } from './session-end.js';
import { hex64 } from '../util/hex.js';

export type { SessionOptions } from './options.js';
export type { SessionState, StateListener };
export { LOSS_TIMER_ALLOWANCE_MS } from './state-keeper.js';

/**
 * How long an adopted connection must live for its end to reset the reconnect back-off. A
 * connection that dies sooner (a server that answers a few requests and then breaks every
 * connection) counts as a failed attempt, so the delays keep growing instead of restarting at 0.
 */
export const STABLE_CONNECTION_MS = 1000;

/** One session with a ZooKeeper ensemble. */
export class Session {
  readonly #options: SessionOptions;
  readonly watches = new WatchRegistry();
  readonly #auth: Array<{ scheme: string; auth: Buffer }> = [];
  readonly #keeper: StateKeeper;
  #connection: Connection | undefined;
  #sessionId = 0n;
  #passwd: Buffer = Buffer.alloc(16);
  #negotiatedTimeout = 0;
  #lastZxid = 0n;
  /** The server of the live connection, or of the last one. */
  #host: Endpoint | undefined;
  readonly #servers: ServerChoice;
  readonly #rwProbe: ReadWriteProbe;
  #reconnecting: Promise<void> | undefined;
  /** One back-off for the whole session: reset only by a connection that proved stable. */
  readonly #backoff = new Backoff();
  /** The last round whose host list was asked again ({@link #refreshHosts}). */
  #refreshedRound = 0;
  /** When the live connection was adopted (performance.now()). */
  #adoptedAt = 0;
  /** {@link lastHeard} of the connections that ended. */
  #lastHeard = -Infinity;
  /** Whether a read-write server ever granted this session (Java's `seenRwServerBefore`). */
  #seenReadWrite = false;
  readonly #events: EventDelivery;
  readonly #dialing: DialingSession;
  readonly #proof: QuorumProof;
  /** A serving server found behind our last zxid since the last adopted connection (#checkBehind). */
  #behind: ServerBehind | undefined;
  readonly #proofSender: ProofSender;

  constructor(options: SessionOptions) {
    this.#options = options;
    this.#keeper = new StateKeeper(this.watches, () => this.#sessionId, (format, ...args) => this.#debug(format, ...args));
    this.#servers = new ServerChoice(options.hosts);
    this.#rwProbe = new ReadWriteProbe(this.#servers, {
      connection: () => this.#connection,
      state: () => this.#keeper.state,
      server: () => this.#host,
      lookup: options.lookup,
      connectTimeout: options.connectTimeout,
      debug: (format, ...args) => this.#debug(format, ...args),
    });
    this.#events = new EventDelivery(this.watches, options.chroot, () => this.#sessionId);
    this.#dialing = {
      options,
      servers: this.#servers,
      auth: this.#auth,
      watches: this.watches,
      lastZxid: () => this.lastZxid,
      seenReadWrite: () => this.#seenReadWrite,
      sessionId: () => this.#sessionId,
      password: () => this.#passwd,
      notification: (event, zxid) => this.#events.enqueue(event, zxid),
      closed: (conn, reason) => this.#onConnectionClosed(conn, reason),
      debug: (format, ...args) => this.#debug(format, ...args),
    };
    const proofSender = { request: (type: number, write: (w: JuteWriter) => void) => this.request(type, write, undefined), chroot: options.chroot, sessionId: () => this.#sessionId, proven: () => this.#proof.proven };
    this.#proofSender = proofSender;
    this.#proof = new QuorumProof(
      {
        timeout: () => this.#negotiatedTimeout || this.#options.sessionTimeout,
        connected: () => this.#keeper.state === 'connected',
        heardBy: (t) => this.#connection?.heardBy(t) ?? -Infinity,
        send: (kind) => sendProofRequest(proofSender, kind),
      },
      options.serverTickTime,
      options.leaseProof,
    );
    // A causal token given at connect (`after`): a server that has not applied it refuses the
    // handshake (ZooKeeperServer.processConnectRequest: "client must try another server").
    if (options.after !== undefined) this.#lastZxid = options.after;
    if (options.session) {
      this.#sessionId = options.session.id;
      this.#passwd = options.session.password;
    }
  }

  /** The current state. */
  get state(): SessionState {
    return this.#keeper.state;
  }
  /** The session id (0n before the first handshake). */
  get sessionId(): bigint {
    return this.#sessionId;
  }
  /** The session password the server issued (with the id, it resumes the session elsewhere). */
  get sessionPassword(): Buffer {
    return this.#passwd;
  }
  /** The timeout the server granted, in ms. */
  get negotiatedTimeout(): number {
    return this.#negotiatedTimeout;
  }
  /** The highest zxid seen in a reply or notification. */
  get lastZxid(): bigint {
    return this.#connection ? maxBig(this.#lastZxid, this.#connection.lastZxid) : this.#lastZxid;
  }
  /**
   * When the ensemble last provably heard from this session (performance.now() clock): the send
   * time of the newest request or ping a server answered. -Infinity before the first reply.
   */
  get lastHeard(): number {
    const live = this.#connection?.lastHeard ?? -Infinity;
    return live > this.#lastHeard ? live : this.#lastHeard;
  }
  /**
   * The earliest moment (performance.now() clock) at which the ensemble may expire this session
   * if it hears nothing more from us: {@link lastHeard} plus the negotiated timeout. A server
   * expires a session one timeout after it last heard from it (rounded up to its tick), and it
   * heard the last answered request no earlier than we sent it.
   */
  get expiryDeadline(): number {
    return this.lastHeard + (this.#negotiatedTimeout || this.#options.sessionTimeout);
  }
  /**
   * The earliest moment (performance.now() clock) at which the ensemble may expire this session,
   * by evidence that passed through the leader (see quorum-proof.ts): the newest request a
   * committed write or a sync of the session confirmed, or the newest read-write handshake, plus
   * the negotiated timeout. While the proof is held ({@link holdQuorumProof}) the session sends
   * its own write or sync when none came for a while.
   */
  get quorumDeadline(): number {
    return this.#proof.proven + (this.#negotiatedTimeout || this.#options.sessionTimeout);
  }

  /**
   * Keeps {@link quorumDeadline} advancing (a sync or a committed no-op write whenever the session
   * sent neither for the mode's period) until the returned function is called; counted, so many
   * leases share one loop. While held, `lost` is reported by the quorum deadline too (a server
   * that cannot commit the write or answer the sync stops answering the session, so the
   * connection drops by the liveness rule).
   */
  holdQuorumProof(): () => void {
    if (isTerminal(this.#keeper.state)) throw this.#keeper.unavailable();
    this.#proof.assertPossible();
    return this.#proof.hold();
  }

  /** Resolves once {@link quorumDeadline} is later than `deadline` (holding the proof meanwhile). */
  awaitQuorumDeadline(deadline: number, signal?: AbortSignal): Promise<void> {
    if (isTerminal(this.#keeper.state)) return Promise.reject(this.#keeper.unavailable());
    try {
      this.#proof.assertPossible();
    } catch (err) {
      return Promise.reject(err as Error);
    }
    // Compared as deadlines (not deadline - T against the proof): the float round trip could say yes too early.
    return this.#proof.waitProven(() => this.quorumDeadline > deadline, () => this.#keeper.unavailable(), signal);
  }

  /** Throws when no lease can be kept at the negotiated timeout (see QuorumProof.assertPossible). */
  checkLeaseProof(): void {
    this.#proof.assertPossible();
  }

  /** The proof mode asked for. */
  get leaseProof(): LeaseProofMode {
    return this.#proof.mode;
  }

  /** The server the session is connected to (its host as listed, and the address dialed), when connected. */
  get host(): Endpoint | undefined {
    return this.#connection ? this.#host : undefined;
  }
  /** Requests sent and not yet answered. */
  get pendingCount(): number {
    return this.#connection?.pendingCount ?? 0;
  }
  /** The servers this session may use, in the order it dials them. */
  get hosts(): readonly HostAddress[] {
    return this.#servers.hosts;
  }

  /**
   * Replaces the host list (see host-provider.ts for the rule). When the plan says to move, the
   * current connection is closed (its in-flight requests fail with ConnectionLoss, as on any
   * drop) and the session resumes on the planned server: the session, its ephemeral nodes and
   * its watches are kept. Returns whether it moves.
   */
  updateHosts(hosts: readonly HostAddress[], random: () => number = Math.random): boolean {
    if (isTerminal(this.#keeper.state)) throw this.#keeper.unavailable();
    const move = this.#servers.update(hosts, this.#host, random);
    const conn = this.#connection;
    if (move && conn) {
      this.#debug('host list updated: leaving %s to rebalance', this.#host && endpointLabel(this.#host));
      conn.destroy(new ConnectionLossError('moving to another server to rebalance the ensemble'));
    }
    return move;
  }

  /** Adds a state listener; returns a function that removes it. */
  onState(listener: StateListener): () => void {
    return this.#keeper.onState(listener);
  }

  /**
   * Connects to the first server (in shuffled order) that grants a session. Servers are tried in
   * rounds, with back-off between rounds, until `connectTimeout` has passed (at least one full
   * round), so a client started during a leader election, when servers refuse clients, still gets
   * in. Fails with ConnectionLoss naming the hosts and the distinct errors (in `cause`) when none does.
   */
  async start(signal?: AbortSignal): Promise<void> {
    const errors: unknown[] = [];
    // Each failure is folded in at once: a refused port fails the same way every round.
    const failures = new ConnectFailures(this.#options.hosts);
    const deadline = performance.now() + this.#options.connectTimeout;
    const pause = new Backoff({ initial: 100, max: 1000 });
    pause.next(); // no pause before the first round
    for (let attempt = 1; ; attempt++) {
      signal?.throwIfAborted();
      const tried = await this.#attempt(signal, errors);
      if (tried === true) return;
      failures.add(errors.splice(0), tried);
      // Every host failed in a way another round cannot change (connect-failures.ts).
      if (failures.definitive(this.#servers.hosts)) break;
      if (attempt % this.#servers.hosts.length !== 0) continue;
      const left = deadline - performance.now();
      if (left <= 0) break;
      await sleep(Math.min(left, pause.next()));
    }
    signal?.throwIfAborted();
    this.#keeper.transition('closed');
    throw failures.error(this.#servers.hosts);
  }

  /** Records credentials to send now and on every reconnect (Java's `addAuthInfo`). */
  async addAuth(scheme: string, auth: Buffer): Promise<void> {
    const reply = await this.request(OpCode.auth, (w) => writeAuthPacket(w, { type: 0, scheme, auth }), undefined, { xid: Xid.auth });
    if (reply.err !== 0) throw fromCode(reply.err, { op: 'addAuth' });
    this.#auth.push({ scheme, auth });
  }

  /**
   * One connection attempt to the next host in the ring: its name resolved now (every round
   * resolves again, so a replaced server is found at its new address), then each of its
   * addresses in {@link dialOrder} until one takes. A name that does not resolve fails the
   * attempt with the resolver's error. True when a connection took, else the host tried.
   */
  async #attempt(signal: AbortSignal | undefined, errors: unknown[], prove = false): Promise<true | HostAddress> {
    await this.#refreshHosts(signal, errors);
    const { host, preferred } = this.#servers.next();
    let endpoints: Endpoint[];
    if (preferred) endpoints = [preferred];
    else {
      try {
        const addresses = await resolveHost(host.host, host.port, { lookup: this.#options.lookup, timeoutMs: this.#options.connectTimeout, signal });
        endpoints = dialOrder(host, addresses, this.#host);
      } catch (err) {
        this.#debug('%s', (err as Error)?.message);
        errors.push(err);
        return host;
      }
    }
    for (const endpoint of endpoints) {
      if (signal?.aborted || this.#keeper.state === 'closed') return host;
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
    const refresh = this.#options.refreshHosts;
    const round = this.#servers.roundStart();
    if (refresh === undefined || round === undefined || round === 0 || round === this.#refreshedRound) return;
    this.#refreshedRound = round;
    try {
      this.#servers.replace(await refresh(signal));
    } catch (err) {
      this.#debug('%s', (err as Error)?.message);
      errors.push(err);
    }
  }

  /** Dials one address of a host, handshakes and re-arms (dial.ts). True when the connection took. */
  async #dial(host: Endpoint, signal: AbortSignal | undefined, errors: unknown[], prove: boolean): Promise<boolean> {
    const dialedAt = performance.now();
    let conn: Connection;
    try {
      conn = await openConnection(host, this.#dialing, signal, prove);
    } catch (err) {
      if (err instanceof SessionExpiredError) {
        this.#expire(err);
        throw err;
      }
      if (err instanceof AuthFailedError) {
        this.#keeper.transition('authFailed');
        throw err;
      }
      this.#debug('connect to %s failed: %s', endpointLabel(host), (err as Error)?.message);
      errors.push(err);
      if (prove) await this.#checkBehind(host, err);
      return false;
    }
    if (this.#keeper.state === 'closed') {
      void conn.close();
      return true;
    }
    // The first connection's handshake is where the server started (or took up) the session: it
    // heard us no earlier than we dialed. Reconnects are dated by the reply that proved them.
    if (!prove && dialedAt > this.#lastHeard) this.#lastHeard = dialedAt;
    // A read-write server granted (new) or revalidated (resumed) the session through the
    // leader, which touched it no earlier than we dialed (quorum-proof.ts).
    if (!conn.session.readOnly) this.#proof.noteHandshake(dialedAt);
    this.#adopt(conn, host);
    return true;
  }

  #adopt(conn: Connection, host: Endpoint): void {
    const fresh = this.#sessionId !== 0n && conn.session.sessionId !== this.#sessionId;
    this.#connection = conn;
    this.#host = host;
    this.#sessionId = conn.session.sessionId;
    this.#passwd = conn.session.passwd;
    this.#negotiatedTimeout = conn.session.timeOut;
    this.#adoptedAt = performance.now();
    this.#servers.adopted();
    this.#behind = undefined;
    if (fresh) this.#debug('server granted a new session 0x%s', hex64(this.#sessionId));
    this.#keeper.clearLossTimer();
    if (conn.session.readOnly) {
      this.#keeper.transition('connectedReadOnly');
      this.#rwProbe.start(conn, 200);
    } else {
      this.#seenReadWrite = true;
      this.#keeper.transition('connected');
    }
    this.#proof.onConnectionChange();
  }

  /**
   * Sends one request on the live connection. Without one, fails at once with ConnectionLoss
   * (or SessionExpired / ClientClosed / AuthFailed in those states): nothing is queued or
   * resent behind the caller's back. `options` as {@link Connection.request}'s.
   */
  request<T>(type: number, write: ((w: JuteWriter) => void) | undefined, read: ((r: JuteReader) => T) | undefined, options?: RequestOptions): Promise<Reply<T>> {
    const conn = this.#connection;
    if (conn && isConnected(this.#keeper.state)) {
      const kind = PROVES[type];
      if (kind === undefined) return conn.request(type, write, read, options);
      // A write that commits, or a sync, is evidence for the quorum proof (quorum-proof.ts).
      const sentAt = performance.now();
      const reply = conn.request(type, write, read, options);
      reply.then((r) => {
        if (r.err === 0 && this.#connection === conn && !conn.session.readOnly) this.#proof.committed(sentAt, kind);
      }, noop);
      return reply;
    }
    return Promise.reject(this.#keeper.unavailable());
  }

  /**
   * Sends the quorum proof's own request of `kind` now (a no-op write or a sync of the root),
   * reported to the proof like any other; resolves with its reply header's err. The fenced reads'
   * fence (read-fence.ts).
   */
  proofRequest(kind: 'write' | 'sync'): Promise<number> {
    return sendProofRequest(this.#proofSender, kind);
  }

  /**
   * The generation of the server this session is connected to (`'legacy'`: 3.4): known, a
   * promise of it while its probe is out, or undefined when not connected.
   */
  serverGeneration(): ServerGeneration | Promise<ServerGeneration> | undefined {
    const conn = this.#connection;
    if (!conn || !isConnected(this.#keeper.state)) return undefined;
    return conn.generation ?? conn.generationKnown();
  }

  /** Whether a request sent now may be held by the connection and fail as never sent ({@link Connection.mayHold}). */
  mayHold(coalesce: boolean): boolean {
    return this.#connection?.mayHold(coalesce) ?? false;
  }

  /** A `NODE_DEBUG=zk` line naming this session (two clients in one process can be told apart). */
  #debug(format: string, ...args: unknown[]): void {
    if (debugEnabled) debug(`session 0x%s: ${format}`, hex64(this.#sessionId), ...args);
  }

  /** Resolves when the session is connected again, or rejects when it cannot be (or on abort). */
  waitConnected(signal?: AbortSignal): Promise<void> {
    return this.#keeper.waitConnected(signal);
  }

  /** Ends the session: closeSession, so its ephemeral nodes go at once. Idempotent. */
  async close(timeoutMs = 2000): Promise<void> {
    if (this.#keeper.state === 'closed') return;
    const conn = this.#connection;
    this.#connection = undefined;
    this.#keeper.clearLossTimer();
    this.#rwProbe.stop();
    this.#keeper.transition('closed');
    // After the transition: waiters on the proof get ClientClosedError, not a ConnectionLoss.
    this.#proof.stop();
    if (conn) await conn.close(timeoutMs);
    this.watches.clear();
  }

  #onConnectionClosed(conn: Connection | undefined, reason: Error | undefined): void {
    if (!conn || this.#connection !== conn) return;
    this.#lastZxid = maxBig(this.#lastZxid, conn.lastZxid);
    if (conn.lastHeard > this.#lastHeard) this.#lastHeard = conn.lastHeard;
    // Only a connection that served a while resets the back-off; one that died soon after its
    // handshake counts as one more failed attempt.
    if (conn.lastHeard > -Infinity && performance.now() - this.#adoptedAt >= STABLE_CONNECTION_MS) this.#backoff.reset();
    this.#connection = undefined;
    this.#rwProbe.stop();
    this.#proof.onConnectionChange();
    this.#debug('connection to %s closed: %s', this.#host && endpointLabel(this.#host), reason?.message);
    if (isTerminal(this.#keeper.state)) return;
    this.#keeper.transition('suspended');
    this.#startLossTimer();
    this.#reconnecting ??= this.#reconnect().finally(() => (this.#reconnecting = undefined));
  }

  /** The loss timer (StateKeeper.startLossTimer) at {@link expiryDeadline}, or the quorum deadline when sooner. */
  #startLossTimer(): void {
    const timeout = this.#negotiatedTimeout || this.#options.sessionTimeout;
    // While a proof is held, the evidence that passed through the leader dates the loss (a
    // follower cut off from the leader answers for syncLimit ticks after the leader stopped
    // counting the session).
    const deadline = this.#proof.active ? Math.min(this.expiryDeadline, this.quorumDeadline) : this.expiryDeadline;
    this.#keeper.startLossTimer(deadline, timeout);
  }

  async #reconnect(): Promise<void> {
    const errors: unknown[] = [];
    while (!isTerminal(this.#keeper.state) && !isConnected(this.#keeper.state)) {
      const delay = this.#backoff.next();
      if (delay > 0) await sleep(delay);
      if (isTerminal(this.#keeper.state)) return;
      try {
        if ((await this.#attempt(undefined, errors, true)) === true) return;
      } catch {
        return; // expired or auth failed: the state says so
      }
      this.#keeper.lastFailure = errors.at(-1);
      // A serving server behind our last zxid, and no server took the session back within its
      // timeout: the ensemble lost what the session saw, the session with it (#checkBehind).
      if (this.#behind && this.#keeper.state === 'lost') return this.#expire(this.#behind);
      if (errors.length > 64) errors.splice(0, errors.length - 64);
    }
  }

  /** `cause`: how the client learnt it (the server's answer, or a server behind our zxid), for the calls' errors. */
  #expire(cause?: unknown): void {
    this.#keeper.clearLossTimer();
    this.#proof.stop();
    if (this.#keeper.state !== 'expired' && this.#keeper.state !== 'closed') this.#keeper.transition('expired', cause);
  }

  /**
   * After a failed attempt: whether it was a serving server behind the session's last zxid
   * (session-end.ts), kept as evidence until a connection is adopted. Once the session is also
   * `lost`, such a server means the ensemble lost what the session saw, the session with it
   * (#reconnect). Not over TLS (the `srvr` probe is plain TCP).
   */
  async #checkBehind(server: Endpoint, attempt: unknown): Promise<void> {
    const ours = this.lastZxid;
    if (ours === 0n || this.#sessionId === 0n || this.#options.tls) return;
    const behind = await findServerBehind(server, ours, attempt, Math.min(this.#options.connectTimeout, 2000));
    if (behind === undefined) return;
    this.#debug('%s (%s) is at zxid 0x%s, behind our 0x%s', endpointLabel(server), behind.stat.mode, behind.stat.zxid.toString(16), ours.toString(16));
    this.#behind = behind;
  }
}

const noop = (): void => {};

function maxBig(a: bigint, b: bigint): bigint {
  return a > b ? a : b;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

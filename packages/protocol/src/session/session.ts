/**
 * The session across connections: adopting the connection that an attempt (attempts.ts: rounds,
 * reconnects with one back-off) got from dial.ts (resumed with sessionId + password +
 * lastZxidSeen after a drop, credentials and watches sent again), what a drop does (suspended,
 * the loss timer, a reconnect), loss inference and the quorum proof's deadlines, and the request
 * path, which gives the proof its evidence (proof-evidence.ts). Which server to try is
 * server-choice.ts's; the public state lives in state-keeper.ts, the ordered delivery of watch
 * events in event-delivery.ts.
 */
import { Connection, type Reply, type RequestOptions } from '../connection/connection.js';
import type { ServerGeneration } from '../connection/generation.js';
import { OpCode, Xid } from '../constants.js';
import type { JuteReader } from '../jute/reader.js';
import type { JuteWriter } from '../jute/writer.js';
import { writeAuthPacket } from '../jute/proto.js';
import { ConnectionLossError, fromCode, SessionClosedRequireSaslAuthError } from '../errors.js';
import { debug, debugEnabled } from '../diagnostics.js';
import { Attempts } from './attempts.js';
import { endpointLabel, type Endpoint, type HostAddress } from './hosts.js';
import { isConnected, isTerminal, type SessionState } from './state.js';
import { WatchRegistry } from './watches.js';
import { QuorumProof, type LeaseProofMode } from './quorum-proof.js';
import { EventDelivery } from './event-delivery.js';
import { PROVES, sendProofRequest, type ProofSender } from './proof-evidence.js';
import type { DialingSession } from './dial.js';
import type { SessionOptions } from './options.js';
import { ReadWriteProbe, ServerChoice } from './server-choice.js';
import { StateKeeper, type StateListener } from './state-keeper.js';
import { hex64 } from '../util/hex.js';
import { loginFor } from '../kerberos/gssapi-login.js';

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
  /** When the live connection was adopted (performance.now()). */
  #adoptedAt = 0;
  /** {@link lastHeard} of the connections that ended. */
  #lastHeard = -Infinity;
  /** Whether a read-write server ever granted this session (Java's `seenRwServerBefore`). */
  #seenReadWrite = false;
  readonly #events: EventDelivery;
  readonly #dialing: DialingSession;
  readonly #proof: QuorumProof;
  readonly #proofSender: ProofSender;
  readonly #attempts: Attempts;

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
        answeredAfter: (t) => this.#connection?.answeredAfter(t) ?? Infinity,
        send: (kind) => sendProofRequest(proofSender, kind),
      },
      options.serverTickTime,
      options.leaseProof,
    );
    this.#attempts = new Attempts({
      options,
      servers: this.#servers,
      dialing: this.#dialing,
      keeper: this.#keeper,
      lastHost: () => this.#host,
      sessionId: () => this.#sessionId,
      lastZxid: () => this.lastZxid,
      took: (conn, host, dialedAt, prove) => this.#took(conn, host, dialedAt, prove),
      expire: (cause) => this.#expire(cause),
      debug: (format, ...args) => this.#debug(format, ...args),
    });
    // Kerberos: the login keeps a ccache TGT renewed while the session can still reconnect (kerberos/gssapi-login.ts).
    if (options.sasl?.mechanism === 'GSSAPI') {
      const release = loginFor(options.sasl).hold();
      const off = this.#keeper.onState((state) => isTerminal(state) && (off(), release()));
    }
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
  /** When a renewal of the quorum proof begun as soon as it can has committed (see QuorumProof.renewedBy). */
  get quorumRenewedBy(): number {
    return this.#proof.renewedBy;
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
    const failed = await this.#attempts.connect(signal);
    if (failed === undefined) return;
    this.#keeper.transition('closed');
    throw failed;
  }

  /** Records credentials to send now and on every reconnect (Java's `addAuthInfo`). */
  async addAuth(scheme: string, auth: Buffer): Promise<void> {
    const reply = await this.request(OpCode.auth, (w) => writeAuthPacket(w, { type: 0, scheme, auth }), undefined, { xid: Xid.auth });
    if (reply.err !== 0) throw fromCode(reply.err, { op: 'addAuth' });
    this.#auth.push({ scheme, auth });
  }

  /** A connection an attempt got (attempts.ts) becomes the session's, unless the session was closed meanwhile. */
  #took(conn: Connection, host: Endpoint, dialedAt: number, prove: boolean): void {
    if (this.#keeper.state === 'closed') {
      void conn.close();
      return;
    }
    // The first connection's handshake is where the server started (or took up) the session: it
    // heard us no earlier than we dialed. Reconnects are dated by the reply that proved them.
    if (!prove && dialedAt > this.#lastHeard) this.#lastHeard = dialedAt;
    // A read-write server granted (new) or revalidated (resumed) the session through the
    // leader, which touched it no earlier than we dialed (quorum-proof.ts).
    if (!conn.session.readOnly) this.#proof.noteHandshake(dialedAt);
    this.#adopt(conn, host);
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
   * The generation of the server this session is connected to (`'legacy'`: 3.4, `'modern'`:
   * 3.5+): known, a promise of it while its probe is out, or undefined when not connected (the
   * connection then finds out before sending anything a 3.4 server lacks).
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
    if (conn.lastHeard > -Infinity && performance.now() - this.#adoptedAt >= STABLE_CONNECTION_MS) this.#attempts.backoff.reset();
    this.#connection = undefined;
    this.#rwProbe.stop();
    this.#proof.onConnectionChange();
    this.#debug('connection to %s closed: %s', this.#host && endpointLabel(this.#host), reason?.message);
    if (isTerminal(this.#keeper.state)) return;
    // The server requires SASL and the client has none to offer: another connection cannot help.
    if (reason instanceof SessionClosedRequireSaslAuthError) return this.#keeper.transition('authFailed', reason);
    this.#keeper.transition('suspended');
    this.#startLossTimer();
    this.#reconnecting ??= this.#attempts.reconnect().finally(() => (this.#reconnecting = undefined));
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

  /** `cause`: how the client learnt it (the server's answer, or a server behind our zxid), for the calls' errors. */
  #expire(cause?: unknown): void {
    this.#keeper.clearLossTimer();
    this.#proof.stop();
    if (this.#keeper.state !== 'expired' && this.#keeper.state !== 'closed') this.#keeper.transition('expired', cause);
  }
}

const noop = (): void => {};

function maxBig(a: bigint, b: bigint): bigint {
  return a > b ? a : b;
}

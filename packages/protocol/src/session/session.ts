/**
 * The session across connections: which server to dial, the live connection, resumption with
 * sessionId + password + lastZxidSeen after a drop, credentials and watches re-sent on every
 * new connection, the public state, loss inference, and the ordered, asynchronous delivery of
 * watch events.
 */
import { Connection, type Reply, type RequestOptions } from '../connection/connection.js';
import type { ServerGeneration } from '../connection/generation.js';
import { loadTls, probeReadWrite, type TlsSource } from '../connection/transport.js';
import { resolveHost, type LookupFunction } from '../connection/resolve.js';
import { OpCode, Xid } from '../constants.js';
import type { JuteReader } from '../jute/reader.js';
import type { JuteWriter } from '../jute/writer.js';
import { readSetSASLResponse, writeAuthPacket, writeGetSASLRequest, writeSyncRequest, type WatcherEvent } from '../jute/proto.js';
import { AuthFailedError, ClientClosedError, ConnectionLossError, fromCode, SessionExpiredError } from '../errors.js';
import { stripChroot } from '../util/paths.js';
import { debug, debugEnabled, eventChannel, proofChannel, publishState } from '../diagnostics.js';
import { Backoff } from './backoff.js';
import type { Endpoint, HostAddress } from './hosts.js';
import { dialOrder, endpointLabel, shuffleHosts } from './hosts.js';
import { assertTransition, isConnected, isTerminal, type SessionState } from './state.js';
import { eventTypeOf, WatchRegistry, type WatchListener } from './watches.js';
import { setWatchesRequests } from './rewatch.js';
import { DigestMd5Client, type SaslOptions } from './sasl.js';
import { ConnectFailures } from './connect-failures.js';
import { planServerList } from './host-provider.js';
import { QuorumProof, type LeaseProofMode } from './quorum-proof.js';
import { writeMultiRequest } from '../jute/multi.js';

export type { SessionState };

/** Settings the session needs; the client normalises them. */
export interface SessionOptions {
  hosts: readonly HostAddress[];
  chroot: string;
  sessionTimeout: number;
  connectTimeout: number;
  maxFrameSize: number;
  canBeReadOnly: boolean;
  /**
   * Send watch-less reads of one tick as one multiRead (see connection/coalesce.ts): `true` on
   * every connection, `'auto'` on the connections whose server answered the multiRead probe
   * (asked at a connection's first batch: Connection.request), `false` or undefined never.
   */
  coalesceReads?: boolean | 'auto' | undefined;
  tls: TlsSource | undefined;
  /** Resolves host names at every attempt (see connection/resolve.ts); `dns.lookup` by default. */
  lookup?: LookupFunction | undefined;
  /** A session to resume rather than start. */
  session?: { id: bigint; password: Buffer } | undefined;
  /** SASL credentials, authenticated on every new connection. */
  sasl?: SaslOptions | undefined;
  /** The ensemble's tickTime if known, ms (see quorum-proof.ts). */
  serverTickTime?: number | undefined;
  /** How the quorum proof is kept (see quorum-proof.ts); default 'auto'. */
  leaseProof?: LeaseProofMode | undefined;
}

/**
 * How long an adopted connection must live for its end to reset the reconnect back-off. A
 * connection that dies sooner (a server that answers a few requests and then breaks every
 * connection) counts as a failed attempt, so the delays keep growing instead of restarting at 0.
 */
export const STABLE_CONNECTION_MS = 1000;

/** Most that `lost` is reported ahead of {@link Session.expiryDeadline} (also at most T/50), against timer lateness. */
export const LOSS_TIMER_ALLOWANCE_MS = 50;

/** Listener of state changes. */
export type StateListener = (state: SessionState, previous: SessionState) => void;

/** One session with a ZooKeeper ensemble. */
export class Session {
  readonly #options: SessionOptions;
  readonly watches = new WatchRegistry();
  readonly #auth: Array<{ scheme: string; auth: Buffer }> = [];
  #state: SessionState = 'connecting';
  #connection: Connection | undefined;
  #sessionId = 0n;
  #passwd: Buffer = Buffer.alloc(16);
  #negotiatedTimeout = 0;
  #lastZxid = 0n;
  /** The server of the live connection, or of the last one. */
  #host: Endpoint | undefined;
  /** Hosts in the order we try them; rotates so a reconnect starts with the next server. */
  #ring: HostAddress[];
  #ringIndex = 0;
  #lossTimer: NodeJS.Timeout | undefined;
  #reconnecting: Promise<void> | undefined;
  /** One back-off for the whole session: reset only by a connection that proved stable. */
  readonly #backoff = new Backoff();
  /** When the live connection was adopted (performance.now()). */
  #adoptedAt = 0;
  /** {@link lastHeard} of the connections that ended. */
  #lastHeard = -Infinity;
  /** Whether a read-write server ever granted this session (Java's `seenRwServerBefore`). */
  #seenReadWrite = false;
  /** A server to try first on the next attempt, at that address: a read-write one found while connected read-only, or the same one again. */
  #preferred: Endpoint | undefined;
  /** After {@link updateHosts} chose to move: the servers to try first, in order (Java's reconfigMode). */
  #moveOrder: HostAddress[] = [];
  #rwProbe: NodeJS.Timeout | undefined;
  /** Servers (`host:port`) that refused or dropped the multiRead probe: not probed again by this client. */
  readonly #noMultiRead = new Set<string>();
  readonly #stateListeners = new Set<StateListener>();
  readonly #eventQueue: Array<{ event: WatcherEvent; zxid: bigint }> = [];
  #drainScheduled = false;
  readonly #proof: QuorumProof;

  constructor(options: SessionOptions) {
    this.#options = options;
    this.#ring = shuffleHosts(options.hosts);
    this.#proof = new QuorumProof(
      {
        timeout: () => this.#negotiatedTimeout || this.#options.sessionTimeout,
        connected: () => this.#state === 'connected',
        heardBy: (t) => this.#connection?.heardBy(t) ?? -Infinity,
        send: (kind) => this.#proofRequest(kind),
      },
      options.serverTickTime,
      options.leaseProof,
    );
    if (options.session) {
      this.#sessionId = options.session.id;
      this.#passwd = options.session.password;
    }
  }

  /** The current state. */
  get state(): SessionState {
    return this.#state;
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
    if (isTerminal(this.#state)) throw this.#unavailable();
    return this.#proof.hold();
  }

  /** Resolves once {@link quorumDeadline} is later than `deadline` (holding the proof meanwhile). */
  awaitQuorumDeadline(deadline: number, signal?: AbortSignal): Promise<void> {
    if (isTerminal(this.#state)) return Promise.reject(this.#unavailable());
    // Compared as deadlines (not deadline - T against the proof): the float round trip could say yes too early.
    return this.#proof.waitProven(() => this.quorumDeadline > deadline, () => this.#unavailable(), signal);
  }

  /** The proof mode asked for. */
  get leaseProof(): LeaseProofMode {
    return this.#proof.mode;
  }

  /**
   * A proof request: a multi of one check of the root (chroot), committed even when the check
   * fails, or a sync of the root. Sent through {@link request}, which reports it to the proof.
   */
  async #proofRequest(kind: 'write' | 'sync'): Promise<void> {
    const path = this.#options.chroot === '' ? '/' : this.#options.chroot;
    const sentAt = performance.now();
    // On a channel of its own (zk:proof): operators and the bench see the proof's cost, and counts
    // of the application's requests (zk:request:*) stay what the application sent.
    let err = -4;
    try {
      const reply =
        kind === 'write'
          ? await this.request(OpCode.multi, (w) => writeMultiRequest(w, [{ type: OpCode.check, path, version: -1 }]), undefined)
          : await this.request(OpCode.sync, (w) => writeSyncRequest(w, { path }), undefined);
      err = reply.err;
    } finally {
      // `proven` is read after the proof has taken this answer in (a microtask later).
      if (proofChannel.hasSubscribers) queueMicrotask(() => proofChannel.publish({ sessionId: this.#sessionId, kind, err, durationMs: performance.now() - sentAt, proven: this.#proof.proven }));
    }
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
    return this.#ring;
  }

  /**
   * Replaces the host list (see host-provider.ts for the rule). When the plan says to move, the
   * current connection is closed (its in-flight requests fail with ConnectionLoss, as on any
   * drop) and the session resumes on the planned server: the session, its ephemeral nodes and
   * its watches are kept. Returns whether it moves.
   */
  updateHosts(hosts: readonly HostAddress[], random: () => number = Math.random): boolean {
    if (isTerminal(this.#state)) throw this.#unavailable();
    const plan = planServerList(this.#ring, hosts, this.#host, random);
    this.#ring = plan.hosts;
    this.#ringIndex = plan.nextIndex;
    this.#moveOrder = plan.order;
    this.#preferred = undefined;
    const conn = this.#connection;
    if (plan.move && conn) {
      this.#debug('host list updated: leaving %s to rebalance', this.#host && endpointLabel(this.#host));
      conn.destroy(new ConnectionLossError('moving to another server to rebalance the ensemble'));
    }
    return plan.move;
  }

  /** Adds a state listener; returns a function that removes it. */
  onState(listener: StateListener): () => void {
    this.#stateListeners.add(listener);
    return () => this.#stateListeners.delete(listener);
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
      if (await this.#attempt(signal, errors)) return;
      failures.add(errors.splice(0));
      if (attempt % this.#ring.length !== 0) continue;
      const left = deadline - performance.now();
      if (left <= 0) break;
      await sleep(Math.min(left, pause.next()));
    }
    signal?.throwIfAborted();
    this.#transition('closed');
    throw failures.error();
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
   * attempt with the resolver's error. True when a connection took.
   */
  async #attempt(signal: AbortSignal | undefined, errors: unknown[], prove = false): Promise<boolean> {
    const preferred = this.#preferred;
    const host = preferred ?? this.#moveOrder.shift() ?? (this.#ring[this.#ringIndex % this.#ring.length] as HostAddress);
    if (preferred) this.#preferred = undefined;
    else if (host === this.#ring[this.#ringIndex % this.#ring.length]) this.#ringIndex = (this.#ringIndex + 1) % this.#ring.length;
    let endpoints: Endpoint[];
    if (preferred) endpoints = [preferred];
    else {
      try {
        const addresses = await resolveHost(host.host, host.port, { lookup: this.#options.lookup, timeoutMs: this.#options.connectTimeout, signal });
        endpoints = dialOrder(host, addresses, this.#host);
      } catch (err) {
        this.#debug('%s', (err as Error)?.message);
        errors.push(err);
        return false;
      }
    }
    for (const endpoint of endpoints) {
      if (signal?.aborted || this.#state === 'closed') return false;
      if (await this.#dial(endpoint, signal, errors, prove)) return true;
    }
    return false;
  }

  /** Dials one address of a host, handshakes and re-arms. True when the connection took. */
  async #dial(host: Endpoint, signal: AbortSignal | undefined, errors: unknown[], prove: boolean): Promise<boolean> {
    const where = `${host.address}:${host.port}`;
    // coalesceReads 'auto': the connection learns whether the server has multiRead at its first
    // batch (Connection.request); a server that refused is not asked again.
    const coalesceReads = this.#options.coalesceReads === true || (this.#options.coalesceReads === 'auto' && !this.#noMultiRead.has(where) ? 'probe' : false);
    const resume = this.#seenReadWrite || this.#options.session !== undefined;
    let conn: Connection | undefined;
    // A session granted only by a read-only server is local to it: a client that never saw a
    // read-write server asks for a new session rather than presenting that one.
    const sessionId = resume ? this.#sessionId : 0n;
    const dialedAt = performance.now();
    try {
      const tls = await loadTls(this.#options.tls, where);
      conn = await Connection.open(
        {
          host: host.host,
          address: host.address,
          port: host.port,
          tls,
          sessionTimeout: this.#options.sessionTimeout,
          sessionId,
          passwd: resume ? this.#passwd : Buffer.alloc(16),
          lastZxidSeen: this.lastZxid,
          canBeReadOnly: this.#options.canBeReadOnly,
          connectTimeout: this.#options.connectTimeout,
          maxFrameSize: this.#options.maxFrameSize,
          coalesceReads,
          probeGeneration: true,
          signal,
        },
        {
          notification: (event, zxid) => this.#enqueue(event, zxid),
          close: (reason) => this.#onConnectionClosed(conn, reason),
          noMultiRead: () => {
            // A 3.5 server: back to it at once (the session lives there), reads alone from now on.
            this.#debug('%s has no multiRead: reconnecting without coalesced reads', endpointLabel(host));
            this.#noMultiRead.add(where);
            this.#preferred = host;
          },
        },
      );
      await this.#rearm(conn, prove);
      if (conn.closed) throw new ConnectionLossError(`connection to ${endpointLabel(host)} closed right after the handshake`);
    } catch (err) {
      conn?.destroy();
      if (err instanceof SessionExpiredError) {
        this.#expire();
        throw err;
      }
      if (err instanceof AuthFailedError) {
        this.#transition('authFailed');
        throw err;
      }
      this.#debug('connect to %s failed: %s', endpointLabel(host), (err as Error)?.message);
      errors.push(err);
      return false;
    }
    if (this.#state === 'closed') {
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

  /**
   * On a resumed session, sends the credentials again and re-registers every watch relative to
   * lastZxidSeen (SetWatches / SetWatches2, in batches under the frame limit), so a change made
   * while we were away fires the watch exactly once. Waits for the replies: requests from the
   * application are only let through once the connection is in the state the session expects.
   * With `prove`, a connection that got no such reply is pinged first: a resumed session is
   * reported `connected` only once a server has answered on the new connection, not on a
   * handshake alone (a server that completes handshakes and then fails every connection must
   * not make the session look healthy).
   */
  async #rearm(conn: Connection, prove: boolean): Promise<void> {
    if (this.#options.sasl) await this.#sasl(conn, this.#options.sasl);
    // After SASL (answered out of band, it must go alone first), before auth and setWatches.
    conn.startGenerationProbe();
    const replies: Array<Promise<Reply<unknown>>> = [];
    for (const { scheme, auth } of this.#auth) {
      replies.push(conn.request(OpCode.auth, (w) => writeAuthPacket(w, { type: 0, scheme, auth }), undefined, { xid: Xid.auth }));
    }
    // Also on a new session (a read-only server's local session replaced by a real one), as the Java client does.
    if (this.watches.size > 0) {
      for (const req of setWatchesRequests(this.watches.snapshot(), this.#options.chroot, this.lastZxid, this.#options.maxFrameSize)) {
        replies.push(conn.request(req.type, req.write, undefined, { xid: Xid.setWatches }));
      }
    }
    const proof = prove && replies.length === 0 ? conn.ping() : undefined;
    const answered = await Promise.all(replies);
    for (const reply of answered) {
      if (reply.err === -115) throw new AuthFailedError('the server refused the credentials on reconnect');
      if (reply.err !== 0) throw fromCode(reply.err, { op: 'setWatches' });
    }
    await proof;
  }

  /**
   * SASL on a new connection, before anything else is sent (the Java client holds other packets
   * until SASL completes): op `sasl` with GetSASLRequest tokens until the mechanism is complete.
   */
  async #sasl(conn: Connection, options: SaslOptions): Promise<void> {
    const client = new DigestMd5Client(options);
    let token: Buffer | undefined = client.initial();
    while (token !== undefined) {
      const t: Buffer = token;
      const reply = await conn.request(OpCode.sasl, (w) => writeGetSASLRequest(w, { token: t }), readSetSASLResponse);
      if (reply.err !== 0) throw new AuthFailedError(`SASL ${options.mechanism} refused (${reply.err})`, { op: 'sasl' });
      try {
        token = client.step(reply.body?.token ?? Buffer.alloc(0));
      } catch (err) {
        throw new AuthFailedError(`SASL ${options.mechanism} failed: ${(err as Error).message}`, { op: 'sasl', cause: err });
      }
    }
  }

  #adopt(conn: Connection, host: Endpoint): void {
    const fresh = this.#sessionId !== 0n && conn.session.sessionId !== this.#sessionId;
    this.#connection = conn;
    this.#host = host;
    this.#sessionId = conn.session.sessionId;
    this.#passwd = conn.session.passwd;
    this.#negotiatedTimeout = conn.session.timeOut;
    this.#adoptedAt = performance.now();
    this.#moveOrder = [];
    if (fresh) this.#debug('server granted a new session 0x%s', this.#sessionId.toString(16));
    this.#clearLossTimer();
    if (conn.session.readOnly) {
      this.#transition('connectedReadOnly');
      this.#probeForReadWrite(conn, 200);
    } else {
      this.#seenReadWrite = true;
      this.#transition('connected');
    }
    this.#proof.onConnectionChange();
  }

  /**
   * While connected to a read-only server, asks the other servers (`isro`) whether one is
   * read-write again, with a growing interval (200 ms doubling to 60 s, as the Java client's
   * pingRwServer); when one is, drops this connection and reconnects there.
   */
  #probeForReadWrite(conn: Connection, delay: number): void {
    this.#rwProbe = setTimeout(async () => {
      this.#rwProbe = undefined;
      const timeoutMs = Math.min(1000, this.#options.connectTimeout);
      for (const host of this.#ring) {
        if (this.#connection !== conn || this.#state !== 'connectedReadOnly') return;
        const addresses = await resolveHost(host.host, host.port, { lookup: this.#options.lookup, timeoutMs }).catch(() => []);
        for (const address of addresses) {
          if (this.#connection !== conn || this.#state !== 'connectedReadOnly') return;
          if (address === this.#host?.address && host.port === this.#host.port) continue;
          if ((await probeReadWrite(address, host.port, timeoutMs)) === 'rw' && this.#connection === conn) {
            this.#preferred = { host: host.host, port: host.port, address };
            this.#debug('read-write server %s found; leaving the read-only one', endpointLabel(this.#preferred));
            conn.destroy(new ConnectionLossError('moving to a read-write server'));
            return;
          }
        }
      }
      if (this.#connection === conn && this.#state === 'connectedReadOnly') this.#probeForReadWrite(conn, Math.min(delay * 2, 60_000));
    }, delay);
  }

  /**
   * Sends one request on the live connection. Without one, fails at once with ConnectionLoss
   * (or SessionExpired / ClientClosed / AuthFailed in those states): nothing is queued or
   * resent behind the caller's back. `options` as {@link Connection.request}'s.
   */
  request<T>(type: number, write: ((w: JuteWriter) => void) | undefined, read: ((r: JuteReader) => T) | undefined, options?: RequestOptions): Promise<Reply<T>> {
    const conn = this.#connection;
    if (conn && isConnected(this.#state)) {
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
    return Promise.reject(this.#unavailable());
  }

  /**
   * The generation of the server this session is connected to (`'legacy'`: 3.4): known, a
   * promise of it while its probe is out, or undefined when not connected.
   */
  serverGeneration(): ServerGeneration | Promise<ServerGeneration> | undefined {
    const conn = this.#connection;
    if (!conn || !isConnected(this.#state)) return undefined;
    return conn.generation ?? conn.generationKnown();
  }

  /** Whether a request sent now may be held by the connection and fail as never sent ({@link Connection.mayHold}). */
  mayHold(coalesce: boolean): boolean {
    return this.#connection?.mayHold(coalesce) ?? false;
  }

  /** A `NODE_DEBUG=zk` line naming this session (two clients in one process can be told apart). */
  #debug(format: string, ...args: unknown[]): void {
    if (debugEnabled) debug(`session 0x%s: ${format}`, this.#sessionId.toString(16), ...args);
  }

  /** Resolves when the session is connected again, or rejects when it cannot be (or on abort). */
  waitConnected(signal?: AbortSignal): Promise<void> {
    if (isConnected(this.#state)) return Promise.resolve();
    if (isTerminal(this.#state)) return Promise.reject(this.#unavailable());
    return new Promise<void>((resolve, reject) => {
      const onAbort = () => done(signal?.reason);
      const off = this.onState((state) => {
        if (isConnected(state)) done();
        else if (isTerminal(state)) done(this.#unavailable());
      });
      const done = (err?: unknown) => {
        off();
        signal?.removeEventListener('abort', onAbort);
        if (err === undefined) resolve();
        else reject(err);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      if (signal?.aborted) onAbort();
    });
  }

  #unavailable(): Error {
    switch (this.#state) {
      case 'closed':
        return new ClientClosedError();
      case 'expired':
        return new SessionExpiredError();
      case 'authFailed':
        return new AuthFailedError();
      default:
        return new ConnectionLossError(`not connected (${this.#state})`);
    }
  }

  /** Ends the session: closeSession, so its ephemeral nodes go at once. Idempotent. */
  async close(timeoutMs = 2000): Promise<void> {
    if (this.#state === 'closed') return;
    const conn = this.#connection;
    this.#connection = undefined;
    this.#clearLossTimer();
    this.#stopProbe();
    this.#transition('closed');
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
    this.#stopProbe();
    this.#proof.onConnectionChange();
    this.#debug('connection to %s closed: %s', this.#host && endpointLabel(this.#host), reason?.message);
    if (isTerminal(this.#state)) return;
    this.#transition('suspended');
    this.#startLossTimer();
    this.#reconnecting ??= this.#reconnect().finally(() => (this.#reconnecting = undefined));
  }

  #stopProbe(): void {
    if (this.#rwProbe) clearTimeout(this.#rwProbe);
    this.#rwProbe = undefined;
  }

  /**
   * Client-side loss inference: the session is reported `lost` at {@link expiryDeadline}, the
   * earliest moment the ensemble may expire it (one negotiated timeout after the send time of the
   * newest request a server answered), less a small allowance for a timer that fires late. So no
   * other client can have taken over its ephemeral nodes before the application hears of it.
   * Only a connection that a server answered clears it (see #rearm); the real verdict comes on
   * reconnect: `expired`, or `connected` if the session survived after all.
   */
  #startLossTimer(): void {
    this.#clearLossTimer();
    const fire = () => {
      this.#lossTimer = undefined;
      if (this.#state === 'suspended') this.#transition('lost');
    };
    const timeout = this.#negotiatedTimeout || this.#options.sessionTimeout;
    // Timers fire late under load; a server rounds expiry up to its next tick, which may be only
    // a millisecond away. A small allowance keeps `lost` ahead of it.
    // While a proof is held, the evidence that passed through the leader dates the loss (a
    // follower cut off from the leader answers for syncLimit ticks after the leader stopped
    // counting the session).
    const deadline = this.#proof.active ? Math.min(this.expiryDeadline, this.quorumDeadline) : this.expiryDeadline;
    const left = deadline - Math.min(LOSS_TIMER_ALLOWANCE_MS, timeout / 50) - performance.now();
    if (left <= 0) fire();
    else this.#lossTimer = setTimeout(fire, Math.ceil(left));
  }

  #clearLossTimer(): void {
    if (this.#lossTimer) clearTimeout(this.#lossTimer);
    this.#lossTimer = undefined;
  }

  async #reconnect(): Promise<void> {
    const errors: unknown[] = [];
    while (!isTerminal(this.#state) && !isConnected(this.#state)) {
      const delay = this.#backoff.next();
      if (delay > 0) await sleep(delay);
      if (isTerminal(this.#state)) return;
      try {
        if (await this.#attempt(undefined, errors, true)) return;
      } catch {
        return; // expired or auth failed: the state says so
      }
      if (errors.length > 64) errors.splice(0, errors.length - 64);
    }
  }

  #expire(): void {
    this.#clearLossTimer();
    this.#proof.stop();
    if (this.#state !== 'expired' && this.#state !== 'closed') this.#transition('expired');
  }

  #transition(next: SessionState): void {
    const prev = this.#state;
    if (prev === next) return;
    assertTransition(prev, next);
    this.#state = next;
    publishState(this.#sessionId, prev, next);
    for (const l of [...this.#stateListeners]) {
      try {
        l(next, prev);
      } catch (err) {
        this.#debug('state listener threw: %s', (err as Error)?.message);
      }
    }
    // The session's watches died with it: every listener is told once (Java delivers a None
    // event with state Expired to every watcher), then the table is empty.
    if (next === 'expired') {
      for (const [listener, path] of this.watches.clear()) deliver(listener, { type: 'SessionExpired', path });
    }
  }

  // Watch events are delivered in order, but never inside the socket read path: a slow
  // listener must not delay replies or pings (design.md §5). setImmediate also lets the
  // continuation of the request that registered a watch run before an event for it fires.
  #enqueue(event: WatcherEvent, zxid: bigint): void {
    this.#eventQueue.push({ event, zxid });
    if (!this.#drainScheduled) {
      this.#drainScheduled = true;
      setImmediate(() => this.#drain());
    }
  }

  #drain(): void {
    this.#drainScheduled = false;
    const queue = this.#eventQueue.splice(0);
    for (const { event, zxid } of queue) {
      const type = eventTypeOf(event.type);
      if (!type || event.path === null) continue;
      const path = stripChroot(this.#options.chroot, event.path);
      const listeners = this.watches.take(type, path);
      if (eventChannel.hasSubscribers) eventChannel.publish({ sessionId: this.#sessionId, type, path, listeners: listeners.size });
      for (const listener of listeners) deliver(listener, { type, path, zxid });
    }
  }
}

const noop = (): void => {};

/**
 * The requests whose answer is evidence for the quorum proof: the writes (committed when their
 * reply header says 0; a multi's header says 0 even when an op failed, and it is committed then
 * too, as an error transaction) and sync.
 */
const PROVES: Partial<Record<number, 'write' | 'sync'>> = {
  [OpCode.create]: 'write',
  [OpCode.create2]: 'write',
  [OpCode.createContainer]: 'write',
  [OpCode.createTTL]: 'write',
  [OpCode.delete]: 'write',
  [OpCode.deleteContainer]: 'write',
  [OpCode.setData]: 'write',
  [OpCode.setACL]: 'write',
  [OpCode.multi]: 'write',
  [OpCode.reconfig]: 'write',
  [OpCode.sync]: 'sync',
};

function deliver(listener: WatchListener, event: Parameters<WatchListener>[0]): void {
  try {
    listener(event);
  } catch (err) {
    // As the Java client's event thread does, a throwing watcher does not stop the others.
    debug('watch listener threw: %s', (err as Error)?.message);
  }
}

function maxBig(a: bigint, b: bigint): bigint {
  return a > b ? a : b;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

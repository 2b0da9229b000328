/**
 * The `ZooKeeper` client: every operation as an async method. Each validates its input before
 * any byte is sent, applies the chroot on the way out and strips it on the way back, and turns a
 * server error into a typed error carrying the code, the operation and the path.
 */
import { AddWatchMode, CreateMode, OpCode } from '../constants.js';
import { ErrorCode, fromCode, InvalidArgumentError, NoNodeError, PacketTooLargeError, SessionExpiredError, ZooKeeperError } from '../errors.js';
import type { JuteReader } from '../jute/reader.js';
import type { JuteWriter } from '../jute/writer.js';
import type { Stat } from '../jute/data.js';
import * as proto from '../jute/proto.js';
import { Session, type SessionState, type StateListener } from '../session/session.js';
import type { LeaseProofMode } from '../session/quorum-proof.js';
import { isConnected } from '../session/state.js';
import type { WatchedEvent, WatchKind, WatchListener } from '../session/watches.js';
import { AsyncQueue } from '../util/queue.js';
import { raceAbort, validateTimeout } from '../util/abort.js';
import { authBytes, dataBytes, type Data } from './data.js';
import { sendRequest } from './requests.js';
import { checkWatches, removeWatches, type RemovableWatchKind, type WatchContext } from './watch-ops.js';
import { validateACL, type ACL } from './acl.js';
import { resolveOptions, type ClientOptions, type ResolvedOptions } from './options.js';
import { connectChannel, traced, type ConnectTrace } from '../diagnostics.js';
import { addChroot, parentPath, stripChroot, validatePath } from '../util/paths.js';
import { Budget, createWithParents, deleteRecursive, ensurePath, validateParents, type ParentsMode, type TreeClient } from './tree.js';
import { withRetryPolicy } from './retry-policy.js';
import { Transaction, type MultiReadOp, type MultiReadResult, executeMultiRead } from './transaction.js';
import type { MultiOpInput } from '../jute/multi.js';
import type { Reply } from '../connection/connection.js';
import { SINCE_VERSION, type ServerGeneration } from '../connection/generation.js';
import { needsNewerServer } from './legacy.js';
import { CONFIG_NODE, parseConfig, reconfigBody, serverListOf, type EnsembleConfig, type ReconfigChange } from './reconfig.js';
import { EnsembleTracker } from './ensemble-tracker.js';
import type { HostAddress } from '../session/hosts.js';

/** @internal A create as the wire carries it, alone or inside a multi. */
export type CreateOp = Extract<MultiOpInput, { type: 1 | 15 | 19 | 21 }>;

export type { Data } from './data.js';

/** Options every call accepts. */
export interface CallOptions {
  /** Abandons the wait (a request already sent still gets its reply, which is ignored). */
  signal?: AbortSignal;
  /** Deadline in ms for this call (overrides the client's `requestTimeout`): a finite number >= 0, honoured however long. */
  timeout?: number;
}

/** Options of {@link ZooKeeper.create}. */
export interface CreateOptions extends CallOptions {
  /** A {@link CreateMode} value (default `CreateMode.PERSISTENT`). */
  mode?: number;
  /** The node's ACL (default: the client's `acl` connect option for this path, else {@link OPEN_ACL_UNSAFE}). */
  acl?: readonly ACL[];
  /** Time to live in ms, for the TTL modes only (the server needs `extendedTypesEnabled`). */
  ttl?: number;
  /**
   * Create the missing ancestors first, without data, like `mkdir -p` (default false): `true`
   * makes them persistent, `'container'` makes them containers, which the server deletes some
   * time after their last child is gone. Persistent is the default because ancestors are usually
   * directories the application means to keep (a container may vanish between two of its
   * creates, which then fail with NoNode); containers suit scratch parents such as lock
   * directories. One round trip when the parent exists; otherwise one more, carrying every
   * ancestor's create and this one in order. An ancestor create that fails for any reason but
   * NodeExists (ConnectionLoss included: it may not have happened) fails the call.
   */
  parents?: ParentsMode;
  /**
   * ACL of the ancestors `parents` creates (default: the client's `acl` connect option for each
   * ancestor's path, else {@link OPEN_ACL_UNSAFE}; never this create's `acl`).
   */
  parentAcl?: readonly ACL[];
}

/** Options of reads that can leave a watch. */
export interface WatchOptions extends CallOptions {
  /** Called once with the next change of this node (a one-shot watch). */
  watch?: WatchListener;
}

/** What {@link ZooKeeper.getData} returns. */
export interface DataResult {
  readonly data: Buffer;
  readonly stat: Stat;
}

const EMPTY = Buffer.alloc(0);
/** Largest TTL the server accepts (`EphemeralType.TTL` keeps it in 40 bits). */
const MAX_TTL = 0xff_ffff_ffff;

/**
 * A ZooKeeper client.
 *
 * @example
 * ```ts
 * await using zk = await ZooKeeper.connect('127.0.0.1:2181/app', { sessionTimeout: 10_000 });
 * await zk.create('/config', 'hello');
 * const { data, stat } = await zk.getData('/config', { watch: (e) => console.log(e.type) });
 * ```
 */
export class ZooKeeper implements AsyncDisposable {
  readonly #options: ResolvedOptions;
  readonly #session: Session;
  readonly #chroot: string;
  readonly #watchContext: WatchContext;
  #tracker: EnsembleTracker | undefined;

  private constructor(options: ResolvedOptions) {
    this.#options = options;
    this.#chroot = options.chroot;
    this.#session = new Session(options);
    this.#watchContext = { watches: this.#session.watches, chroot: this.#chroot, send: (op, name, path, write, options) => this.#send(op, name, path, write, undefined, options), legacy: () => this.#session.serverGeneration() === 'legacy' };
  }

  /**
   * Connects to an ensemble: `host:port[,host:port...][/chroot]`. Resolves once a server has
   * granted a session (and any `auth` was accepted).
   */
  static async connect(connectString: string, options: ClientOptions = {}): Promise<ZooKeeper> {
    const resolved = resolveOptions(connectString, options);
    if (!traced(connectChannel)) return ZooKeeper.#connect(resolved, options);
    const trace: ConnectTrace = { hosts: resolved.hosts.map((h) => `${h.host}:${h.port}`).join(','), chroot: resolved.chroot, sessionTimeout: resolved.sessionTimeout };
    return connectChannel!.tracePromise(() => ZooKeeper.#connect(resolved, options, trace), trace);
  }

  static async #connect(resolved: ResolvedOptions, options: ClientOptions, trace?: ConnectTrace): Promise<ZooKeeper> {
    const zk = new ZooKeeper(resolved);
    await zk.#session.start(options.signal);
    if (trace !== undefined) {
      const server = zk.#session.host;
      trace.sessionId = zk.sessionId;
      trace.serverAddress = server?.address;
      trace.serverPort = server?.port;
      trace.negotiatedTimeout = zk.sessionTimeout;
    }
    try {
      for (const { scheme, auth } of zk.#options.auth) await zk.addAuth(scheme, auth);
      if (zk.#options.createChroot && zk.#chroot !== '') await zk.#ensureChroot(options.signal);
      if (zk.#options.trackEnsemble) await zk.#trackEnsemble();
    } catch (err) {
      await zk.close();
      throw err;
    }
    return zk;
  }

  /** The session id the server assigned. */
  get sessionId(): bigint {
    return this.#session.sessionId;
  }
  /** The session password (with the id, it lets another client resume or close this session). */
  get sessionPassword(): Buffer {
    return this.#session.sessionPassword;
  }
  /** The session timeout the server granted, in ms. */
  get sessionTimeout(): number {
    return this.#session.negotiatedTimeout;
  }
  /**
   * The earliest moment, on the `performance.now()` clock, at which the ensemble may expire this
   * session if it hears nothing more from it: the send time of the newest request or ping a server
   * answered, plus the negotiated timeout (a server expires a session one timeout after it last
   * heard from it, and it heard that request no earlier than it was sent). When no server has
   * answered since, the session is reported `lost` just before this moment (T/50, at most 50 ms,
   * ahead of it); a lease must be given up before it. A handshake alone does not move it.
   */
  get expiryDeadline(): number {
    return this.#session.expiryDeadline;
  }
  /**
   * The earliest moment (`performance.now()` clock) at which the ensemble may expire this session,
   * by evidence that passed through the leader, not merely a server's answer: a follower cut off
   * from its leader keeps answering for syncLimit ticks while the leader, which alone expires
   * sessions, no longer hears of this one. The evidence is a committed write of the session (the
   * leader and a quorum took part) sent at least half a server tick after the reply it confirms;
   * a sync, which proves the same at most 1.5 ticks (and a margin) before it was sent; or a
   * handshake (the leader creates or revalidates the session). Every write and sync of the
   * session counts; while the proof is held ({@link ZooKeeper.holdQuorumProof}; leases hold it)
   * the client sends its own when none came for a while. See the protocol README's "What a
   * lease rests on" for the assumptions.
   */
  get quorumDeadline(): number {
    return this.#session.quorumDeadline;
  }

  /** How this client keeps the quorum proof (the `leaseProof` option; `'off'`: it sends nothing for it). */
  get leaseProof(): LeaseProofMode {
    return this.#session.leaseProof;
  }

  /**
   * Keeps {@link ZooKeeper.quorumDeadline} advancing until the returned function is called: when
   * the session sent no write or sync for the `leaseProof` mode's period (about T/3 with
   * `serverTickTime` known, about T/4 without), one of its own: a sync where the tick allows (mode
   * `'auto'` or `'sync'`), else a no-op write (a multi of one `check` of the root) committed
   * through the quorum. Counted: every holder shares one loop per session, which sends nothing
   * once the last has released it (and nothing at all in mode `'off'`). While held, `lost` is
   * reported by this deadline; a server that cannot commit the write or answer the sync (cut off
   * from the leader) stops answering the session, so its connection is dropped by the liveness
   * rule (2T/3 without a reply) and the session moves to another server.
   *
   * @example
   * ```ts
   * const release = zk.holdQuorumProof();
   * try { await work(); } finally { release(); }
   * ```
   */
  holdQuorumProof(): () => void {
    return this.#session.holdQuorumProof();
  }

  /**
   * Resolves once {@link ZooKeeper.quorumDeadline} is later than `deadline` (a `performance.now()`
   * time), holding the quorum proof meanwhile (a proof request goes at once); rejects when
   * `signal` aborts or the session ends. Locks call it before handing out a lease whose proof is
   * too old to last: one round trip when the session's server answered something at least half
   * a tick earlier, else two. In mode `'off'` nothing is sent for it: only the session's own
   * writes move the deadline.
   */
  awaitQuorumDeadline(deadline: number, options: { signal?: AbortSignal } = {}): Promise<void> {
    return this.#session.awaitQuorumDeadline(deadline, options.signal);
  }

  /**
   * The server this client is connected to, or undefined while disconnected: its host as the
   * server list names it, and the IP address dialed (what the name resolved to; see the `lookup`
   * option).
   */
  get server(): { host: string; port: number; address: string } | undefined {
    const h = this.#session.host;
    return h ? { host: h.host, port: h.port, address: h.address } : undefined;
  }
  /** The current state. */
  get state(): SessionState {
    return this.#session.state;
  }
  /** Requests sent and not yet answered. */
  get pendingRequests(): number {
    return this.#session.pendingCount;
  }
  /** The number of (path, kind) watches registered, for leak checks. */
  get watchCount(): number {
    return this.#session.watches.size;
  }
  /** Adds a state-change listener; returns a function that removes it. */
  onStateChange(listener: StateListener): () => void {
    return this.#session.onState(listener);
  }

  /**
   * Creates a node and returns its path (with the sequence suffix for sequential modes).
   * Parents are not created. See {@link createWithStat} for the Stat.
   */
  async create(path: string, data?: Data, options: CreateOptions = {}): Promise<string> {
    return (await this.#create(path, data, options, false)).path;
  }

  /** Like {@link create}, and also returns the new node's Stat (the `create2` operation). */
  async createWithStat(path: string, data?: Data, options: CreateOptions = {}): Promise<{ path: string; stat: Stat }> {
    const res = await this.#create(path, data, options, true);
    return { path: res.path, stat: res.stat as Stat };
  }

  async #create(path: string, data: Data, options: CreateOptions, withStat: boolean): Promise<{ path: string; stat?: Stat }> {
    // On a 3.4 server, create2 and containers are served another way. Checked without waiting, so
    // the request leaves in call order; in a new connection's first round trip the connection
    // holds it until the server is known, and on a 3.4 server answers Unimplemented (below).
    const legacyMay = withStat || options.mode === CreateMode.CONTAINER;
    if (legacyMay && this.#session.serverGeneration() === 'legacy') return this.#createOnLegacy(path, data, options, withStat);
    try {
      const created = await this.#createNow(path, data, options, withStat);
      // A create2 the connection sent to a 3.4 server as a plain create (LEGACY_SUBSTITUTES).
      if (withStat && created.stat === undefined) return await this.#statOf(created.path, options);
      return created;
    } catch (err) {
      if (legacyMay && err instanceof ZooKeeperError && err.code === ErrorCode.UNIMPLEMENTED && this.#session.serverGeneration() === 'legacy') return this.#createOnLegacy(path, data, options, withStat);
      throw err;
    }
  }

  async #createNow(path: string, data: Data, options: CreateOptions, withStat: boolean): Promise<{ path: string; stat?: Stat }> {
    const { request, read } = this.prepareCreate(path, data, options, withStat);
    validateParents(options.parents);
    if (options.parentAcl !== undefined) validateACL(options.parentAcl);
    const write = request.type === OpCode.createTTL ? (w: JuteWriter) => proto.writeCreateTTLRequest(w, request) : (w: JuteWriter) => proto.writeCreateRequest(w, request);
    let r: proto.CreateResponse | proto.Create2Response;
    if (!options.parents) {
      r = await this.#call(request.type, 'create', path, write, read, options);
    } else {
      const budget = new Budget(options);
      const send = () => this.#call(request.type, 'create', path, write, read, budget.call());
      try {
        r = await send();
      } catch (err) {
        if (!(err instanceof NoNodeError)) throw err;
        r = await createWithParents(this as TreeClient, path, options.parents, options.parentAcl, budget, send);
      }
    }
    return { path: this.#strip(r.path), ...('stat' in r ? { stat: r.stat } : {}) };
  }

  /**
   * A create on a 3.4 server, which has neither create2 nor containers: a container is created as
   * a persistent node (as Curator does without container support: nothing removes it when its
   * last child goes), and the Stat, when wanted, comes from an `exists` after the create: one
   * more round trip.
   */
  async #createOnLegacy(path: string, data: Data, options: CreateOptions, withStat: boolean): Promise<{ path: string; stat?: Stat }> {
    const mode = options.mode === CreateMode.CONTAINER ? CreateMode.PERSISTENT : options.mode;
    const created = await this.#createNow(path, data, { ...options, mode }, false);
    return withStat ? this.#statOf(created.path, options) : created;
  }

  // Not bound to the caller's signal: the node exists by now, and a caller that aborts must still
  // learn its path (a lock's sweep deletes it by path; aborted here, it had to look for it).
  async #statOf(path: string, options: CallOptions): Promise<{ path: string; stat: Stat }> {
    const stat = await this.exists(path, options.timeout === undefined ? {} : { timeout: options.timeout });
    // Deleted between the two requests (by another session, or this one's expiry).
    if (stat === null) throw new NoNodeError(undefined, { op: 'create', path });
    return { path, stat };
  }

  /**
   * @internal The generation of the server this client is connected to: `'legacy'` for 3.4,
   * `'modern'` for 3.5+; a promise of it while the connection's probe is out; undefined while
   * not connected (the connection then finds out before sending anything a 3.4 server lacks).
   */
  serverGeneration(): ServerGeneration | Promise<ServerGeneration> | undefined {
    return this.#session.serverGeneration();
  }

  /**
   * @internal Validates a create and returns its wire request (op code included) and reply
   * reader; shared by {@link create} and transactions. Containers and TTL nodes have op codes of
   * their own and always answer with a Stat; a plain create asks for one only when wanted.
   */
  prepareCreate(path: string, data: Data, options: CreateOptions, withStat = false): { request: CreateOp; read: (r: JuteReader) => proto.CreateResponse | proto.Create2Response } {
    const mode = options.mode ?? CreateMode.PERSISTENT;
    if (!Number.isInteger(mode) || mode < 0 || mode > 6) throw new InvalidArgumentError('mode', `unknown create mode ${String(mode)}`);
    const sequential = mode === CreateMode.PERSISTENT_SEQUENTIAL || mode === CreateMode.EPHEMERAL_SEQUENTIAL || mode === CreateMode.PERSISTENT_SEQUENTIAL_WITH_TTL;
    validatePath(path, { sequential });
    const isTtl = mode === CreateMode.PERSISTENT_WITH_TTL || mode === CreateMode.PERSISTENT_SEQUENTIAL_WITH_TTL;
    if (isTtl) {
      if (options.ttl === undefined || !Number.isInteger(options.ttl) || options.ttl <= 0 || options.ttl > MAX_TTL) {
        throw new InvalidArgumentError('ttl', `a TTL mode needs an integer ttl in 1..${MAX_TTL} ms, got ${String(options.ttl)}`);
      }
    } else if (options.ttl !== undefined) {
      throw new InvalidArgumentError('ttl', 'ttl applies only to the TTL create modes');
    }
    const acl = options.acl === undefined ? this.#aclFor(path) : options.acl;
    if (options.acl !== undefined) validateACL(options.acl);
    const fields = { path: addChroot(this.#chroot, path), data: this.prepareData(data), acl, flags: mode };
    if (isTtl) return { request: { type: OpCode.createTTL, ...fields, ttl: BigInt(options.ttl as number) }, read: proto.readCreate2Response };
    if (mode === CreateMode.CONTAINER) return { request: { type: OpCode.createContainer, ...fields }, read: proto.readCreate2Response };
    if (withStat) return { request: { type: OpCode.create2, ...fields }, read: proto.readCreate2Response };
    return { request: { type: OpCode.create, ...fields }, read: proto.readCreateResponse };
  }

  /**
   * The ACL of a create that names none: the `acl` connect option's answer for `path` (the
   * caller's path, chroot-relative), else its default. The default was validated when connecting;
   * an answer of `forPath` is validated here, each time (it may be any value).
   */
  #aclFor(path: string): readonly ACL[] {
    const { default: fallback, forPath } = this.#options.acl;
    if (forPath === undefined) return fallback;
    const acl = forPath(path);
    if (acl === undefined) return fallback;
    validateACL(acl, 'acl.forPath');
    return acl;
  }

  /**
   * Creates `path` and every missing ancestor without data, like `mkdir -p`, and succeeds when
   * it already exists: persistent nodes, or containers with `container: true`; `acl` for all of
   * them (default: the client's `acl` connect option for each path, else {@link OPEN_ACL_UNSAFE}). One read when the path exists, else the creates in
   * one round trip. Safe to repeat (also with {@link retry}'s `idempotent`).
   */
  ensurePath(path: string, options: CallOptions & { container?: boolean; acl?: readonly ACL[] } = {}): Promise<void> {
    return ensurePath(this as TreeClient, path, options);
  }

  /**
   * Deletes `path` and everything below it, children first; resolves with the number of nodes
   * this call deleted (0 when `path` did not exist). Nodes deleted by others meanwhile are
   * skipped; a node that keeps gaining children fails it with NotEmptyError after 5 rounds.
   * Not atomic: after a failure (ConnectionLoss, NoAuth, the call's deadline) part of the tree
   * may be gone, and calling it again finishes the work. `timeout` bounds the whole call.
   * Refuses `/`.
   */
  deleteRecursive(path: string, options: CallOptions = {}): Promise<number> {
    return deleteRecursive(this as TreeClient, path, options);
  }

  /** Deletes a node; `version` -1 (the default) matches any version. */
  async delete(path: string, options: CallOptions & { version?: number } = {}): Promise<void> {
    validatePath(path);
    const version = validVersion(options.version);
    const p = addChroot(this.#chroot, path);
    await this.#call(OpCode.delete, 'delete', path, (w) => proto.writeDeleteRequest(w, { path: p, version }), undefined, options);
  }

  /** The node's Stat, or `null` when it does not exist. A `watch` fires on creation, change or deletion. */
  async exists(path: string, options: WatchOptions = {}): Promise<Stat | null> {
    validatePath(path);
    const p = addChroot(this.#chroot, path);
    const watch = options.watch !== undefined;
    const once = (o: CallOptions) => this.rawRequest(OpCode.exists, 'exists', path, (w) => proto.writeExistsRequest(w, { path: p, watch }), proto.readExistsResponse, o, true);
    const policy = this.#options.retry;
    const reply = await (policy === undefined ? once(options) : withRetryPolicy(policy, options, this.#options.requestTimeout, once));
    if (reply.err === 0) {
      if (options.watch) this.#session.watches.add('data', path, options.watch);
      return (reply.body as proto.ExistsResponse).stat;
    }
    if (reply.err === ErrorCode.NONODE) {
      if (options.watch) this.#session.watches.add('exist', path, options.watch);
      return null;
    }
    throw fromCode(reply.err, { op: 'exists', path });
  }

  /** The node's data and Stat. A `watch` fires on the next change or deletion. */
  async getData(path: string, options: WatchOptions = {}): Promise<DataResult> {
    validatePath(path);
    const p = addChroot(this.#chroot, path);
    const watch = options.watch !== undefined;
    const body = await this.#call(OpCode.getData, 'getData', path, (w) => proto.writeGetDataRequest(w, { path: p, watch }), proto.readGetDataResponse, options, !watch);
    if (options.watch) this.#session.watches.add('data', path, options.watch);
    return { data: body.data ?? EMPTY, stat: body.stat };
  }

  /** Replaces the node's data if its version matches (`-1`, the default, matches any). */
  async setData(path: string, data: Data, options: CallOptions & { version?: number } = {}): Promise<Stat> {
    validatePath(path);
    const version = validVersion(options.version);
    const bytes = this.prepareData(data);
    const p = addChroot(this.#chroot, path);
    const body = await this.#call(OpCode.setData, 'setData', path, (w) => proto.writeSetDataRequest(w, { path: p, data: bytes, version }), proto.readSetDataResponse, options);
    return body.stat;
  }

  /** The node's ACL and Stat. */
  async getACL(path: string, options: CallOptions = {}): Promise<{ acl: ACL[]; stat: Stat }> {
    validatePath(path);
    const p = addChroot(this.#chroot, path);
    const body = await this.#call(OpCode.getACL, 'getACL', path, (w) => proto.writeGetACLRequest(w, { path: p }), proto.readGetACLResponse, options);
    const acl = (body.acl ?? []).map((a) => ({ perms: a.perms, id: { scheme: a.id.scheme ?? '', id: a.id.id ?? '' } }));
    return { acl, stat: body.stat };
  }

  /** Replaces the node's ACL if its ACL version (`aversion`) matches (`-1` matches any). */
  async setACL(path: string, acl: readonly ACL[], options: CallOptions & { version?: number } = {}): Promise<Stat> {
    validatePath(path);
    validateACL(acl);
    const version = validVersion(options.version);
    const p = addChroot(this.#chroot, path);
    const body = await this.#call(OpCode.setACL, 'setACL', path, (w) => proto.writeSetACLRequest(w, { path: p, acl: acl as ACL[], version }), proto.readSetACLResponse, options);
    return body.stat;
  }

  /** The names of the node's children (unordered). A `watch` fires when a child is added or removed, or the node deleted. */
  async getChildren(path: string, options: WatchOptions = {}): Promise<string[]> {
    validatePath(path);
    const p = addChroot(this.#chroot, path);
    const watch = options.watch !== undefined;
    const body = await this.#call(OpCode.getChildren, 'getChildren', path, (w) => proto.writeGetChildrenRequest(w, { path: p, watch }), proto.readGetChildrenResponse, options, !watch);
    if (options.watch) this.#session.watches.add('child', path, options.watch);
    return (body.children ?? []) as string[];
  }

  /** Like {@link getChildren}, and also the parent's Stat (the `getChildren2` operation). */
  async getChildrenWithStat(path: string, options: WatchOptions = {}): Promise<{ children: string[]; stat: Stat }> {
    validatePath(path);
    const p = addChroot(this.#chroot, path);
    const watch = options.watch !== undefined;
    const body = await this.#call(OpCode.getChildren2, 'getChildren', path, (w) => proto.writeGetChildren2Request(w, { path: p, watch }), proto.readGetChildren2Response, options);
    if (options.watch) this.#session.watches.add('child', path, options.watch);
    return { children: (body.children ?? []) as string[], stat: body.stat };
  }

  /** The number of descendants of a node, at every depth (3.6+). */
  async getAllChildrenNumber(path: string, options: CallOptions = {}): Promise<number> {
    validatePath(path);
    const p = addChroot(this.#chroot, path);
    const body = await this.#call(OpCode.getAllChildrenNumber, 'getAllChildrenNumber', path, (w) => proto.writeGetAllChildrenNumberRequest(w, { path: p }), proto.readGetAllChildrenNumberResponse, options);
    return body.totalNumber;
  }

  /** The paths of this session's ephemeral nodes under `prefix` (default `/`; 3.6+). */
  async getEphemerals(prefix = '/', options: CallOptions = {}): Promise<string[]> {
    validatePath(prefix);
    const p = addChroot(this.#chroot, prefix);
    const body = await this.#call(OpCode.getEphemerals, 'getEphemerals', prefix, (w) => proto.writeGetEphemeralsRequest(w, { prefixPath: p }), proto.readGetEphemeralsResponse, options);
    return (body.ephemerals ?? []).map((e) => this.#strip(e));
  }

  /** Waits until the server this client talks to has caught up with the leader for `path`. */
  async sync(path = '/', options: CallOptions = {}): Promise<void> {
    validatePath(path);
    const p = addChroot(this.#chroot, path);
    await this.#call(OpCode.sync, 'sync', path, (w) => proto.writeSyncRequest(w, { path: p }), proto.readSyncResponse, options);
  }

  /** Adds credentials to the session (`'digest'`, `'user:password'`). Fails with AuthFailed if refused. */
  async addAuth(scheme: string, auth: string | Uint8Array, options: CallOptions = {}): Promise<void> {
    if (typeof scheme !== 'string' || scheme === '') throw new InvalidArgumentError('scheme', 'must be a non-empty string');
    const bytes = authBytes(auth);
    const timeout = options.timeout ?? this.#options.requestTimeout;
    validateTimeout(timeout);
    options.signal?.throwIfAborted();
    // The session keeps the credentials and sends them again on every reconnect.
    await raceAbort(this.#session.addAuth(scheme, bytes), options.signal, timeout, { op: 'addAuth' });
  }

  /** The identities this session is authenticated as (3.7+). */
  async whoAmI(options: CallOptions = {}): Promise<Array<{ authScheme: string; user: string }>> {
    const body = await this.#call(OpCode.whoAmI, 'whoAmI', undefined, undefined, proto.readWhoAmIResponse, options);
    return (body.clientInfo ?? []).map((c) => ({ authScheme: c.authScheme ?? '', user: c.user ?? '' }));
  }

  /**
   * Starts an atomic transaction: add create/delete/setData/check operations and `commit()`.
   * Either every operation applies or none does.
   */
  transaction(): Transaction {
    return new Transaction(this, this.#chroot);
  }

  /** Reads several nodes in one round trip (3.6+); each result is a value or an error. */
  async multiRead(ops: readonly MultiReadOp[], options: CallOptions = {}): Promise<MultiReadResult[]> {
    return executeMultiRead(this, this.#chroot, ops, options);
  }

  /**
   * Adds a persistent watch (3.6+): `listener` gets every change of `path` (data changes,
   * creation, deletion, child changes) until removed; with `recursive`, every change at any depth
   * below it too (except child-list changes, which the server does not send to recursive watches).
   * It survives reconnects (re-registered with SetWatches2). Returns a function that removes it.
   */
  async addWatch(path: string, listener: WatchListener, options: CallOptions & { recursive?: boolean } = {}): Promise<() => Promise<void>> {
    validatePath(path);
    if (typeof listener !== 'function') throw new InvalidArgumentError('listener', 'must be a function');
    const kind: WatchKind = options.recursive ? 'persistentRecursive' : 'persistent';
    const p = addChroot(this.#chroot, path);
    const mode = options.recursive ? AddWatchMode.PERSISTENT_RECURSIVE : AddWatchMode.PERSISTENT;
    await this.#call(OpCode.addWatch, 'addWatch', path, (w) => proto.writeAddWatchRequest(w, { path: p, mode }), undefined, options);
    this.#session.watches.add(kind, path, listener);
    return () => this.removeWatches(path, { kind: options.recursive ? 'persistentRecursive' : 'persistent', listener });
  }

  /**
   * Watches `path` as an async iterable of events (a persistent watch; `recursive` for the whole
   * subtree). Ending the loop, or aborting `signal`, removes the watch. Session expiry ends the
   * loop with a SessionExpiredError.
   *
   * @example
   * ```ts
   * for await (const event of zk.watch('/config', { signal })) reload(event.path);
   * ```
   */
  watch(path: string, options: { recursive?: boolean; signal?: AbortSignal } = {}): AsyncIterableIterator<WatchedEvent> {
    validatePath(path);
    let remove: (() => Promise<void>) | undefined;
    const queue = new AsyncQueue<WatchedEvent>({
      signal: options.signal,
      onReturn: () => {
        if (remove) remove().catch(() => this.removeLocalWatch(options.recursive ? 'persistentRecursive' : 'persistent', path, listener));
      },
    });
    const listener: WatchListener = (event) => {
      if (event.type === 'SessionExpired') queue.fail(new SessionExpiredError(undefined, { op: 'watch', path }));
      else queue.push(event);
    };
    this.addWatch(path, listener, { recursive: options.recursive ?? false }).then(
      (r) => {
        remove = r;
        if (queue.done) r().catch(() => undefined);
      },
      (err: unknown) => queue.fail(err),
    );
    return queue;
  }

  /**
   * Removes watches of `path` (3.5+): of one `kind` (`'data'` covers data and exists watches,
   * `'child'`, `'persistent'`, `'persistentRecursive'`, or `'any'`, the default), only `listener`
   * when given. The server is asked to drop its watch unless another local listener still needs
   * it; with `local`, only the local registration goes (for when the server is unreachable).
   * Removed listeners get a DataWatchRemoved / ChildWatchRemoved / PersistentWatchRemoved event.
   * Fails with NoWatcherError when nothing matches.
   */
  removeWatches(path: string, options: CallOptions & { kind?: RemovableWatchKind; listener?: WatchListener; local?: boolean } = {}): Promise<void> {
    return removeWatches(this.#watchContext, path, options);
  }

  /** True when the server holds a watch of `kind` on `path` for this session (3.5+). */
  checkWatches(path: string, options: CallOptions & { kind?: RemovableWatchKind } = {}): Promise<boolean> {
    return checkWatches(this.#watchContext, path, options);
  }

  /**
   * The session's state changes as an async iterable, starting with the current state. Ends
   * when the client is closed; ending the loop or aborting `signal` unsubscribes.
   *
   * @example
   * ```ts
   * for await (const { state } of zk.states()) if (state === 'lost') stopWork();
   * ```
   */
  states(options: { signal?: AbortSignal } = {}): AsyncIterableIterator<StateChange> {
    let off = () => {};
    const queue = new AsyncQueue<StateChange>({ signal: options.signal, onReturn: () => off() });
    queue.push({ state: this.state, previous: undefined });
    off = this.#session.onState((state, previous) => {
      queue.push({ state, previous });
      if (state === 'closed') queue.end();
    });
    if (this.state === 'closed') queue.end();
    return queue;
  }

  /** @internal Removes a local watch registration (used by watch removal and recipes). */
  removeLocalWatch(kind: WatchKind, path: string, listener?: WatchListener): boolean {
    return this.#session.watches.remove(kind, path, listener);
  }

  /**
   * The ensemble's configuration: the `/zookeeper/config` node (read by that path whatever the
   * chroot) parsed into members, with its version, text and Stat. A `watch` fires once on the
   * next reconfiguration. Needs ZooKeeper 3.5+ (an older server answers NoNode).
   *
   * @example
   * ```ts
   * const { members, version } = await zk.getConfig();
   * for (const m of members) console.log(m.id, m.role, m.client);
   * ```
   */
  async getConfig(options: WatchOptions = {}): Promise<EnsembleConfig> {
    const watch = options.watch !== undefined;
    const write = (w: JuteWriter) => proto.writeGetDataRequest(w, { path: CONFIG_NODE, watch });
    const reply = await this.rawRequest(OpCode.getData, 'getConfig', CONFIG_NODE, write, proto.readGetDataResponse, options);
    if (reply.err === ErrorCode.NONODE && this.#session.serverGeneration() === 'legacy') throw needsNewerServer('getConfig', undefined, '3.5');
    if (reply.err !== 0) throw fromCode(reply.err, { op: 'getConfig', path: CONFIG_NODE });
    // Registered by the server path, which the session strips to itself and re-arms as is.
    if (options.watch) this.#session.watches.add('data', CONFIG_NODE, options.watch);
    const body = reply.body as proto.GetDataResponse;
    return parseConfig((body.data ?? EMPTY).toString('utf8'), body.stat);
  }

  /**
   * Changes the ensemble's membership (ZooKeeper 3.5+, `reconfigEnabled=true` on the servers)
   * and resolves with the new configuration once a quorum of the new one committed it.
   * Incremental: `joining` (`server.N=host:quorumPort:electionPort[:role][;clientHost:clientPort]`
   * lines or objects) and `leaving` (server ids); non-incremental: `members`, the whole new
   * list. `fromConfig` applies it only if the config version is still that one. The server's
   * refusals are typed: ReconfigDisabledError (reconfig not enabled), NoAuthError (not a super
   * user, unless the servers run with skipACL), BadVersionError (`fromConfig` is stale),
   * ReconfigInProgressError (another reconfig is not committed yet), NewConfigNoQuorumError (a
   * quorum of the new config is not connected to the leader), BadArgumentsError (e.g. removing
   * every member). Not idempotent: after a ConnectionLoss, read the config to learn the outcome.
   *
   * @example
   * ```ts
   * const before = await zk.getConfig();
   * const after = await zk.reconfig({ joining: ['server.4=10.0.0.4:2888:3888;2181'], leaving: [1], fromConfig: before.version });
   * ```
   */
  async reconfig(change: ReconfigChange, options: CallOptions = {}): Promise<EnsembleConfig> {
    const request = reconfigBody(change);
    const body = await this.#call(OpCode.reconfig, 'reconfig', undefined, (w) => proto.writeReconfigRequest(w, request), proto.readGetDataResponse, options);
    return parseConfig((body.data ?? EMPTY).toString('utf8'), body.stat);
  }

  /**
   * Replaces the servers this client may use (Java's `updateServerList`), e.g. after a
   * reconfiguration; a connect string (no chroot, or the client's own) or addresses. When many
   * clients apply the same change, they spread evenly over the new list while as few as possible
   * move: this client leaves its server only when that server is gone, or, when servers were
   * added, with the probability that gives every server the same expected share (the Java
   * client's rule). Moving resumes the same session on the other server (ephemeral nodes,
   * watches and credentials are kept; requests in flight at that moment fail with
   * ConnectionLoss, as on any disconnect). Returns true when this client moves.
   * See the `trackEnsemble` option to have this done on every reconfiguration.
   */
  updateServerList(hosts: string | readonly HostAddress[]): boolean {
    return this.#session.updateHosts(serverListOf(hosts, this.#chroot));
  }

  /** The servers this client may connect to, in the order it tries them. */
  get serverList(): readonly HostAddress[] {
    return this.#session.hosts.map((h) => ({ host: h.host, port: h.port }));
  }

  /**
   * `trackEnsemble`: follow the config node (Curator's EnsembleTracker). Its first read is waited
   * for, but a failure does not fail the connect: it is read again once connected.
   */
  async #trackEnsemble(): Promise<void> {
    this.#tracker = new EnsembleTracker(this);
    await this.#tracker.start();
  }

  /**
   * Ends the session: sends closeSession, so this session's ephemeral nodes are deleted at
   * once, then closes the socket. Pending requests fail. Idempotent.
   */
  async close(): Promise<void> {
    this.#tracker?.stop();
    await this.#session.close();
  }

  /** `await using zk = await ZooKeeper.connect(...)` closes the client at the end of the scope. */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  /**
   * @internal Sends a request and returns the raw reply (err not turned into an exception), under
   * the client's retry policy (`once`: exactly one attempt, for callers that apply it themselves).
   * `batchSize`: a multi's or multiRead's number of operations, for its trace.
   */
  async rawRequest<T>(op: number, opName: string, path: string | undefined, write: ((w: JuteWriter) => void) | undefined, read: ((r: JuteReader) => T) | undefined, options: CallOptions, once = false, batchSize?: number): Promise<Reply<T>> {
    const policy = this.#options.retry;
    if (policy !== undefined && !once) return withRetryPolicy(policy, options, this.#options.requestTimeout, (o) => this.rawRequest(op, opName, path, write, read, o, true, batchSize));
    const notSent = this.#unsendable();
    try {
      return await this.#send(op, opName, path, write, read, options, false, batchSize);
    } catch (err) {
      throw withContext(err, opName, path, notSent);
    }
  }

  /** `createChroot`: the chroot and its ancestors, by their server paths (outside the chroot). */
  async #ensureChroot(signal: AbortSignal | undefined): Promise<void> {
    const call = { signal, timeout: this.#options.connectTimeout };
    // Seen from this client the chroot is '/': its ACL (and its ancestors', outside our view) is '/''s.
    const acl = this.#aclFor('/');
    const root: Pick<TreeClient, 'create' | 'exists'> = {
      create: async (p, _data, o = {}) => {
        const write = (w: JuteWriter) => proto.writeCreateRequest(w, { path: p, data: null, acl: acl as ACL[], flags: CreateMode.PERSISTENT });
        const reply = await this.rawRequest(OpCode.create, 'create', p, write, proto.readCreateResponse, o);
        if (reply.err !== 0) throw fromCode(reply.err, { op: 'create', path: p });
        return p;
      },
      exists: async (p, o = {}) => {
        const reply = await this.rawRequest(OpCode.exists, 'exists', p, (w) => proto.writeExistsRequest(w, { path: p, watch: false }), proto.readExistsResponse, o);
        if (reply.err !== 0 && reply.err !== ErrorCode.NONODE) throw fromCode(reply.err, { op: 'exists', path: p });
        return reply.err === 0 ? reply.body : null;
      },
    };
    try {
      await ensurePath(root, this.#chroot, call);
    } catch (err) {
      if (!(err instanceof ZooKeeperError)) throw err;
      throw fromCode(err.code, { op: 'connect', path: this.#chroot, cause: err }, `could not create the chroot ${this.#chroot}: ${err.message}`);
    }
  }

  /** True when a request made now fails without being sent (not connected, `whileDisconnected: 'fail'`). */
  #unsendable(): boolean {
    return this.#options.whileDisconnected === 'fail' && !isConnected(this.#session.state);
  }

  #send<T>(op: number, opName: string, path: string | undefined, write: ((w: JuteWriter) => void) | undefined, read: ((r: JuteReader) => T) | undefined, options: CallOptions, coalesce = false, batchSize?: number) {
    return sendRequest(this.#session, this.#options, op, opName, path, write, read, options, coalesce, batchSize);
  }

  // Not an async function: one promise (the `then`) instead of an async frame and its await,
  // on the path every request takes.
  // `coalesce`: a watch-less getData or getChildren, which coalesceReads may batch.
  // Under the client's retry policy when it has one (client/retry-policy.ts).
  #call<T>(op: number, opName: string, path: string | undefined, write: ((w: JuteWriter) => void) | undefined, read: ((r: JuteReader) => T) | undefined, options: CallOptions, coalesce = false): Promise<T> {
    const policy = this.#options.retry;
    if (policy === undefined) return this.#callOnce(op, opName, path, write, read, options, coalesce);
    return withRetryPolicy(policy, options, this.#options.requestTimeout, (o) => this.#callOnce(op, opName, path, write, read, o, coalesce));
  }

  #callOnce<T>(op: number, opName: string, path: string | undefined, write: ((w: JuteWriter) => void) | undefined, read: ((r: JuteReader) => T) | undefined, options: CallOptions, coalesce: boolean): Promise<T> {
    let sent: Promise<Reply<T>>;
    const notSent = this.#unsendable();
    try {
      sent = this.#send(op, opName, path, write, read, options, coalesce);
    } catch (err) {
      return Promise.reject(err);
    }
    return sent.then(
      (reply) => {
        if (reply.err !== 0) throw this.#serverError(reply.err, opName, path, op);
        return reply.body as T;
      },
      (err: unknown) => {
        throw withContext(err, opName, path, notSent);
      },
    );
  }

  /**
   * The typed error of a reply, with the fix where one is known: Unimplemented names the server
   * version the operation needs; a create's NoNode names the missing parent (or the chroot,
   * directly below it) and `{ parents: true }`; NoNode under a chroot names it; NoAuth names
   * where credentials come from.
   */
  #serverError(code: number, op: string, path: string | undefined, opCode?: number): ZooKeeperError {
    const since = code === ErrorCode.UNIMPLEMENTED && opCode !== undefined ? SINCE_VERSION.get(opCode) : undefined;
    if (since !== undefined) return needsNewerServer(op, path, since, this.#session.serverGeneration() === 'legacy');
    if (path === undefined) return fromCode(code, { op, path });
    if (code === ErrorCode.NOAUTH) {
      return fromCode(code, { op, path }, `NOAUTH (${op} ${path}): the node's ACL does not grant this session (credentials come from the \`auth\` connect option or zk.addAuth())`);
    }
    if (code !== ErrorCode.NONODE) return fromCode(code, { op, path });
    const under = this.#chroot === '' ? '' : ` under the chroot ${this.#chroot}`;
    if (op !== 'create') return under === '' ? fromCode(code, { op, path }) : fromCode(code, { op, path }, `NONODE (${op} ${path})${under}`);
    // A create's NoNode is its parent's (or the chroot's, directly below it).
    const parent = parentPath(path);
    const detail =
      parent === '/' && this.#chroot !== ''
        ? `: the chroot ${this.#chroot} does not exist (create it, or connect with { createChroot: true })`
        : `: its parent ${parent} does not exist${under} (create it first, or pass { parents: true })`;
    return fromCode(code, { op, path }, `NONODE (${op} ${path})${detail}`);
  }

  #strip(serverPath: string | null): string {
    return stripChroot(this.#chroot, serverPath ?? '');
  }

  /**
   * @internal Node data as bytes (null for none), checked before anything is sent: a string,
   * Uint8Array, null or undefined, within `maxFrameSize`; else InvalidArgumentError. Shared with
   * transactions.
   */
  prepareData(data: unknown): Buffer | null {
    return dataBytes(data, this.#options.maxFrameSize);
  }
}

/** One state change of {@link ZooKeeper.states}. */
export interface StateChange {
  readonly state: SessionState;
  /** The state before; `undefined` for the first item (the state when iteration began). */
  readonly previous: SessionState | undefined;
}

/**
 * A connection-level error (ConnectionLoss when the socket drops, SessionExpired, ...) is made
 * without knowing the request: the same class again, naming the operation and path, whether the
 * request was sent, and the original as its cause. Errors that already name them pass through.
 */
function withContext(err: unknown, op: string, path: string | undefined, notSent: boolean): unknown {
  if (err instanceof PacketTooLargeError && err.op === undefined) return new PacketTooLargeError(err.size, err.limit, { direction: err.direction, op, path });
  if (!(err instanceof ZooKeeperError) || err.op !== undefined) return err;
  return fromCode(err.code, { op, path, cause: err, notSent: notSent || err.notSent }, `${err.message} (${op}${path ? ` ${path}` : ''})`);
}

function validVersion(version: number | undefined): number {
  if (version === undefined) return -1;
  if (!Number.isInteger(version) || version < -1 || version > 0x7fffffff) {
    throw new InvalidArgumentError('version', `must be an integer >= -1, got ${String(version)}`);
  }
  return version;
}

export type { SessionState };

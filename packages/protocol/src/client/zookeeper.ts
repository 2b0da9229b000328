/**
 * The `ZooKeeper` class, the client's public surface, documented here and done by the files it
 * delegates to (client-core.ts: its parts, connect and close; create.ts, operations.ts,
 * watch-ops.ts, streams.ts, transaction.ts, tree.ts; every request through request-path.ts).
 * Input is validated before any byte is sent; server errors become typed errors with code, op
 * and path. The @internal members serve transactions and recipes (transaction-host.ts).
 */
import type { JuteReader } from '../jute/reader.js';
import type { JuteWriter } from '../jute/writer.js';
import type { Stat } from '../jute/data.js';
import * as proto from '../jute/proto.js';
import type { Session, SessionState, StateListener } from '../session/session.js';
import type { LeaseProofMode } from '../session/quorum-proof.js';
import type { WatchedEvent, WatchKind, WatchListener } from '../session/watches.js';
import { dataBytes, type Data } from './data.js';
import { checkWatches, removeWatches, type RemovableWatchKind } from './watch-ops.js';
import type { ACL } from './acl.js';
import type { ClientOptions } from './options.js';
import { deleteRecursive, ensurePath, type TreeClient } from './tree.js';
import { Transaction, type MultiReadOp, type MultiReadResult, executeMultiRead } from './transaction.js';
import type { Reply } from '../connection/connection.js';
import type { ServerGeneration } from '../connection/generation.js';
import { serverListOf, type EnsembleConfig, type ReconfigChange } from './reconfig.js';
import type { HostAddress } from '../session/hosts.js';
import type { RequestPath } from './request-path.js';
import { ClientCore, connectClient } from './client-core.js';
import { aclFor, create, prepareCreate } from './create.js';
import * as operations from './operations.js';
import { stateStream, watchStream, type StateChange } from './streams.js';
import type { CallOptions, CreateOp, CreateOptions, DataResult, WatchOptions } from './types.js';
import { inspectClient, inspectCustom } from './inspect.js';
import { causalTokenOf, type MultiReadOptions, type ReadOptions } from './consistency.js';

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
  readonly #core: ClientCore;
  readonly #session: Session;
  readonly #rp: RequestPath;

  private constructor(core: ClientCore) {
    this.#core = core;
    this.#session = core.session;
    this.#rp = core.rp;
  }

  /**
   * Connects to an ensemble: `host:port[,host:port...][/chroot]`, or `dns-srv://<record>[/chroot]`
   * for the servers an SRV record names (see the `resolveSrv` option). Resolves once a server has
   * granted a session (and any `auth` was accepted).
   */
  static connect(connectString: string, options: ClientOptions = {}): Promise<ZooKeeper> {
    return connectClient(connectString, options, (core) => new ZooKeeper(core));
  }

  /** The session id the server assigned. */
  get sessionId(): bigint {
    return this.#session.sessionId;
  }
  /**
   * The newest zxid this client has seen in a reply (or was given at connect with `after`): the
   * server it talks to has applied at least that transaction. 0n before any.
   */
  get lastZxid(): bigint {
    return this.#session.lastZxid;
  }
  /**
   * {@link lastZxid} as a causal token (`zxid:` and 16 hex digits), to hand to another process:
   * its reads with `{ after: token }`, or its connect with `{ after: token }`, never return data
   * older than what this client had seen when it took the token.
   *
   * @example
   * ```ts
   * await zk.setData('/jobs/42', 'done');
   * res.setHeader('x-zk-token', zk.causalToken); // the other side: zk.getData('/jobs/42', { after })
   * ```
   */
  get causalToken(): string {
    return causalTokenOf(this.#session.lastZxid);
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
   * The earliest moment (`performance.now()` clock) at which the ensemble may expire this session
   * if it hears nothing more: the send time of the newest request or ping a server answered, plus
   * the negotiated timeout. With no answer since, the session is reported `lost` just before it
   * (T/50, at most 50 ms, ahead); a lease must be given up before it. A handshake does not move it.
   */
  get expiryDeadline(): number {
    return this.#session.expiryDeadline;
  }
  /**
   * {@link expiryDeadline} by evidence that passed through the leader, which alone expires sessions
   * (a cut-off follower keeps answering for syncLimit ticks): a committed write of the session, a
   * sync (1.5 ticks and a margin earlier), or a handshake. While held ({@link holdQuorumProof}) the
   * client sends its own when none came for a while. The protocol README's "What a lease rests on".
   */
  get quorumDeadline(): number {
    return this.#session.quorumDeadline;
  }

  /**
   * When (`performance.now()` clock) a proof request sent as soon as it can move
   * {@link quorumDeadline} has committed, with a round trip of at most T/20 (a request confirms
   * only answers that came half a tick and a margin before it was sent). Infinity in mode `'off'`.
   * Locks hand out a lease only when this comes before the lease would be at risk.
   */
  get quorumRenewedBy(): number {
    return this.#session.quorumRenewedBy;
  }

  /** How this client keeps the quorum proof (the `leaseProof` option; `'off'`: it sends nothing for it). */
  get leaseProof(): LeaseProofMode {
    return this.#session.leaseProof;
  }

  /**
   * Throws the typed error every lease would fail with when the negotiated session timeout leaves
   * the quorum proof no period: a `serverTickTime` so large a part of it that even back-to-back
   * proof writes confirm nothing recent enough (the error names the smallest timeout that would
   * do). Nothing in mode `'off'`. Locks call it before creating their node.
   */
  checkLeaseProof(): void {
    this.#session.checkLeaseProof();
  }

  /**
   * Keeps {@link quorumDeadline} advancing until the returned function is called: when the session
   * sent no write or sync for the `leaseProof` mode's period, one of its own (a sync where the tick
   * allows, else a no-op multi of one root `check`). Counted: one loop per session, silent once the
   * last holder released it, and in mode `'off'`. While held, `lost` is reported by this deadline.
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
   * Resolves once {@link ZooKeeper.quorumDeadline} is later than `deadline` (`performance.now()`
   * clock), holding the quorum proof meanwhile (a proof request goes at once); rejects when
   * `signal` aborts or the session ends. Locks call it before handing out a lease whose proof is
   * too old: one round trip, or two. In mode `'off'` only the session's own writes move it.
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
  /**
   * The ACL this client gives a node it creates at `path` (chroot-relative) without naming one:
   * the `acl` connect option's answer for it, else {@link OPEN_ACL_UNSAFE}. `@zk/locks` reads it
   * to tell whether a recipe's nodes shut other sessions out.
   */
  defaultACL(path: string): readonly ACL[] {
    return aclFor(this.#core.options, path);
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
    return (await create(this.#rp, this as TreeClient, path, data, options, false)).path;
  }

  /** Like {@link create}, and also returns the new node's Stat (the `create2` operation). */
  async createWithStat(path: string, data?: Data, options: CreateOptions = {}): Promise<{ path: string; stat: Stat }> {
    const res = await create(this.#rp, this as TreeClient, path, data, options, true);
    return { path: res.path, stat: res.stat as Stat };
  }

  /** @internal The connected server's generation, `'legacy'` (3.4) or `'modern'` (Session.serverGeneration). */
  serverGeneration(): ServerGeneration | Promise<ServerGeneration> | undefined {
    return this.#session.serverGeneration();
  }

  /** @internal Resolves when the connected server has 3.9's client features, else rejects (ServerFeatures.require). */
  requireServer39(op: string, path: string | undefined, what: string, options: CallOptions = {}): Promise<void> {
    return this.#core.features.require(op, path, what, options);
  }

  /** @internal A create validated into its wire request and reply reader (create.ts), shared with transactions. */
  prepareCreate(path: string, data: Data, options: CreateOptions, withStat = false): { request: CreateOp; read: (r: JuteReader) => proto.CreateResponse | proto.Create2Response } {
    return prepareCreate(this.#rp, path, data, options, withStat);
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
  delete(path: string, options: CallOptions & { version?: number } = {}): Promise<void> {
    return operations.deleteNode(this.#rp, path, options);
  }

  /**
   * The node's Stat, or `null` when it does not exist. A `watch` fires on creation, change or
   * deletion. `consistency` and `after` as for {@link getData}.
   */
  exists(path: string, options: ReadOptions = {}): Promise<Stat | null> {
    return operations.exists(this.#rp, path, options);
  }

  /**
   * The node's data and Stat. A `watch` fires on the next change or deletion.
   * `consistency: 'linearizable'` returns what every write completed before the call left (the
   * quorum proof's no-op write goes first, shared by all the reads of the tick); `'sync'` syncs
   * first; default: the client's `readConsistency`, else `'plain'`. `after: token` returns data at
   * least as new as the causal token names. See the Consistency guide.
   *
   * @example
   * ```ts
   * const { data } = await zk.getData('/config', { consistency: 'linearizable' });
   * const fresh = await zk.getData('/config', { after: tokenFromAnotherProcess });
   * ```
   */
  getData(path: string, options: ReadOptions = {}): Promise<DataResult> {
    return operations.getData(this.#rp, path, options);
  }

  /** Replaces the node's data if its version matches (`-1`, the default, matches any). */
  setData(path: string, data: Data, options: CallOptions & { version?: number } = {}): Promise<Stat> {
    return operations.setData(this.#rp, path, data, options);
  }

  /** The node's ACL and Stat. */
  getACL(path: string, options: CallOptions = {}): Promise<{ acl: ACL[]; stat: Stat }> {
    return operations.getACL(this.#rp, path, options);
  }

  /** Replaces the node's ACL if its ACL version (`aversion`) matches (`-1` matches any). */
  setACL(path: string, acl: readonly ACL[], options: CallOptions & { version?: number } = {}): Promise<Stat> {
    return operations.setACL(this.#rp, path, acl, options);
  }

  /**
   * The names of the node's children (unordered). A `watch` fires when a child is added or
   * removed, or the node deleted. `consistency` and `after` as for {@link getData}.
   */
  getChildren(path: string, options: ReadOptions = {}): Promise<string[]> {
    return operations.getChildren(this.#rp, path, options);
  }

  /**
   * Like {@link getChildren}, and also the parent's Stat (the `getChildren2` operation) and the
   * reply's `zxid` (as {@link DataResult.zxid}).
   */
  getChildrenWithStat(path: string, options: ReadOptions = {}): Promise<{ children: string[]; stat: Stat; zxid?: bigint }> {
    return operations.getChildrenWithStat(this.#rp, path, options);
  }

  /** The number of descendants of a node, at every depth (3.6+). */
  getAllChildrenNumber(path: string, options: CallOptions = {}): Promise<number> {
    return operations.getAllChildrenNumber(this.#rp, path, options);
  }

  /** The paths of this session's ephemeral nodes under `prefix` (default `/`; 3.6+). */
  getEphemerals(prefix = '/', options: CallOptions = {}): Promise<string[]> {
    return operations.getEphemerals(this.#rp, prefix, options);
  }

  /** Waits until the server this client talks to has caught up with the leader for `path`. */
  sync(path = '/', options: CallOptions = {}): Promise<void> {
    return operations.sync(this.#rp, path, options);
  }

  /** Adds credentials to the session (`'digest'`, `'user:password'`). Fails with AuthFailed if refused. */
  addAuth(scheme: string, auth: string | Uint8Array, options: CallOptions = {}): Promise<void> {
    return operations.addAuth(this.#rp, scheme, auth, options);
  }

  /** The identities this session is authenticated as (3.7+). */
  whoAmI(options: CallOptions = {}): Promise<Array<{ authScheme: string; user: string }>> {
    return operations.whoAmI(this.#rp, options);
  }

  /**
   * Starts an atomic transaction: add create/delete/setData/check operations and `commit()`.
   * Either every operation applies or none does.
   */
  transaction(): Transaction {
    return new Transaction(this, this.#core.options.chroot);
  }

  /**
   * Reads several nodes in one round trip (3.6+); each result is a value or an error. All of them
   * see one state; `consistency` and `after` as for {@link getData}.
   */
  async multiRead(ops: readonly MultiReadOp[], options: MultiReadOptions = {}): Promise<MultiReadResult[]> {
    return executeMultiRead(this, this.#core.options.chroot, ops, options);
  }

  /**
   * Adds a persistent watch (3.6+): `listener` gets every change of `path` until removed; with
   * `recursive`, every change below it too (child-list changes aside: the server sends none to
   * recursive watches). It survives reconnects. Returns a function that removes it, as
   * {@link removeWatches} of its mode and `listener` (on 3.5-3.8, beside other watches of the path,
   * it drops only the listener: the server keeps its watch until those go).
   */
  async addWatch(path: string, listener: WatchListener, options: CallOptions & { recursive?: boolean } = {}): Promise<() => Promise<void>> {
    await operations.addWatch(this.#rp, path, listener, options);
    return () => removeWatches(this.#core.watchContext, path, { kind: options.recursive ? 'persistentRecursive' : 'persistent', listener }, true);
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
    return watchStream(this, path, options);
  }

  /**
   * Removes watches of `path` (3.5+): of one `kind` (`'data'`, covering exists watches, `'child'`,
   * `'persistent'`, `'persistentRecursive'`, or `'any'`, the default), only `listener` when given.
   * The server drops its watch unless another local listener needs it; `local`: only the local
   * registration goes. Removed listeners get a *WatchRemoved event; NoWatcherError when nothing
   * matches. A persistent kind beside other kinds on the path needs 3.9 (removal by mode): on
   * 3.5-3.8 the call fails with UnimplementedError before it is sent and removes nothing.
   */
  removeWatches(path: string, options: CallOptions & { kind?: RemovableWatchKind; listener?: WatchListener; local?: boolean } = {}): Promise<void> {
    return removeWatches(this.#core.watchContext, path, options);
  }

  /**
   * True when the server holds a watch of `kind` on `path` for this session (3.5+). A persistent
   * kind while this client has other kinds on the path is asked by its mode (3.9+); a 3.5-3.8
   * server cannot answer that, and the call fails with UnimplementedError before it is sent.
   */
  checkWatches(path: string, options: CallOptions & { kind?: RemovableWatchKind } = {}): Promise<boolean> {
    return checkWatches(this.#core.watchContext, path, options);
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
    return stateStream(this.#session, options);
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
  getConfig(options: WatchOptions = {}): Promise<EnsembleConfig> {
    return operations.getConfig(this.#rp, options);
  }

  /**
   * Changes the ensemble's membership (3.5+, `reconfigEnabled=true`); resolves with the new
   * configuration once a quorum of it committed it. Incremental: `joining`
   * (`server.N=host:quorumPort:electionPort[:role][;clientHost:clientPort]` lines or objects) and
   * `leaving` (ids); else `members`, the whole list. `fromConfig`: only if the version is still
   * that one. Refusals are typed: ReconfigDisabledError, NoAuthError (not a super user),
   * BadVersionError (stale `fromConfig`), ReconfigInProgressError, NewConfigNoQuorumError,
   * BadArgumentsError. Not idempotent: after a ConnectionLoss, read the config for the outcome.
   *
   * @example
   * ```ts
   * const before = await zk.getConfig();
   * const after = await zk.reconfig({ joining: ['server.4=10.0.0.4:2888:3888;2181'], leaving: [1], fromConfig: before.version });
   * ```
   */
  reconfig(change: ReconfigChange, options: CallOptions = {}): Promise<EnsembleConfig> {
    return operations.reconfig(this.#rp, change, options);
  }

  /**
   * Replaces the servers this client may use (Java's `updateServerList`), e.g. after a
   * reconfiguration: a connect string (no chroot, or the client's own) or addresses. Clients
   * applying the same change spread evenly while as few as possible move (the Java client's
   * rule): this one leaves its server only when it is gone, or, when servers were added, with the
   * probability that evens the shares. Moving resumes the session on the other server (requests
   * in flight fail with ConnectionLoss). Returns true when this client moves. The `trackEnsemble`
   * option does this on every reconfiguration.
   */
  updateServerList(hosts: string | readonly HostAddress[]): boolean {
    return this.#session.updateHosts(serverListOf(hosts, this.#core.options.chroot));
  }

  /** The servers this client may connect to, in the order it tries them. */
  get serverList(): readonly HostAddress[] {
    return this.#session.hosts.map((h) => ({ host: h.host, port: h.port }));
  }

  /**
   * Ends the session: sends closeSession, so this session's ephemeral nodes are deleted at
   * once, then closes the socket. Pending requests fail. Idempotent.
   */
  close(): Promise<void> {
    return this.#core.close();
  }

  /** `await using zk = await ZooKeeper.connect(...)` closes the client at the end of the scope. */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  /** @internal A request's raw reply (err not thrown), under the retry policy (RequestPath.rawRequest). */
  rawRequest<T>(op: number, opName: string, path: string | undefined, write: ((w: JuteWriter) => void) | undefined, read: ((r: JuteReader) => T) | undefined, options: CallOptions, once = false, batchSize?: number): Promise<Reply<T>> {
    return this.#rp.rawRequest(op, opName, path, write, read, options, once, batchSize);
  }

  /** @internal Node data as bytes, checked before anything is sent (data.ts's dataBytes); shared with transactions. */
  prepareData(data: unknown): Buffer | null {
    return dataBytes(data, this.#core.options.maxFrameSize);
  }
}

// util.inspect shows a summary without the session password (inspect.ts); set outside the class
// so the published declarations stay as they are.
Object.defineProperty(ZooKeeper.prototype, inspectCustom, { value: inspectClient, writable: true, configurable: true });

export type { SessionState };

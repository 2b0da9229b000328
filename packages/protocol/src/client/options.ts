/**
 * Client options: the type, the defaults, and the one step that validates and normalises them.
 */
import type { ConnectionOptions as TlsConnectionOptions } from 'node:tls';
import { DEFAULT_MAX_FRAME_SIZE } from '../constants.js';
import { InvalidArgumentError } from '../errors.js';
import { parseConnectString, type HostAddress } from '../session/hosts.js';
import { validateTimeout } from '../util/abort.js';
import { authBytes } from './data.js';
import type { SaslOptions } from '../session/sasl.js';
import type { LeaseProofMode } from '../session/quorum-proof.js';
import type { LookupFunction } from '../connection/resolve.js';
import { parseSrvConnectString, type SrvResolver } from '../connection/srv.js';
import { resolveRetryPolicy, type ClientRetryOptions } from './retry-policy.js';
import { resolveACLProvider, type ACL, type ACLProvider, type ResolvedACLProvider } from './acl.js';
import { parseCausalToken, validateConsistency, type ReadConsistency } from './consistency.js';

/** Options of {@link ZooKeeper.connect}. */
export interface ClientOptions {
  /**
   * Requested session timeout in ms (default 30 000): an integer in 1..2^31-1, as the handshake
   * carries it in a 32-bit int. The server clamps it to [2, 20] x its tickTime; the granted value
   * is `client.sessionTimeout`.
   */
  sessionTimeout?: number;
  /**
   * How long connecting may take, in ms (default 10 000): the bound of one attempt (TCP and
   * handshake), and of the initial connect, which tries the servers in rounds until it passes.
   * Any finite length is honoured, also beyond the 2^31-1 ms a single Node timer can take.
   */
  connectTimeout?: number;
  /**
   * Default deadline for each request, in ms (default: none; a request on a live connection
   * always settles, at the latest with ConnectionLoss when the connection is declared dead).
   * A finite number >= 0; any length is honoured.
   */
  requestTimeout?: number;
  /** Largest frame sent or accepted, in bytes: ZooKeeper's `jute.maxbuffer` (default 1 048 575). */
  maxFrameSize?: number;
  /** Accept a read-only server when the quorum is unreachable (default false). */
  canBeReadOnly?: boolean;
  /**
   * Send the watch-less `getData` and `getChildren` calls made in the same tick of the event
   * loop as one `multiRead` request (ZooKeeper 3.6 or later). The server then handles many reads
   * as one request: on a 2-core machine, 64 concurrent getData went from about 25,000 to
   * 250,000 per second (bench/README.md). Each call still gets its own result or typed error,
   * and keeps its place in the session's order. The reads of one batch see the same state, and
   * each waits for the whole batch's reply, which may be as large as all their replies
   * together. Reads with a watch, `exists` and `getChildrenWithStat` always go alone.
   *
   * `'auto'` (the default): a connection first sends each read alone. At its first tick with
   * two reads to batch it asks the server whether it has multiRead: those reads and whatever is
   * asked next wait until every request already sent is answered, then a multiRead of no ops
   * goes out alone, and once a 3.6+ server has answered it the waiting requests leave, the reads
   * batched, and the connection coalesces from then on. A 3.5 server answers Unimplemented and
   * closes the connection: the client remembers that server (for its lifetime), reconnects to it
   * at once with the same session (the session is `suspended`, then `connected`) and sends the
   * waiting requests there, each read alone; they had not been sent. One round trip per
   * connection that batches, nothing on connect, nothing per request. `true`: coalesce from the
   * start, without the probe (3.6+ servers only). `false`: never.
   */
  coalesceReads?: boolean | 'auto';
  /**
   * TLS options (CA, cert, key, servername, ...) to connect to a secure client port, or a
   * function giving them, called before every connection attempt (`tlsFromFiles()` reads
   * certificate files each time, so rotated files are picked up at the next reconnect). The
   * server's certificate is verified by default (`node:tls`): against the system's CAs, or `ca`
   * (a pinned CA), and against the host name of the connect string (sent as SNI), also when the
   * client dials an address that name resolved to; `servername` overrides the name.
   */
  tls?: TlsConnectionOptions | (() => TlsConnectionOptions | Promise<TlsConnectionOptions>);
  /**
   * How host names of the connect string become addresses (default: `dns.lookup`, asked for all
   * addresses). A name counts as every address it resolves to, IPv4 and IPv6 (a Kubernetes
   * headless service, round-robin DNS): each round of connection attempts resolves every name
   * again, then dials each of its addresses in random order until a server takes the session,
   * so a server replaced under the same name is found at its new address. A name that fails to
   * resolve is skipped for that round; its error (e.g. `ENOTFOUND`) is kept for the final
   * ConnectionLoss. Each lookup is bounded by `connectTimeout` (and `signal` while connecting).
   * IP addresses are never looked up. The signature is `dns.lookup`'s, as net.connect's `lookup`
   * option takes; it is called with `{ all: true }`.
   *
   * @example
   * ```ts
   * // Names from a service registry, or a test's fixed answer.
   * const lookup: LookupFunction = (name, _options, callback) =>
   *   callback(null, [{ address: '10.0.0.7', family: 4 }, { address: '10.0.0.8', family: 4 }]);
   * await ZooKeeper.connect('zk.internal:2181', { lookup });
   * ```
   */
  lookup?: LookupFunction;
  /**
   * How a `dns-srv://<record>[/chroot]` connect string's SRV record is asked (default:
   * `dns.resolveSrv`; ZooKeeper 3.10's DNS SRV host provider, ZOOKEEPER-4956). The record's targets,
   * with the ports it gives, are the host list: asked at connect, then again at the start of every
   * later round of connection attempts, so servers added or removed behind the name are found by a
   * client that reconnects; a failed or empty answer keeps the previous list. Each target is then
   * resolved like any host name (`lookup`). Bounded by `connectTimeout`. The signature is
   * `dns.resolveSrv`'s.
   *
   * @example
   * ```ts
   * const resolveSrv: SrvResolver = (_name, callback) =>
   *   callback(null, [{ name: 'zk1.internal', port: 2181, priority: 0, weight: 0 }, { name: 'zk2.internal', port: 2181, priority: 0, weight: 0 }]);
   * await ZooKeeper.connect('dns-srv://_zookeeper._tcp.internal/app', { resolveSrv });
   * ```
   */
  resolveSrv?: SrvResolver;
  /** Credentials added right after connecting, e.g. `[{ scheme: 'digest', auth: 'user:pass' }]`. */
  auth?: ReadonlyArray<{ scheme: string; auth: string | Uint8Array }>;
  /**
   * What a request made while disconnected does: `'fail'` (default) rejects at once with
   * ConnectionLoss; `'wait'` waits for the session to reconnect, within the call's timeout and
   * signal, then sends it. Requests already in flight when a connection drops always fail with
   * ConnectionLoss: they may or may not have been applied, and are never resent.
   */
  whileDisconnected?: 'fail' | 'wait';
  /**
   * The client-wide retry policy (default `false`: each call fails with its first error, and
   * `retry()` is for the calls you choose). `true` or the options of `retry()`
   * (`maxAttempts` 5, `baseDelay` 100 ms doubling up to `maxDelay` 10 s, full jitter,
   * `maxElapsed`, `onRetry`) make every call repeat its request, as Curator's framework-wide
   * `RetryPolicy` does, after an error that leaves no doubt that repeating is safe
   * ({@link isSafeToRetry}):
   *
   * - a request that was never sent (ConnectionLoss while disconnected, with
   *   `whileDisconnected: 'fail'`) or that the server refused unexecuted (ThrottledOp): any
   *   operation, writes included;
   * - ConnectionLoss or a deadline after sending: reads only (exists, getData, getChildren,
   *   getACL, getConfig, multiRead, sync, ...). A write whose outcome is unknown (create,
   *   setData, delete, multi, ...) is never repeated: it may have been applied, and a repeat could
   *   apply it twice (a second sequential node) or fail misleadingly (NodeExists, BadVersion,
   *   NoNode for a write that happened). Wrap such a write in `retry()` with `idempotent`
   *   when a repeat cannot harm (a conditional write), or check and repeat yourself.
   *
   * A call's `timeout` (else `requestTimeout`) and `maxElapsed` bound the whole call, retries
   * included; its `signal` ends the back-off at once. Applies to the recipes' requests too (they
   * also wait out a disconnection by themselves). SessionExpired is never retried.
   */
  retry?: boolean | ClientRetryOptions;
  /** SASL credentials (DIGEST-MD5), authenticated on every connection before any request. */
  sasl?: SaslOptions;
  /**
   * The ACL of every node this client creates without naming one (default
   * {@link OPEN_ACL_UNSAFE}: anyone may do anything): `create` and `createWithStat` without
   * `acl`, the ancestors made by `parents` without `parentAcl`, `ensurePath` without `acl`, the
   * chroot made by `createChroot`, a transaction's creates, and every node and container parent
   * of the `@zk/locks` recipes that were not given their own `acl`. Curator's `ACLProvider`,
   * Kazoo's `default_acl`.
   *
   * A list applies to every path. An {@link ACLProvider} `{ default, forPath }` asks `forPath`
   * with each path as the caller wrote it, relative to the chroot (the chroot node and its
   * ancestors are asked for as `'/'`); `undefined` from it means `default`.
   *
   * {@link CREATOR_ALL_ACL} gives everything to the identities the creating session
   * authenticated with (`auth` or `sasl` options, a TLS client certificate): the server puts
   * them in its place, so nodes made by a client connected with
   * `auth: [{ scheme: 'digest', auth: 'owner:secret' }]` belong to `digest:owner:...` only. A
   * session with no identity but `ip` gets InvalidACL from the server for such a create.
   *
   * Validated when connecting (a bad list, e.g. an unknown scheme, perms 0, or a digest id that
   * is not `user:base64hash`, throws InvalidArgumentError before any byte is sent); the default
   * is copied, so changing the array later has no effect.
   *
   * @example
   * ```ts
   * const zk = await ZooKeeper.connect('zk1:2181/app', {
   *   auth: [{ scheme: 'digest', auth: 'owner:secret' }],
   *   acl: CREATOR_ALL_ACL,
   * });
   * await new Mutex(zk, '/locks/report').acquire(); // its nodes and parents: digest:owner only
   * ```
   */
  acl?: readonly ACL[] | ACLProvider;
  /**
   * The ensemble's `tickTime`, ms, if you know it (at most: a larger value is safe). It tightens
   * the quorum proof that leases rest on ({@link ZooKeeper.holdQuorumProof}): a follower's touches
   * reach the leader up to half a tick late, so a request is counted as proven only once a write
   * sent half a tick (and a margin) after its reply has committed. Unknown, the client assumes
   * the largest tick any server allows for the negotiated timeout T: T/2 (servers accept no
   * timeout below 2 ticks unless `minSessionTimeout` was lowered; then you must set this).
   * Known, it also lets {@link leaseProof} `'auto'` prove by `sync` (no transaction) instead of
   * writes when T is many ticks.
   */
  serverTickTime?: number;
  /**
   * How a session holding leases keeps the quorum's word that it is alive, so that a lease's
   * signal aborts before the ensemble could expire the session even when the session's server is
   * cut off from the leader (the locks README has each mode's cost and guarantee):
   * - `'auto'` (default): by `sync` round trips (no transaction) when {@link serverTickTime} is
   *   set and T is at least about 4.7 ticks (where the syncs go no more often than the idle
   *   pings); else by writes;
   * - `'write'`: by committed writes: the session's own (a lock's create and delete, fenced
   *   writes, the application's), and a no-op multi when none came for a while (about 0.35 T);
   * - `'sync'`: by syncs (requires {@link serverTickTime}); by writes where the negotiated timeout
   *   leaves a sync no room;
   * - `'off'`: no proof; a lease trusts its server's answers, Curator's guarantee (not kept when
   *   the server is cut off from the leader).
   * Nothing is sent for the proof while the session holds no lease.
   */
  leaseProof?: LeaseProofMode;
  /**
   * The `consistency` of reads that do not name one (default `'plain'`): `'plain'`, the server's
   * own copy; `'sync'`, a sync then the read; `'linearizable'`, the quorum proof's no-op write then
   * the read, one write for all the reads of a tick. See {@link ReadConsistency} and the
   * Consistency guide.
   */
  readConsistency?: ReadConsistency;
  /**
   * A causal token (`zk.causalToken` of another client or process): only a server that has
   * applied the state it names grants the session (the handshake's lastZxidSeen; a server behind
   * it refuses, and the next one is tried), so no read of this client returns older data.
   */
  after?: string;
  /**
   * Resume an existing session instead of starting one (Java's constructor with sessionId and
   * password): the connect fails with SessionExpiredError if the server no longer has it.
   */
  session?: { id: bigint; password: Uint8Array };
  /**
   * Create the connect string's chroot (`host:2181/app`), with its missing ancestors, as
   * persistent nodes with the client's `acl` for `'/'` (default {@link OPEN_ACL_UNSAFE}), when it does not exist (default false). Done
   * once, before `connect` resolves and after `auth`, so a refusal (NoAuth) fails the connect
   * instead of the first operation. Without it, operations under a missing chroot fail with
   * NoNode, whose message names the chroot.
   */
  createChroot?: boolean;
  /**
   * Follow the ensemble's membership (default false; ZooKeeper 3.5+): the client reads
   * `/zookeeper/config` with a watch and, on every reconfiguration, makes the members' client
   * addresses its host list with `updateServerList` (Curator's EnsembleTracker). A client whose
   * original servers are all replaced keeps its session.
   */
  trackEnsemble?: boolean;
  /** Aborts the initial connection attempt. */
  signal?: AbortSignal;
}

const LEASE_PROOF_MODES: readonly LeaseProofMode[] = ['auto', 'write', 'sync', 'off'];

/** @internal Options after defaults and validation. */
export interface ResolvedOptions {
  hosts: readonly HostAddress[];
  chroot: string;
  sessionTimeout: number;
  connectTimeout: number;
  requestTimeout: number | undefined;
  maxFrameSize: number;
  canBeReadOnly: boolean;
  coalesceReads: boolean | 'auto';
  tls: TlsConnectionOptions | (() => TlsConnectionOptions | Promise<TlsConnectionOptions>) | undefined;
  lookup: LookupFunction | undefined;
  /** A `dns-srv://` connect string's record (its hosts are asked at connect: `hosts` is empty until then). */
  srv: { name: string; resolveSrv: SrvResolver | undefined } | undefined;
  /** Set at connect for an SRV host list (session/options.ts). */
  refreshHosts?: ((signal?: AbortSignal) => Promise<readonly HostAddress[]>) | undefined;
  auth: ReadonlyArray<{ scheme: string; auth: Buffer }>;
  whileDisconnected: 'fail' | 'wait';
  retry: ClientRetryOptions | undefined;
  createChroot: boolean;
  trackEnsemble: boolean;
  session: { id: bigint; password: Buffer } | undefined;
  sasl: SaslOptions | undefined;
  serverTickTime: number | undefined;
  leaseProof: LeaseProofMode;
  acl: ResolvedACLProvider;
  readConsistency: ReadConsistency;
  /** The `after` token's zxid. */
  after: bigint | undefined;
}

/** @internal */
export function resolveOptions(connectString: string, options: ClientOptions): ResolvedOptions {
  const srv = parseSrvConnectString(connectString);
  const { hosts, chroot } = srv ? { hosts: [], chroot: srv.chroot } : parseConnectString(connectString);
  if (options.resolveSrv !== undefined && typeof options.resolveSrv !== 'function') {
    throw new InvalidArgumentError('resolveSrv', `must be a function with the signature of dns.resolveSrv, got ${typeof options.resolveSrv}`);
  }
  validateSessionTimeout(options.sessionTimeout);
  validateTimeout(options.connectTimeout, 'connectTimeout');
  validateTimeout(options.requestTimeout, 'requestTimeout');
  const maxFrameSize = options.maxFrameSize ?? DEFAULT_MAX_FRAME_SIZE;
  if (!Number.isInteger(maxFrameSize) || maxFrameSize < 1024) {
    throw new InvalidArgumentError('maxFrameSize', `must be an integer >= 1024, got ${String(maxFrameSize)}`);
  }
  if (options.coalesceReads !== undefined && typeof options.coalesceReads !== 'boolean' && options.coalesceReads !== 'auto') {
    throw new InvalidArgumentError('coalesceReads', `must be a boolean or 'auto', got ${String(options.coalesceReads)}`);
  }
  if (options.whileDisconnected !== undefined && options.whileDisconnected !== 'fail' && options.whileDisconnected !== 'wait') {
    throw new InvalidArgumentError('whileDisconnected', `must be 'fail' or 'wait', got ${String(options.whileDisconnected)}`);
  }
  if (options.createChroot !== undefined && typeof options.createChroot !== 'boolean') {
    throw new InvalidArgumentError('createChroot', `must be a boolean, got ${String(options.createChroot)}`);
  }
  if (options.trackEnsemble !== undefined && typeof options.trackEnsemble !== 'boolean') {
    throw new InvalidArgumentError('trackEnsemble', `must be a boolean, got ${String(options.trackEnsemble)}`);
  }
  if (options.session && (typeof options.session.id !== 'bigint' || options.session.id === 0n || !(options.session.password instanceof Uint8Array))) {
    throw new InvalidArgumentError('session', 'must be { id: non-zero bigint, password: Uint8Array }');
  }
  if (options.serverTickTime !== undefined && !(Number.isInteger(options.serverTickTime) && options.serverTickTime > 0)) {
    throw new InvalidArgumentError('serverTickTime', `must be a positive integer (ms), got ${String(options.serverTickTime)}`);
  }
  if (options.leaseProof !== undefined && !LEASE_PROOF_MODES.includes(options.leaseProof)) {
    throw new InvalidArgumentError('leaseProof', `must be one of ${LEASE_PROOF_MODES.map((m) => `'${m}'`).join(', ')}, got ${String(options.leaseProof)}`);
  }
  if (options.leaseProof === 'sync' && options.serverTickTime === undefined) {
    throw new InvalidArgumentError('leaseProof', "'sync' needs serverTickTime: a sync proves a tick and a half less than a write, and without the tick it proves nothing");
  }
  if (options.tls !== undefined && typeof options.tls !== 'function' && (typeof options.tls !== 'object' || options.tls === null)) {
    throw new InvalidArgumentError('tls', `must be TLS options or a function returning them, got ${String(options.tls)}`);
  }
  if (options.lookup !== undefined && typeof options.lookup !== 'function') {
    throw new InvalidArgumentError('lookup', `must be a function with the signature of dns.lookup, got ${typeof options.lookup}`);
  }
  if (options.sasl && options.sasl.mechanism === 'GSSAPI') {
    if (options.sasl.principal === undefined && options.sasl.keytab === undefined && options.sasl.password === undefined && options.sasl.ccache === undefined && !process.env.KRB5CCNAME) {
      throw new InvalidArgumentError('sasl', "GSSAPI needs a principal with a keytab or password, or a kinit ccache (ccache option or KRB5CCNAME)");
    }
  } else if (options.sasl && (options.sasl.mechanism !== 'DIGEST-MD5' || typeof options.sasl.username !== 'string' || typeof options.sasl.password !== 'string')) {
    throw new InvalidArgumentError('sasl', "must be { mechanism: 'DIGEST-MD5', username: string, password: string } or { mechanism: 'GSSAPI', ... }");
  }
  const auth = (options.auth ?? []).map(({ scheme, auth }, i) => {
    if (typeof scheme !== 'string' || scheme === '') throw new InvalidArgumentError('auth', `entry ${i}: scheme must be a non-empty string`);
    return { scheme, auth: authBytes(auth, 'auth') };
  });
  return {
    hosts,
    chroot,
    sessionTimeout: options.sessionTimeout ?? 30_000,
    connectTimeout: options.connectTimeout ?? 10_000,
    requestTimeout: options.requestTimeout,
    maxFrameSize,
    canBeReadOnly: options.canBeReadOnly ?? false,
    coalesceReads: options.coalesceReads ?? 'auto',
    tls: options.tls,
    lookup: options.lookup,
    srv: srv ? { name: srv.name, resolveSrv: options.resolveSrv } : undefined,
    auth,
    whileDisconnected: options.whileDisconnected ?? 'fail',
    retry: resolveRetryPolicy(options.retry),
    createChroot: options.createChroot ?? false,
    trackEnsemble: options.trackEnsemble ?? false,
    sasl: options.sasl,
    serverTickTime: options.serverTickTime,
    leaseProof: options.leaseProof ?? 'auto',
    acl: resolveACLProvider(options.acl),
    readConsistency: validateConsistency(options.readConsistency, 'readConsistency') ?? 'plain',
    after: options.after === undefined ? undefined : parseCausalToken(options.after),
    session: options.session ? { id: options.session.id, password: Buffer.from(options.session.password) } : undefined,
  };
}

/** Largest session timeout the handshake can carry: `ConnectRequest.timeOut` is a Jute int. */
const MAX_SESSION_TIMEOUT = 0x7fffffff;

// Checked here, not by the server: a value the int field cannot carry fails every handshake
// (and the server clamps any value to [2, 20] x tickTime anyway).
function validateSessionTimeout(ms: unknown): void {
  if (ms === undefined) return;
  if (typeof ms !== 'number' || !Number.isInteger(ms) || ms < 1 || ms > MAX_SESSION_TIMEOUT) {
    throw new InvalidArgumentError('sessionTimeout', `must be an integer number of milliseconds in 1..${MAX_SESSION_TIMEOUT}, got ${String(ms)}`);
  }
}

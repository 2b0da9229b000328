/**
 * What a client is made of, and its opening and closing: the parts built from the resolved
 * options (the session, the request path, the 3.9 features probe, the watch operations'
 * context); the connect (an SRV record's hosts asked first, the session started under the
 * zk:connect trace, then the `auth` credentials, the chroot and ensemble tracking, the client
 * closed again when one of them fails); and the close. The `ZooKeeper` class holds one and
 * documents every call (zookeeper.ts).
 */
import { srvHostSource } from '../connection/srv.js';
import { connectChannel, traced, type ConnectTrace } from '../diagnostics.js';
import { Session } from '../session/session.js';
import { ensureChroot } from './create.js';
import { EnsembleTracker, type TrackedClient } from './ensemble-tracker.js';
import { addAuth } from './operations.js';
import { resolveOptions, type ClientOptions, type ResolvedOptions } from './options.js';
import { RequestPath } from './request-path.js';
import { ServerFeatures } from './server-features.js';
import type { WatchContext } from './watch-ops.js';

/** One client's parts. */
export class ClientCore {
  readonly options: ResolvedOptions;
  readonly session: Session;
  /** Every request of the client goes through it (request-path.ts). */
  readonly rp: RequestPath;
  readonly features: ServerFeatures;
  readonly watchContext: WatchContext;
  #tracker: EnsembleTracker | undefined;

  constructor(options: ResolvedOptions) {
    this.options = options;
    this.session = new Session(options);
    this.rp = new RequestPath(this.session, options);
    this.features = new ServerFeatures(this.rp);
    this.watchContext = {
      watches: this.session.watches,
      chroot: options.chroot,
      send: (op, name, path, write, options) => this.rp.send(op, name, path, write, undefined, options),
      legacy: () => this.session.serverGeneration() === 'legacy',
      hasModes: (op, path, options) => this.features.has(op, path, options),
    };
  }

  /**
   * `trackEnsemble`: follow the config node (Curator's EnsembleTracker). Its first read is waited
   * for, but a failure does not fail the connect: it is read again once connected.
   */
  async trackEnsemble(client: TrackedClient): Promise<void> {
    this.#tracker = new EnsembleTracker(client);
    await this.#tracker.start();
  }

  /** Stops the ensemble tracker and ends the session (closeSession, then the socket). Idempotent. */
  async close(): Promise<void> {
    this.#tracker?.stop();
    await this.session.close();
  }
}

/**
 * Connects a client (`ZooKeeper.connect`): `make` builds it around its parts. Resolves once a
 * server has granted a session and the connect's follow-ups are done; a follow-up that fails
 * closes the client and fails the connect.
 */
export async function connectClient<C extends TrackedClient>(connectString: string, options: ClientOptions, make: (core: ClientCore) => C): Promise<C> {
  const resolved = resolveOptions(connectString, options);
  if (resolved.srv !== undefined) {
    // dns-srv:// (connection/srv.ts): the record's hosts now, and asked again every later round.
    const source = srvHostSource(resolved.srv.name, resolved.srv.resolveSrv, resolved.connectTimeout);
    resolved.hosts = await source(options.signal);
    resolved.refreshHosts = source;
  }
  if (!traced(connectChannel)) return open(resolved, options, make);
  const trace: ConnectTrace = { hosts: resolved.hosts.map((h) => `${h.host}:${h.port}`).join(','), chroot: resolved.chroot, sessionTimeout: resolved.sessionTimeout };
  return connectChannel!.tracePromise(() => open(resolved, options, make, trace), trace);
}

async function open<C extends TrackedClient>(resolved: ResolvedOptions, options: ClientOptions, make: (core: ClientCore) => C, trace?: ConnectTrace): Promise<C> {
  const core = new ClientCore(resolved);
  const client = make(core);
  await core.session.start(options.signal);
  if (trace !== undefined) {
    const server = core.session.host;
    trace.sessionId = core.session.sessionId;
    trace.serverAddress = server?.address;
    trace.serverPort = server?.port;
    trace.negotiatedTimeout = core.session.negotiatedTimeout;
  }
  try {
    for (const { scheme, auth } of resolved.auth) await addAuth(core.rp, scheme, auth, {});
    if (resolved.createChroot && resolved.chroot !== '') await ensureChroot(core.rp, options.signal);
    if (resolved.trackEnsemble) await core.trackEnsemble(client);
  } catch (err) {
    await core.close();
    throw err;
  }
  return client;
}

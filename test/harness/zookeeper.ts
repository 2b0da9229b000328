/**
 * `startZooKeeper`: a real ZooKeeper standalone server or ensemble for tests, the bench and the
 * demo. Where it comes from, in order: ZK_CONNECT (an existing ensemble), Testcontainers when a
 * Docker engine answers, otherwise a local install (Debian jars or ZOOKEEPER_HOME).
 */
import { createHash } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { dockerAvailable, startContainers } from './containers.js';
import { DEFAULT_LINE, zookeeperLine } from './versions.js';
import { DEFAULT_INIT_LIMIT, findLocalInstall, INSTALL_HINT, LocalServer, serverSpec, type LocalInstall, type ServerPorts } from './local-install.js';
import { probeMode, type ServerMode } from './fourletter.js';
import { freePorts } from './ports.js';
import { ServerLinks } from './server-links.js';
import { timing, waitFor } from './timing.js';

/** One server of an ensemble. */
export interface ServerHandle {
  /** The server id (`myid`), from 1. */
  readonly id: number;
  /** Where its client port is reachable (127.0.0.1 for local servers). */
  readonly host: string;
  /** Its client port (for a container, the mapped host port, which changes on restart). */
  readonly port: number;
  /** `host:port` of this server alone. */
  readonly connectString: string;
  /** SIGTERM (or container stop) and wait for exit. */
  stop(): Promise<void>;
  /** SIGKILL and wait for exit. */
  kill(): Promise<void>;
  /**
   * Freezes the server (SIGSTOP; `docker pause` for a container): its sockets stay open but it
   * answers nothing, as in a long GC pause. Rejects for an external server.
   */
  pause(): Promise<void>;
  /** Lets a paused server run again (SIGCONT; `docker unpause`). */
  resume(): Promise<void>;
  /** Start again (same ports and data); resolves when it answers `srvr`. */
  start(): Promise<void>;
  /** stop() then start(). */
  restart(): Promise<void>;
  /** The process id of a local server while it runs (undefined for containers and external servers). */
  readonly pid?: number | undefined;
  /** What `srvr` says: `leader`, `follower`, `standalone`, `observer`, `read-only`; `down` when stopped or not serving. */
  mode(): Promise<ServerMode>;
  /** The server's log so far. */
  logs(): Promise<string>;
  /**
   * Reconfig-enabled local ensembles only: this server's line for `reconfig`'s joining servers
   * (`server.N=127.0.0.1:quorum:election:participant;127.0.0.1:client`).
   */
  readonly spec?: string | undefined;
}

/** A running ensemble (or an external one). */
export interface ZooKeeperEnsemble extends AsyncDisposable {
  /** Every server, comma-separated (with ZK_CONNECT's chroot, if it has one). */
  readonly connectString: string;
  readonly servers: readonly ServerHandle[];
  readonly source: 'external' | 'testcontainers' | 'local';
  /** False for an external ensemble: tests that kill servers must skip. */
  readonly canKill: boolean;
  /** Milliseconds from the startZooKeeper call until the ensemble served (0 for an external one). */
  readonly startMs: number;
  /** With `serverLinks: true`: the proxies between the servers and their faults; else undefined. */
  readonly links: ServerLinks | undefined;
  /** The current leader (or the standalone server). */
  leader(): Promise<ServerHandle | undefined>;
  /**
   * Waits until the servers that are up agree on a leader (a quorum serves). With `all`, every
   * server must be serving (as after a start), not only a majority.
   */
  waitForQuorum(timeoutMs?: number, options?: { all?: boolean }): Promise<ServerHandle>;
  /** Every server's log, headed by its id. */
  logs(): Promise<string>;
  /**
   * Reconfig-enabled local ensembles only (`reconfig: true`): starts one more server (the next
   * id, fresh ports) whose initial config lists every server started so far and itself, and
   * resolves once it serves as a non-voting follower; it votes only after a `reconfig` adds its
   * {@link ServerHandle.spec}. It joins {@link servers} (and the connect string).
   */
  addServer(): Promise<ServerHandle>;
  /** Stops everything and removes the data directories. */
  close(): Promise<void>;
}

/** Options of {@link startZooKeeper}. */
export interface StartOptions {
  /** 1 (standalone, default), 3 or 5. */
  servers?: 1 | 3 | 5;
  /** ZooKeeper tick in ms (default 500): sessions may be 2 ticks to 60 s. */
  tickTime?: number;
  /** Extra zoo.cfg entries. */
  config?: Record<string, string | number>;
  /** Extra JVM system properties for the servers. */
  systemProperties?: Record<string, string | number | boolean>;
  /** Ignore ZK_CONNECT and start servers (for tests that must kill them). */
  own?: boolean;
  /**
   * Dynamic reconfiguration (local servers only; implies `own`): `reconfigEnabled=true`, the
   * members in a dynamic config file, and a super user ({@link RECONFIG_SUPER_AUTH}, as
   * `addAuth('digest', ...)`) who alone may `reconfig` (the config node is world-readable only).
   * Servers can be added with {@link ZooKeeperEnsemble.addServer}.
   */
  reconfig?: boolean;
  /**
   * JVM options for local servers, replacing the defaults that favour a fast start (a small
   * heap, the C1 JIT only): the bench passes the JVM's own defaults for full speed.
   */
  jvmOptions?: readonly string[];
  /**
   * Server-to-server links through fault proxies (local servers only; implies `own`; 3 or 5
   * servers; not with `reconfig`): each server reaches each other server's quorum and election
   * ports through a proxy of its own, controlled by {@link ZooKeeperEnsemble.links}. Tests that
   * use it skip on an external ensemble, as other tests that kill servers do.
   */
  serverLinks?: boolean;
  /** Local servers only: run them under `taskset -c <cpus>` (the bench's pinned mode). */
  cpus?: string;
  /**
   * Local servers only: the client port of each server, in order (`npm run zk -- start` asks for
   * 2181, ... when free). Default: ports the OS chooses. A port taken meanwhile fails the start.
   */
  clientPorts?: readonly number[];
}

/** The super user's `user:password` of a `reconfig: true` ensemble, for `addAuth('digest', ...)`. */
export const RECONFIG_SUPER_AUTH = 'super:reconfig-test';

/** `zookeeper.DigestAuthenticationProvider.superDigest`: `user:base64(sha1(user:password))`. */
function superDigest(auth: string): string {
  return `${auth.slice(0, auth.indexOf(':'))}:${createHash('sha1').update(auth).digest('base64')}`;
}

/**
 * Starts (or finds) a ZooKeeper ensemble and resolves once it serves: every server answers
 * `srvr` with a mode and, for an ensemble, a leader has a quorum of followers.
 * Without ZK_CONNECT, Docker or a local install, fails with {@link INSTALL_HINT}.
 */
export async function startZooKeeper(options: StartOptions = {}): Promise<ZooKeeperEnsemble> {
  const count = options.servers ?? 1;
  if (![1, 3, 5].includes(count)) throw new Error(`servers must be 1, 3 or 5 (got ${String(count)})`);
  const links = options.serverLinks === true;
  if (links && count === 1) throw new Error('serverLinks needs an ensemble (servers: 3 or 5)');
  if (links && options.reconfig) throw new Error('serverLinks and reconfig cannot be combined (a reconfig would name the servers’ real ports)');
  const external = process.env.ZK_CONNECT;
  if (external && !options.own && !options.reconfig && !links) return externalEnsemble(external);
  const started = performance.now();
  // The server links are proxies in this process in front of each server's ports, named in
  // each server's own zoo.cfg: only local servers can have them (not containers, not ZK_CONNECT).
  // Containers run the 3.8 image; another line (ZK_VERSION) runs from its cached jars.
  if (!options.reconfig && !links && zookeeperLine() === DEFAULT_LINE && (await dockerAvailable())) return startContainers(count, started, options);
  const install = findLocalInstall();
  if (!install) throw new Error(links ? `serverLinks needs a local ZooKeeper install (the proxies sit between local server processes). ${INSTALL_HINT}` : INSTALL_HINT);
  // The ports are free when chosen, but another process may bind one before Java does; such a
  // start fails with a BindException and is retried on fresh ports.
  for (let attempt = 1; ; attempt++) {
    try {
      return await startLocal(count, options, install, started);
    } catch (err) {
      if (attempt >= 3 || !(err instanceof PortConflictError) || options.clientPorts) throw err;
    }
  }
}

/** A server could not bind one of its ports. */
class PortConflictError extends Error {}

async function startLocal(count: number, options: StartOptions, install: LocalInstall, started: number): Promise<Ensemble> {
  const tickTime = options.tickTime ?? 500;
  const dir = await mkdtemp(join(tmpdir(), 'zk-harness-'));
  // Every port of the ensemble is chosen before any config is written, the server links'
  // proxies' (two per ordered pair of servers) in the same call so that none is a server's.
  const linkPorts = options.serverLinks ? count * (count - 1) * 2 : 0;
  const portList = await freePorts(count * 3 + linkPorts);
  const members = Array.from({ length: count }, (_, i) => ({
    id: i + 1,
    ports: { client: options.clientPorts?.[i] ?? portList[i * 3], peer: portList[i * 3 + 1], election: portList[i * 3 + 2] } as ServerPorts,
  }));
  const reconfig = options.reconfig === true;
  let links: ServerLinks | undefined;
  try {
    const learnerConnectMs = tickTime * Number(options.config?.initLimit ?? DEFAULT_INIT_LIMIT);
    links = linkPorts > 0 ? await ServerLinks.start(members, { ports: portList.slice(count * 3), learnerConnectMs }) : undefined;
  } catch (err) {
    await rm(dir, { recursive: true, force: true });
    throw err;
  }
  const server = (m: { id: number; ports: ServerPorts }, list: ReadonlyArray<{ id: number; ports: ServerPorts }>) =>
    new LocalServer({
      install,
      id: m.id,
      dir: join(dir, `server-${m.id}`),
      ownedDir: dir,
      ports: m.ports,
      // A reconfig-enabled ensemble of one is still a quorum of one (standaloneEnabled=false).
      members: count === 1 && !reconfig ? [] : list,
      peerPorts: links && ((to: number) => links.portsFor(m.id, to)),
      tickTime,
      extraConfig: reconfig ? { reconfigEnabled: 'true', ...options.config } : (options.config ?? {}),
      systemProperties: {
        'zookeeper.extendedTypesEnabled': true,
        ...(reconfig ? { 'zookeeper.DigestAuthenticationProvider.superDigest': superDigest(RECONFIG_SUPER_AUTH) } : {}),
        ...options.systemProperties,
      },
      jvmOptions: options.jvmOptions,
      cpus: options.cpus,
      dynamic: reconfig,
    });
  const servers = members.map((m) => server(m, members));
  const handles = servers.map((s, i) => localHandle(s, reconfig ? serverSpec(s.id, (members[i] as { ports: ServerPorts }).ports) : undefined));
  const ensemble = new Ensemble(handles, 'local', true, async () => {
    await Promise.all(servers.map((s) => s.kill()));
    await links?.close();
    await rm(dir, { recursive: true, force: true });
  });
  ensemble.links = links;
  if (reconfig) {
    ensemble.grow = async () => {
      const [client, peer, election] = await freePorts(3);
      const joiner = { id: members.length + 1, ports: { client, peer, election } as ServerPorts };
      members.push(joiner);
      const added = server(joiner, members.slice());
      servers.push(added);
      await added.start();
      return localHandle(added, serverSpec(joiner.id, joiner.ports));
    };
  }
  try {
    // All JVMs start at once; an ensemble member answers srvr only after the election, so only
    // a standalone server is waited on per server, an ensemble as a whole.
    await Promise.all(servers.map((s) => s.start({ waitForMode: count === 1 })));
    // Any server exiting (a port taken meanwhile) fails the start at once.
    await servers.reduce<Promise<unknown>>((wait, s) => s.whileRunning(wait), ensemble.waitForQuorum(undefined, { all: true }));
  } catch (err) {
    const logs = await ensemble.logs();
    await ensemble.close();
    const message = `ZooKeeper (${install.description}) did not start: ${(err as Error).message}\n${logs.slice(-4000)}`;
    throw /BindException|Address already in use/.test(logs) ? new PortConflictError(message) : new Error(message);
  }
  ensemble.startMs = performance.now() - started;
  return ensemble;
}

function localHandle(server: LocalServer, spec?: string): ServerHandle {
  return {
    id: server.id,
    spec,
    get pid() {
      return server.pid;
    },
    host: '127.0.0.1',
    port: server.port,
    connectString: `127.0.0.1:${server.port}`,
    stop: () => server.stop(),
    kill: () => server.kill(),
    pause: async () => server.pause(),
    resume: async () => server.resume(),
    start: () => server.start(),
    restart: async () => {
      await server.stop();
      await server.start();
    },
    mode: () => server.mode(),
    logs: async () => server.logs(),
  };
}

/** @internal An ensemble over server handles. */
export class Ensemble implements ZooKeeperEnsemble {
  readonly servers: ServerHandle[];
  readonly source: ZooKeeperEnsemble['source'];
  readonly canKill: boolean;
  startMs = 0;
  /** The server links (`serverLinks: true`), else undefined. */
  links: ServerLinks | undefined = undefined;
  /** Starts one more server (set for reconfig-enabled local ensembles). */
  grow: (() => Promise<ServerHandle>) | undefined;
  readonly #close: () => Promise<void>;
  #closed = false;

  readonly #chroot: string;

  constructor(servers: readonly ServerHandle[], source: ZooKeeperEnsemble['source'], canKill: boolean, close: () => Promise<void>, chroot = '') {
    this.servers = servers.slice();
    this.#chroot = chroot;
    this.source = source;
    this.canKill = canKill;
    this.#close = close;
  }

  get connectString(): string {
    return this.servers.map((s) => s.connectString).join(',') + this.#chroot;
  }

  async leader(): Promise<ServerHandle | undefined> {
    const modes = await Promise.all(this.servers.map((s) => s.mode()));
    const i = modes.findIndex((m) => m === 'leader' || m === 'standalone');
    return i < 0 ? undefined : this.servers[i];
  }

  async waitForQuorum(timeoutMs = timing(60_000), options: { all?: boolean } = {}): Promise<ServerHandle> {
    return waitFor(
      options.all ? 'every server to serve' : 'a leader with followers',
      async () => {
        const modes = await Promise.all(this.servers.map((s) => s.mode()));
        // 'down' covers both a closed port and a server that answers srvr without serving yet.
        if (options.all && modes.includes('down')) return undefined;
        const up = modes.filter((m) => m !== 'down');
        if (up.length === 0) return undefined;
        const leader = modes.findIndex((m) => m === 'leader' || m === 'standalone');
        // Two leaders: one of them was cut off and has not noticed yet (it steps down after
        // syncLimit ticks without a quorum, Leader.lead): the servers do not agree yet.
        if (modes.filter((m) => m === 'leader').length > 1) return undefined;
        // Every running server must have joined (a follower still electing answers with no mode).
        if (leader < 0 || up.some((m) => m !== 'leader' && m !== 'follower' && m !== 'standalone' && m !== 'observer')) return undefined;
        if (modes[leader] === 'leader' && up.length < Math.floor(this.servers.length / 2) + 1) return undefined;
        return this.servers[leader];
      },
      timeoutMs,
    );
  }

  async addServer(): Promise<ServerHandle> {
    if (!this.grow) throw new Error('addServer needs an ensemble started with { reconfig: true }');
    const handle = await this.grow();
    this.servers.push(handle);
    return handle;
  }

  async logs(): Promise<string> {
    const parts = await Promise.all(this.servers.map(async (s) => `--- server ${s.id} (${s.connectString}) ---\n${await s.logs()}`));
    return parts.join('\n');
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#close();
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }
}

function externalEnsemble(connect: string): ZooKeeperEnsemble {
  const slash = connect.indexOf('/');
  const hosts = (slash < 0 ? connect : connect.slice(0, slash)).split(',').filter(Boolean);
  const chroot = slash < 0 ? '' : connect.slice(slash);
  const cannot = (what: string) => async () => {
    throw new Error(`cannot ${what} a server of the external ensemble in ZK_CONNECT`);
  };
  const servers = hosts.map((h, i): ServerHandle => {
    const colon = h.lastIndexOf(':');
    const host = colon < 0 ? h : h.slice(0, colon).replace(/^\[|\]$/g, '');
    const port = colon < 0 ? 2181 : Number(h.slice(colon + 1));
    return {
      id: i + 1,
      host,
      port,
      connectString: h,
      stop: cannot('stop'),
      kill: cannot('kill'),
      pause: cannot('pause'),
      resume: cannot('resume'),
      start: cannot('start'),
      restart: cannot('restart'),
      mode: () => probeMode(host, port, 2000),
      logs: async () => '(external server: no logs)',
    };
  });
  return new Ensemble(servers, 'external', false, async () => {}, chroot);
}

/**
 * ZooKeeper servers from a local install: the Debian `zookeeper` package's jars under
 * /usr/share/java, or an Apache tarball under ZOOKEEPER_HOME. Each server is a
 * `java ... QuorumPeerMain zoo.cfg` child process with its own data directory.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, openSync, readdirSync, readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fourLetter, modeOf, probeMode, type ServerMode } from './fourletter.js';
import { timing, waitFor } from './timing.js';
import { TEST_JVM_OPTIONS } from './java.js';
import { DEFAULT_LINE, versionManifest, zookeeperLine } from './versions.js';

/** What to run a server with. */
export interface LocalInstall {
  readonly java: string;
  readonly classpath: string;
  readonly description: string;
  /** The server's version (`3.8.0`), when known. */
  readonly version?: string | undefined;
  /** JVM properties this install needs (its logging configuration). */
  readonly systemProperties?: Readonly<Record<string, string>>;
}

/** The message when no server can be had. */
export const INSTALL_HINT =
  'No ZooKeeper available. Install it with `sudo apt-get install -y zookeeper` (Debian/Ubuntu, needs Java: `apt-get install -y default-jre-headless`), ' +
  'or set ZOOKEEPER_HOME to an unpacked Apache ZooKeeper release, or set ZK_CONNECT=host:port to use a running ensemble ' +
  '(or run `bash scripts/install-zookeeper.sh`).';

let found: { key: string; install: LocalInstall | undefined } | undefined;

/** Finds java and the ZooKeeper jars, or undefined (remembered per JAVA_HOME/ZOOKEEPER_HOME: `java -version` costs a JVM start). */
export function findLocalInstall(): LocalInstall | undefined {
  const key = `${process.env.JAVA_HOME ?? ''}\0${process.env.ZOOKEEPER_HOME ?? ''}\0${zookeeperLine()}`;
  if (found?.key !== key) found = { key, install: lookForInstall() };
  return found.install;
}

function lookForInstall(): LocalInstall | undefined {
  const java = process.env.JAVA_HOME ? join(process.env.JAVA_HOME, 'bin', 'java') : 'java';
  if (spawnSync(java, ['-version'], { stdio: 'ignore' }).status !== 0) return undefined;
  const home = process.env.ZOOKEEPER_HOME;
  if (home) {
    const dirs = [home, join(home, 'lib')].filter(existsSync);
    const names = dirs.flatMap((dir) => readdirSync(dir).filter((f) => f.endsWith('.jar')).map((f) => ({ dir, f })));
    if (names.some(({ f }) => /^zookeeper-\d/.test(f))) {
      // A release logs through logback to the console with its conf/logback.xml (3.8+; older
      // releases use log4j, conf/log4j.properties); the console goes to console.log in the data dir.
      const logback = join(home, 'conf', 'logback.xml');
      const log4j = join(home, 'conf', 'log4j.properties');
      const systemProperties: Record<string, string> | undefined = existsSync(logback) ? { 'logback.configurationFile': logback } : existsSync(log4j) ? { 'log4j.configuration': `file:${log4j}` } : undefined;
      return { java, classpath: names.map(({ dir, f }) => join(dir, f)).join(':'), description: `ZOOKEEPER_HOME=${home}`, ...(systemProperties ? { systemProperties } : {}) };
    }
  }
  // The Debian package (3.8), or another line's jars from the cache (ZK_VERSION=3.4|3.9, fetched
  // by scripts/zookeeper-versions.mjs on first use). Its manifest puts the jars in the order that
  // works (the line's own jute jar first) and adds what Debian's manifests leave out.
  if (zookeeperLine() === DEFAULT_LINE && !existsSync('/usr/share/java/zookeeper.jar')) return undefined;
  const m = versionManifest();
  const where = m.line === DEFAULT_LINE ? 'Debian zookeeper package (/usr/share/java)' : `Debian's ZooKeeper ${m.version} jars (cached by scripts/zookeeper-versions.mjs)`;
  return { java, classpath: m.server.join(':'), description: where, version: m.version, ...(Object.keys(m.systemProperties).length > 0 ? { systemProperties: m.systemProperties } : {}) };
  return undefined;
}

/** Ports of one server. */
export interface ServerPorts {
  readonly client: number;
  readonly peer: number;
  readonly election: number;
}

/** Settings shared by the servers of one ensemble. */
export interface LocalServerConfig {
  readonly install: LocalInstall;
  readonly id: number;
  readonly dir: string;
  readonly ports: ServerPorts;
  /** Every member, for `server.N` lines; empty for a standalone server. */
  readonly members: ReadonlyArray<{ id: number; ports: ServerPorts }>;
  /**
   * Where this server reaches another member's quorum and election ports, when not at the
   * member's own ports (an ensemble with `serverLinks` puts a proxy per ordered pair of servers
   * in between, so each server has its own `server.N` lines). Undefined: the member's own ports.
   * Not consulted for the server itself (it binds its own line's ports) nor with `dynamic`.
   */
  readonly peerPorts?: ((memberId: number) => { peer: number; election: number } | undefined) | undefined;
  readonly tickTime: number;
  /** Extra zoo.cfg lines. */
  readonly extraConfig: Readonly<Record<string, string | number>>;
  /** Extra JVM system properties (`-Dk=v`). */
  readonly systemProperties: Readonly<Record<string, string | number | boolean>>;
  /** A directory to remove if this process dies without closing the server (the ensemble's temp dir). */
  readonly ownedDir?: string;
  /** JVM options replacing the start-fast defaults (heap, GC, JIT level). */
  readonly jvmOptions?: readonly string[] | undefined;
  /** A CPU list for `taskset -c`: the server runs on those cores only. */
  readonly cpus?: string | undefined;
  /**
   * Dynamic reconfiguration: the `server.N` lines (with each member's client address) go to a
   * separate `zoo.cfg.dynamic` named by `dynamicConfigFile`, with no `clientPort` in zoo.cfg,
   * as ZooKeeper 3.5+ wants for `reconfig`. The caller adds `reconfigEnabled=true`.
   */
  readonly dynamic?: boolean | undefined;
}

/**
 * A member's line of a dynamic config (`server.N=host:quorum:election:role;clientHost:clientPort`),
 * as zoo.cfg.dynamic and `reconfig` take it.
 */
export function serverSpec(id: number, ports: ServerPorts, role: 'participant' | 'observer' = 'participant'): string {
  return `server.${id}=127.0.0.1:${ports.peer}:${ports.election}:${role};127.0.0.1:${ports.client}`;
}

/** zoo.cfg's `initLimit` (ticks) unless the extra config sets one. */
export const DEFAULT_INIT_LIMIT = 20;

/** The harness's JVM defaults: a small heap and the C1 JIT only start a server fast, which tests want more than throughput. */
export const START_FAST_JVM_OPTIONS: readonly string[] = ['-Xmx256m', ...TEST_JVM_OPTIONS];

const children = new Set<ChildProcess>();
let exitHookInstalled = false;

// A test run that ends without closing its ensembles must not leave Java processes behind.
// An 'exit' hook covers a normal exit, process.exit() and an uncaught exception.
function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once('exit', () => {
    for (const child of children) child.kill('SIGKILL');
  });
}

// A process killed by a signal (a vitest worker SIGKILLed on timeout, Ctrl-C on a parent) runs no
// hook at all, so each server also gets a watchdog: a detached shell that SIGKILLs the server
// once this Node process is gone, and exits by itself when the server does. It polls once a
// second: a leaked server lives at most that long after its owner.
// It then removes the ensemble's data directory, which close() would have removed.
// The server is checked first: once it is gone the watchdog leaves, and never signals a pid that
// may since belong to another process.
const WATCHDOG = 'while kill -0 "$2" 2>/dev/null; do if ! kill -0 "$1" 2>/dev/null; then kill -9 "$2"; sleep 1; [ -n "$3" ] && rm -rf -- "$3"; exit 0; fi; sleep 1; done';

function startWatchdog(serverPid: number, removeDir: string): void {
  const dog = spawn('/bin/sh', ['-c', WATCHDOG, 'zk-harness-watchdog', String(process.pid), String(serverPid), removeDir], { detached: true, stdio: 'ignore' });
  dog.on('error', () => {}); // no /bin/sh: the exit hook is all there is
  dog.unref();
}

/** One local ZooKeeper server process. */
export class LocalServer {
  readonly #config: LocalServerConfig;
  #child: ChildProcess | undefined;
  #exited: Promise<void> | undefined;
  /** Rejects when the current process exits (never resolves). */
  #failure: Promise<never> | undefined;
  /** SIGSTOPped by pause() and not resumed. */
  #paused = false;

  constructor(config: LocalServerConfig) {
    this.#config = config;
  }

  /** The server id (`myid`). */
  get id(): number {
    return this.#config.id;
  }
  /** The client port. */
  get port(): number {
    return this.#config.ports.client;
  }
  /** The running server's process id. */
  get pid(): number | undefined {
    return this.#child?.pid;
  }
  /** True from start() until the process exits. */
  get running(): boolean {
    return this.#child !== undefined;
  }
  /** The server's own log (slf4j-simple, Debian jars). */
  get logFile(): string {
    return join(this.#config.dir, 'zookeeper.log');
  }
  get #consoleFile(): string {
    return join(this.#config.dir, 'console.log');
  }

  /** Writes the config (once) and starts the process; resolves when it answers `srvr` with a mode. */
  async start(options: { waitForMode?: boolean } = {}): Promise<void> {
    if (this.#child) return;
    await this.#writeConfig();
    installExitHook();
    const c = this.#config;
    const props = {
      'zookeeper.admin.enableServer': false,
      'org.slf4j.simpleLogger.logFile': this.logFile,
      'org.slf4j.simpleLogger.showDateTime': true,
      ...c.install.systemProperties,
      ...c.systemProperties,
    };
    const args = [...(c.jvmOptions ?? START_FAST_JVM_OPTIONS), ...Object.entries(props).map(([k, v]) => `-D${k}=${v}`), '-cp', c.install.classpath, 'org.apache.zookeeper.server.quorum.QuorumPeerMain', join(c.dir, 'zoo.cfg')];
    // Whatever a logger writes to the console (an Apache release's logback) lands in console.log.
    const out = openSync(this.#consoleFile, 'a');
    const [command, argv] = c.cpus === undefined ? [c.install.java, args] : ['taskset', ['-c', c.cpus, c.install.java, ...args]];
    const child = spawn(command, argv, { stdio: ['ignore', out, 'pipe'] });
    closeSync(out);
    const stderr: Buffer[] = [];
    child.stderr?.on('data', (d: Buffer) => stderr.length < 64 && stderr.push(d));
    this.#child = child;
    children.add(child);
    if (child.pid !== undefined) startWatchdog(child.pid, c.ownedDir ?? '');
    this.#exited = new Promise<void>((resolve) =>
      child.once('exit', () => {
        children.delete(child);
        if (this.#child === child) {
          this.#child = undefined;
          this.#paused = false;
        }
        resolve();
      }),
    );
    this.#failure = this.#exited.then(() => {
      throw new Error(`server ${c.id} exited (${child.exitCode !== null ? `code ${child.exitCode}` : child.signalCode}) while starting: ${Buffer.concat(stderr).toString().slice(0, 2000)}${lastLines(this.logs(), 15)}`);
    });
    this.#failure.catch(() => {}); // observed only while someone waits on it
    if (options.waitForMode === false) return;
    await this.whileRunning(waitFor(`server ${c.id} on port ${c.ports.client} to answer srvr`, async () => modeOf(await fourLetter('127.0.0.1', c.ports.client, 'srvr', 1000)), timing(60_000)));
  }

  /**
   * Resolves as `wait` does, or rejects as soon as this server's process exits first (a bind
   * failure, a bad config): no waiting out a deadline for a server that is gone.
   */
  whileRunning<T>(wait: Promise<T>): Promise<T> {
    if (!this.#child || !this.#failure) return wait;
    return Promise.race([wait, this.#failure]);
  }

  /** SIGTERM, then waits for the process to exit. */
  async stop(): Promise<void> {
    await this.#signal('SIGTERM');
  }

  /** SIGKILL, then waits for the process to exit. */
  async kill(): Promise<void> {
    await this.#signal('SIGKILL');
  }

  /**
   * SIGSTOP: the process freezes (no thread runs, its sockets stay open and the kernel keeps
   * accepting and buffering for it), as a JVM stuck in a long GC pause would be.
   */
  pause(): void {
    if (!this.#child) throw new Error(`server ${this.id} is not running`);
    this.#child.kill('SIGSTOP');
    this.#paused = true;
  }

  /** SIGCONT: a paused process runs again. */
  resume(): void {
    if (!this.#child || !this.#paused) return;
    this.#child.kill('SIGCONT');
    this.#paused = false;
  }

  async #signal(sig: NodeJS.Signals): Promise<void> {
    const child = this.#child;
    if (!child) return;
    child.kill(sig);
    // A stopped process acts on SIGTERM only once it runs again (SIGKILL needs no SIGCONT).
    if (this.#paused) {
      child.kill('SIGCONT');
      this.#paused = false;
    }
    const timer = setTimeout(() => child.kill('SIGKILL'), timing(10_000));
    await this.#exited;
    clearTimeout(timer);
  }

  /** What `srvr` says the server is; `down` when it is not running or not serving. */
  async mode(): Promise<ServerMode> {
    if (!this.#child) return 'down';
    return probeMode('127.0.0.1', this.port, 1000);
  }

  /** The server's log so far. */
  logs(): string {
    return [this.logFile, this.#consoleFile].map((f) => (existsSync(f) ? readFileSync(f, 'utf8') : '')).join('');
  }

  async #writeConfig(): Promise<void> {
    const c = this.#config;
    const data = join(c.dir, 'data');
    await mkdir(data, { recursive: true });
    // After a reconfig the server's own files say who the members are: a restart keeps them.
    if (c.dynamic && existsSync(join(c.dir, 'zoo.cfg'))) return;
    const lines: Record<string, string | number> = {
      tickTime: c.tickTime,
      initLimit: DEFAULT_INIT_LIMIT,
      syncLimit: 10,
      dataDir: data,
      clientPort: c.ports.client,
      clientPortAddress: '127.0.0.1',
      maxClientCnxns: 0,
      // Short timeouts keep expiry tests quick; the range still covers the usual 10-30 s.
      minSessionTimeout: 2 * c.tickTime,
      maxSessionTimeout: 60_000,
      '4lw.commands.whitelist': '*',
      'admin.enableServer': 'false',
      ...c.extraConfig,
    };
    if (c.dynamic) {
      // The client address moves to each member's line of the dynamic file; a reconfig rewrites
      // that file (zoo.cfg.dynamic.<version>) and zoo.cfg's pointer to it.
      delete lines.clientPort;
      delete lines.clientPortAddress;
      lines.dynamicConfigFile = join(c.dir, 'zoo.cfg.dynamic');
      await writeFile(join(c.dir, 'zoo.cfg.dynamic'), c.members.map((m) => serverSpec(m.id, m.ports)).join('\n') + '\n');
    } else {
      for (const m of c.members) {
        const seen = m.id === c.id ? undefined : c.peerPorts?.(m.id);
        lines[`server.${m.id}`] = `127.0.0.1:${seen?.peer ?? m.ports.peer}:${seen?.election ?? m.ports.election}`;
      }
    }
    if (c.members.length > 0) lines.standaloneEnabled = 'false';
    await writeFile(join(c.dir, 'zoo.cfg'), Object.entries(lines).map(([k, v]) => `${k}=${v}`).join('\n') + '\n');
    if (c.members.length > 0) await writeFile(join(data, 'myid'), `${c.id}\n`);
  }
}

function lastLines(text: string, n: number): string {
  const lines = text.trimEnd().split('\n');
  return text ? `\n${lines.slice(-n).join('\n')}` : '';
}

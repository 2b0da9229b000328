/**
 * ZooKeeper servers from a local install: the Debian `zookeeper` package's jars under
 * /usr/share/java, or an Apache tarball under ZOOKEEPER_HOME. Each server is a
 * `java ... QuorumPeerMain zoo.cfg` child process with its own data directory.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fourLetter, modeOf } from './fourletter.js';
import { timing, waitFor } from './timing.js';

/** What to run a server with. */
export interface LocalInstall {
  readonly java: string;
  readonly classpath: string;
  readonly description: string;
}

/** The message when no server can be had. */
export const INSTALL_HINT =
  'No ZooKeeper available. Install it with `sudo apt-get install -y zookeeper` (Debian/Ubuntu, needs Java: `apt-get install -y default-jre-headless`), ' +
  'or set ZOOKEEPER_HOME to an unpacked Apache ZooKeeper release, or set ZK_CONNECT=host:port to use a running ensemble ' +
  '(or run `bash scripts/install-zookeeper.sh`).';

/** Finds java and the ZooKeeper jars, or undefined. */
export function findLocalInstall(): LocalInstall | undefined {
  const java = process.env.JAVA_HOME ? join(process.env.JAVA_HOME, 'bin', 'java') : 'java';
  if (spawnSync(java, ['-version'], { stdio: 'ignore' }).status !== 0) return undefined;
  const home = process.env.ZOOKEEPER_HOME;
  if (home) {
    const jars = [home, join(home, 'lib')].filter(existsSync).flatMap((dir) => readdirSync(dir).filter((f) => f.endsWith('.jar')).map((f) => join(dir, f)));
    if (jars.some((j) => /zookeeper-\d/.test(j))) return { java, classpath: jars.join(':'), description: `ZOOKEEPER_HOME=${home}` };
  }
  // Debian's zookeeper.jar lists most dependencies in its manifest's Class-Path, but not
  // netty-codec and netty-resolver, which the Netty connection factory (TLS) needs; slf4j-simple
  // gives the server a logger that writes to a file we choose.
  const debian = '/usr/share/java/zookeeper.jar';
  if (existsSync(debian)) {
    const extra = ['slf4j-simple', 'netty-codec', 'netty-resolver', 'netty-transport-native-unix-common'].map((j) => `/usr/share/java/${j}.jar`).filter(existsSync);
    return { java, classpath: [debian, ...extra].join(':'), description: 'Debian zookeeper package (/usr/share/java)' };
  }
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
  readonly tickTime: number;
  /** Extra zoo.cfg lines. */
  readonly extraConfig: Readonly<Record<string, string | number>>;
  /** Extra JVM system properties (`-Dk=v`). */
  readonly systemProperties: Readonly<Record<string, string | number | boolean>>;
}

const children = new Set<ChildProcess>();
let exitHookInstalled = false;

// A test run that crashes must not leave Java processes behind.
function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once('exit', () => {
    for (const child of children) child.kill('SIGKILL');
  });
}

/** One local ZooKeeper server process. */
export class LocalServer {
  readonly #config: LocalServerConfig;
  #child: ChildProcess | undefined;
  #exited: Promise<void> | undefined;

  constructor(config: LocalServerConfig) {
    this.#config = config;
  }

  get id(): number {
    return this.#config.id;
  }
  get port(): number {
    return this.#config.ports.client;
  }
  get running(): boolean {
    return this.#child !== undefined;
  }
  get logFile(): string {
    return join(this.#config.dir, 'zookeeper.log');
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
      ...c.systemProperties,
    };
    const args = ['-Xmx256m', '-XX:+UseSerialGC', '-XX:TieredStopAtLevel=1', ...Object.entries(props).map(([k, v]) => `-D${k}=${v}`), '-cp', c.install.classpath, 'org.apache.zookeeper.server.quorum.QuorumPeerMain', join(c.dir, 'zoo.cfg')];
    const child = spawn(c.install.java, args, { stdio: ['ignore', 'ignore', 'pipe'] });
    const stderr: Buffer[] = [];
    child.stderr?.on('data', (d: Buffer) => stderr.length < 64 && stderr.push(d));
    this.#child = child;
    children.add(child);
    this.#exited = new Promise<void>((resolve) =>
      child.once('exit', () => {
        children.delete(child);
        if (this.#child === child) this.#child = undefined;
        resolve();
      }),
    );
    if (options.waitForMode === false) return;
    await waitFor(
      `server ${c.id} on port ${c.ports.client} to answer srvr`,
      async () => {
        if (!this.#child) throw new Error(`server ${c.id} exited: ${Buffer.concat(stderr).toString().slice(0, 2000)}`);
        return modeOf(await fourLetter('127.0.0.1', c.ports.client, 'srvr', 1000));
      },
      timing(60_000),
    );
  }

  /** SIGTERM, then waits for the process to exit. */
  async stop(): Promise<void> {
    await this.#signal('SIGTERM');
  }

  /** SIGKILL, then waits for the process to exit. */
  async kill(): Promise<void> {
    await this.#signal('SIGKILL');
  }

  async #signal(sig: NodeJS.Signals): Promise<void> {
    const child = this.#child;
    if (!child) return;
    child.kill(sig);
    const timer = setTimeout(() => child.kill('SIGKILL'), timing(10_000));
    await this.#exited;
    clearTimeout(timer);
  }

  /** `leader`, `follower`, `standalone`, `observer`, `read-only`, or `down`. */
  async mode(): Promise<string> {
    if (!this.#child) return 'down';
    try {
      return modeOf(await fourLetter('127.0.0.1', this.port, 'srvr', 1000)) ?? 'down';
    } catch {
      return 'down';
    }
  }

  /** The server's log so far. */
  logs(): string {
    return existsSync(this.logFile) ? readFileSync(this.logFile, 'utf8') : '';
  }

  async #writeConfig(): Promise<void> {
    const c = this.#config;
    const data = join(c.dir, 'data');
    await mkdir(data, { recursive: true });
    const lines: Record<string, string | number> = {
      tickTime: c.tickTime,
      initLimit: 20,
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
    for (const m of c.members) lines[`server.${m.id}`] = `127.0.0.1:${m.ports.peer}:${m.ports.election}`;
    if (c.members.length > 0) lines.standaloneEnabled = 'false';
    await writeFile(join(c.dir, 'zoo.cfg'), Object.entries(lines).map(([k, v]) => `${k}=${v}`).join('\n') + '\n');
    if (c.members.length > 0) await writeFile(join(data, 'myid'), `${c.id}\n`);
  }
}

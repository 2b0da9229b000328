/**
 * The Java peer: ZooKeeper's own Java client (raw workloads) and Apache Curator (lock workloads),
 * through bench/java/BenchDriver.java compiled with javac against the Debian jars. One
 * long-running JVM per server pass, so its JIT warms up over the repetitions as the server's
 * does. Commands and replies are JSON lines over the driver's stdin and stdout.
 */
import { execFile, spawn, type ChildProcess, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, rename, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { Sample } from '../lib/stats.js';

const execFileP = promisify(execFile);

/** The driver's source (read from the repository, next to dist/). */
const SOURCE = fileURLToPath(new URL('../../java/BenchDriver.java', import.meta.url));
/** The JVM measurements (CPU, heap, RSS) the other drivers share: compile it with each of them. */
export const JVM_METER = fileURLToPath(new URL('../../java/JvmMeter.java', import.meta.url));
const JAR_DIR = '/usr/share/java';
/** Each jar the driver needs and the Debian package that ships it. Guava 31 carries failureaccess. */
const JARS = {
  zookeeper: 'libzookeeper-java',
  'zookeeper-jute': 'libzookeeper-java',
  'curator-client': 'libcurator-client-java',
  'curator-framework': 'libcurator-framework-java',
  'curator-recipes': 'libcurator-recipes-java',
  guava: 'libguava-java',
  'slf4j-api': 'libslf4j-java',
  // Logging goes nowhere: the driver's stdout is its protocol.
  'slf4j-nop': 'libslf4j-java',
} as const;
const CLASSPATH = Object.keys(JARS).map((j) => join(JAR_DIR, `${j}.jar`));
const JDK_HINT = 'apt-get install openjdk-17-jdk-headless';
/** How much of the driver's stderr errors carry. */
const STDERR_KEEP = 4096;
/** close(): how long the driver gets to exit once its stdin has ended. */
const CLOSE_GRACE_MS = 5000;

/**
 * A command for the driver: one repetition of a workload, measured inside the JVM with
 * System.nanoTime, CPU being the whole JVM's process CPU over the measurement (10 ms ticks).
 * Raw workloads run on the driver's own ZooKeeper session; lock workloads on Curator clients
 * created (and connected) for the command, outside the measurement, and closed after it.
 */
export type JavaCommand =
  /**
   * `count` getData / exists (on a missing path) calls. With `outstanding` 1: one after another
   * on the blocking API, each timed; with more: the callback API with `outstanding` in flight,
   * no latencies.
   */
  | { readonly workload: 'getData' | 'exists'; readonly path: string; readonly count: number; readonly outstanding: number }
  /** `count` setData calls of `size` bytes, version -1; `outstanding` as for getData. */
  | { readonly workload: 'setData'; readonly path: string; readonly count: number; readonly outstanding: number; readonly size: number }
  /**
   * `count` pairs: create `path` EPHEMERAL (empty, open ACL), then delete it. Latency: the pair;
   * metrics createP50Us and deleteP50Us (each half timed on its own). The parent must exist.
   */
  | { readonly workload: 'createDelete'; readonly path: string; readonly count: number }
  /**
   * `count` new sessions, one after another: latency until SyncConnected; each then closed. With
   * `sasl` true, until SaslAuthenticated (the driver's JVM options carry the JAAS `Client`
   * section: {@link startJavaDriver}'s `jvmOptions`), an AuthFailed failing the command; with
   * `sasl` false, the client's SASL is turned off for these sessions (ZKClientConfig).
   */
  | { readonly workload: 'connect'; readonly count: number; readonly sasl?: boolean }
  /**
   * One Curator session and one InterProcessMutex (or InterProcessReadWriteLock write lock):
   * `count` cycles; latency is the acquire alone, seconds the whole loop.
   */
  | { readonly workload: 'mutexUncontended' | 'writeLockUncontended'; readonly path: string; readonly count: number }
  /**
   * `sessions` Curator sessions, one InterProcessMutex each shared by `threads` threads (default
   * 1), looping acquire and release (no hold) for `seconds` after a common start. ops: hand-offs;
   * latencies: the gap from a release call to the next acquire returning; metrics releaseP50Us
   * (the release call alone) and longestWaitMs (the longest acquire, call to return).
   */
  | { readonly workload: 'mutexContended'; readonly path: string; readonly sessions: number; readonly seconds: number; readonly threads?: number }
  /**
   * `sessions` Curator sessions, one thread and one InterProcessSemaphoreV2 (`permits` leases)
   * each, looping acquire and returnLease (no hold) for `seconds` after a common start. ops:
   * acquisitions returning inside the window; latencies: the acquire; metric releaseP50Us.
   */
  | { readonly workload: 'semaphoreContended'; readonly path: string; readonly sessions: number; readonly permits: number; readonly seconds: number }
  /**
   * `readers` + `writers` Curator sessions, each its own InterProcessReadWriteLock on `path`,
   * looping read (write) lock acquire and release for `seconds`. ops: reads + writes; metrics
   * readsPerSec, writesPerSec; no latencies.
   */
  | { readonly workload: 'readWrite'; readonly path: string; readonly readers: number; readonly writers: number; readonly seconds: number };

/** A running driver: one JVM with one ZooKeeper session to one ensemble. */
export interface JavaDriver {
  /** Versions of ZooKeeper's client, Curator and Java, e.g. `{ zookeeper: '3.8.0', curator: '5.4.0', java: '17.0.15' }`. */
  readonly versions: Readonly<Record<string, string>>;
  /**
   * Runs one repetition of a workload. Commands run one at a time, in the order sent. Rejects
   * with the driver's error text (and its recent stderr), or when the driver exits.
   */
  run(command: JavaCommand): Promise<Sample>;
  /**
   * Ends the driver's stdin (the driver then stops whatever runs, closes its sessions and exits;
   * pending runs reject) and resolves once it has exited, killing it after 5 s.
   */
  close(): Promise<void>;
}

/**
 * Compiles the driver (once per source, javac and classpath: the classes are cached under the
 * OS temp dir) and starts it against `connect`, resolving once its session is connected. Resolves
 * `{ skipped }` saying what to install when java, javac (17+) or a jar is missing; rejects when
 * the source does not compile or the driver cannot connect. Aborting `signal` kills the driver,
 * whether it is starting (the promise rejects) or running (pending runs reject). `jvmOptions` go
 * before the class name (e.g. a JAAS login configuration and krb5.conf for a Kerberized server).
 */
export async function startJavaDriver(connect: string, options: { signal?: AbortSignal; jvmOptions?: readonly string[] } = {}): Promise<JavaDriver | { skipped: string }> {
  const { signal } = options;
  signal?.throwIfAborted();
  const missing = Object.entries(JARS).filter(([jar]) => !existsSync(join(JAR_DIR, `${jar}.jar`)));
  if (missing.length) {
    const packages = [...new Set(missing.map(([, pkg]) => pkg))];
    return { skipped: `missing ${missing.map(([jar]) => `${JAR_DIR}/${jar}.jar`).join(', ')} (apt-get install ${packages.join(' ')})` };
  }
  const javac = await versionOf('javac', signal);
  const java = await versionOf('java', signal);
  if (javac === undefined || java === undefined) return { skipped: `${javac === undefined ? 'javac' : 'java'} not found (${JDK_HINT})` };
  for (const [tool, v] of [['javac', javac], ['java', java]] as const) {
    const major = Number(/(\d+)(?:\.\d+)*/.exec(v)?.[1] ?? 0);
    if (major < 17) return { skipped: `${tool} is ${v.trim()}, the driver needs 17+ (${JDK_HINT})` };
  }
  const classes = await compile(javac, signal);
  signal?.throwIfAborted();
  const child = spawn('java', [...(options.jvmOptions ?? []), '-cp', [...CLASSPATH, classes].join(':'), 'BenchDriver', connect], { stdio: ['pipe', 'pipe', 'pipe'] });
  return new Driver(child, signal).ready();
}

/** `tool -version`'s first line, or undefined when the tool is not there. */
async function versionOf(tool: string, signal: AbortSignal | undefined): Promise<string | undefined> {
  try {
    const { stdout, stderr } = await execFileP(tool, ['-version'], { signal, encoding: 'utf8' });
    return (stderr || stdout).split('\n')[0] ?? '';
  } catch (e) {
    signal?.throwIfAborted();
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw e;
  }
}

/** The directory of the compiled driver: compiled into a fresh one, then renamed into place (safe under concurrent benches). */
async function compile(javacVersion: string, signal: AbortSignal | undefined): Promise<string> {
  const source = await readFile(SOURCE);
  const key = createHash('sha256').update(source).update(`\0${CLASSPATH.join(':')}\0${javacVersion}`).digest('hex').slice(0, 16);
  const classes = join(tmpdir(), `zk-bench-java-${key}`);
  if (existsSync(join(classes, 'BenchDriver.class'))) return classes;
  const scratch = `${classes}.${process.pid}-${randomBytes(4).toString('hex')}`;
  await mkdir(scratch, { recursive: true });
  try {
    await execFileP('javac', ['-nowarn', '-Xlint:-path', '-encoding', 'UTF-8', '--release', '17', '-d', scratch, '-cp', CLASSPATH.join(':'), SOURCE], { signal, encoding: 'utf8' }).catch((e: unknown) => {
      signal?.throwIfAborted();
      const stderr = (e as { stderr?: string }).stderr ?? String(e);
      throw new Error(`javac failed on ${SOURCE}:\n${stderr.slice(0, 2000)}`);
    });
    await rename(scratch, classes).catch(() => {
      // Another process put its copy in place first; theirs is the same.
      if (!existsSync(join(classes, 'BenchDriver.class'))) throw new Error(`cannot move the compiled driver to ${classes}`);
    });
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
  return classes;
}

/** Live drivers, killed if this process exits without closing them. */
const live = new Set<ChildProcess>();
let exitHook = false;
function track(child: ChildProcess): void {
  live.add(child);
  if (exitHook) return;
  exitHook = true;
  process.on('exit', () => {
    for (const c of live) c.kill('SIGKILL');
  });
}

/** What the driver prints: the ready line or a reply. */
interface Message {
  ready?: unknown;
  versions?: unknown;
  id?: unknown;
  error?: unknown;
  ops?: unknown;
  seconds?: unknown;
  latenciesUs?: unknown;
  cpuUs?: unknown;
  metrics?: unknown;
}

class Driver implements JavaDriver {
  versions: Readonly<Record<string, string>> = {};
  readonly #child: ChildProcessWithoutNullStreams;
  readonly #signal: AbortSignal | undefined;
  readonly #pending = new Map<number, { resolve: (s: Sample) => void; reject: (e: Error) => void; workload: string }>();
  #nextId = 1;
  #stderr = '';
  /** Why the driver was killed by us, for the exit error. */
  #fatal: string | undefined;
  #ready: { resolve: (v: Record<string, string>) => void; reject: (e: Error) => void } | undefined;
  #exitError: Error | undefined;
  readonly #exited: Promise<void>;
  readonly #onAbort = () => this.#kill(`aborted: ${String(this.#signal?.reason)}`);

  constructor(child: ChildProcessWithoutNullStreams, signal: AbortSignal | undefined) {
    this.#child = child;
    this.#signal = signal;
    track(child);
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (d: string) => (this.#stderr = (this.#stderr + d).slice(-STDERR_KEEP)));
    // Writing to a driver that has died: its exit rejects what is pending.
    child.stdin.on('error', () => undefined);
    createInterface({ input: child.stdout, crlfDelay: Infinity }).on('line', (line) => this.#line(line));
    this.#exited = new Promise((resolve) => {
      const exited = (why: string) => {
        if (this.#exitError) return;
        live.delete(child);
        signal?.removeEventListener('abort', this.#onAbort);
        this.#exitError = new Error(`the Java driver ${this.#fatal ?? why}${this.#stderrNote()}`);
        this.#ready?.reject(this.#exitError);
        for (const p of this.#pending.values()) p.reject(this.#exitError);
        this.#pending.clear();
        resolve();
      };
      child.once('error', (e) => exited(`could not run: ${e.message}`));
      child.once('close', (code, sig) => exited(`exited (${code ?? sig})`));
    });
    signal?.addEventListener('abort', this.#onAbort, { once: true });
  }

  /** Resolves once the driver says it is connected. */
  async ready(): Promise<this> {
    if (this.#signal?.aborted) this.#onAbort();
    this.versions = await new Promise<Record<string, string>>((resolve, reject) => {
      if (this.#exitError) reject(this.#exitError);
      else this.#ready = { resolve, reject };
    });
    return this;
  }

  run(command: JavaCommand): Promise<Sample> {
    if (this.#exitError) return Promise.reject(this.#exitError);
    if (!this.#child.stdin.writable) return Promise.reject(new Error('the Java driver is closing'));
    const id = this.#nextId++;
    return new Promise((resolve, reject) => {
      this.#pending.set(id, { resolve, reject, workload: command.workload });
      this.#child.stdin.write(`${JSON.stringify({ ...command, id })}\n`);
    });
  }

  async close(): Promise<void> {
    this.#child.stdin.end();
    const timer = setTimeout(() => this.#kill(`did not exit within ${CLOSE_GRACE_MS} ms of its stdin ending`), CLOSE_GRACE_MS);
    await this.#exited;
    clearTimeout(timer);
  }

  #kill(why: string): void {
    if (this.#exitError) return;
    this.#fatal ??= why;
    this.#child.kill('SIGKILL');
  }

  #stderrNote(): string {
    const tail = this.#stderr.trim();
    return tail ? `\n--- driver stderr (last ${STDERR_KEEP} bytes) ---\n${tail}` : '';
  }

  #line(line: string): void {
    let msg: Message | undefined;
    try {
      const parsed: unknown = JSON.parse(line);
      if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) msg = parsed as Message;
    } catch {
      // not JSON: a protocol error, below
    }
    if (msg?.ready === true && this.#ready) {
      const versions = isStrings(msg.versions) ? msg.versions : {};
      const ready = this.#ready;
      this.#ready = undefined;
      ready.resolve(versions);
      return;
    }
    const p = typeof msg?.id === 'number' ? this.#pending.get(msg.id) : undefined;
    if (!msg || !p) return this.#kill(`wrote an unexpected line to stdout: ${line.slice(0, 300)}`);
    this.#pending.delete(msg.id as number);
    if (typeof msg.error === 'string') return p.reject(new Error(`Java driver, ${p.workload}: ${msg.error}${this.#stderrNote()}`));
    const { ops, seconds, cpuUs, latenciesUs, metrics } = msg;
    if (typeof ops !== 'number' || typeof seconds !== 'number' || typeof cpuUs !== 'number' || !Array.isArray(latenciesUs) || !latenciesUs.every((l) => typeof l === 'number')) {
      p.reject(new Error(`Java driver, ${p.workload}: malformed reply ${line.slice(0, 300)}`));
      return;
    }
    // NaN figures (e.g. a median of nothing) come as null: left out.
    const figures = typeof metrics === 'object' && metrics !== null ? Object.entries(metrics).filter((e): e is [string, number] => typeof e[1] === 'number') : undefined;
    p.resolve({ ops, seconds, latenciesUs: latenciesUs as number[], cpuUs, ...(figures ? { metrics: Object.fromEntries(figures) } : {}) });
  }
}

function isStrings(v: unknown): v is Record<string, string> {
  return typeof v === 'object' && v !== null && Object.values(v).every((x) => typeof x === 'string');
}

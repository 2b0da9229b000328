/**
 * The Java peer: ZooKeeper's own Java client and Apache Curator, through bench/java/BenchDriver.java
 * compiled with javac against the Debian jars. One long-running JVM per server pass, so its JIT
 * warms up like the server's; commands and replies are JSON lines.
 */
import { spawn, spawnSync, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import type { Sample } from '../lib/stats.js';

const SOURCE = fileURLToPath(new URL('../../java/BenchDriver.java', import.meta.url));
const JARS = '/usr/share/java';
const CLASSPATH = ['zookeeper', 'zookeeper-jute', 'curator-client', 'curator-framework', 'curator-recipes', 'guava', 'slf4j-api', 'slf4j-nop'].map((j) => join(JARS, `${j}.jar`));

/** A command for the driver; see BenchDriver.java for what each workload measures. */
export type JavaCommand =
  | { workload: 'getData' | 'exists'; path: string; count: number; outstanding: number }
  | { workload: 'setData'; path: string; count: number; outstanding: number; size: number }
  | { workload: 'createDelete'; path: string; count: number }
  | { workload: 'connect'; count: number }
  | { workload: 'mutexUncontended' | 'writeLockUncontended'; path: string; count: number }
  | { workload: 'mutexContended'; path: string; sessions: number; seconds: number }
  | { workload: 'readWrite'; path: string; readers: number; writers: number; seconds: number };

/** A running driver connected to one ensemble. */
export interface JavaDriver {
  /** Versions of ZooKeeper's client, Curator and Java. */
  readonly versions: Readonly<Record<string, string>>;
  /** Runs one repetition of a workload in the driver. */
  run(command: JavaCommand): Promise<Sample>;
  /** Ends the driver (its stdin), killing it after 5 s. */
  close(): Promise<void>;
}

/**
 * Compiles the driver (once per source version, cached under the OS temp dir) and starts it
 * against `connect`; or says why the Java peers are skipped (no java/javac, no jars).
 */
export async function startJavaDriver(connect: string): Promise<JavaDriver | { skipped: string }> {
  const missing = CLASSPATH.filter((j) => !existsSync(j));
  if (missing.length) return { skipped: `missing ${missing.join(', ')} (apt-get install zookeeper libcurator-recipes-java)` };
  for (const tool of ['java', 'javac']) {
    if (spawnSync(tool, ['-version'], { stdio: 'ignore' }).status !== 0) return { skipped: `${tool} not found (apt-get install openjdk-17-jdk-headless)` };
  }
  const source = readFileSync(SOURCE);
  const classes = join(tmpdir(), `zk-bench-java-${createHash('sha256').update(source).digest('hex').slice(0, 16)}`);
  if (!existsSync(join(classes, 'BenchDriver.class'))) {
    mkdirSync(classes, { recursive: true });
    const r = spawnSync('javac', ['-nowarn', '-d', classes, '-cp', CLASSPATH.join(':'), SOURCE], { encoding: 'utf8' });
    if (r.status !== 0) return { skipped: `javac failed: ${r.stderr.slice(0, 500)}` };
  }
  const child = spawn('java', ['-cp', [...CLASSPATH, classes].join(':'), 'BenchDriver', connect], { stdio: ['pipe', 'pipe', 'pipe'] });
  return new Driver(child).ready();
}

class Driver implements JavaDriver {
  versions: Record<string, string> = {};
  readonly #child: ChildProcessWithoutNullStreams;
  readonly #pending = new Map<number, { resolve: (s: Sample) => void; reject: (e: Error) => void }>();
  #nextId = 1;
  #stderr = '';
  #onReady: ((v: Record<string, string>) => void) | undefined;
  #exited: Promise<void>;
  #exitError: Error | undefined;

  constructor(child: ChildProcessWithoutNullStreams) {
    this.#child = child;
    child.stderr.on('data', (d: Buffer) => (this.#stderr = (this.#stderr + d.toString()).slice(-4000)));
    createInterface({ input: child.stdout }).on('line', (line) => this.#line(line));
    this.#exited = new Promise((resolve) =>
      child.once('exit', (code, signal) => {
        this.#exitError = new Error(`the Java driver exited (${code ?? signal}): ${this.#stderr}`);
        for (const p of this.#pending.values()) p.reject(this.#exitError);
        this.#pending.clear();
        resolve();
      }),
    );
    // The driver must not outlive the bench.
    const kill = () => child.kill('SIGKILL');
    process.once('exit', kill);
    void this.#exited.then(() => process.off('exit', kill));
  }

  async ready(): Promise<this> {
    const ready = new Promise<Record<string, string>>((resolve) => (this.#onReady = resolve));
    const versions = await Promise.race([ready, this.#exited.then(() => Promise.reject(this.#exitError))]);
    this.versions = versions;
    return this;
  }

  #line(line: string): void {
    let msg: { ready?: boolean; versions?: Record<string, string>; id?: number; error?: string } & Partial<Sample>;
    try {
      msg = JSON.parse(line) as typeof msg;
    } catch {
      this.#stderr += `\nunexpected output: ${line}`;
      return;
    }
    if (msg.ready) return this.#onReady?.(msg.versions ?? {});
    const p = msg.id === undefined ? undefined : this.#pending.get(msg.id);
    if (!p) return;
    this.#pending.delete(msg.id!);
    if (msg.error !== undefined) p.reject(new Error(`Java driver: ${msg.error}`));
    else p.resolve({ ops: msg.ops!, seconds: msg.seconds!, latenciesUs: msg.latenciesUs ?? [], cpuUs: msg.cpuUs!, ...(msg.metrics ? { metrics: msg.metrics } : {}) });
  }

  run(command: JavaCommand): Promise<Sample> {
    if (this.#exitError) return Promise.reject(this.#exitError);
    const id = this.#nextId++;
    return new Promise((resolve, reject) => {
      this.#pending.set(id, { resolve, reject });
      this.#child.stdin.write(`${JSON.stringify({ id, ...command })}\n`);
    });
  }

  async close(): Promise<void> {
    this.#child.stdin.end();
    const timer = setTimeout(() => this.#child.kill('SIGKILL'), 5000);
    await this.#exited;
    clearTimeout(timer);
  }
}

/**
 * Java programs next to ours: Debian's Curator 5 jars and a javac helper, shared by the interop
 * suite (test/interop) and the fault suite (test/faults/java). The Curator is the one of the
 * ZooKeeper line under test (versions.ts): 5.4 (installed) with 3.8, 5.7.1 (fetched) with 3.9.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { versionManifest, zookeeperLine } from './versions.js';

/** Where Debian installs jars. */
export const JARS = '/usr/share/java';
/**
 * Curator's recipes (libcurator-recipes-java); its manifest Class-Path brings curator-client,
 * curator-framework, guava, slf4j-api, zookeeper and zookeeper-jute.
 */
export const CURATOR_JAR = `${JARS}/curator-recipes.jar`;
/** Keeps Curator's logging off stderr. */
export const SLF4J_NOP_JAR = `${JARS}/slf4j-nop.jar`;

/**
 * The JVM options of every Java process the tests start (Curator participants, servers): the
 * serial collector and the C1 JIT only. A test JVM lives seconds and waits on the network, so
 * C2's compiles and G1's threads were CPU the 2-core CI machine spent for nothing: a Curator
 * participant doing 300 increments took 1.5 s of CPU with the defaults and 1.1-1.3 s with these.
 */
export const TEST_JVM_OPTIONS: readonly string[] = ['-XX:+UseSerialGC', '-XX:TieredStopAtLevel=1'];

/** Why Curator programs cannot be compiled and run here (no javac, no Curator jar), or undefined. */
export function curatorMissing(): string | undefined {
  if (spawnSync('javac', ['-version'], { stdio: 'ignore' }).status !== 0) return 'javac is not installed';
  if (!existsSync(CURATOR_JAR)) return `${CURATOR_JAR} is missing (apt-get install libcurator-recipes-java)`;
  // Curator 5 speaks to ZooKeeper 3.5+ servers only (it needs create2 and containers).
  if (!versionManifest().curator) return `no Curator for ZooKeeper ${zookeeperLine()} (Curator 5 needs a 3.5+ server)`;
  return undefined;
}

/** The Curator version programs compile against (`5.4.0`, `5.7.1`). */
export function curatorVersion(): string {
  return versionManifest().curator?.version ?? 'none';
}

/** Classes compiled by {@link compileJava}. */
export interface CompiledJava {
  /** The directory holding the classes. */
  readonly classDir: string;
  /** `classDir` and the compile classpath, plus `runtime`: the `-cp` to run them with. */
  readonly classpath: string;
  /** Deletes the classes. */
  remove(): void;
}

/**
 * Compiles `sources` with javac against `classpath` into a fresh temporary directory. Throws
 * (with javac's output) when compilation fails. `runtime` jars are added to the run classpath only.
 */
export function compileJava(sources: string[], classpath: string[], runtime: string[] = []): CompiledJava {
  const classDir = mkdtempSync(join(tmpdir(), 'zk-java-classes-'));
  try {
    javac(classDir, sources, classpath);
  } catch (err) {
    rmSync(classDir, { recursive: true, force: true });
    throw err;
  }
  return {
    classDir,
    classpath: [classDir, ...classpath, ...runtime].join(':'),
    remove: () => rmSync(classDir, { recursive: true, force: true }),
  };
}

function javac(classDir: string, sources: readonly string[], classpath: readonly string[]): void {
  try {
    execFileSync('javac', ['-nowarn', '-d', classDir, '-cp', classpath.join(':'), ...sources], { stdio: 'pipe' });
  } catch (err) {
    const stderr = (err as { stderr?: Buffer }).stderr?.toString() ?? '';
    throw new Error(`javac failed for ${sources.join(' ')}: ${stderr || String(err)}`);
  }
}

/**
 * Like {@link compileJava}, but every `.java` file of the sources' directories is compiled once
 * for all the test files (and processes) that ask for any of them with the same classpath: the
 * classes are kept under the temporary directory, named by a hash of every source's content and
 * the classpath, and reused (a javac costs about 3 s of CPU; the interop files each asked for
 * one). Two processes compiling the same set at once both compile; the first rename wins. When
 * the whole directory does not compile, only `sources` are (into a directory of their own).
 */
export function compileJavaShared(sources: string[], classpath: string[], runtime: string[] = []): CompiledJava {
  const dirs = [...new Set(sources.map((s) => dirname(s)))];
  const all = [...new Set([...sources, ...dirs.flatMap((d) => readdirSync(d).filter((f) => f.endsWith('.java')).map((f) => join(d, f)))])].sort();
  const hash = createHash('sha256').update(classpath.join(':'));
  for (const file of all) hash.update(`\0${file}\0`).update(readFileSync(file));
  const classDir = join(tmpdir(), 'zk-java-classes-shared', hash.digest('hex').slice(0, 24));
  const shared: CompiledJava = { classDir, classpath: [classDir, ...classpath, ...runtime].join(':'), remove: () => {} };
  if (existsSync(classDir)) return shared;
  mkdirSync(dirname(classDir), { recursive: true });
  const building = mkdtempSync(`${classDir}.building-`);
  try {
    javac(building, all, classpath);
  } catch {
    rmSync(building, { recursive: true, force: true });
    return compileJava(sources, classpath, runtime);
  }
  try {
    renameSync(building, classDir);
  } catch (err) {
    // Another process renamed the same classes first.
    rmSync(building, { recursive: true, force: true });
    if (!existsSync(classDir)) throw err;
  }
  return shared;
}

/**
 * The line's curator-x-discovery jar and the Jackson jars it needs (libcurator-discovery-java,
 * listed by scripts/zookeeper-versions.mjs), or undefined when the line has none.
 */
function discoveryClasspath(): readonly string[] | undefined {
  return (versionManifest().curator as { discovery?: readonly string[] } | undefined)?.discovery;
}

/** Why Curator's service discovery cannot be compiled and run here, or undefined. */
export function curatorDiscoveryMissing(): string | undefined {
  const missing = curatorMissing();
  if (missing) return missing;
  if (!discoveryClasspath()) return `no curator-x-discovery for ZooKeeper ${zookeeperLine()} (apt-get install libcurator-discovery-java; for 3.9 scripts/zookeeper-versions.mjs fetches it)`;
  return undefined;
}

/** Compiles Curator programs: against the line's Curator jars (and its discovery jar when there is one), run with slf4j-nop too. */
export function compileCurator(sources: string[]): CompiledJava {
  const curator = versionManifest().curator;
  if (!curator) throw new Error(curatorMissing());
  return compileJavaShared(sources, [...curator.classpath, ...(discoveryClasspath() ?? [])], [SLF4J_NOP_JAR]);
}

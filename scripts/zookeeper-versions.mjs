#!/usr/bin/env node
// ZooKeeper server lines other than the installed one, for `ZK_VERSION=3.4|3.8|3.9`.
//
// 3.8 is the system's (Debian 12's `zookeeper` package, jars under /usr/share/java; see
// install-zookeeper.sh). 3.9 (with Curator 5.7.1) and 3.4 come from Debian's archive, suites
// trixie and bullseye: `apt-get download` with a private sources list and lists directory, then
// `dpkg -x` into a cache directory. Nothing is installed and the system's packages are never
// replaced. Plain JavaScript, Node built-ins only: bootstrap.mjs and the test harness both call it.
//
//   node scripts/zookeeper-versions.mjs manifest <line>   fetches when missing, prints the manifest (JSON)
//   node scripts/zookeeper-versions.mjs fetch <line>...   fetches when missing, prints nothing when cached
//
// The cache: $ZK_JARS_CACHE, or $XDG_CACHE_HOME/zk-js/zookeeper (~/.cache/zk-js/zookeeper), one
// directory per line holding the unpacked packages and manifest.json. Re-fetching needs only
// deleting the directory.
//
// Classpath traps, found by trying (see issue 22):
// - Debian's jars carry absolute `Class-Path` manifests into /usr/share/java. With 3.9.3's
//   zookeeper.jar first, the JVM loads 3.8's jute classes from /usr/share/java/zookeeper-jute.jar
//   and every handshake fails (NoSuchMethodError: ConnectRequest.setReadOnly): the line's own jute
//   jar goes first. The same for Curator 5.7.1, whose manifests name 5.4's jars.
// - Curator 5.7.1's client needs netty-handler (TLS classes) on the classpath.
// - 3.4.13's manifest names log4j relatively (it is not next to the cached jar) and the server
//   registers log4j's JMX beans at start: zookeeper.jmx.log4j.disable=true skips that.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const SYSTEM = '/usr/share/java';

/** The lines we fetch: Debian suite and binary packages. 3.8 is the installed one. */
export const LINES = {
  '3.9': { suite: 'trixie', packages: ['libzookeeper-java', 'libcurator-client-java', 'libcurator-framework-java', 'libcurator-recipes-java', 'libcurator-discovery-java'] },
  '3.4': { suite: 'bullseye', packages: ['libzookeeper-java'] },
};

/** The default line: the installed package's. */
export const DEFAULT_LINE = '3.8';

export function cacheRoot() {
  if (process.env.ZK_JARS_CACHE) return process.env.ZK_JARS_CACHE;
  return join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'zk-js', 'zookeeper');
}

/** `3.9.3` out of `zookeeper-3.9.3.jar`-style names in `dir`. */
function versionOf(dir, prefix) {
  const name = readdirSync(dir).find((f) => f.startsWith(`${prefix}-`) && /^\d/.test(f.slice(prefix.length + 1)) && f.endsWith('.jar'));
  return name ? { name, version: name.slice(prefix.length + 1, -'.jar'.length) } : undefined;
}

/** The manifest of the installed (system) line, or undefined when the package is missing. */
function systemManifest() {
  if (!existsSync(join(SYSTEM, 'zookeeper.jar'))) return undefined;
  const zk = versionOf(SYSTEM, 'zookeeper');
  const curator = existsSync(join(SYSTEM, 'curator-recipes.jar')) ? versionOf(SYSTEM, 'curator-recipes') : undefined;
  const discovery = existsSync(join(SYSTEM, 'curator-x-discovery.jar')) ? join(SYSTEM, 'curator-x-discovery.jar') : undefined;
  return {
    line: DEFAULT_LINE,
    version: zk?.version ?? DEFAULT_LINE,
    server: [join(SYSTEM, 'zookeeper.jar'), ...serverExtras()],
    client: [join(SYSTEM, 'zookeeper.jar'), join(SYSTEM, 'zookeeper-jute.jar')],
    curator: curator ? { version: curator.version, classpath: [join(SYSTEM, 'curator-recipes.jar')], discovery: discoveryClasspath(discovery) } : undefined,
    systemProperties: {},
  };
}

/**
 * What a server needs beside the ZooKeeper jar: Debian's zookeeper.jar names most dependencies in
 * its manifest, but not netty-codec and netty-resolver (the Netty connection factory, TLS);
 * slf4j-simple gives the server a logger that writes to a file the harness chooses.
 */
function serverExtras() {
  return ['slf4j-simple', 'netty-codec', 'netty-resolver', 'netty-transport-native-unix-common'].map((j) => join(SYSTEM, `${j}.jar`)).filter(existsSync);
}

/**
 * curator-x-discovery (libcurator-discovery-java) and the Jackson jars it serializes instances
 * with (Debian's, named here rather than through the jar's manifest), or undefined without it.
 */
function discoveryClasspath(jar) {
  if (!jar) return undefined;
  const jackson = ['jackson-databind', 'jackson-core', 'jackson-annotations'].map((j) => join(SYSTEM, `${j}.jar`));
  return jackson.every(existsSync) ? [jar, ...jackson] : undefined;
}

function manifestFor(line, dir) {
  const jars = join(dir, 'usr', 'share', 'java');
  const zk = versionOf(jars, 'zookeeper');
  if (!zk) throw new Error(`no zookeeper-<version>.jar in ${jars}`);
  const jute = versionOf(jars, 'zookeeper-jute');
  const own = [...(jute ? [join(jars, jute.name)] : []), join(jars, zk.name)];
  if (line === '3.4') {
    const slf4j = ['slf4j-api', 'slf4j-simple'].map((j) => join(SYSTEM, `${j}.jar`));
    return { line, version: zk.version, server: [...own, ...slf4j], client: [...own, join(SYSTEM, 'slf4j-api.jar')], curator: undefined, systemProperties: { 'zookeeper.jmx.log4j.disable': 'true' } };
  }
  const curator = versionOf(jars, 'curator-recipes');
  // Client, framework, recipes in that order, after the line's ZooKeeper jars: each jar's manifest
  // names the system's (5.4, 3.8) jars, which the JVM searches right after the jar naming them.
  const curatorJars = curator ? ['curator-client', 'curator-framework', 'curator-recipes'].map((p) => join(jars, versionOf(jars, p).name)) : [];
  return {
    line,
    version: zk.version,
    server: [...own, ...serverExtras()],
    client: [...own, join(SYSTEM, 'netty-handler.jar')],
    curator: curator
      ? { version: curator.version, classpath: [...own, ...curatorJars, join(SYSTEM, 'netty-handler.jar')], discovery: discoveryClasspath(versionOf(jars, 'curator-x-discovery') && join(jars, versionOf(jars, 'curator-x-discovery').name)) }
      : undefined,
    systemProperties: {},
  };
}

function apt(args, state) {
  const options = [
    ['Dir::Etc::sourcelist', join(state, 'sources.list')],
    ['Dir::Etc::sourceparts', '-'],
    ['Dir::State::Lists', join(state, 'lists')],
    ['Dir::Cache', state],
    ['Debug::NoLocking', '1'],
    // As root, apt hands downloads to its _apt user, which cannot write the cache directory.
    ...(process.getuid?.() === 0 ? [['APT::Sandbox::User', 'root']] : []),
  ].flatMap(([k, v]) => ['-o', `${k}=${v}`]);
  return spawnSync('apt-get', [...options, ...args], { cwd: join(state, 'debs'), encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

/**
 * The manifest layout: 2 since the Curator classpath puts the line's jars before those whose
 * manifests name the system's (before, Curator 5.7.1's recipes ran on 5.4's framework and client
 * and 3.8's ZooKeeper client classes).
 */
const LAYOUT = 2;

/** True when a cached line was made by an older layout, or lacks a package the line now lists: it is fetched again. */
function stale(spec, dir) {
  const manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8'));
  const have = manifest.packages ?? [];
  return manifest.layout !== LAYOUT || spec.packages.some((p) => !have.some((deb) => deb.startsWith(`${p}_`)));
}

/** Downloads and unpacks a line's packages into its cache directory (atomically: a temp dir renamed). */
function fetchLine(line) {
  const spec = LINES[line];
  const dir = join(cacheRoot(), line);
  if (existsSync(join(dir, 'manifest.json')) && !stale(spec, dir)) return dir;
  if (spawnSync('apt-get', ['--version'], { stdio: 'ignore' }).status !== 0 || spawnSync('dpkg', ['--version'], { stdio: 'ignore' }).status !== 0) {
    throw new Error(`ZooKeeper ${line} comes from Debian's archive (suite ${spec.suite}) through apt-get and dpkg, which this machine does not have; set ZOOKEEPER_HOME to an unpacked Apache ZooKeeper ${line} release instead`);
  }
  const temp = `${dir}.partial-${process.pid}`;
  rmSync(temp, { recursive: true, force: true });
  const state = join(temp, 'apt');
  for (const d of ['lists/partial', 'archives/partial', 'debs']) mkdirSync(join(state, d), { recursive: true });
  writeFileSync(join(state, 'sources.list'), `deb http://deb.debian.org/debian ${spec.suite} main\n`);
  const started = performance.now();
  process.stderr.write(`[zookeeper-versions] fetching ZooKeeper ${line} (${spec.packages.join(', ')}) from Debian ${spec.suite} into ${dir}\n`);
  try {
    const update = apt(['update', '-qq'], state);
    if (update.status !== 0) throw new Error(`apt-get update for Debian ${spec.suite} failed (is deb.debian.org reachable?): ${(update.stderr || update.stdout).trim().slice(0, 1500)}`);
    const download = apt(['download', '-qq', ...spec.packages.map((p) => `${p}/${spec.suite}`)], state);
    if (download.status !== 0) throw new Error(`apt-get download ${spec.packages.join(' ')} (${spec.suite}) failed: ${(download.stderr || download.stdout).trim().slice(0, 1500)}`);
    const debs = readdirSync(join(state, 'debs')).filter((f) => f.endsWith('.deb'));
    for (const deb of debs) {
      const x = spawnSync('dpkg', ['-x', join(state, 'debs', deb), temp], { encoding: 'utf8' });
      if (x.status !== 0) throw new Error(`dpkg -x ${deb} failed: ${x.stderr}`);
    }
    const manifest = { ...manifestFor(line, temp), packages: debs, layout: LAYOUT };
    rmSync(state, { recursive: true, force: true });
    // Paths in the manifest point into the final directory.
    writeFileSync(join(temp, 'manifest.json'), JSON.stringify(manifest, null, 2).replaceAll(temp, dir) + '\n');
    rmSync(dir, { recursive: true, force: true });
    renameSync(temp, dir);
  } catch (err) {
    rmSync(temp, { recursive: true, force: true });
    throw err;
  }
  process.stderr.write(`[zookeeper-versions] ZooKeeper ${line} ready (${((performance.now() - started) / 1000).toFixed(1)} s)\n`);
  return dir;
}

/** The manifest of a line (`3.4`, `3.8`, `3.9`, or a full version such as `3.9.3`), fetching it when missing. */
export function manifest(requested) {
  const line = lineOf(requested);
  if (line === DEFAULT_LINE) {
    const m = systemManifest();
    if (!m) throw new Error(`ZooKeeper ${DEFAULT_LINE} is not installed (${SYSTEM}/zookeeper.jar): bash scripts/install-zookeeper.sh`);
    return m;
  }
  return JSON.parse(readFileSync(join(fetchLine(line), 'manifest.json'), 'utf8'));
}

/** `3.9.3` -> `3.9`; throws for a line we do not serve. */
export function lineOf(requested) {
  const line = String(requested ?? DEFAULT_LINE).split('.').slice(0, 2).join('.');
  if (line !== DEFAULT_LINE && !(line in LINES)) throw new Error(`ZK_VERSION=${requested}: the harness serves ${[DEFAULT_LINE, ...Object.keys(LINES)].join(', ')}`);
  return line;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const [command, ...lines] = process.argv.slice(2);
  try {
    if (command === 'manifest' && lines.length === 1) process.stdout.write(JSON.stringify(manifest(lines[0])) + '\n');
    else if (command === 'fetch' && lines.length > 0) for (const l of lines) manifest(l);
    else throw new Error('usage: zookeeper-versions.mjs manifest <line> | fetch <line>...');
  } catch (err) {
    process.stderr.write(`[zookeeper-versions] ${err.message}\n`);
    process.exit(1);
  }
}

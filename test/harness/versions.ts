/**
 * Which ZooKeeper line the harness runs: `ZK_VERSION=3.4|3.8|3.9` (default 3.8, the installed
 * Debian package). The jars of the other lines, and Curator 5.7.1 for 3.9, are fetched on first
 * use by scripts/zookeeper-versions.mjs (Debian's archive, unpacked into a cache directory); this
 * module asks that script for a line's manifest: the server's classpath, a Java client's, Curator's.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** What scripts/zookeeper-versions.mjs says about a line. */
export interface VersionManifest {
  /** `3.4`, `3.8` or `3.9`. */
  readonly line: string;
  /** The full version, `3.9.3`. */
  readonly version: string;
  /** The server's classpath (the line's own jute jar first). */
  readonly server: readonly string[];
  /** A Java client's classpath (ZooKeeper's client classes of that line). */
  readonly client: readonly string[];
  /** Curator for that line, when there is one (5.4 with 3.8, 5.7.1 with 3.9; none for 3.4). */
  readonly curator?: { readonly version: string; readonly classpath: readonly string[] } | undefined;
  /** JVM properties the server needs. */
  readonly systemProperties: Readonly<Record<string, string>>;
}

/** The installed line, used when ZK_VERSION is not set. */
export const DEFAULT_LINE = '3.8';

/** The line ZK_VERSION asks for (`3.9.3` counts as `3.9`). */
export function zookeeperLine(): string {
  const v = process.env.ZK_VERSION?.trim();
  return v ? v.split('.').slice(0, 2).join('.') : DEFAULT_LINE;
}

/** True when the harness runs a 3.4 server (no create2, containers, TTL, addWatch, reconfig, ...). */
export function isZooKeeper34(): boolean {
  return zookeeperLine() === '3.4';
}

function findScript(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const candidate = join(dir, 'scripts', 'zookeeper-versions.mjs');
    if (existsSync(candidate)) return candidate;
    const up = dirname(dir);
    if (up === dir) throw new Error('scripts/zookeeper-versions.mjs not found above the harness');
    dir = up;
  }
}

const manifests = new Map<string, VersionManifest>();

/**
 * The manifest of `line` (default: ZK_VERSION's), fetching its jars on first use (a few seconds;
 * the script says so on stderr). Throws with the script's message when they cannot be had.
 */
export function versionManifest(line = zookeeperLine()): VersionManifest {
  let m = manifests.get(line);
  if (!m) {
    try {
      const out = execFileSync(process.execPath, [findScript(), 'manifest', line], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
      m = JSON.parse(out) as VersionManifest;
    } catch (err) {
      const stderr = (err as { stderr?: string }).stderr?.trim();
      throw new Error(stderr || String(err));
    }
    manifests.set(line, m);
  }
  return m;
}

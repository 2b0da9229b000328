/**
 * A private PostgreSQL server for the tests that need one (the fencing helpers): the Debian
 * `postgresql` package's binaries, a fresh cluster (initdb) under test/.work/, listening on
 * 127.0.0.1 at a free port and on a socket in its own directory only. Never the system cluster.
 * Postgres refuses to run as root: as root, the cluster belongs to the `postgres` user and the
 * server runs as it. Installed when missing in CI (CI=true, root); elsewhere the error says how.
 */
import { spawn, spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { installInCi } from './apt.js';
import { watchOrphan } from './orphan-watchdog.js';
import { freePorts } from './ports.js';
import { timing, waitFor } from './timing.js';
import { superviseChild } from './child-server.js';

/** A running private server. */
export interface PostgresServer {
  /** `postgres://postgres@127.0.0.1:<port>/postgres` (trust authentication, loopback only). */
  readonly url: string;
  readonly host: string;
  readonly port: number;
  /** The server's major version (`15`). */
  readonly version: string;
  /** Stops the server (fast shutdown) and removes its cluster. */
  stop(): Promise<void>;
}

export const POSTGRES_HINT = 'No PostgreSQL found under /usr/lib/postgresql. Install it with `sudo apt-get install -y postgresql` (the harness starts its own server; the system one can stay stopped).';

const WORK = fileURLToPath(new URL('../.work/', import.meta.url));

/** The newest installed major version's bin directory, if any. */
function binDir(): { dir: string; version: string } | undefined {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root).filter((v) => existsSync(join(root, v, 'bin', 'postgres'))).sort((a, b) => Number(b) - Number(a));
  return versions[0] === undefined ? undefined : { dir: join(root, versions[0], 'bin'), version: versions[0] };
}

/** The uid and gid to run as: the `postgres` user when we are root, else ourselves. */
function identity(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const uid = Number(spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).stdout.trim());
  const gid = Number(spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).stdout.trim());
  if (!Number.isInteger(uid) || !Number.isInteger(gid) || uid === 0) throw new Error('running as root, and there is no `postgres` user to run PostgreSQL as (it refuses root)');
  return { uid, gid };
}


/** Starts a private server; throws {@link POSTGRES_HINT} when PostgreSQL is not installed (and cannot be, outside CI). */
export async function startPostgres(): Promise<PostgresServer> {
  let bin = binDir();
  if (!bin && installInCi(['postgresql'], 'postgresql')) bin = binDir();
  if (!bin) throw new Error(POSTGRES_HINT);
  const who = identity();
  mkdirSync(WORK, { recursive: true });
  const dir = join(WORK, `postgres-${process.pid}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 6)}`);
  mkdirSync(dir);
  if (who) chownSync(dir, who.uid, who.gid);
  const data = join(dir, 'data');
  const as = who ? { uid: who.uid, gid: who.gid } : {};
  const init = spawnSync(join(bin.dir, 'initdb'), ['-D', data, '-U', 'postgres', '-A', 'trust', '-E', 'UTF8', '--locale=C', '--no-sync'], { ...as, encoding: 'utf8', cwd: dir });
  if (init.status !== 0) {
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`initdb failed (${init.status}): ${init.stderr}`);
  }
  const [port] = (await freePorts(1)) as [number];
  // Durability is not under test: no fsync, a small footprint (the machine is shared).
  const args = ['-D', data, '-k', dir, '-h', '127.0.0.1', '-p', String(port), '-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off', '-c', 'max_connections=100', '-c', 'shared_buffers=16MB'];
  const child = spawn(join(bin.dir, 'postgres'), args, { ...as, cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
  watchOrphan(child.pid, dir);
  const { output, stop } = superviseChild(child, dir, { signal: 'SIGINT', graceMs: 10_000 }); // SIGINT: a fast shutdown
  try {
    await waitFor(
      'PostgreSQL to accept connections',
      () => {
        if (child.exitCode !== null) throw new Error(`postgres exited with ${child.exitCode}: ${output()}`);
        return spawnSync(join(bin.dir, 'pg_isready'), ['-h', '127.0.0.1', '-p', String(port), '-q'], { stdio: 'ignore' }).status === 0 ? true : undefined;
      },
      timing(30_000),
      100,
    );
  } catch (err) {
    await stop();
    throw new Error(`${(err as Error).message}\n${output()}`);
  }
  return { url: `postgres://postgres@127.0.0.1:${port}/postgres`, host: '127.0.0.1', port, version: bin.version, stop };
}

/**
 * A private Redis server for the tests that need one (the fencing helpers): the Debian
 * `redis-server` binary on 127.0.0.1 at a free port, nothing persisted, its directory under
 * test/.work/. Never the system service. Installed when missing in CI (CI=true, root); elsewhere
 * the error says how.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { installInCi } from './apt.js';
import { watchOrphan } from './orphan-watchdog.js';
import { freePorts } from './ports.js';
import { timing, waitFor } from './timing.js';

/** A running private server. */
export interface RedisServer {
  /** `redis://127.0.0.1:<port>`. */
  readonly url: string;
  readonly host: string;
  readonly port: number;
  /** Stops the server and removes its directory. */
  stop(): Promise<void>;
}

export const REDIS_HINT = 'No redis-server found. Install it with `sudo apt-get install -y redis-server` (the harness starts its own server; the system one can stay stopped).';

const WORK = fileURLToPath(new URL('../.work/', import.meta.url));
const running = new Set<ChildProcess>();
let hooked = false;

function installed(): boolean {
  return spawnSync('redis-server', ['--version'], { stdio: 'ignore' }).status === 0;
}

/** Answers PING with PONG over a raw connection. */
function pong(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(1000, () => done(false));
    socket.once('error', () => done(false));
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.once('data', (d) => done(d.toString().startsWith('+PONG')));
  });
}

/** Starts a private server; throws {@link REDIS_HINT} when Redis is not installed (and cannot be, outside CI). */
export async function startRedis(extraArgs: readonly string[] = []): Promise<RedisServer> {
  if (!installed() && !(installInCi(['redis-server'], 'redis-server') && installed())) throw new Error(REDIS_HINT);
  mkdirSync(WORK, { recursive: true });
  const dir = join(WORK, `redis-${process.pid}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 6)}`);
  mkdirSync(dir);
  const [port] = (await freePorts(1)) as [number];
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir, '--daemonize', 'no', ...extraArgs];
  const child = spawn('redis-server', args, { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
  running.add(child);
  watchOrphan(child.pid, dir);
  if (!hooked) {
    hooked = true;
    process.once('exit', () => {
      for (const c of running) c.kill('SIGKILL');
    });
  }
  let log = '';
  const keep = (d: Buffer) => (log = (log + d.toString()).slice(-8000));
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async (): Promise<void> => {
    if (running.delete(child)) {
      child.kill('SIGTERM');
      await Promise.race([exited, new Promise((r) => setTimeout(r, 5_000))]);
      child.kill('SIGKILL');
    }
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await waitFor(
      'redis-server to answer PING',
      async () => {
        if (child.exitCode !== null) throw new Error(`redis-server exited with ${child.exitCode}: ${log}`);
        return (await pong(port)) ? true : undefined;
      },
      timing(20_000),
      50,
    );
  } catch (err) {
    await stop();
    throw new Error(`${(err as Error).message}\n${log}`);
  }
  return { url: `redis://127.0.0.1:${port}`, host: '127.0.0.1', port, stop };
}

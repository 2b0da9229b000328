/**
 * A private Redis server for the tests that need one (the fencing helpers): the Debian
 * `redis-server` binary on 127.0.0.1 at a free port, nothing persisted, its directory under
 * test/.work/. Never the system service. Installed when missing in CI (CI=true, root); elsewhere
 * the error says how.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { installInCi } from './apt.js';
import { watchOrphan } from './orphan-watchdog.js';
import { freePorts } from './ports.js';
import { timing, waitFor } from './timing.js';
import { superviseChild } from './child-server.js';

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
  watchOrphan(child.pid, dir);
  const { output, stop } = superviseChild(child, dir);
  try {
    await waitFor(
      'redis-server to answer PING',
      async () => {
        if (child.exitCode !== null) throw new Error(`redis-server exited with ${child.exitCode}: ${output()}`);
        return (await pong(port)) ? true : undefined;
      },
      timing(20_000),
      50,
    );
  } catch (err) {
    await stop();
    throw new Error(`${(err as Error).message}\n${output()}`);
  }
  return { url: `redis://127.0.0.1:${port}`, host: '127.0.0.1', port, stop };
}

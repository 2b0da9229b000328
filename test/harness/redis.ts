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

/**
 * Sends one command over a raw connection (RESP) and resolves with its reply: a simple string,
 * an integer or a bulk string as text, null for a null bulk; rejects with an error reply's text.
 * Enough for the harness's PING and CLUSTER commands (no arrays).
 */
function command(port: number, args: readonly string[], timeoutMs = 2000): Promise<string | null> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port });
    let buf = Buffer.alloc(0);
    const done = (err: Error | undefined, reply?: string | null) => {
      socket.destroy();
      if (err) reject(err);
      else resolve(reply ?? null);
    };
    socket.setTimeout(timeoutMs, () => done(new Error(`no reply to ${args[0]} within ${timeoutMs} ms on port ${port}`)));
    socket.once('error', (err) => done(err));
    socket.once('connect', () => socket.write(`*${args.length}\r\n${args.map((a) => `$${Buffer.byteLength(a)}\r\n${a}\r\n`).join('')}`));
    socket.on('data', (d: Buffer) => {
      buf = Buffer.concat([buf, d]);
      const eol = buf.indexOf('\r\n');
      if (eol < 0) return;
      const head = buf.toString('utf8', 1, eol);
      switch (String.fromCharCode(buf[0]!)) {
        case '+':
        case ':':
          return done(undefined, head);
        case '-':
          return done(new Error(head));
        case '$': {
          const n = Number(head);
          if (n < 0) return done(undefined, null);
          if (buf.length >= eol + 2 + n + 2) done(undefined, buf.toString('utf8', eol + 2, eol + 2 + n));
          return;
        }
        default:
          return done(new Error(`unexpected reply to ${args[0]}: ${buf.toString().slice(0, 200)}`));
      }
    });
  });
}

/** Answers PING with PONG over a raw connection. */
async function pong(port: number): Promise<boolean> {
  return (await command(port, ['PING'], 1000).catch(() => null)) === 'PONG';
}

function ensureInstalled(): void {
  if (!installed() && !(installInCi(['redis-server'], 'redis-server') && installed())) throw new Error(REDIS_HINT);
}

/** A started server and its output tail (for error messages). */
interface Launched extends RedisServer {
  output(): string;
}

/** Starts redis-server on `port` with `extraArgs`, its own directory under test/.work/, and waits for PING. */
async function launch(port: number, extraArgs: readonly string[]): Promise<Launched> {
  mkdirSync(WORK, { recursive: true });
  const dir = join(WORK, `redis-${process.pid}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 6)}`);
  mkdirSync(dir);
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
  return { url: `redis://127.0.0.1:${port}`, host: '127.0.0.1', port, stop, output };
}

/** Starts a private server; throws {@link REDIS_HINT} when Redis is not installed (and cannot be, outside CI). */
export async function startRedis(extraArgs: readonly string[] = []): Promise<RedisServer> {
  ensureInstalled();
  const [port] = (await freePorts(1)) as [number];
  const { url, host, stop } = await launch(port, extraArgs);
  return { url, host, port, stop };
}

/** A master of a {@link RedisCluster}. */
export interface RedisClusterNode extends RedisServer {
  /** Its node id (CLUSTER MYID). */
  readonly id: string;
  /** The slots it serves, first and last included. */
  readonly slots: readonly [number, number];
}

/** A running private Redis Cluster of masters only. */
export interface RedisCluster {
  /** The masters, in slot order: together they serve slots 0 to 16383. */
  readonly nodes: readonly RedisClusterNode[];
  /** The master that serves `slot`. */
  nodeOf(slot: number): RedisClusterNode;
  /** Stops every node and removes their directories. */
  stop(): Promise<void>;
}

/**
 * Starts a Redis Cluster of `masters` private servers on loopback (no replicas), formed by hand as
 * `redis-cli --cluster create` would form it: each node gets a config epoch and an equal share of
 * the 16384 slots (ADDSLOTSRANGE, Redis 7), the first one MEETs the others, and it is ready when
 * every node reports cluster_state:ok and sees `masters` masters serving slots. The bus ports are
 * chosen free too (`--cluster-port`), not port + 10000; the nodes announce 127.0.0.1, so the
 * clients' CLUSTER SLOTS names them by a reachable address.
 */
export async function startRedisCluster(masters = 3): Promise<RedisCluster> {
  if (!Number.isSafeInteger(masters) || masters < 1) throw new RangeError(`masters must be a positive integer, not ${masters}`);
  ensureInstalled();
  const ports = await freePorts(2 * masters);
  const bus = (i: number) => ports[masters + i]!;
  const launched = await Promise.allSettled(
    Array.from({ length: masters }, (_, i) =>
      launch(ports[i]!, ['--cluster-enabled', 'yes', '--cluster-config-file', 'nodes.conf', '--cluster-port', String(bus(i)), '--cluster-announce-ip', '127.0.0.1']),
    ),
  );
  const servers = launched.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
  const stopAll = async () => {
    await Promise.all(servers.map((s) => s.stop()));
  };
  const failed = launched.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) {
    await stopAll();
    throw failed.reason;
  }
  const slots = servers.map((_, i) => [Math.floor((16384 * i) / masters), Math.floor((16384 * (i + 1)) / masters) - 1] as const);
  try {
    const ids = await Promise.all(servers.map((s) => command(s.port, ['CLUSTER', 'MYID'])));
    await Promise.all(servers.map((s, i) => command(s.port, ['CLUSTER', 'SET-CONFIG-EPOCH', String(i + 1)])));
    await Promise.all(servers.map((s, i) => command(s.port, ['CLUSTER', 'ADDSLOTSRANGE', String(slots[i]![0]), String(slots[i]![1])])));
    for (let i = 1; i < masters; i++) await command(servers[0]!.port, ['CLUSTER', 'MEET', '127.0.0.1', String(servers[i]!.port), String(bus(i))]);
    await waitFor(
      `cluster_state:ok and ${masters} masters on every node`,
      async () => {
        for (const s of servers) {
          const info = (await command(s.port, ['CLUSTER', 'INFO'])) ?? '';
          if (!info.includes('cluster_state:ok') || !info.includes(`cluster_size:${masters}\r\n`) || !info.includes(`cluster_known_nodes:${masters}\r\n`)) return undefined;
        }
        return true;
      },
      timing(30_000),
      50,
    );
    const nodes = servers.map((s, i): RedisClusterNode => ({ url: s.url, host: s.host, port: s.port, stop: s.stop, id: ids[i] ?? '', slots: slots[i]! }));
    return {
      nodes,
      nodeOf: (slot) => {
        const node = nodes.find((n) => n.slots[0] <= slot && slot <= n.slots[1]);
        if (!node) throw new RangeError(`no node serves slot ${slot}`);
        return node;
      },
      stop: stopAll,
    };
  } catch (err) {
    const outputs = servers.map((s) => `--- redis-server on ${s.port}:\n${s.output()}`).join('\n');
    await stopAll();
    throw new Error(`${(err as Error).message}\n${outputs}`);
  }
}

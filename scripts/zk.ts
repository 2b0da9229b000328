/**
 * `npm run zk -- start [--servers 1|3|5] [--port 2181] [--dir .zk]`: a local ZooKeeper
 * standalone server or ensemble that outlives the command; `status` and `stop` manage it. The
 * servers belong to a detached `serve` process, which stops them (and removes their data) when
 * told to. They listen on 127.0.0.1:2181 (2181-2183 for three servers), the port zk-lock and the
 * examples default to, when free; otherwise on ports the OS chooses.
 *
 * `npm run zk -- check [--probe /path] [--acl spec]`: connects to `ZK_CONNECT` (an existing,
 * possibly secured ensemble; else the local one) with zk-lock's TLS and credential variables,
 * and says what the session is: server, session, identities (whoAmI, 3.7+), and with `--probe`,
 * whether it can create a node under that path with that ACL (created, read back, deleted).
 */
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { existsSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CREATOR_ALL_ACL, CreateMode, ZooKeeper } from '@zk/protocol';
import { startZooKeeper } from '@zk/test/harness';
import { optionValue, parseAcl, securityFromEnv } from './credentials.js';

interface State {
  /** The detached `serve` process that owns the servers. */
  pid: number;
  servers: number;
  connectString: string;
  startedAt: string;
  startMs: number;
  /** Each server: id, client port, Java process id. */
  members: Array<{ id: number; port: number; pid: number | undefined }>;
}

const args = process.argv.slice(2);
const command = args[0] ?? 'help';
const option = (name: string, fallback: string): string => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 && args[i + 1] ? (args[i + 1] as string) : fallback;
};
const dir = resolve(option('dir', '.zk'));
const stateFile = join(dir, 'state.json');

function readState(): State | undefined {
  if (!existsSync(stateFile)) return undefined;
  const state = JSON.parse(readFileSync(stateFile, 'utf8')) as State;
  try {
    process.kill(state.pid, 0);
    return state;
  } catch {
    rmSync(stateFile, { force: true });
    return undefined;
  }
}

async function start(): Promise<number> {
  const running = readState();
  if (running) {
    process.stdout.write(`${running.connectString}\n`);
    process.stderr.write(`already running (${running.servers} server(s), pid ${running.pid}); \`npm run zk -- stop\` stops it\n`);
    return 0;
  }
  const servers = Number(option('servers', '1'));
  if (![1, 3, 5].includes(servers)) {
    process.stderr.write('--servers must be 1, 3 or 5\n');
    return 2;
  }
  const port = Number(option('port', '2181'));
  if (!Number.isInteger(port) || port < 1 || port + servers - 1 > 65535) {
    process.stderr.write('--port must be a TCP port (the first of --servers consecutive ones)\n');
    return 2;
  }
  mkdirSync(dir, { recursive: true });
  const log = openSync(join(dir, 'serve.log'), 'a');
  const child = spawn(process.execPath, [fileURLToPath(import.meta.url), 'serve', '--servers', String(servers), '--port', String(port), '--dir', dir], { detached: true, stdio: ['ignore', log, log] });
  child.unref();
  const deadline = Date.now() + 120_000;
  while (Date.now() < deadline) {
    const state = readState();
    if (state) {
      process.stdout.write(`${state.connectString}\n`);
      const taken = state.members[0]?.port !== port ? ` (port ${port} was taken)` : '';
      process.stderr.write(`started ${servers} server(s)${taken}; export ZK_CONNECT=${state.connectString}\n`);
      return 0;
    }
    if (child.exitCode !== null) break;
    await new Promise((r) => setTimeout(r, 200));
  }
  process.stderr.write(`could not start ZooKeeper; see ${join(dir, 'serve.log')}\n`);
  return 1;
}

/** `count` ports from `first` when every one is free on 127.0.0.1, else undefined. */
async function portsFrom(first: number, count: number): Promise<number[] | undefined> {
  const ports = Array.from({ length: count }, (_, i) => first + i);
  for (const port of ports) {
    const free = await new Promise<boolean>((resolve) => {
      const server = createServer();
      server.once('error', () => resolve(false));
      server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
    });
    if (!free) return undefined;
  }
  return ports;
}

async function serve(): Promise<void> {
  const servers = Number(option('servers', '1')) as 1 | 3 | 5;
  const first = Number(option('port', '2181'));
  const clientPorts = await portsFrom(first, servers);
  if (!clientPorts) process.stderr.write(`127.0.0.1:${first}${servers > 1 ? `-${first + servers - 1}` : ''} is taken; using ports the OS chooses\n`);
  const ensemble = await startZooKeeper({ servers, own: true, ...(clientPorts ? { clientPorts } : {}) });
  const state: State = {
    pid: process.pid,
    servers,
    connectString: ensemble.connectString,
    startedAt: new Date().toISOString(),
    startMs: Math.round(ensemble.startMs),
    members: ensemble.servers.map((s) => ({ id: s.id, port: s.port, pid: s.pid })),
  };
  // Written whole then renamed: `start` polls for this file and must never read half of it.
  writeFileSync(`${stateFile}.tmp`, JSON.stringify(state, null, 2));
  renameSync(`${stateFile}.tmp`, stateFile);
  const stop = async () => {
    await ensemble.close();
    rmSync(stateFile, { force: true });
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop());
  process.on('SIGINT', () => void stop());
}

async function stop(): Promise<number> {
  const state = readState();
  if (!state) {
    process.stderr.write('not running\n');
    return 0;
  }
  process.kill(state.pid, 'SIGTERM');
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline && readState()) await new Promise((r) => setTimeout(r, 100));
  if (readState()) {
    process.stderr.write(`still running after 30 s (pid ${state.pid})\n`);
    return 1;
  }
  process.stderr.write('stopped\n');
  return 0;
}

function status(): number {
  const state = readState();
  if (!state) {
    process.stdout.write('not running\n');
    return 1;
  }
  process.stdout.write(`${state.servers} server(s) at ${state.connectString} (pid ${state.pid}, since ${state.startedAt})\n`);
  for (const m of state.members ?? []) process.stdout.write(`  server ${m.id}: port ${m.port}, java pid ${m.pid ?? '?'}\n`);
  return 0;
}

/** Connects as the tools would and reports what the session can see and do. */
async function check(): Promise<number> {
  const connect = process.env.ZK_CONNECT || readState()?.connectString;
  if (!connect) {
    process.stderr.write('nothing to check: set ZK_CONNECT to an ensemble, or `npm run zk -- start` one\n');
    return 2;
  }
  const probe = optionValue(args, 'probe');
  const aclSpec = optionValue(args, 'acl');
  let security: ReturnType<typeof securityFromEnv>;
  let acl: ReturnType<typeof parseAcl> | undefined;
  try {
    security = securityFromEnv();
    acl = aclSpec === undefined ? undefined : parseAcl(aclSpec);
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n`);
    return 2;
  }
  process.stdout.write(`connecting to ${connect}: ${security.summary}\n`);
  try {
    await using zk = await ZooKeeper.connect(connect, { ...security.options, connectTimeout: 5_000, signal: AbortSignal.timeout(20_000) });
    const server = zk.server;
    process.stdout.write(`connected to ${server ? `${server.host}:${server.port}` : '?'}, session 0x${zk.sessionId.toString(16)}, timeout ${zk.sessionTimeout} ms\n`);
    const ids = await zk.whoAmI().then(
      (list) => list.map((i) => `${i.authScheme}:${i.user}`).join(', '),
      (err: unknown) => `unknown (${(err as Error).name}: whoAmI needs a 3.7+ server)`,
    );
    process.stdout.write(`identities: ${ids}\n`);
    if (probe !== undefined) {
      const node = await zk.create(`${probe}/zk-check-`, null, { mode: CreateMode.EPHEMERAL_SEQUENTIAL, acl: acl ?? CREATOR_ALL_ACL, parents: 'container' });
      const stored = (await zk.getACL(node)).acl.map((a) => `${a.id.scheme}:${a.id.id}:${a.perms}`).join(', ');
      await zk.delete(node);
      process.stdout.write(`probe: created ${node} with ACL ${stored}, and deleted it\n`);
    }
    return 0;
  } catch (err) {
    process.stderr.write(`check failed: ${(err as Error).name}: ${(err as Error).message}\n`);
    // The library's message asks whether ZooKeeper runs there; in this checkout, say how to start one.
    if (/\bECONNREFUSED\b/.test((err as Error).message)) process.stderr.write('In this checkout, `npm run zk -- start` starts one on 127.0.0.1:2181.\n');
    return 1;
  }
}

switch (command) {
  case 'check':
    process.exitCode = await check();
    break;
  case 'start':
    process.exitCode = await start();
    break;
  case 'serve':
    await serve();
    break;
  case 'stop':
    process.exitCode = await stop();
    break;
  case 'status':
    process.exitCode = status();
    break;
  default:
    process.stdout.write('usage: npm run zk -- start [--servers 1|3|5] [--port 2181] [--dir .zk] | status | stop | check [--probe /path] [--acl spec]\n');
    process.exitCode = command === 'help' || command === '--help' ? 0 : 2;
}

/**
 * The README's first command: the lock recipes with real processes, through `zk-lock`.
 * Starts a local ZooKeeper unless ZK_CONNECT names one, runs three scenes with a live view of
 * the queue, prints a summary, and stops everything it started.
 *
 * On a secured ensemble: zk-lock's variables (`ZK_TLS*`, `ZK_DIGEST_FILE`, `ZK_SASL_USER` +
 * `ZK_SASL_PASSWORD_FILE`) reach the demo's own client and every zk-lock it starts (they inherit
 * the environment); `--acl spec` is handed to each zk-lock for the nodes it creates.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { ZooKeeper } from '@zk/protocol';
import { inspectLock, type LockState } from '@zk/locks';
import { startZooKeeper } from '@zk/test/harness';
import { optionValue, parseAcl, securityFromEnv } from './credentials.js';

const CLI = fileURLToPath(new URL('../../packages/locks/dist/cli/zk-lock.js', import.meta.url));
const tty = process.stdout.isTTY === true;
const bold = (s: string) => (tty ? `\x1b[1m${s}\x1b[0m` : s);
const dim = (s: string) => (tty ? `\x1b[2m${s}\x1b[0m` : s);
const say = (s: string) => process.stdout.write(`${s}\n`);

const aclSpec = optionValue(process.argv.slice(2), 'acl');
if (aclSpec !== undefined) parseAcl(aclSpec); // a bad spec stops the demo before anything starts
/** What each zk-lock is given besides its scene's arguments. */
const aclArgs = aclSpec === undefined ? [] : ['--acl', aclSpec];
const security = securityFromEnv();
const ensemble = await startZooKeeper({ servers: 1 });
const connect = ensemble.connectString;
const base = `/zk-demo-${process.pid}`;
const procs = new Set<ChildProcess>();
/** Nodes seen under each path so far (see queued): a worker that already finished still counts as queued. */
const seenUnder = new Map<string, Set<string>>();
const summary: string[] = [];
let admin: ZooKeeper | undefined;

try {
  say(bold(`ZooKeeper at ${connect}`) + dim(` (${ensemble.source === 'external' ? `ZK_CONNECT; ${security.summary}${aclSpec ? `; --acl ${aclSpec}` : ''}` : `local, started in ${Math.round(ensemble.startMs)} ms`})`));
  admin = await ZooKeeper.connect(connect, security.options).catch((err: unknown) => {
    // The library asks whether ZooKeeper runs there; in this checkout, say how to get one.
    if (ensemble.source === 'external' && /\bECONNREFUSED\b/.test((err as Error).message)) {
      process.stderr.write('ZK_CONNECT names no running ZooKeeper: start one with `npm run zk -- start`, or unset ZK_CONNECT and the demo starts its own.\n');
    }
    throw err;
  });
  await fifoScene(admin);
  await killScene(admin);
  await readWriteScene(admin);
  say('');
  say(bold('Summary'));
  for (const line of summary) say(`  ${line}`);
} finally {
  for (const p of procs) p.kill('SIGKILL');
  if (admin) {
    await admin.deleteRecursive(base).catch(() => undefined);
    await admin.close();
  }
  await ensemble.close();
}

/** Starts `zk-lock` running a worker that announces itself with its token, works, and exits. */
function worker(name: string, lockArgs: string[], workMs: number, events: string[]): { proc: ChildProcess; done: Promise<number> } {
  // The worker stops when its zk-lock dies (its parent changes): an orphan would go on working
  // without the lock, which is the hazard the fencing token exists for.
  const script = `console.log(process.argv[1] + " " + process.env.ZK_LOCK_FENCING_TOKEN); const p = process.ppid; setTimeout(() => process.exit(0), ${workMs}); setInterval(() => process.ppid !== p && process.exit(1), 50);`;
  const proc = spawn(process.execPath, [CLI, '--connect', connect, '--session-timeout', '3s', ...aclArgs, ...lockArgs, '--', process.execPath, '-e', script, name], { stdio: ['ignore', 'pipe', 'inherit'] });
  procs.add(proc);
  proc.stdout?.on('data', (d: Buffer) => {
    for (const line of d.toString().trim().split('\n')) {
      const [who, token] = line.split(' ');
      events.push(`${who}:${token}`);
      say(`    ${bold(String(who))} holds the lock ${dim(`(fencing token ${token})`)}`);
    }
  });
  const done = new Promise<number>((resolve) => proc.once('exit', (code) => (procs.delete(proc), resolve(code ?? -1))));
  return { proc, done };
}

/**
 * Prints the queue whenever it changes, until `until` settles. Returns the groups of holders it
 * saw, each in queue order (a group that is part of the one before it, as a reader left while
 * the other still held, is not a new group).
 */
async function watchQueue(zk: ZooKeeper, path: string, until: Promise<unknown>): Promise<string[][]> {
  let last = '';
  let finished = false;
  const groups: string[][] = [];
  void until.finally(() => (finished = true));
  while (!finished) {
    // The path appears with the first worker's node: nothing to show before.
    const state = await inspectLock(zk, path).catch(() => undefined);
    if (state === undefined) {
      await new Promise((r) => setTimeout(r, 100));
      continue;
    }
    const line = render(state);
    if (line !== last) {
      say(dim(`    queue ${line}`));
      last = line;
    }
    const holders = state.holders.map((e) => entryName(e.data));
    const previous = groups.at(-1) ?? [];
    // Fewer of the same holders: the same group. More (a reader joining those holding): the group
    // grows. Others: the next group.
    if (holders.length > 0 && !holders.every((h) => previous.includes(h))) {
      if (previous.length > 0 && previous.every((h) => holders.includes(h))) groups[groups.length - 1] = holders;
      else groups.push(holders);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return groups;
}

/** The worker's name from a lock node's data (zk-lock stores its command line there). */
function entryName(data: Buffer): string {
  return /-e .* (\S+)$/.exec(String((JSON.parse(data.toString()) as { command?: string }).command ?? ''))?.[1] ?? '?';
}

function render(state: LockState): string {
  const holders = state.holders.map((e) => `${entryName(e.data)}${e.kind === 'lock' ? '' : `(${e.kind})`}`).join(' ');
  const waiters = state.waiters.map((e) => `${entryName(e.data)}${e.kind === 'lock' ? '' : `(${e.kind})`}`).join(' ');
  return holders ? `[holds: ${holders}]${waiters ? ` waiting: ${waiters}` : ''}` : '[free]';
}

/**
 * Waits until `n` nodes have been seen under `path` since the scene began, or until the worker
 * that should have made the last of them has exited. Counting what is there now would wait
 * forever for a worker slower to start (a loaded machine) than the one before it took to work and
 * leave; and a node deleted by someone else before this poll saw it (its worker then exits, its
 * lease lost) would never be seen.
 */
async function queued(zk: ZooKeeper, path: string, n: number, exited: Promise<unknown>): Promise<void> {
  let seen = seenUnder.get(path);
  if (!seen) seenUnder.set(path, (seen = new Set()));
  let gone = false;
  const exit = () => void (gone = true);
  exited.then(exit, exit);
  for (;;) {
    for (const name of await zk.getChildren(path).catch(() => [] as string[])) seen.add(name);
    if (seen.size >= n || gone) return;
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function fifoScene(zk: ZooKeeper): Promise<void> {
  const path = `${base}/fifo`;
  say('');
  say(bold('1. Four workers contend for one Mutex: they get it in the order they queued (FIFO)'));
  const events: string[] = [];
  const runs: Array<Promise<number>> = [];
  for (const name of ['alpha', 'bravo', 'charlie', 'delta']) {
    runs.push(worker(name, [path], 600, events).done);
    await queued(zk, path, runs.length, runs.at(-1)!);
  }
  const all = Promise.all(runs);
  await watchQueue(zk, path, all);
  await all;
  const order = events.map((e) => e.split(':')[0]).join(' -> ');
  const tokens = events.map((e) => BigInt(e.split(':')[1] ?? '0'));
  const growing = tokens.every((t, i) => i === 0 || t > (tokens[i - 1] as bigint));
  summary.push(`FIFO: ${order}; fencing tokens ${growing ? 'strictly increasing' : 'NOT increasing'} (${tokens.join(', ')})`);
}

async function killScene(zk: ZooKeeper): Promise<void> {
  const path = `${base}/kill`;
  say('');
  say(bold('2. A holder is killed with SIGKILL: its lock passes on when its session times out (3 s)'));
  const events: string[] = [];
  const holder = worker('echo', [path], 60_000, events);
  await queued(zk, path, 1, holder.done);
  const next = worker('foxtrot', [path], 300, events);
  await queued(zk, path, 2, next.done);
  while (events.length === 0) await new Promise((r) => setTimeout(r, 20));
  const killedAt = Date.now();
  say(`    ${dim('kill -9')} echo's zk-lock ${dim('(no closeSession: the server must notice the silence; its worker stops when orphaned)')}`);
  holder.proc.kill('SIGKILL');
  const watching = watchQueue(zk, path, next.done);
  while (events.length < 2) await new Promise((r) => setTimeout(r, 20));
  const waited = Date.now() - killedAt;
  await next.done;
  await watching;
  // The server counts the 3 s from the last thing it heard from echo's session (a ping, sent every
  // second while idle), not from the kill: the hand-over can come up to a second before 3 s.
  summary.push(`SIGKILL: the lock passed from echo to foxtrot ${(waited / 1000).toFixed(1)} s after the kill (session timeout 3 s, counted from echo's last ping, up to 1 s before the kill)`);
}

async function readWriteScene(zk: ZooKeeper): Promise<void> {
  const path = `${base}/rw`;
  say('');
  say(bold('3. Readers share a ReadWriteLock; a queued writer waits for them, then holds it alone'));
  const events: string[] = [];
  // Each one queues before the next starts, so the queue order is the order of the names.
  const runs: Array<Promise<number>> = [];
  // The queue is watched from the start: started after the last worker queued, on a loaded
  // machine it missed reader-1, whose 1.2 s of work had ended meanwhile (a CI run).
  let allDone = () => {};
  const grouping = watchQueue(zk, path, new Promise<void>((resolve) => (allDone = resolve)));
  for (const [name, mode, workMs] of [['reader-1', '--read', 1200], ['reader-2', '--read', 1200], ['writer', '--write', 600], ['reader-3', '--read', 300]] as const) {
    runs.push(worker(name, [mode, path], workMs, events).done);
    await queued(zk, path, runs.length, runs.at(-1)!);
  }
  await Promise.all(runs).finally(allDone);
  const groups = await grouping;
  // Holders in queue order: readers that held together joined by +, one group after the other.
  summary.push(`read-write: ${groups.map((g) => g.join(' + ')).join(' -> ')} (queue order: readers 1 and 2 together, the writer alone, reader 3 after it)`);
}

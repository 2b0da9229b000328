import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CREATOR_ALL_ACL } from '@zk/protocol';
import { LeaderSelector, Mutex, Semaphore } from '@zk/locks';
import { waitFor } from '../../harness/index.js';
import { connectString, proxyToServer, TestSpace } from '../../harness/fixtures.js';

// The built CLI (the test command builds before testing).
const CLI = fileURLToPath(new URL('../../../packages/locks/dist/cli/zk-lock.js', import.meta.url));

let space: TestSpace;

beforeEach(async () => {
  space = new TestSpace();
  await space.admin();
});

const running = new Set<ChildProcess>();

afterEach(async () => {
  // A failed test must not leave a zk-lock (or its command) behind.
  for (const child of running) child.kill('SIGKILL');
  running.clear();
  await space.close();
});

interface Run {
  child: ChildProcess;
  out: () => string;
  err: () => string;
  exit: Promise<number>;
}

function zkLock(args: string[], connect = `${connectString()}${space.root}`, env: Record<string, string> = {}): Run {
  const child = spawn(process.execPath, [CLI, '--connect', connect, '--session-timeout', '2s', ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
  running.add(child);
  child.once('exit', () => running.delete(child));
  let out = '';
  let err = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const exit = new Promise<number>((resolve) => child.once('exit', (code, signal) => resolve(code ?? (signal ? -1 : 0))));
  return { child, out: () => out, err: () => err, exit };
}

async function children(path: string): Promise<string[]> {
  return (await space.admin()).getChildren(`${space.root}${path}`).catch(() => []);
}

describe('zk-lock - run', () => {
  it('runs the command with the fencing token, passes its exit code through, and releases', async () => {
    const run = zkLock(['/locks/cli', '--', process.execPath, '-e', 'console.log("token=" + process.env.ZK_LOCK_FENCING_TOKEN + " path=" + process.env.ZK_LOCK_PATH); process.exit(7)']);
    expect(await run.exit).toBe(7);
    expect(run.out()).toMatch(/^token=\d+ path=\/locks\/cli\n$/);
    expect(await children('/locks/cli')).toEqual([]);
  });

  it('exits 75 when the lock is held and --timeout passes; --timeout 0 tries once', async () => {
    const zk = await space.client();
    const lease = await new Mutex(zk, '/locks/busy').acquire();
    const timed = zkLock(['--timeout', '300ms', '/locks/busy', '--', 'true']);
    expect(await timed.exit).toBe(75);
    expect(timed.err()).toMatch(/not acquired within 300ms/);
    const once = zkLock(['--timeout', '0', '/locks/busy', '--', 'true']);
    expect(await once.exit).toBe(75);
    expect(once.err()).toMatch(/held by someone else/);
    expect((await children('/locks/busy')).length).toBe(1);
    await lease.release();
  });

  it('a timed-out run names the holder: the host, pid and command zk-lock wrote in its node, or a recipe\'s host and pid', async () => {
    const script = 'console.log("ready"); setInterval(() => {}, 1000); process.on("SIGTERM", () => process.exit(0))';
    const holder = zkLock(['/locks/named', '--', process.execPath, '-e', script]);
    await waitFor('the holder to start', () => (holder.out().includes('ready') ? true : undefined));
    const once = zkLock(['--timeout', '0', '/locks/named', '--', 'true']);
    expect(await once.exit).toBe(75);
    const line = once.err().trim();
    expect(line.split('\n')).toHaveLength(1);
    expect(line).toContain(`/locks/named is held by someone else: held by ${hostname()} pid ${holder.child.pid} ${process.execPath} -e ${script} (token `);
    holder.child.kill('SIGTERM');
    expect(await holder.exit).toBe(0);
    // A recipe's holder: its default data, host and pid.
    const lease = await new Mutex(await space.client(), '/locks/named').acquire();
    const timed = zkLock(['--timeout', '200ms', '/locks/named', '--', 'true']);
    expect(await timed.exit).toBe(75);
    expect(timed.err()).toMatch(new RegExp(`not acquired within 200ms: held by ${hostname()} pid ${process.pid} \\(token \\d+, for \\d`));
    await lease.release();
  });

  it('--version prints zk-lock\'s and @zk/protocol\'s versions and exits 0, without connecting', async () => {
    const run = zkLock(['--version'], '127.0.0.1:1');
    expect(await run.exit).toBe(0);
    const own = JSON.parse(readFileSync(new URL('../../../packages/locks/package.json', import.meta.url), 'utf8')).version as string;
    const protocol = JSON.parse(readFileSync(new URL('../../../packages/protocol/package.json', import.meta.url), 'utf8')).version as string;
    expect(run.out()).toBe(`zk-lock ${own} (@zk/protocol ${protocol}, Node ${process.version})\n`);
  });

  it.each(['SIGINT', 'SIGTERM'] as const)('forwards %s to the command and releases the lock', async (sig) => {
    const script = `process.on("${sig}", () => { console.log("got ${sig}"); process.exit(3); }); console.log("ready"); setInterval(() => {}, 1000);`;
    const run = zkLock(['/locks/sig', '--', process.execPath, '-e', script]);
    await waitFor('the command to start', () => (run.out().includes('ready') ? true : undefined));
    expect((await children('/locks/sig')).length).toBe(1);
    run.child.kill(sig);
    expect(await run.exit).toBe(3);
    expect(run.out()).toContain(`got ${sig}`);
    expect(await children('/locks/sig')).toEqual([]);
  });

  it('exits 127 for a command that does not exist, releasing the lock', async () => {
    const run = zkLock(['/locks/nf', '--', '/no/such/command']);
    expect(await run.exit).toBe(127);
    expect(run.err()).toMatch(/cannot run/);
    expect(await children('/locks/nf')).toEqual([]);
  });

  it('kills the command and exits 76 when the lease is lost', async () => {
    const proxy = await proxyToServer();
    try {
      const script = 'process.on("SIGTERM", () => { console.log("terminated"); process.exit(0); }); console.log("ready"); setInterval(() => {}, 1000);';
      const run = zkLock(['--grace', '2s', '/locks/lost', '--', process.execPath, '-e', script], `${proxy.connectString}${space.root}`);
      await waitFor('the command to start', () => (run.out().includes('ready') ? true : undefined));
      proxy.block();
      expect(await run.exit).toBe(76);
      expect(run.out()).toContain('terminated');
      expect(run.err()).toMatch(/lease on \/locks\/lost lost/);
    } finally {
      await proxy.close();
    }
  });

  it('one readable line for bad usage (exit 64) and for an unreachable ZooKeeper (exit 69)', async () => {
    const usage = zkLock(['relative', '--', 'true']);
    expect(await usage.exit).toBe(64);
    expect(usage.err()).not.toMatch(/\n\s+at /);
    const down = zkLock(['/l', '--', 'true'], '127.0.0.1:1');
    expect(await down.exit).toBe(69);
    expect(down.err().trim().split('\n')).toHaveLength(1);
  });

  it('NOAUTH exits 77 (EX_NOPERM) and names the identity used; a path open to others under --acl creator too', async () => {
    const owner = await space.client({ auth: [{ scheme: 'digest', auth: 'owner:owner-pw' }] });
    await owner.create('/private', null, { acl: CREATOR_ALL_ACL });
    const denied = zkLock(['/private/lock', '--', 'true']);
    expect(await denied.exit).toBe(77);
    expect(denied.err().trim().split('\n')).toHaveLength(1);
    expect(denied.err()).toMatch(/NOAUTH .*belongs to another identity than this one \(plain, no credentials\): run with the credentials of its owner/);
    const status = zkLock(['status', '/private']); // listing needs READ
    expect(await status.exit).toBe(77);
    // An open path under a closed --acl: refused (UnsafeLockPathError), the same code.
    await (await space.admin()).create(`${space.root}/open`, null);
    const digest = join(await mkdtemp(join(tmpdir(), 'zk-lock-')), 'digest');
    await writeFile(digest, 'owner:owner-pw\n', { mode: 0o600 });
    const unsafe = zkLock(['--acl', 'creator', '/open', '--', 'true'], undefined, { ZK_DIGEST_FILE: digest });
    expect(await unsafe.exit).toBe(77);
    expect(unsafe.err()).toMatch(/lock path \/open lets others in .*create to world:anyone, delete to world:anyone, admin to world:anyone/);
    await owner.delete('/private');
  });

  it('a bad --acl exits 64 (EX_USAGE) with a hint, never repeating a password: refused by zk-lock, by the client or by the server', async () => {
    for (const [acl, hint] of [
      ['digest:owner:Sup3r-S3cret', /does not end in permissions .*never the password itself/], // parsed: perms missing
      ['digest:owner:Sup3r-S3cret:cdrwa', /a digest id is 'user:base64\(sha1\(user:password\)\)'.*'creator' needs an identity/], // the client: not a hash
      ['creator', /INVALIDACL.*the server refused the ACL of --acl \('creator' needs an identity/], // the server: no identity to give it to
    ] as const) {
      const run = zkLock(['--acl', acl, '/acl/bad', '--', 'true']);
      expect({ acl, code: await run.exit }).toEqual({ acl, code: 64 });
      expect(run.err()).toMatch(hint);
      expect(run.err()).not.toContain('Sup3r');
    }
    expect(await children('/acl/bad')).toEqual([]);
  });
});

describe('zk-lock - status', () => {
  it('shows holder and queue in order, as text and JSON', async () => {
    const [a, b] = await Promise.all([space.client(), space.client()]);
    const held = await new Mutex(a, '/locks/st', { data: JSON.stringify({ host: 'alpha', pid: 11 }) }).acquire();
    const waiting = new Mutex(b, '/locks/st', { data: JSON.stringify({ host: 'beta', pid: 22 }) }).acquire();
    await waitFor('the waiter to queue', async () => ((await children('/locks/st')).length === 2 ? true : undefined));
    const text = zkLock(['status', '/locks/st']);
    expect(await text.exit).toBe(0);
    const lines = text.out().trim().split('\n');
    expect(lines[0]).toBe('/locks/st: 1 holder(s), 1 waiting');
    expect(lines[1]).toMatch(new RegExp(`HOLDS lock\\s+token ${held.fencingToken}\\s+held .* alpha pid 11`));
    expect(lines[2]).toMatch(/#1\s+lock\s+token \d+\s+waiting .* beta pid 22/);
    const json = zkLock(['status', '--json', '/locks/st']);
    expect(await json.exit).toBe(0);
    const parsed = JSON.parse(json.out()) as { holders: Array<{ fencingToken: string; owner: { host: string } }>; waiters: Array<{ owner: { host: string } }> };
    expect(parsed.holders.map((h) => [h.fencingToken, h.owner.host])).toEqual([[held.fencingToken.toString(), 'alpha']]);
    expect(parsed.waiters.map((w) => w.owner.host)).toEqual(['beta']);
    await held.release();
    await (await waiting).release();
    const free = zkLock(['status', '/locks/st']);
    expect(await free.exit).toBe(0);
    expect(free.out()).toBe('/locks/st: free\n');
  });
});

describe('zk-lock - status times', () => {
  it('reports how long a zk-lock holder waited and has held (its node\'s mtime marks the hold\'s start), and how long a waiter waits; a holder that recorded nothing has no hold time', async () => {
    const [a, b] = await Promise.all([space.client(), space.client()]);
    const first = await new Mutex(a, '/locks/times', { data: JSON.stringify({ host: 'lib', pid: 1 }) }).acquire();
    // T = 10 s, not the file's 2 s: under a loaded CI machine the holder lost its lease to a stall
    // once, and the status then showed the next holder (unmarked) instead of its hold times.
    const run = zkLock(['--session-timeout', '10s', '/locks/times', '--', process.execPath, '-e', 'console.log("ready"); setInterval(() => {}, 1000); process.on("SIGTERM", () => process.exit(0))']);
    await waitFor('zk-lock to queue', async () => ((await children('/locks/times')).length === 2 ? true : undefined));
    const queuedAt = Date.now();
    // The library holder (no mark): no waitedMs or heldMs, only sinceMs.
    const before = zkLock(['status', '--json', '/locks/times']);
    expect(await before.exit).toBe(0);
    const unmarked = (JSON.parse(before.out()) as { holders: Array<Record<string, unknown>> }).holders[0]!;
    expect(unmarked.heldMs).toBeUndefined();
    await first.release();
    const releasedAt = Date.now();
    await waitFor('the command to run', () => (run.out().includes('ready') ? true : undefined));
    const waiting = new Mutex(b, '/locks/times').acquire();
    await waitFor('the waiter to queue', async () => ((await children('/locks/times')).length === 2 ? true : undefined));
    type Row = { sinceMs: number; waitedMs?: number; heldMs?: number; waitingMs?: number };
    const parsed = await waitFor('the hold to be marked', async () => {
      const st = zkLock(['status', '--json', '/locks/times']);
      if ((await st.exit) !== 0) return undefined;
      const p = JSON.parse(st.out()) as { holders: Row[]; waiters: Row[] };
      return p.holders[0]?.heldMs === undefined ? undefined : p;
    });
    const holder = parsed.holders[0]!;
    // It waited at least from the moment it was seen queued to the moment the first hold ended.
    expect(holder.waitedMs!).toBeGreaterThanOrEqual(releasedAt - queuedAt - 50);
    expect(holder.heldMs!).toBeGreaterThanOrEqual(0);
    expect(Math.abs(holder.waitedMs! + holder.heldMs! - holder.sinceMs)).toBeLessThanOrEqual(5);
    expect(parsed.waiters[0]!.waitingMs).toBeGreaterThanOrEqual(0);
    const text = zkLock(['status', '/locks/times']);
    expect(await text.exit).toBe(0);
    expect(text.out()).toMatch(/HOLDS .* held \S+ \(waited \S+\)/);
    run.child.kill('SIGTERM');
    expect(await run.exit).toBe(0);
    await (await waiting).release();
  });
});

describe('zk-lock - semaphore and leader modes', () => {
  it('--semaphore 2: at most two commands at once; a third waits, --timeout 0 gives up with 75; status lists the permits', async () => {
    // Each command says it started, then waits for its own "go" file: the test decides when it ends.
    const dir = space.root.replace(/\//g, '');
    const script = (n: number) =>
      `const fs = require("node:fs"); console.log("in " + process.env.ZK_LOCK_FENCING_TOKEN); const t = setInterval(() => { if (fs.existsSync("/tmp/${dir}-go-${n}")) { clearInterval(t); } }, 10);`;
    const runs = [0, 1, 2].map((n) => zkLock(['--semaphore', '2', '/sem/cli', '--', process.execPath, '-e', script(n)]));
    await waitFor('two commands running', () => (runs.filter((r) => r.out().includes('in ')).length === 2 ? true : undefined));
    const waiting = runs.find((r) => !r.out().includes('in '))!;
    const once = zkLock(['--semaphore', '2', '--timeout', '0', '/sem/cli', '--', 'true']);
    expect(await once.exit).toBe(75);
    expect(once.err()).toMatch(/held by someone else/);
    const status = zkLock(['status', '--json', '--semaphore', '2', '/sem/cli']);
    expect(await status.exit).toBe(0);
    const parsed = JSON.parse(status.out()) as { holders: Array<{ kind: string; owner: { command: string } }>; waiters: unknown[] };
    expect(parsed.holders.map((h) => h.kind)).toEqual(['lease', 'lease']);
    expect(parsed.holders.map((h) => h.owner.command)).toEqual(runs.filter((r) => r.out().includes('in ')).map(() => expect.stringContaining(process.execPath)));
    expect(parsed.waiters).toHaveLength(1); // the third, waiting with its lease node while holding the internal lock
    // A Node semaphore on the same path counts the same permits: none is free.
    expect(await new Semaphore(await space.client(), '/sem/cli', { maxLeases: 2 }).tryAcquire()).toBeUndefined();
    const { writeFileSync, rmSync } = await import('node:fs');
    const first = runs.findIndex((r) => r.out().includes('in '));
    writeFileSync(`/tmp/${dir}-go-${first}`, '');
    try {
      expect(await runs[first]!.exit).toBe(0);
      await waitFor('the third command to run', () => (waiting.out().includes('in ') ? true : undefined));
      for (const n of [0, 1, 2]) writeFileSync(`/tmp/${dir}-go-${n}`, '');
      expect(await Promise.all(runs.map((r) => r.exit))).toEqual([0, 0, 0]);
    } finally {
      for (const n of [0, 1, 2]) rmSync(`/tmp/${dir}-go-${n}`, { force: true });
    }
    expect(await children('/sem/cli/leases')).toEqual([]);
  });

  it('--leader: runs the command while leader, with the id as node data; a second waits; 75 on --timeout', async () => {
    const script = 'process.on("SIGTERM", () => process.exit(0)); console.log("leading " + process.env.ZK_LOCK_FENCING_TOKEN); setInterval(() => {}, 1000);';
    const leader = zkLock(['--leader', '--id', 'cli-1', '/election/cli', '--', process.execPath, '-e', script]);
    await waitFor('the leader to run', () => (leader.out().includes('leading') ? true : undefined));
    const selector = new LeaderSelector(await space.client(), '/election/cli', { id: 'node-1' });
    expect((await selector.leader())?.id).toBe('cli-1');
    const timed = zkLock(['--leader', '--timeout', '200ms', '/election/cli', '--', 'true']);
    expect(await timed.exit).toBe(75);
    expect(timed.err()).toMatch(/leadership of \/election\/cli not acquired within 200ms/);
    // Our selector queues behind it and leads once the command is stopped.
    const next = selector.run((l) => l.fencingToken);
    await waitFor('queued', async () => ((await children('/election/cli')).length === 2 ? true : undefined));
    leader.child.kill('SIGTERM'); // forwarded: the command exits 0, leadership passes on
    expect(await leader.exit).toBe(0);
    const token = await next;
    expect(token).toBeGreaterThan(BigInt(/leading (\d+)/.exec(leader.out())![1]!));
    expect(await children('/election/cli')).toEqual([]);
  });

  it('--leader: the command is stopped and zk-lock exits 76 when leadership is lost', async () => {
    const proxy = await proxyToServer();
    try {
      const script = 'process.on("SIGTERM", () => { console.log("terminated"); process.exit(0); }); console.log("ready"); setInterval(() => {}, 1000);';
      const run = zkLock(['--leader', '--grace', '2s', '/election/lost', '--', process.execPath, '-e', script], `${proxy.connectString}${space.root}`);
      await waitFor('the command to start', () => (run.out().includes('ready') ? true : undefined));
      proxy.block();
      expect(await run.exit).toBe(76);
      expect(run.out()).toContain('terminated');
      expect(run.err()).toMatch(/lease on \/election\/lost lost/);
    } finally {
      await proxy.close();
    }
  });
});

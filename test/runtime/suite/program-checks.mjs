/**
 * Programs run as child processes on the same runtime: the installed `zk-lock` bin (exit codes,
 * the command's environment, `status --json`, a forwarded SIGTERM) and every runnable ```ts block
 * of the READMEs, in the form the driver prepared for this runtime (as written for runtimes that
 * run TypeScript, else tsc's JavaScript; see the driver).
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { Mutex } from '@zk/locks';

/** Runs `[...config.run, ...args]` to its end (killed after `ms`); resolves with code, signal and output. */
export function runOnRuntime(config, args, ms, onStdout) {
  const [cmd, ...pre] = config.run;
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, [...pre, ...args], { cwd: config.app, stdio: ['ignore', 'pipe', 'pipe'], env: process.env });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8');
    child.stderr.setEncoding('utf8');
    child.stdout.on('data', (d) => {
      stdout += d;
      onStdout?.(child, stdout);
    });
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), ms);
    child.once('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

/** A finished program's exit and output, for an assertion's message. */
export function explain(what, r) {
  return `${what}: ${r.signal ? `killed by ${r.signal}` : `exit ${r.code}`}\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`;
}

const TOKEN_CHECK = 'case "$ZK_LOCK_FENCING_TOKEN" in ""|*[!0-9]*) exit 3;; esac; [ "$ZK_LOCK_PATH" = /locks/cli ] || exit 4; exit 7';

const zkLockChecks = [
  {
    name: 'zk-lock: the command runs with its fencing token; 75 while held elsewhere; status --json',
    async run(ctx) {
      const connect = `${ctx.config.connect}${ctx.base}`;
      const zkLock = (args, ms = 20_000) => runOnRuntime(ctx.config, [ctx.config.zkLock, ...args], ms * ctx.scale);
      const ran = await zkLock(['--connect', connect, '--timeout', '10s', '/locks/cli', '--', '/bin/sh', '-c', TOKEN_CHECK]);
      assert.equal(ran.code, 7, explain('zk-lock', ran));
      const zk = await ctx.client();
      const lease = await new Mutex(zk, '/locks/cli').acquire({ timeout: 10_000 });
      const busy = await zkLock(['--connect', connect, '--timeout', '0', '/locks/cli', '--', '/bin/sh', '-c', 'exit 0']);
      assert.equal(busy.code, 75, explain('zk-lock --timeout 0 on a held lock', busy));
      const status = await zkLock(['status', '--connect', connect, '--json', '/locks/cli']);
      assert.equal(status.code, 0, explain('zk-lock status', status));
      const holders = JSON.parse(status.stdout).holders;
      assert.deepEqual(holders.map((h) => h.fencingToken), [lease.fencingToken.toString()]);
      await lease.release();
    },
  },
  {
    name: 'zk-lock: SIGTERM forwarded to the command, the lock released',
    async run(ctx) {
      const connect = `${ctx.config.connect}${ctx.base}`;
      const script = 'trap "exit 42" TERM; echo ready; while :; do sleep 0.05; done';
      let sent = false;
      const ran = await runOnRuntime(ctx.config, [ctx.config.zkLock, '--connect', connect, '/locks/sig', '--', '/bin/sh', '-c', script], 20_000 * ctx.scale, (child, out) => {
        if (!sent && out.includes('ready')) {
          sent = true;
          // process.kill: Deno's child.kill() would make 'exit' report the signal, not the code.
          process.kill(child.pid, 'SIGTERM');
        }
      });
      assert.equal(ran.code, 42, explain('zk-lock sent SIGTERM', ran));
      const zk = await ctx.client();
      assert.deepEqual(await zk.getChildren('/locks/sig'), []);
    },
  },
];

/**
 * A program whose only network grant is the connect string's name and port. Only Deno has such
 * grants (`--allow-net=localhost:PORT`); elsewhere the program runs as any other.
 */
const scopedCheck = {
  name: "a program allowed only the connect string's host:port (Deno: --allow-net=localhost:PORT)",
  async run(ctx) {
    const port = ctx.config.connect.slice(ctx.config.connect.lastIndexOf(':') + 1);
    const [cmd] = ctx.config.run;
    const scoped = ctx.config.kind === 'deno' ? { ...ctx.config, run: [cmd, 'run', `--allow-net=localhost:${port}`] } : ctx.config;
    const ran = await runOnRuntime(scoped, ['suite/by-name.mjs', `localhost:${port}${ctx.base}`], 20_000 * ctx.scale);
    assert.equal(ran.code, 0, explain('suite/by-name.mjs', ran));
    assert.equal(ran.stdout.trim(), 'ok');
  },
};

/** One check per README block the driver wrote for this runtime. */
function readmeChecks(config) {
  return (config.readme ?? []).map((block) => ({
    name: `README ${block.where}`,
    async run(ctx) {
      const root = await ctx.client({}, '');
      await root.ensurePath(block.base); // its namespace: an empty tree, as on a fresh server
      const ran = await runOnRuntime(config, [block.file], 20_000 * ctx.scale);
      await root.deleteRecursive(block.base);
      assert.equal(ran.signal, null, explain(`${block.where} did not exit by itself (a client or lease left open?)`, ran));
      assert.equal(ran.code, 0, explain(block.where, ran));
      assert.equal(ran.stderr, '', explain(`${block.where} wrote to stderr`, ran));
    },
  }));
}

export function programChecks(config) {
  return [...zkLockChecks, scopedCheck, ...readmeChecks(config)];
}

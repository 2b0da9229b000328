/**
 * The runtime pass: the suite (test/runtime/suite/main.mjs) on each runtime of
 * scripts/runtimes.mjs, against one server set started here (TLS, SASL, a fault proxy; a private
 * MIT KDC and a Kerberized server where kdcMissing() allows) and one scratch app of the packed
 * packages (app.ts), one runtime after another.
 *
 *     ZK_RUNTIMES=all npx vitest run --project integration test/runtime
 *     ZK_RUNTIMES=node22,bun npx vitest run --project integration test/runtime
 *
 * Without ZK_RUNTIMES the pass is skipped (it fetches about 300 MB of runtimes on its first run,
 * 0.9 GB unpacked, and takes minutes), so the integration project as a whole does not run it.
 *
 * Each runtime must pass every check except the limitations listed in limitations.ts, and each
 * of those must fail as described. The results go to test/.work/runtimes/<runtime>.json (one file
 * a runtime: name, version, how the README blocks ran, every check with its time and error).
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePorts, timing } from '../harness/index.js';
import { kdcMissing } from '../harness/kdc.js';
import { buildApp, explain, run, type App, type BlockForm } from './app.js';
import { limitationOf, LIMITATIONS } from './limitations.js';
import { SuiteServer } from './server.js';

const repo = fileURLToPath(new URL('../../', import.meta.url));
const RESULTS = join(repo, 'test', '.work', 'runtimes');
const ALL = ['node20', 'node20.19', 'node22', 'node24', 'node26', 'bun', 'deno'];
const selected = (process.env.ZK_RUNTIMES ?? '').trim();
const names = selected === '' ? [] : selected === 'all' ? ALL : selected.split(',').map((s) => s.trim());
/** How long one runtime's whole suite may take. */
const SUITE_BOUND_MS = timing(240_000);

interface Runtime {
  name: string;
  kind: 'node' | 'bun' | 'deno';
  version: string;
  bin: string;
}

interface CheckRecord {
  check: string;
  ok: boolean;
  ms: number;
  error?: string;
}

/** The runtime's binary, fetched into the cache by scripts/runtimes.mjs when missing. */
function resolveRuntime(name: string): Runtime {
  const res = spawnSync(process.execPath, [join(repo, 'scripts', 'runtimes.mjs'), 'json', name], { encoding: 'utf8', timeout: 600_000 });
  if (res.status !== 0) throw new Error(`scripts/runtimes.mjs json ${name} failed (${res.status}): ${res.stderr}`);
  return JSON.parse(res.stdout) as Runtime;
}

/** How a JavaScript file is run on the runtime: everything before the file's path. */
function runPrefix(rt: Runtime): string[] {
  // Deno: every permission (net, env, read, sys, run for zk-lock's command); see the README.
  return rt.kind === 'deno' ? [rt.bin, 'run', '-A'] : [rt.bin];
}

/**
 * The environment of everything run on a runtime. Bun's and Deno's own caches (Bun's install
 * and transpiler caches, Deno's module cache) go into the scratch app, not the user's home.
 */
const childEnv = (app: App, extra: Record<string, string> = {}): NodeJS.ProcessEnv => ({
  ...process.env,
  NODE_OPTIONS: '',
  NODE_DEBUG: '',
  NO_COLOR: '1',
  DENO_NO_UPDATE_CHECK: '1',
  DENO_DIR: join(app.dir, '.deno-dir'),
  BUN_INSTALL_CACHE_DIR: join(app.dir, '.bun-cache'),
  BUN_RUNTIME_TRANSPILER_CACHE_PATH: join(app.dir, '.bun-transpiler-cache'),
  ...extra,
});

/** Whether the runtime parses `await using` in a plain .mjs (Node 24+, Bun and Deno do). */
async function parsesAwaitUsing(rt: Runtime, app: App): Promise<boolean> {
  const file = join(app.dir, 'probe-await-using.mjs');
  writeFileSync(file, "{ await using x = { async [Symbol.asyncDispose]() { console.log('ok'); } }; }\n");
  const [cmd, ...pre] = runPrefix(rt);
  const ran = await run(cmd!, [...pre, file], app.dir, 30_000, childEnv(app));
  return ran.code === 0 && ran.stdout.trim() === 'ok';
}

/** Runs the suite on `rt`, answering its asks; resolves with its records and output. */
function runSuite(rt: Runtime, configFile: string, server: SuiteServer, app: App) {
  const [cmd, ...pre] = runPrefix(rt);
  const started = performance.now();
  return new Promise<{ records: CheckRecord[]; end: Record<string, unknown> | undefined; code: number | null; signal: NodeJS.Signals | null; stderr: string; ms: number }>((resolve) => {
    const child = spawn(cmd!, [...pre, 'suite/main.mjs'], { cwd: app.dir, stdio: ['pipe', 'pipe', 'pipe'], env: childEnv(app, { ZK_RT_CONFIG: configFile }) });
    const records: CheckRecord[] = [];
    let end: Record<string, unknown> | undefined;
    let stderr = '';
    let pending = '';
    const onLine = (line: string) => {
      let msg: Record<string, unknown>;
      try {
        msg = JSON.parse(line) as Record<string, unknown>;
      } catch {
        stderr += `[stdout] ${line}\n`;
        return;
      }
      if (typeof msg.ask === 'string') {
        const ask = msg.ask;
        server.handle(ask).then(
          () => child.stdin.write(`${JSON.stringify({ done: ask })}\n`),
          (err: unknown) => child.stdin.write(`${JSON.stringify({ error: String(err) })}\n`),
        );
      } else if (msg.end) {
        end = msg;
      } else {
        records.push(msg as unknown as CheckRecord);
        process.stderr.write(`[runtime ${rt.name}] ${msg.ok ? 'ok  ' : 'FAIL'} ${String(msg.check)} (${String(msg.ms)} ms)\n`);
      }
    };
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (d: string) => {
      pending += d;
      for (let nl = pending.indexOf('\n'); nl >= 0; nl = pending.indexOf('\n')) {
        onLine(pending.slice(0, nl));
        pending = pending.slice(nl + 1);
      }
    });
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.stdin.on('error', () => {}); // the suite may exit before an answer is written
    const timer = setTimeout(() => child.kill('SIGKILL'), SUITE_BOUND_MS);
    child.on('error', (err) => (stderr += String(err)));
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ records, end, code, signal, stderr, ms: performance.now() - started });
    });
  });
}

describe.skipIf(names.length === 0)('runtimes - the runtime suite on each runtime', () => {
  let server: SuiteServer;
  let app: App;

  beforeAll(async () => {
    for (const n of names) if (!ALL.includes(n)) throw new Error(`ZK_RUNTIMES names ${n}; known: ${ALL.join(', ')} (or all)`);
    const starting = SuiteServer.start();
    const building = buildApp(starting.then((s) => s.config.connect));
    const [started, built] = await Promise.allSettled([starting, building]);
    if (started.status === 'fulfilled') server = started.value;
    if (started.status === 'rejected') throw started.reason;
    if (built.status === 'rejected') throw built.reason;
    app = built.value;
    if (!server.config.kerberos) process.stderr.write(`[runtime] no Kerberos checks: ${kdcMissing() ?? 'no KDC'}\n`);
    mkdirSync(RESULTS, { recursive: true });
  }, 600_000);

  afterAll(async () => {
    await server?.close();
    if (!app) return;
    if (process.env.ZK_RUNTIME_KEEP) process.stderr.write(`[runtime] kept ${app.dir}\n`);
    else rmSync(dirname(app.dir), { recursive: true, force: true });
    process.stderr.write(`[runtime] app: ${Object.entries(app.timings).map(([k, v]) => `${k} ${Math.round(v)} ms`).join(', ')}\n`);
  });

  // Without ZK_RUNTIMES, one skipped test says how to run the pass.
  it.each(names.length > 0 ? names : ['ZK_RUNTIMES=all (or a list)'])('%s passes every check but its listed limitations', async (name) => {
    const rt = resolveRuntime(name);
    const awaitUsing = await parsesAwaitUsing(rt, app);
    // What the README's "Plain JavaScript" note says: only Node 20 and 22 cannot parse it.
    expect(awaitUsing, `${name} ${awaitUsing ? 'parses' : 'cannot parse'} \`await using\` in a plain .mjs: the README's "Plain JavaScript" note says otherwise`).toBe(!/^node2[02]\b/.test(name));
    // Bun runs the README's TypeScript as written, Deno with `npm:` specifiers (the suite itself
    // imports bare names through package.json); Node runs tsc's JavaScript, with `await using`
    // rewritten where it cannot parse it.
    const form: BlockForm = rt.kind === 'node' ? (awaitUsing ? 'esnext' : 'es2022') : rt.kind === 'bun' ? 'ts' : 'ts-npm';
    const config = {
      runtime: name,
      kind: rt.kind,
      scale: timing(1000) / 1000,
      app: app.dir,
      run: runPrefix(rt),
      zkLock: app.zkLock,
      base: `/runtime-${name}-${Date.now()}`,
      ...server.config,
      readme: app.blocks.map((b) => ({ where: b.where, base: b.base, file: join(app.dir, b.files[form]) })),
    };
    const configFile = join(app.dir, `config-${name}.json`);
    writeFileSync(configFile, JSON.stringify(config, null, 2));
    const result = await runSuite(rt, configFile, server, app);

    const checks = result.records.map((r) => {
      const limitation = limitationOf(name, r.check.replace(/^\d+ /, ''));
      return { ...r, ...(limitation ? { limitation: limitation.reason } : {}) };
    });
    const file = join(RESULTS, `${name}.json`);
    const summary = { runtime: name, kind: rt.kind, version: rt.version, awaitUsing, readmeForm: form, date: new Date().toISOString(), ms: Math.round(result.ms), exit: result.code, signal: result.signal, end: result.end, checks, stderr: result.stderr };
    writeFileSync(file, `${JSON.stringify(summary, null, 2)}\n`);

    const output = explain(`the suite on ${name}`, { code: result.code, signal: result.signal, stdout: result.records.map((r) => JSON.stringify(r)).join('\n'), stderr: result.stderr, ms: result.ms });
    expect(result.end, output).toBeDefined();
    expect(result.end?.fatal, output).toBeUndefined();
    // Every check passed, or failed as its listed limitation says.
    const wrong = checks.flatMap((c) => {
      const limitation = limitationOf(name, c.check.replace(/^\d+ /, ''));
      if (!limitation) return c.ok ? [] : [`${c.check} failed:\n${c.error}`];
      if (c.ok) return [`${c.check} passed, but limitations.ts lists it for ${name} (${limitation.reason}): remove it there and from the README`];
      return limitation.error.test(c.error ?? '') ? [] : [`${c.check} failed otherwise than its limitation says (${String(limitation.error)}):\n${c.error}`];
    });
    const listed = LIMITATIONS.filter((l) => l.runtimes.includes(name)).map((l) => l.check);
    const missing = listed.filter((check) => !checks.some((c) => c.check.replace(/^\d+ /, '') === check));
    expect([...wrong, ...missing.map((m) => `limitations.ts lists ${m}, which the suite did not run`)], `${output}\n(results in ${file})`).toEqual([]);
  }, SUITE_BOUND_MS + 660_000);
});

describe('runtimes - scripts/runtimes.mjs', () => {
  it('an unreachable registry: a message naming it and the package, exit 69, nothing left in the cache', async () => {
    const cache = mkdtempSync(join(tmpdir(), 'zk-runtimes-cache-'));
    try {
      const [port] = (await freePorts(1)) as [number]; // nothing listens there: connections are refused
      const env = { ...process.env, ZK_RUNTIMES_CACHE: cache, npm_config_registry: `http://127.0.0.1:${port}/` };
      const ran = await run(process.execPath, [join(repo, 'scripts', 'runtimes.mjs'), 'path', 'node22'], repo, 60_000, env);
      expect(ran.code, explain('runtimes.mjs path node22', ran)).toBe(69);
      expect(ran.stdout).toBe('');
      expect(ran.stderr).toContain(`cannot reach http://127.0.0.1:${port}/ to fetch node-`);
      expect(ran.stderr).toContain('ECONNREFUSED');
      expect(readdirSync(cache)).toEqual([]);
    } finally {
      rmSync(cache, { recursive: true, force: true });
    }
  });
});

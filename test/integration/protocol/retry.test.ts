import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConnectionLossError, CreateMode, retry, ZooKeeper, type ClientOptions, type ZooKeeperError } from '@zk/protocol';
import { timing, waitFor, waitForState, type TcpProxy } from '../../harness/index.js';
import { connectString, proxyToServer, TestSpace } from '../../harness/fixtures.js';

let space: TestSpace;
let proxy: TcpProxy;

beforeEach(async () => {
  space = new TestSpace();
  await space.admin();
  proxy = await proxyToServer();
});

afterEach(async () => {
  await proxy.close();
  expect((await space.close()).leakedWatches).toBe(0);
});

function viaProxy(): Promise<ZooKeeper> {
  return ZooKeeper.connect(`${proxy.connectString}${space.root}`, { sessionTimeout: 10_000, connectTimeout: 2000 });
}

/** Sends `call` with the server's replies held, waits until `applied` says the server did it, then drops the connection. */
async function loseReply<T>(zk: ZooKeeper, call: () => Promise<T>, applied: () => Promise<boolean>): Promise<T> {
  proxy.pause('down');
  const result = call();
  result.catch(() => undefined);
  await waitFor('the request to reach the server', async () => ((await applied()) ? true : undefined));
  proxy.cut();
  proxy.resume();
  return result;
}

describe('retry - against a dropped connection', () => {
  it('repeats a read whose reply was lost, and it succeeds after the reconnect', async () => {
    await using zk = await viaProxy();
    await zk.create('/r', 'value');
    const errors: ZooKeeperError[] = [];
    let first = true;
    const { data } = await retry(
      ({ signal }) => {
        if (!first) return zk.getData('/r', { signal });
        first = false;
        // the first attempt: its request was sent, its reply lost
        return loseReply(zk, () => zk.getData('/r', { signal }), async () => true);
      },
      { baseDelay: 50, maxElapsed: 20_000, maxAttempts: 100, onRetry: (e) => errors.push(e) },
    );
    expect(data.toString()).toBe('value');
    expect(errors[0]).toBeInstanceOf(ConnectionLossError);
    expect(errors[0]?.notSent).toBe(false);
    expect(errors[0]?.op).toBe('getData');
  });

  it('never repeats a sequential create whose reply was lost; idempotent (wrongly) would duplicate it (control)', async () => {
    await using zk = await viaProxy();
    const admin = await space.admin();
    await zk.create('/q');
    const count = async () => (await admin.getChildren(`${space.root}/q`)).length;
    let attempts = 0;
    const once = retry(
      () => {
        attempts++;
        return loseReply(zk, () => zk.create('/q/n-', null, { mode: CreateMode.PERSISTENT_SEQUENTIAL }), async () => (await count()) === 1);
      },
      { baseDelay: 10, maxAttempts: 5 },
    );
    const err = await once.catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConnectionLossError);
    expect((err as ZooKeeperError).op).toBe('create');
    expect(attempts).toBe(1);
    await waitForState(zk, 'connected');
    expect(await count()).toBe(1);

    // The control: told (wrongly) that the create is idempotent, retry repeats it and the node is made twice.
    let n = 0;
    const twice = retry(
      async () => {
        n++;
        if (n === 1) return loseReply(zk, () => zk.create('/q/n-', null, { mode: CreateMode.PERSISTENT_SEQUENTIAL }), async () => (await count()) === 2);
        return zk.create('/q/n-', null, { mode: CreateMode.PERSISTENT_SEQUENTIAL });
      },
      { baseDelay: 50, maxAttempts: 100, maxElapsed: 20_000, idempotent: true },
    );
    await twice;
    expect(await count()).toBe(3);
  });

  it('repeats a write that was never sent (disconnected), and applies it once', async () => {
    await using zk = await viaProxy();
    proxy.block();
    await waitForState(zk, 'suspended');
    const errors: ZooKeeperError[] = [];
    await retry(() => zk.create('/w', 'once'), {
      baseDelay: 50,
      maxAttempts: 100,
      maxElapsed: 20_000,
      onRetry: (e) => {
        errors.push(e);
        if (errors.length === 1) proxy.unblock();
      },
    });
    expect(errors[0]).toBeInstanceOf(ConnectionLossError);
    expect(errors[0]?.notSent).toBe(true);
    expect((await zk.getData('/w')).data.toString()).toBe('once');
  });
});

describe('retry - the client-wide policy (the retry option)', () => {
  function viaProxyWith(retry: ClientOptions['retry']): Promise<ZooKeeper> {
    return ZooKeeper.connect(`${proxy.connectString}${space.root}`, { sessionTimeout: 10_000, connectTimeout: 2000, retry });
  }

  it('a read whose reply was lost is repeated and succeeds; without the policy it fails (control)', async () => {
    await using zk = await viaProxyWith({ baseDelay: 50, maxAttempts: 100, maxElapsed: 20_000 });
    await zk.create('/r', 'value');
    const { data } = await loseReply(zk, () => zk.getData('/r'), async () => true);
    expect(data.toString()).toBe('value');

    await using plain = await viaProxyWith(false);
    await waitForState(plain, 'connected');
    const err = await loseReply(plain, () => plain.getData('/r'), async () => true).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConnectionLossError);
    expect((err as ZooKeeperError).notSent).toBe(false);
  });

  it('a write made while disconnected is sent once the session is back, and applied once; without the policy it fails unsent (control)', async () => {
    const retried: ZooKeeperError[] = [];
    await using zk = await viaProxyWith({ baseDelay: 50, maxDelay: 200, maxAttempts: 1000, maxElapsed: 20_000, onRetry: (e) => retried.push(e) });
    proxy.block();
    await waitForState(zk, 'suspended');
    const made = zk.create('/w', 'once');
    await waitFor('a retry', () => (retried.length > 0 ? true : undefined));
    proxy.unblock();
    expect(await made).toBe('/w');
    expect(retried[0]).toBeInstanceOf(ConnectionLossError);
    expect(retried[0]?.notSent).toBe(true);
    expect(retried[0]?.op).toBe('create');
    expect((await zk.getData('/w')).data.toString()).toBe('once');

    await using plain = await viaProxyWith(false);
    proxy.block();
    await waitForState(plain, 'suspended');
    const err = await plain.create('/w2', 'x').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConnectionLossError);
    expect((err as ZooKeeperError).notSent).toBe(true);
    proxy.unblock();
  });

  it('never repeats a sequential create whose reply was lost: one node, and the ConnectionLoss', async () => {
    const retried: ZooKeeperError[] = [];
    await using zk = await viaProxyWith({ baseDelay: 10, maxAttempts: 100, onRetry: (e) => retried.push(e) });
    const admin = await space.admin();
    await zk.create('/q');
    const count = async () => (await admin.getChildren(`${space.root}/q`)).length;
    const err = await loseReply(zk, () => zk.create('/q/n-', null, { mode: CreateMode.PERSISTENT_SEQUENTIAL }), async () => (await count()) === 1).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConnectionLossError);
    expect((err as ZooKeeperError).op).toBe('create');
    expect(retried).toEqual([]);
    await waitForState(zk, 'connected');
    expect(await count()).toBe(1);
  });

  it("the call's timeout bounds the whole call, retries included; its signal ends a back-off", async () => {
    const retried: number[] = [];
    await using zk = await viaProxyWith({ baseDelay: 50, maxDelay: 100, maxAttempts: 10_000, onRetry: (_e, attempt) => retried.push(attempt) });
    proxy.block();
    await waitForState(zk, 'suspended');
    const t0 = performance.now();
    const err = await zk.getData('/nothing', { timeout: 1000 }).catch((e: unknown) => e);
    const took = performance.now() - t0;
    expect(err).toBeInstanceOf(ConnectionLossError);
    expect(retried.length).toBeGreaterThan(3);
    expect(took).toBeGreaterThan(800);
    expect(took).toBeLessThan(1000 + timing(1000));

    const ac = new AbortController();
    const reason = new Error('the caller gave up');
    const aborted = zk.exists('/nothing', { signal: ac.signal }).catch((e: unknown) => e);
    const before = retried.length;
    await waitFor('a retry of the exists', () => (retried.length > before ? true : undefined));
    ac.abort(reason);
    expect(await aborted).toBe(reason);
    proxy.unblock();
  });
});

describe('retry - NODE_DEBUG=zk', () => {
  const entry = new URL('../../../packages/protocol/dist/index.js', import.meta.url).href;
  const script = `
    const { ZooKeeper } = await import(${JSON.stringify(entry)});
    const zk = await ZooKeeper.connect(process.argv[1]);
    await zk.getData('/nope').catch(() => {});
    await zk.create('/made', 'x');
    await zk.delete('/made');
    await zk.close();
  `;
  async function run(env: NodeJS.ProcessEnv): Promise<{ code: number | null; stderr: string }> {
    const child = spawn(process.execPath, ['--input-type=module', '-e', script, `${connectString()}${space.root}`], { env, stdio: ['ignore', 'ignore', 'pipe'], cwd: fileURLToPath(new URL('.', import.meta.url)) });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    return { code, stderr };
  }

  it('logs each request with its operation, path, duration and outcome; nothing without it (control)', async () => {
    const env = { ...process.env };
    delete env.NODE_DEBUG;
    const on = await run({ ...env, NODE_DEBUG: 'zk' });
    expect(on.code, on.stderr).toBe(0);
    const lines = on.stderr.split('\n').filter((l) => /^ZK \d+: /.test(l));
    expect(lines.some((l) => /: state connecting -> connected/.test(l))).toBe(true);
    // Each request line names its session: two clients in one process can be told apart.
    expect(lines.some((l) => /: session 0x[0-9a-f]+: getData \/nope \d+\.\d ms NONODE$/.test(l))).toBe(true);
    expect(lines.some((l) => /: create \/made \d+\.\d ms ok$/.test(l))).toBe(true);
    expect(lines.some((l) => /: delete \/made \d+\.\d ms ok$/.test(l))).toBe(true);

    const off = await run(env);
    expect(off.code, off.stderr).toBe(0);
    expect(off.stderr).toBe('');
  });
});

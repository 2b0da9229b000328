/**
 * Two copies of `@zk/protocol` in one process (issue 22, part 5): npm installs a second copy
 * whenever the app and `@zk/locks` ask for different version ranges, and a bundled entry next to
 * tsc's modules is another. The locks here import `@zk/protocol` from source (the vitest alias);
 * the clients come from a single-file bundle of the same sources, built into a temp directory,
 * so every class in it (ZooKeeper, NoNodeError, ConnectionLossError, ...) is a different object.
 * The recipes must still classify that copy's errors: create missing parents on NoNode, wait
 * out a connection loss, and treat a session expiry as the end of the lease.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import * as Source from '@zk/protocol';
import { ExclusiveLock, LeaseLostError, Mutex, ReadWriteLock, Semaphore, SharedCount } from '@zk/locks';
import { waitFor, waitForState, type TcpProxy } from '../../harness/index.js';
import { connectString, proxyToServer, TestSpace } from '../../harness/fixtures.js';

type Protocol = typeof import('@zk/protocol');

let dir: string;
let Copy: Protocol;
let space: TestSpace;
let proxy: TcpProxy;
const clients: Source.ZooKeeper[] = [];

beforeAll(async () => {
  // esbuild is a dev dependency of the workspace root (scripts/bundle.mjs uses it too).
  const { build } = await import('esbuild');
  dir = await mkdtemp(join(tmpdir(), 'zk-two-copies-'));
  const outfile = join(dir, 'protocol.bundle.mjs');
  await build({
    entryPoints: [fileURLToPath(new URL('../../../packages/protocol/src/index.ts', import.meta.url))],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    keepNames: true,
    logLevel: 'warning',
  });
  Copy = (await import(pathToFileURL(outfile).href)) as Protocol;
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

beforeEach(async () => {
  space = new TestSpace();
  await space.admin();
  proxy = await proxyToServer();
});

afterEach(async () => {
  proxy.unblock();
  for (const zk of clients.splice(0)) await zk.close();
  await proxy.close();
  expect((await space.close()).leakedWatches).toBe(0);
});

/** A client of the second copy, in this test's namespace, optionally through the proxy. */
async function copyClient(options: Source.ClientOptions & { proxied?: boolean } = {}): Promise<Source.ZooKeeper> {
  const { proxied, ...rest } = options;
  const host = proxied ? proxy.connectString : connectString();
  const zk = await Copy.ZooKeeper.connect(`${host}${space.root}`, { sessionTimeout: 10_000, connectTimeout: 2000, ...rest });
  clients.push(zk);
  return zk;
}

describe('locks - a client from another copy of @zk/protocol', () => {
  it('the copy is a different module instance (its classes are other objects)', async () => {
    expect(Copy.ZooKeeper).not.toBe(Source.ZooKeeper);
    expect(Copy.NoNodeError).not.toBe(Source.NoNodeError);
    expect(Copy.ConnectionLossError).not.toBe(Source.ConnectionLossError);
    const zk = await copyClient();
    expect(zk).toBeInstanceOf(Copy.ZooKeeper);
    expect(Object.getPrototypeOf(zk)).not.toBe(Source.ZooKeeper.prototype);
    // Its errors, caught with the classes the locks import.
    const error = await zk.getData('/missing').catch((e: unknown) => e);
    expect(Object.getPrototypeOf(error)).toBe(Copy.NoNodeError.prototype);
    expect(error).toBeInstanceOf(Source.NoNodeError);
    expect(error).toBeInstanceOf(Source.ZooKeeperError);
    expect(error).not.toBeInstanceOf(Source.NodeExistsError);
  });

  it('an acquire on a path whose parents do not exist creates them (Mutex, ExclusiveLock, read-write, Semaphore, SharedCount)', async () => {
    const zk = await copyClient();
    const mutex = await new Mutex(zk, '/fresh/mutex/a').acquire();
    expect(mutex.node.startsWith('/fresh/mutex/a/_c_')).toBe(true);
    await mutex.release();
    await (await new ExclusiveLock(zk, '/fresh/exclusive/a').acquire()).release();
    await (await new ReadWriteLock(zk, '/fresh/rw/a').readLock().acquire()).release();
    await (await new Semaphore(zk, '/fresh/semaphore/a', { maxLeases: 2 }).acquire()).release();
    await using count = new SharedCount(zk, '/fresh/count/a', 7);
    await count.start();
    expect(count.count).toBe(7);
  });

  it('a connection loss during an acquire on fresh parents is waited out', async () => {
    const zk = await copyClient({ proxied: true });
    proxy.block();
    await waitForState(zk, 'suspended');
    // The create fails at once with the copy's ConnectionLossError; the acquire waits for a connection.
    const acquiring = new Mutex(zk, '/fresh/loss').acquire({ timeout: 10_000 });
    proxy.unblock();
    const lease = await acquiring;
    expect(lease.node.startsWith('/fresh/loss/_c_')).toBe(true);
    await lease.release();
  });

  it('a session expiry: the waiter rejects with LeaseLostError and the cleanup of its node takes the expiry as done (no cleanupError)', async () => {
    const admin = await space.admin();
    const holder = await space.client();
    const held = await new Mutex(holder, '/locks/expiry').acquire();
    const heldName = held.node.slice(held.node.lastIndexOf('/') + 1);
    // 'wait': the cleanup's delete waits for a connection and then fails with the copy's SessionExpiredError.
    const zk = await copyClient({ proxied: true, sessionTimeout: 2000, whileDisconnected: 'wait' });
    const waiting = new Mutex(zk, '/locks/expiry').acquire();
    await waitFor('our node to queue', async () => ((await admin.getChildren(`${space.root}/locks/expiry`)).length === 2 ? true : undefined), 10_000, 20);
    const ours = (await admin.getChildren(`${space.root}/locks/expiry`)).find((n) => n !== heldName)!;
    const gone = new Promise<void>((resolve) => {
      void admin.exists(`${space.root}/locks/expiry/${ours}`, { watch: (e) => e.type === 'NodeDeleted' && resolve() });
    });
    proxy.block();
    const error = await waiting.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LeaseLostError);
    // Once the server has expired the session (our node is gone), a reconnect learns of it.
    await gone;
    proxy.unblock();
    await waitForState(zk, 'expired');
    await new Promise((resolve) => setImmediate(resolve)); // the cleanup's rejection handlers run
    expect((error as { cleanupError?: unknown }).cleanupError).toBeUndefined();
    expect(await admin.getChildren(`${space.root}/locks/expiry`)).toEqual([heldName]);
    await held.release();
  });
});

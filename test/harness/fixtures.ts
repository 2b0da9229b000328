import { randomUUID } from 'node:crypto';
import { inject } from 'vitest';
import { SessionExpiredError, ZooKeeper, type ClientOptions } from '@zk/protocol';
import { waitForState } from './faults.js';
import { TcpProxy } from './proxy.js';
import { waitFor } from './timing.js';


/**
 * Test fixtures over the real server: a namespace (chroot) per test and a leak-checking teardown.
 * Imported by test files only (it uses vitest's inject), never through the harness index.
 */

/** The connect string of the shared server started by the global setup (or ZK_CONNECT). */
export function connectString(): string {
  return inject('zkConnect');
}

/** A TCP proxy to the first server of the shared connect string, for tests that break the link. */
export function proxyToServer(): Promise<TcpProxy> {
  const first = connectString().split(',')[0]!;
  const colon = first.lastIndexOf(':');
  return TcpProxy.start({ host: first.slice(0, colon), port: Number(first.slice(colon + 1)) });
}

/**
 * A per-test namespace: a fresh chroot node, clients rooted in it, and a teardown that closes
 * every client, checks none leaked watches or pending requests, and reports what the test left.
 */
export class TestSpace {
  readonly root = `/t-${randomUUID()}`;
  readonly #clients: ZooKeeper[] = [];
  #admin: ZooKeeper | undefined;
  #adminReady: Promise<ZooKeeper> | undefined;

  /** A client on the server's root (no chroot); the namespace is created once, even when asked concurrently. */
  admin(): Promise<ZooKeeper> {
    this.#adminReady ??= (async () => {
      const zk = await ZooKeeper.connect(connectString(), { sessionTimeout: 10_000 });
      this.#admin = zk;
      await zk.create(this.root);
      return zk;
    })();
    return this.#adminReady;
  }

  /** A client whose chroot is this test's namespace. */
  async client(options: ClientOptions = {}): Promise<ZooKeeper> {
    await this.admin();
    const zk = await ZooKeeper.connect(`${connectString()}${this.root}`, { sessionTimeout: 10_000, ...options });
    this.#clients.push(zk);
    return zk;
  }

  /** The children of `path` in the namespace, sorted; [] when it does not exist. */
  async children(path: string): Promise<string[]> {
    const admin = await this.admin();
    return (await admin.getChildren(`${this.root}${path}`).catch(() => [] as string[])).sort();
  }

  /** Waits until `path` in the namespace has `n` children; returns them, sorted. */
  untilChildren(path: string, n: number): Promise<string[]> {
    return waitFor(`${n} nodes under ${path}`, async () => {
      const c = await this.children(path);
      return c.length === n ? c : undefined;
    }, 10_000, 10);
  }

  /**
   * Expires `zk`'s session from outside, as a crash past the timeout would: another connection
   * resumes the session and closes it (again, should the victim win the session back between
   * the thief's handshake and its close).
   */
  async expire(zk: ZooKeeper): Promise<void> {
    const expired = waitForState(zk, 'expired');
    for (;;) {
      const thief = await ZooKeeper.connect(`${connectString()}${this.root}`, { session: { id: zk.sessionId, password: zk.sessionPassword } }).catch((e: unknown) =>
        e instanceof SessionExpiredError ? undefined : Promise.reject(e),
      );
      await thief?.close();
      let timer: NodeJS.Timeout | undefined;
      const done = await Promise.race([expired.then(() => true), new Promise<boolean>((r) => (timer = setTimeout(() => r(false), 5_000)))]);
      clearTimeout(timer);
      if (done) return;
    }
  }

  /**
   * Closes every client and deletes the namespace. Reports leaked state: throws if a client
   * still had requests pending after close; returns the watches the test left registered and
   * the nodes it left behind (deleted here).
   */
  async close(): Promise<{ leakedWatches: number; leftNodes: string[] }> {
    let leakedWatches = 0;
    for (const zk of this.#clients) {
      leakedWatches += zk.watchCount;
      await zk.close();
      if (zk.pendingRequests !== 0) throw new Error(`client left ${zk.pendingRequests} pending requests after close`);
    }
    const leftNodes: string[] = [];
    if (this.#admin) {
      await deleteTree(this.#admin, this.root, leftNodes);
      await this.#admin.close();
    }
    return { leakedWatches, leftNodes };
  }
}

async function deleteTree(zk: ZooKeeper, path: string, seen: string[]): Promise<void> {
  let children: string[] = [];
  try {
    children = await zk.getChildren(path);
  } catch {
    return;
  }
  for (const c of children) {
    const child = `${path}/${c}`;
    seen.push(child);
    await deleteTree(zk, child, seen);
  }
  try {
    await zk.delete(path);
  } catch {
    // an ephemeral of a closed session may already be gone
  }
}

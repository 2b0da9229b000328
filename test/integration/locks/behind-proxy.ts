/**
 * A client of the test's namespace whose only way to the server is a TCP proxy the test can
 * block: for the persistent-node and group-member suites' disconnection tests.
 */
import { ZooKeeper } from '@zk/protocol';
import { waitFor, type TcpProxy } from '../../harness/index.js';
import { proxyToServer, type TestSpace } from '../../harness/fixtures.js';

/** What a test behind the proxy gets: the client and two steps of the link. */
export interface BehindProxy {
  readonly zk: ZooKeeper;
  readonly proxy: TcpProxy;
  /** Blocks the link and waits until the client has noticed (its session lives on). */
  disconnect(): Promise<void>;
  /** Unblocks the link and waits until the client is connected again. */
  reconnect(): Promise<void>;
}

/** Runs `test` with a proxied client of `space`; closes the client and the proxy on every exit. */
export async function behindProxy(space: TestSpace, test: (link: BehindProxy) => Promise<void>): Promise<void> {
  const proxy = await proxyToServer();
  try {
    await space.admin();
    const zk = await ZooKeeper.connect(`${proxy.connectString}${space.root}`, { sessionTimeout: 10_000, connectTimeout: 2_000 });
    try {
      await test({
        zk,
        proxy,
        async disconnect() {
          proxy.block();
          await waitFor('disconnected', () => (zk.state !== 'connected' ? true : undefined), 10_000, 10);
        },
        async reconnect() {
          proxy.unblock();
          await waitFor('reconnected', () => (zk.state === 'connected' ? true : undefined), 10_000, 10);
        },
      });
    } finally {
      await zk.close();
    }
  } finally {
    proxy.unblock();
    await proxy.close();
  }
}

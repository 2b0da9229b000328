/**
 * Causal tokens behind a lagging follower (issue 39, part 2): a writer on the leader hands its
 * token to a reader whose session lives on a follower cut off from the leader (a nemesis between
 * the servers holds the follower behind: it keeps serving reads from a copy that no longer moves).
 *
 * - Control: the reader's plain read returns the old value (the follower is behind the token).
 * - With the token: the read never returns the old value. The reader has not seen the token's
 *   zxid, so a sync goes first; the follower cannot reach its leader, so the read fails (its
 *   deadline, or the connection dropped when the follower gives up) instead.
 * - After the heal, the same read with the token returns the new value.
 *
 * Skipped on an external ensemble (ZK_CONNECT): the nemesis cuts the servers.
 */
import { describe, expect, it } from 'vitest';
import { parseCausalToken, ZooKeeper } from '@zk/protocol';
import { startZooKeeper, waitFor } from '../harness/index.js';

const external = Boolean(process.env.ZK_CONNECT);

describe.skipIf(external)('faults - causal tokens behind a lagging follower', () => {
  it('a token from the leader: never older data from a follower held behind; the plain read there is stale (control)', async () => {
    const ensemble = await startZooKeeper({ servers: 3, serverLinks: true, tickTime: 1000, config: { syncLimit: 5 } });
    const clients: ZooKeeper[] = [];
    try {
      await ensemble.waitForQuorum(60_000, { all: true });
      const modes = await Promise.all(ensemble.servers.map(async (s) => [s, await s.mode()] as const));
      const leader = modes.find(([, m]) => m === 'leader')![0];
      const follower = modes.find(([, m]) => m === 'follower')![0];
      const connect = async (connectString: string) => {
        const zk = await waitFor(`a session on ${connectString}`, () => ZooKeeper.connect(connectString, { sessionTimeout: 20_000, connectTimeout: 2000 }).catch(() => undefined), 60_000, 200);
        clients.push(zk);
        return zk;
      };
      const writer = await connect(leader.connectString);
      const reader = await connect(follower.connectString);
      await writer.create('/k', 'v1');
      await waitFor('the follower has v1', async () => ((await reader.getData('/k')).data.toString() === 'v1' ? true : undefined));

      ensemble.links!.isolate(follower.id, 'hold');
      await writer.setData('/k', 'v2');
      const token = writer.causalToken;
      expect(parseCausalToken(token)).toBeGreaterThan(reader.lastZxid);

      // Control: behind the token, the follower still answers plain reads with the old value.
      expect((await reader.getData('/k')).data.toString()).toBe('v1');
      // With the token: an error, never v1.
      const outcome = await reader.getData('/k', { after: token, timeout: 3000 }).then(
        (r) => `returned ${r.data.toString()}`,
        (e: unknown) => `failed: ${(e as Error).name}`,
      );
      expect(outcome).toMatch(/^failed: (RequestTimeoutError|ConnectionLossError)$/);
      const linearizable = await reader.getData('/k', { consistency: 'linearizable', timeout: 3000 }).then(
        (r) => `returned ${r.data.toString()}`,
        (e: unknown) => `failed: ${(e as Error).name}`,
      );
      expect(linearizable).not.toBe('returned v1');

      ensemble.links!.heal();
      const fresh = await waitFor('the read with the token after the heal', () => reader.getData('/k', { after: token, timeout: 5000 }).catch(() => undefined), 60_000, 200);
      expect(fresh.data.toString()).toBe('v2');
      expect(reader.lastZxid).toBeGreaterThanOrEqual(parseCausalToken(token));
    } finally {
      ensemble.links?.heal();
      for (const zk of clients) await zk.close().catch(() => undefined);
      await ensemble.close();
    }
  }, 120_000);
});

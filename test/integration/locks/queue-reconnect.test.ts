/**
 * Queues across a lost connection (the session survives): a consumer waiting behind a
 * partitioned link gets the item put meanwhile once the link is back; a safe-mode item held
 * through the outage stays locked for its consumer (another consumer cannot take it) and is
 * completed afterwards, with a complete() called during the outage finishing once reconnected.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Queue, QueueTimeoutError, stringSerializer } from '@zk/locks';
import { waitFor } from '../../harness/index.js';
import { TestSpace } from '../../harness/fixtures.js';
import { behindProxy } from './behind-proxy.js';

let space: TestSpace;

beforeEach(() => {
  space = new TestSpace();
});

afterEach(async () => {
  expect((await space.close()).leakedWatches).toBe(0);
});

const opts = { serializer: stringSerializer, lockPath: '/rq-locks' };

describe('queue - reconnect', () => {
  it('a consumer waiting through a partition gets the item put meanwhile, once the link is back, in the same session', async () => {
    await behindProxy(space, async ({ zk: consumer, disconnect, reconnect }) => {
      const producer = await space.client();
      const session = consumer.sessionId;
      const q = new Queue(consumer, '/rq', opts);
      await new Queue(producer, '/rq', opts).put('warm-up'); // the paths exist
      await (await q.take({ timeout: 5_000 })).complete();
      const waiting = q.take({ timeout: 15_000 });
      await waitFor('the consumer watching', () => (consumer.watchCount > 0 ? true : undefined), 10_000, 5);
      await disconnect();
      await new Queue(producer, '/rq', opts).put('during');
      await reconnect();
      const item = await waiting;
      expect(item.value).toBe('during');
      expect(consumer.sessionId).toBe(session);
      await item.complete();
      expect(await space.children('/rq')).toEqual([]);
      expect(await space.children('/rq-locks')).toEqual([]);
      expect(consumer.watchCount).toBe(0);
    });
  });

  it('a held safe-mode item stays locked through an outage; complete() called during it finishes after reconnect; nobody else got the item', async () => {
    await behindProxy(space, async ({ zk: consumer, disconnect, reconnect }) => {
      const [other, producer] = await Promise.all([space.client(), space.client()]);
      await new Queue(producer, '/rq', opts).put('held');
      const item = await new Queue(consumer, '/rq', opts).take({ timeout: 5_000 });
      await disconnect();
      await expect(new Queue(other, '/rq', opts).take({ timeout: 300 })).rejects.toBeInstanceOf(QueueTimeoutError);
      let completed = false;
      const completing = item.complete().then(() => (completed = true));
      await new Promise((r) => setTimeout(r, 200)); // nothing to wait for: checking that it does not happen
      expect(completed).toBe(false);
      expect(await space.children('/rq')).toHaveLength(1); // the link is down
      await reconnect();
      await completing;
      expect(await space.children('/rq')).toEqual([]);
      expect(await space.children('/rq-locks')).toEqual([]);
      await expect(new Queue(other, '/rq', opts).take({ timeout: 0 })).rejects.toBeInstanceOf(QueueTimeoutError);
      expect(consumer.watchCount).toBe(0);
    });
  });
});

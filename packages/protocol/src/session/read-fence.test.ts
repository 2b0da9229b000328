import { describe, expect, it } from 'vitest';
import type { Reply } from '../connection/connection.js';
import { ConnectionLossError, NotReadOnlyError, SessionExpiredError } from '../errors.js';
import { ReadFence, type FenceKind } from './read-fence.js';

/** A fake session: logs what is sent, in order; each fence's outcome is set by the test. */
function fakeHost(o: { connected?: () => boolean; waitConnected?: () => Promise<void>; fence?: (kind: FenceKind) => Promise<number> } = {}) {
  const sent: string[] = [];
  const host = {
    connected: o.connected ?? (() => true),
    waitConnected: o.waitConnected ?? (() => Promise.resolve()),
    send: (kind: FenceKind) => {
      sent.push(`fence:${kind}`);
      return o.fence ? o.fence(kind) : Promise.resolve(0);
    },
  };
  const read = (name: string, zxid = 7n) => () => {
    sent.push(name);
    return Promise.resolve<Reply<unknown>>({ zxid, err: 0, body: name });
  };
  return { host, sent, read };
}
const never = () => false;

describe('read fence - batching and order', () => {
  it('reads made in one tick share one fence, sent before any of them', async () => {
    const { host, sent, read } = fakeHost();
    const fence = new ReadFence(host);
    const replies = await Promise.all([fence.read('write', read('a'), never), fence.read('write', read('b'), never), fence.read('write', read('c'), never)]);
    expect(replies.map((r) => r.body)).toEqual(['a', 'b', 'c']);
    expect(sent).toEqual(['fence:write', 'a', 'b', 'c']);
    expect(fence.fencesSent).toBe(1);
  });

  it('a read made after a fence left waits for the next one (a fence in flight is never reused)', async () => {
    const answers: Array<(err: number) => void> = [];
    const { host, sent, read } = fakeHost({ fence: () => new Promise<number>((r) => answers.push(r)) });
    const fence = new ReadFence(host);
    const first = fence.read('write', read('a'), never);
    await new Promise((r) => process.nextTick(r));
    expect(sent).toEqual(['fence:write', 'a']);
    const second = fence.read('write', read('b'), never);
    await new Promise((r) => process.nextTick(r));
    expect(sent).toEqual(['fence:write', 'a', 'fence:write', 'b']);
    answers[0]!(0);
    expect((await first).body).toBe('a');
    answers[1]!(0);
    expect((await second).body).toBe('b');
  });

  it('a write fence serves the sync reads of its tick (it proves more); sync reads alone get a sync', async () => {
    const { host, sent, read } = fakeHost();
    const fence = new ReadFence(host);
    await Promise.all([fence.read('sync', read('s'), never), fence.read('write', read('w'), never)]);
    expect(sent).toEqual(['fence:write', 's', 'w']);
    await fence.read('sync', read('t'), never);
    expect(sent.slice(3)).toEqual(['fence:sync', 't']);
  });
});

describe('read fence - failures', () => {
  it('a fence answered with an error fails its reads with that typed error, though they were answered', async () => {
    const { host, read } = fakeHost({ fence: () => Promise.resolve(-119) });
    const fence = new ReadFence(host);
    const err = await fence.read('write', read('a'), never).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NotReadOnlyError);
    expect((err as Error).message).toMatch(/the write this read was sent behind failed/);
  });

  it('a fence lost with its connection fails its reads', async () => {
    const { host, read } = fakeHost({ fence: () => Promise.reject(new ConnectionLossError('gone')) });
    const fence = new ReadFence(host);
    await expect(fence.read('write', read('a'), never)).rejects.toBeInstanceOf(ConnectionLossError);
  });

  it('not connected: held, then the fence and the reads once connected; a read whose caller gave up is never sent', async () => {
    let connected = false;
    let up!: () => void;
    const { host, sent, read } = fakeHost({ connected: () => connected, waitConnected: () => new Promise<void>((r) => (up = r)) });
    const fence = new ReadFence(host);
    let gaveUp = false;
    const kept = fence.read('write', read('a'), never);
    const abandoned = fence.read('write', read('b'), () => gaveUp);
    await new Promise((r) => setImmediate(r));
    expect(sent).toEqual([]);
    gaveUp = true;
    connected = true;
    up();
    expect((await kept).body).toBe('a');
    expect(sent).toEqual(['fence:write', 'a']);
    void abandoned;
  });

  it('the session ends while held: the reads fail with its error', async () => {
    const { host, read } = fakeHost({ connected: () => false, waitConnected: () => Promise.reject(new SessionExpiredError()) });
    const fence = new ReadFence(host);
    await expect(fence.read('sync', read('a'), never)).rejects.toBeInstanceOf(SessionExpiredError);
  });
});

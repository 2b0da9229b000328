import { describe, expect, it } from 'vitest';
import { ConnectionLossError, NoNodeError, SessionExpiredError, type SessionState, type WatchedEvent, type ZooKeeper } from '@zk/protocol';
import { StateStub, fakeClient } from '../testing/fake-client.js';
import { observeLeader } from './observe.js';

type Listener = (e: WatchedEvent) => void;

/**
 * An election path in memory: its children (name -> id), the children watches set by
 * getChildren, and a switch to fail the next listing.
 */
class Election extends StateStub {
  readonly children = new Map<string, string>();
  readonly watchers = new Set<Listener>();
  /** Names listed but already gone when their data is read. */
  readonly vanished = new Set<string>();
  failNext: Error | undefined;
  exists = false;
  listings = 0;

  client(): ZooKeeper {
    const zk = fakeClient({
      onStateChange: (l: (s: SessionState, p: SessionState) => void) => this.onStateChange(l),
      getChildren: async (_path: string, o: { watch?: Listener } = {}) => {
        this.listings++;
        if (this.failNext) {
          const err = this.failNext;
          this.failNext = undefined;
          throw err;
        }
        if (!this.exists) throw new NoNodeError(undefined, { path: '/e' });
        if (o.watch) this.watchers.add(o.watch);
        return [...this.children.keys(), ...this.vanished];
      },
      exists: async (_path: string, o: { watch?: Listener } = {}) => {
        if (o.watch) this.watchers.add(o.watch);
        return this.exists ? {} : null;
      },
      getData: async (path: string) => {
        const id = this.children.get(path.slice('/e/'.length));
        if (id === undefined) throw new NoNodeError(undefined, { path });
        return { data: Buffer.from(id), stat: {} };
      },
      removeWatches: async (_path: string, o: { listener?: Listener }) => {
        if (!o.listener || !this.watchers.delete(o.listener)) throw new Error('no watcher');
      },
      removeLocalWatch: (_k: string, _p: string, l: Listener) => this.watchers.delete(l),
    });
    Object.defineProperty(zk, 'state', { get: () => this.state });
    return zk;
  }

  /** Changes the children and fires the watches, as the server does. */
  change(edit: () => void): void {
    edit();
    const fired = [...this.watchers];
    this.watchers.clear();
    for (const l of fired) l({ type: 'NodeChildrenChanged', path: '/e' });
  }
}

const node = (seq: number) => `_c_0f8b2f8e-9a83-4b8b-8d4b-2f3f1a6e0c1${seq}-latch-${String(seq).padStart(10, '0')}`;

/** Collects what the observer yields. */
function collect(zk: ZooKeeper, signal: AbortSignal) {
  const seen: string[] = [];
  const done = (async () => {
    for await (const leader of observeLeader(zk, '/e', { recipe: 'latch', signal })) seen.push(leader ? leader.id : '-');
  })();
  return { seen, done };
}

const settle = () => new Promise((r) => setTimeout(r, 5));

describe('observeLeader - change only', () => {
  it('yields the leader at each change of leader node, nothing when someone queues behind it', async () => {
    const e = new Election();
    const ac = new AbortController();
    const o = collect(e.client(), ac.signal);
    await settle();
    expect(o.seen).toEqual(['-']); // the path does not exist yet
    e.change(() => ((e.exists = true), e.children.set(node(1), 'a')));
    await settle();
    expect(o.seen).toEqual(['-', 'a']);
    e.change(() => e.children.set(node(2), 'b'));
    await settle();
    expect(o.seen).toEqual(['-', 'a']);
    e.change(() => e.children.delete(node(1)));
    await settle();
    expect(o.seen).toEqual(['-', 'a', 'b']);
    e.change(() => e.children.delete(node(2)));
    await settle();
    expect(o.seen).toEqual(['-', 'a', 'b', '-']);
    ac.abort();
    await o.done;
    expect(e.watchers.size).toBe(0);
  });

  it('the first node gone since the listing: the next one leads', async () => {
    const e = new Election();
    e.exists = true;
    e.vanished.add(node(1));
    e.children.set(node(2), 'b');
    const ac = new AbortController();
    const o = collect(e.client(), ac.signal);
    await settle();
    expect(o.seen).toEqual(['b']);
    ac.abort();
    await o.done;
  });
});

describe('observeLeader - how it ends', () => {
  it('a lost connection is waited out; the listing is made again once connected', async () => {
    const e = new Election();
    e.exists = true;
    e.children.set(node(1), 'a');
    e.failNext = new ConnectionLossError('cut');
    e.state = 'suspended';
    const ac = new AbortController();
    const o = collect(e.client(), ac.signal);
    await settle();
    expect(o.seen).toEqual([]);
    e.to('connected');
    await settle();
    expect(o.seen).toEqual(['a']);
    expect(e.listings).toBe(2);
    ac.abort();
    await o.done;
  });

  it('the session expiring ends it with SessionExpiredError; closing ends it quietly', async () => {
    const e = new Election();
    e.exists = true;
    e.children.set(node(1), 'a');
    const o = collect(e.client(), new AbortController().signal);
    await settle();
    e.to('expired');
    await expect(o.done).rejects.toBeInstanceOf(SessionExpiredError);
    const c = new Election();
    c.exists = true;
    const q = collect(c.client(), new AbortController().signal);
    await settle();
    c.to('closed');
    await expect(q.done).resolves.toBeUndefined();
    expect(q.seen).toEqual(['-']);
  });
});

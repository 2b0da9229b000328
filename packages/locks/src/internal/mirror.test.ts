import { describe, expect, it } from 'vitest';
import type { SessionState, WatchedEvent, WatchListener, ZooKeeper } from '@zk/protocol';
import { DirectoryMirror } from './mirror.js';

const A = '11111111-1111-4111-8111-111111111111';
const B = '22222222-2222-4222-8222-222222222222';
const C = '33333333-3333-4333-8333-333333333333';
const node = (id: string, seq: number) => `_c_${id}-lock-${String(seq).padStart(10, '0')}`;

/**
 * The part of a client the mirror uses, delivering events as the session does: queued when their
 * frame is read and delivered in one drain on the next setImmediate, while replies settle at once.
 */
class StubClient {
  state: SessionState = 'connected';
  listing: string[] = [];
  listener: WatchListener | undefined;
  readonly removed: string[] = [];
  readonly states = new Set<(s: SessionState) => void>();
  #queue: WatchedEvent[] = [];
  addWatch(_path: string, listener: WatchListener): Promise<() => Promise<void>> {
    this.listener = listener;
    return Promise.resolve(async () => undefined);
  }
  getChildren(): Promise<string[]> {
    return Promise.resolve([...this.listing]);
  }
  onStateChange(l: (s: SessionState) => void): () => void {
    this.states.add(l);
    return () => this.states.delete(l);
  }
  removeWatches(path: string): Promise<void> {
    this.removed.push(`server ${path}`);
    this.listener?.({ type: 'PersistentWatchRemoved', path });
    this.listener = undefined;
    return Promise.resolve();
  }
  removeLocalWatch(_kind: string, path: string): void {
    this.removed.push(`local ${path}`);
    this.listener = undefined;
  }
  /** A notification frame read now: delivered at the next drain. */
  notify(type: WatchedEvent['type'], path: string): void {
    if (this.#queue.push({ type, path }) === 1) {
      setImmediate(() => {
        const events = this.#queue.splice(0);
        for (const e of events) this.listener?.(e);
      });
    }
  }
  to(state: SessionState): void {
    this.state = state;
    for (const l of [...this.states]) l(state);
  }
}
const asZk = (s: StubClient) => s as unknown as ZooKeeper;
const nextTurn = () => new Promise((r) => setImmediate(r));

describe('DirectoryMirror', () => {
  it('a create whose event is read ahead of its reply finds itself in the children; its event missing ends the mirror (the control)', async () => {
    const zk = new StubClient();
    zk.listing = [node(A, 0)];
    const mirror = await DirectoryMirror.open(asZk(zk), '/lock', { ours: [A] });
    mirror.claim(B);
    // The server's order: the notification of our create, then its reply (handled at once).
    zk.notify('NodeCreated', `/lock/${node(B, 1)}`);
    expect(await mirror.childrenWith(node(B, 1))).toEqual([node(A, 0), node(B, 1)]);

    mirror.claim(C);
    const missing = await mirror.childrenWith(node(C, 2)); // a reply with no notification before it
    expect(missing).toBeUndefined();
    expect(mirror.ended).toMatch(/creation of .*0000000002 was not reported/);
    expect(zk.removed).toEqual(['server /lock']);
  });

  it('events of changes older than the base listing, arriving after it, leave the listing as it was', async () => {
    const zk = new StubClient();
    zk.listing = [node(B, 3)];
    const opening = DirectoryMirror.open(asZk(zk), '/lock', { ours: [A, B] });
    // Delivered after the listing's reply: A's node came and went before the listing's state.
    zk.notify('NodeCreated', `/lock/${node(A, 2)}`);
    zk.notify('NodeDeleted', `/lock/${node(A, 2)}`);
    zk.notify('NodeCreated', `/lock/${node(B, 3)}`);
    const mirror = await opening;
    await nextTurn();
    expect(mirror.ended).toBeUndefined();
    expect(mirror.children).toEqual([node(B, 3)]);
    zk.notify('NodeDeleted', `/lock/${node(B, 3)}`);
    zk.notify('NodeDataChanged', `/lock/${node(B, 3)}`);
    zk.notify('NodeCreated', `/lock/${node(B, 3)}/below`);
    await nextTurn();
    expect(mirror.children).toEqual([]);
    expect(mirror.ended).toBeUndefined();
  });

  it("another session's node ends it: in the base listing, or when it appears (our create after it is answered undefined)", async () => {
    const zk = new StubClient();
    zk.listing = [node(C, 0)];
    const early = await DirectoryMirror.open(asZk(zk), '/lock', { ours: [A] });
    expect(early.ended).toMatch(/holds _c_3333.*, not ours/);

    zk.listing = [];
    const mirror = await DirectoryMirror.open(asZk(zk), '/lock');
    mirror.claim(A);
    zk.notify('NodeCreated', `/lock/${node(C, 4)}`);
    zk.notify('NodeCreated', `/lock/${node(A, 5)}`);
    expect(await mirror.childrenWith(node(A, 5))).toBeUndefined();
    expect(mirror.ended).toMatch(/0000000004 appeared, not ours/);
    const unprotected = await DirectoryMirror.open(asZk(zk), '/lock');
    zk.notify('NodeCreated', '/lock/lock-0000000009'); // not protected: nobody's attempt
    await nextTurn();
    expect(unprotected.ended).toMatch(/lock-0000000009 appeared/);
  });

  it('leaving connected ends it, removing the watch locally only; so does the directory being deleted', async () => {
    const zk = new StubClient();
    const mirror = await DirectoryMirror.open(asZk(zk), '/lock');
    zk.to('suspended');
    expect(mirror.ended).toMatch(/session was suspended/);
    expect(zk.removed).toEqual(['local /lock']);
    expect(await mirror.childrenWith(node(A, 1))).toBeUndefined();

    zk.to('connected');
    const second = await DirectoryMirror.open(asZk(zk), '/lock');
    zk.notify('NodeDeleted', '/lock');
    await nextTurn();
    expect(second.ended).toBe('the directory was deleted');
    await second.close(); // already ended: nothing more
    expect(zk.removed).toEqual(['local /lock', 'server /lock']);
  });

  it('a failed listing rejects the open and removes the watch', async () => {
    const zk = new StubClient();
    zk.getChildren = () => Promise.reject(new Error('NoNode'));
    await expect(DirectoryMirror.open(asZk(zk), '/missing')).rejects.toThrow('NoNode');
    expect(zk.removed).toEqual(['server /missing']);
    expect(zk.listener).toBeUndefined();
  });
});

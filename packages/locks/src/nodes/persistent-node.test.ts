import { describe, expect, it, vi } from 'vitest';
import { CreateMode, InvalidArgumentError, NoAuthError } from '@zk/protocol';
import { LockStateError, PersistentNodeAbortedError, PersistentNodeTimeoutError } from '../errors.js';
import { findProtected, initialWait, toBytes, type PersistentNodeEvent } from '../internal/persistent-node-support.js';
import { PersistentNode } from './persistent-node.js';
import { PersistentTtlNode } from './persistent-ttl-node.js';
import { GroupMember } from './group-member.js';
import { fakeClient } from '../testing/fake-client.js';

/** An initial-wait host whose events the test sends. */
function host(now: string | Error | undefined = undefined) {
  const listeners = new Set<(e: PersistentNodeEvent) => void>();
  return {
    host: { now: () => now, subscribe: (l: (e: PersistentNodeEvent) => void) => (listeners.add(l), () => void listeners.delete(l)) },
    send: (e: PersistentNodeEvent) => [...listeners].forEach((l) => l(e)),
    listening: () => listeners.size,
  };
}

describe('PersistentNode - pure parts', () => {
  it('data: bytes copied, strings as UTF-8, anything else InvalidArgumentError', () => {
    const source = Buffer.from('abc');
    const copy = toBytes(source, 'data');
    source[0] = 0;
    expect(copy.toString()).toBe('abc');
    expect(toBytes('é', 'data').toString('hex')).toBe('c3a9');
    expect(toBytes(null, 'data')).toHaveLength(0);
    expect(() => toBytes(5, 'data')).toThrow(InvalidArgumentError);
  });

  it('the initial wait: settled at once, on created / failed / ended, at its timeout, on abort; no listener left', async () => {
    expect(await initialWait('/p', {}, host('/p-1').host)).toBe('/p-1');
    const refused = new NoAuthError(undefined, { path: '/p' });
    await expect(initialWait('/p', {}, host(refused).host)).rejects.toBe(refused);
    await expect(initialWait('/p', { timeout: 0 }, host().host)).rejects.toBeInstanceOf(PersistentNodeTimeoutError);
    await expect(initialWait('/p', { timeout: -1 }, host().host)).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(initialWait('/p', { signal: AbortSignal.abort() }, host().host)).rejects.toBeInstanceOf(PersistentNodeAbortedError);

    const created = host();
    const waiting = initialWait('/p', { timeout: 10_000 }, created.host);
    created.send({ type: 'uncertain', path: '/p' }); // not an end
    created.send({ type: 'created', path: '/p0000000001' });
    expect(await waiting).toBe('/p0000000001');
    expect(created.listening()).toBe(0);

    const ended = host();
    const closed = initialWait('/p', {}, ended.host);
    ended.send({ type: 'ended', error: new LockStateError('/p', 'closed') });
    await expect(closed).rejects.toBeInstanceOf(LockStateError);

    vi.useFakeTimers();
    try {
      const timing = host();
      const timed = initialWait('/p', { timeout: 500 }, timing.host).catch((e: unknown) => e);
      await vi.advanceTimersByTimeAsync(499);
      expect(timing.listening()).toBe(1);
      await vi.advanceTimersByTimeAsync(1);
      const err = await timed;
      expect(err).toBeInstanceOf(PersistentNodeTimeoutError);
      expect((err as PersistentNodeTimeoutError).timeout).toBe(500);
      expect(timing.listening()).toBe(0);
    } finally {
      vi.useRealTimers();
    }
  });

  it('after a lost create reply: finds the protected node by its id, an ephemeral one only when our session owns it', async () => {
    const id = '0f8fad5b-d9cb-469f-a165-70867728950e';
    const stats: Record<string, { ephemeralOwner: bigint }> = { [`/g/_c_${id}-n-0000000003`]: { ephemeralOwner: 7n } };
    const zk = fakeClient({
      sessionId: 7n,
      getChildren: async () => ['n-0000000001', `_c_${id}-n-0000000003`],
      exists: async (p: string) => stats[p] ?? null,
    });
    expect(await findProtected(zk, '/g/n-', id, true)).toBe(`/g/_c_${id}-n-0000000003`);
    expect(await findProtected(zk, '/g/n-', '1f8fad5b-d9cb-469f-a165-70867728950e', true)).toBeUndefined();
    stats[`/g/_c_${id}-n-0000000003`] = { ephemeralOwner: 8n }; // another session's (CURATOR-498)
    expect(await findProtected(zk, '/g/n-', id, true)).toBeUndefined();
    expect(await findProtected(zk, '/g/n-', id, false)).toBe(`/g/_c_${id}-n-0000000003`);
  });

  it('bad input throws InvalidArgumentError from the constructors, and nothing is called on the client', () => {
    const calls: string[] = [];
    const zk = fakeClient(Object.fromEntries(['create', 'exists', 'getChildren', 'setData', 'delete'].map((m) => [m, () => (calls.push(m), new Promise(() => undefined))])));
    for (const make of [
      () => new PersistentNode(zk, 'x'),
      () => new PersistentNode(zk, '/'),
      () => new PersistentNode(zk, '/x', { mode: 7 as never }),
      () => new PersistentNode(zk, '/x', { mode: CreateMode.PERSISTENT_SEQUENTIAL_WITH_TTL }),
      () => new PersistentNode(zk, '/x', { mode: CreateMode.PERSISTENT_WITH_TTL, ttl: 0 }),
      () => new PersistentNode(zk, '/x', { ttl: 5 }),
      () => new PersistentNode(zk, '/x', { data: {} as never }),
      () => new PersistentNode(zk, '/x', { acl: [] }),
      () => new PersistentNode({} as never, '/x'),
      () => new PersistentTtlNode(zk, '/x', 1.5),
      () => new PersistentTtlNode(zk, '/x', 1000, { touchFactor: 0 }),
      () => new PersistentTtlNode(zk, '/x', 1000, { childName: '' }),
      () => new GroupMember(zk, '/g', 'a/b'),
      () => new GroupMember(zk, '/g', ''),
      () => new GroupMember(zk, 'g', 'a'),
      () => new GroupMember(zk, '/g', 'a', { payload: 1 as never }),
    ]) {
      expect(make).toThrow(InvalidArgumentError);
    }
    expect(calls).toEqual([]);
  });

  it('misuse: waiting before start, starting twice or after close is a LockStateError; a GroupMember lists itself before anything is read', async () => {
    const zk = fakeClient();
    const node = new PersistentNode(zk, '/x', { data: 'd' });
    await expect(node.waitForInitialCreate()).rejects.toBeInstanceOf(LockStateError);
    await node.close();
    expect(() => node.start()).toThrow(LockStateError);
    await expect(node.setData('e')).rejects.toBeInstanceOf(LockStateError);
    const member = new GroupMember(zk, '/g', 'me', { payload: 'p' });
    expect([...member.currentMembers()].map(([id, p]) => `${id}=${p.toString()}`)).toEqual(['me=p']);
  });
});

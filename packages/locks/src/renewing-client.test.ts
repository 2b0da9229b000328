import { describe, expect, it, vi } from 'vitest';
import { InvalidArgumentError, type SessionState, type ZooKeeper } from '@zk/protocol';
import { LockStateError } from './errors.js';
import { PersistentNode } from './nodes/persistent-node.js';
import { RenewingClient } from './renewing-client.js';
import { fakeClient } from './testing/fake-client.js';

/** A fake client whose state the test drives. */
function driven(n: number) {
  const listeners = new Set<(s: SessionState) => void>();
  let closed = 0;
  const zk = fakeClient({
    sessionId: BigInt(n),
    state: 'connected',
    onStateChange: (l: (s: SessionState) => void) => (listeners.add(l), () => void listeners.delete(l)),
    close: async () => void closed++,
  }) as ZooKeeper & { state: SessionState };
  return {
    zk,
    to(state: SessionState) {
      (zk as { state: SessionState }).state = state;
      for (const l of [...listeners]) l(state);
    },
    closed: () => closed,
    listening: () => listeners.size,
  };
}

describe('RenewingClient', () => {
  it('opens one client, the next when its session expires (telling its listeners), and closes the current one', async () => {
    const made = [driven(1), driven(2)];
    let calls = 0;
    const sessions = new RenewingClient(async () => made[calls++]!.zk);
    const renewed: bigint[] = [];
    sessions.onRenew((zk) => renewed.push(zk.sessionId));
    const [a, b] = await Promise.all([sessions.client(), sessions.client()]);
    expect(a).toBe(made[0]!.zk);
    expect(b).toBe(a);
    expect(calls).toBe(1);
    made[0]!.to('suspended'); // not an expiry
    expect(calls).toBe(1);
    made[0]!.to('expired');
    await expect.poll(() => renewed).toEqual([2n]);
    expect(sessions.current).toBe(made[1]!.zk);
    expect(made[0]!.closed()).toBe(1);
    expect(made[0]!.listening()).toBe(0);
    await sessions.close();
    await sessions.close();
    expect(made[1]!.closed()).toBe(1);
    await expect(sessions.client()).rejects.toBeInstanceOf(LockStateError);
  });

  it('the first connect failure is the caller\'s; a later one is retried; a client closed by someone else ends the chain', async () => {
    const failing = new RenewingClient(() => Promise.reject(new Error('no server')));
    await expect(failing.client()).rejects.toThrow('no server');
    const made = [driven(1), driven(2)];
    let calls = 0;
    const flaky = new RenewingClient(async () => {
      calls++;
      if (calls === 2) throw new Error('once');
      return made[calls === 1 ? 0 : 1]!.zk;
    });
    await flaky.client();
    made[0]!.to('expired');
    await expect.poll(() => flaky.current, { timeout: 3_000 }).toBe(made[1]!.zk);
    expect(calls).toBe(3);
    made[1]!.to('closed');
    expect(flaky.ended).toBeInstanceOf(LockStateError);
    await expect(flaky.client()).rejects.toBeInstanceOf(LockStateError);
    await flaky.close();
    expect(() => new RenewingClient('x' as never)).toThrow(InvalidArgumentError);
  });

  it('is recognised across copies of the package (instanceof by brand), so a recipe of one copy takes the RenewingClient of another', async () => {
    vi.resetModules();
    const copy = (await import('./renewing-client.js')) as typeof import('./renewing-client.js');
    expect(copy.RenewingClient).not.toBe(RenewingClient);
    const theirs = new copy.RenewingClient(async () => driven(1).zk);
    expect(theirs instanceof RenewingClient).toBe(true);
    expect(driven(2).zk instanceof RenewingClient).toBe(false);
    expect(() => new PersistentNode(theirs as never, '/x')).not.toThrow(); // this copy's recipe
    await theirs.close();
  });
});

/**
 * Mutex `localQueue`: contenders of one process queue behind one lock node, with the fairness
 * bound toward other processes, against the real server.
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ChannelName, InvalidArgumentError, type RequestStartMessage } from '@zk/protocol';
import { LeaseLostError, LockAbortedError, LockTimeoutError, Mutex, type Lease } from '@zk/locks';
import { waitFor } from '../../harness/index.js';
import { TestSpace } from '../../harness/fixtures.js';

let space: TestSpace;

beforeEach(() => {
  space = new TestSpace();
});

afterEach(async () => {
  expect((await space.close()).leakedWatches).toBe(0);
});

async function nodes(path: string): Promise<string[]> {
  const admin = await space.admin();
  return (await admin.getChildren(`${space.root}${path}`).catch(() => [] as string[])).sort((a, b) => (a.slice(-10) < b.slice(-10) ? -1 : 1));
}

/** The create opcodes (create, create2, createContainer: ZooDefs.OpCode). */
const CREATE_OPS = new Set([1, 15, 19]);

/** Counts the creates of lock nodes (protected names, `_c_<uuid>-...`) sent while `fn` runs. */
async function countCreates<T>(fn: () => Promise<T>): Promise<{ result: T; creates: number }> {
  let creates = 0;
  const onStart = (m: unknown) => {
    const { op, path } = m as RequestStartMessage;
    if (CREATE_OPS.has(op) && path?.includes('/_c_')) creates++;
  };
  subscribe(ChannelName.requestStart, onStart);
  try {
    return { result: await fn(), creates };
  } finally {
    unsubscribe(ChannelName.requestStart, onStart);
  }
}

describe('Mutex localQueue', () => {
  it('32 contenders of one process: one holder at a time, FIFO, behind a single lock node', async () => {
    const zk = await space.client();
    await zk.create('/lq', null);
    await zk.create('/lq/a', null); // so the first create does not fail on a missing parent
    const mutex = new Mutex(zk, '/lq/a', { localQueue: true });
    let inside = 0;
    let maxInside = 0;
    const order: number[] = [];
    const tokens = new Set<bigint>();
    const { creates } = await countCreates(() =>
      Promise.all(
        Array.from({ length: 32 }, async (_, i) => {
          const lease = await mutex.acquire();
          inside++;
          maxInside = Math.max(maxInside, inside);
          order.push(i);
          tokens.add(lease.fencingToken);
          expect(lease.held).toBe(true);
          await new Promise((r) => setImmediate(r));
          inside--;
          await lease.release();
          expect(lease.signal.aborted).toBe(true);
        }),
      ),
    );
    expect(maxInside).toBe(1);
    expect(order).toEqual(Array.from({ length: 32 }, (_, i) => i));
    // Nobody else waited: one node served all 32 holds.
    expect(creates).toBe(1);
    expect(tokens.size).toBe(1);
    expect(await nodes('/lq/a')).toEqual([]);
  });

  /** 13 local holds and one of another process queued after the first: the holds in order, and how many came after it queued. */
  async function contendWith(path: string, maxHandoffs: number): Promise<{ holds: string[]; otherQueued: number }> {
    const [a, b] = [await space.client(), await space.client()];
    const local = new Mutex(a, path, { localQueue: { maxHandoffs } });
    const holds: string[] = [];
    const first = await local.acquire();
    holds.push('local');
    const locals = Array.from({ length: 12 }, async () => {
      const lease = await local.acquire();
      holds.push('local');
      await new Promise((r) => setImmediate(r));
      await lease.release();
    });
    const other = new Mutex(b, path).acquire().then(async (lease) => {
      holds.push('other');
      await lease.release();
    });
    await waitFor('the other process queued', async () => ((await nodes(path)).length === 2 ? true : undefined));
    // A barrier: the server sends the child event to our session before the reply to a later
    // request; the client dispatches an event after the replies read with it, so a second round
    // trip makes sure the listener has run.
    await a.exists('/');
    await a.exists('/');
    const otherQueued = holds.length;
    await first.release();
    await Promise.all([...locals, other]);
    expect(holds.filter((h) => h === 'local')).toHaveLength(13);
    expect(await nodes(path)).toEqual([]);
    return { holds, otherQueued };
  }

  it('fairness: once another process waits, at most maxHandoffs more local holds before it gets the lock', async () => {
    const { holds, otherQueued } = await contendWith('/lq/fair', 3);
    expect(holds.indexOf('other') - otherQueued).toBeLessThanOrEqual(3);
    // Control: with an unbounded number of hand-offs, the other process waits for all 12.
    const unbounded = await contendWith('/lq/unfair', 1000);
    expect(unbounded.holds.indexOf('other') - unbounded.otherQueued).toBe(12);
  });

  it('fairness holds when local holders do no I/O: hand-offs leave the event loop free to hear of the other process', async () => {
    const [a, b] = [await space.client(), await space.client()];
    const local = new Mutex(a, '/lq/spin', { localQueue: { maxHandoffs: 8 } });
    let localHolds = 0;
    let otherAt = -1;
    let other: Promise<void> | undefined;
    // Eight local contenders acquire and release with nothing in between, 20,000 holds in all;
    // another session starts waiting once they are under way.
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (localHolds < 20_000) {
          const lease = await local.acquire();
          if (++localHolds === 100) {
            other = new Mutex(b, '/lq/spin').acquire().then(async (l) => {
              otherAt = localHolds;
              await l.release();
            });
          }
          await lease.release();
        }
      }),
    );
    await other;
    expect(otherAt).toBeGreaterThanOrEqual(100);
    // Before the fix the other waited for all 20,000: the socket was not read meanwhile.
    expect(otherAt).toBeLessThan(10_000);
    expect(await nodes('/lq/spin')).toEqual([]);
  });

  it('excludes a plain Mutex of another session, and the tokens grow from node to node', async () => {
    const [a, b] = [await space.client(), await space.client()];
    const local = new Mutex(a, '/lq/mixed', { localQueue: { maxHandoffs: 2 } });
    const plain = new Mutex(b, '/lq/mixed');
    let inside = 0;
    let maxInside = 0;
    const tokens: bigint[] = [];
    const hold = async (lease: Lease) => {
      inside++;
      maxInside = Math.max(maxInside, inside);
      tokens.push(lease.fencingToken);
      await new Promise((r) => setImmediate(r));
      inside--;
      await lease.release();
    };
    await Promise.all([
      ...Array.from({ length: 20 }, async () => hold(await local.acquire())),
      ...Array.from({ length: 6 }, async () => hold(await plain.acquire())),
    ]);
    expect(maxInside).toBe(1);
    for (let i = 1; i < tokens.length; i++) expect(tokens[i]!).toBeGreaterThanOrEqual(tokens[i - 1]!);
    expect(new Set(tokens).size).toBeGreaterThan(6);
    expect(await nodes('/lq/mixed')).toEqual([]);
  });

  it('a local waiter that times out or is aborted leaves no node; the last one stops the node attempt', async () => {
    const [a, b] = [await space.client(), await space.client()];
    const holder = await new Mutex(b, '/lq/t').acquire();
    const local = new Mutex(a, '/lq/t', { localQueue: true });
    await expect(local.acquire({ timeout: 200 })).rejects.toBeInstanceOf(LockTimeoutError);
    expect((await nodes('/lq/t')).length).toBe(1);
    const controller = new AbortController();
    const aborted = local.acquire({ signal: controller.signal });
    const waiting = local.acquire({ timeout: 60_000 });
    await waitFor('queued', async () => ((await nodes('/lq/t')).length === 2 ? true : undefined));
    controller.abort(new Error('stop'));
    await expect(aborted).rejects.toBeInstanceOf(LockAbortedError);
    expect((await nodes('/lq/t')).length).toBe(2); // the other local waiter still queues on the node
    expect(await local.tryAcquire()).toBeUndefined();
    await holder.release();
    const lease = await waiting;
    expect(lease.held).toBe(true);
    await lease.release();
    expect(await nodes('/lq/t')).toEqual([]);
  });

  it('when the node is lost, the local holder is told and the next local waiter gets a new node', async () => {
    const zk = await space.client();
    const local = new Mutex(zk, '/lq/lost', { localQueue: true });
    const first = await local.acquire();
    const next = local.acquire();
    const [name] = await nodes('/lq/lost');
    await (await space.admin()).delete(`${space.root}/lq/lost/${name}`);
    await waitFor('the holder told', () => (first.signal.aborted ? true : undefined));
    expect(first.signal.reason).toBeInstanceOf(LeaseLostError);
    await first.release();
    const second = await next;
    expect(second.fencingToken).toBeGreaterThan(first.fencingToken);
    expect((await nodes('/lq/lost'))[0]).not.toBe(name);
    await second.release();
    expect(await nodes('/lq/lost')).toEqual([]);
  });

  it('reentrant inside run(); bad options are refused before anything is sent', async () => {
    const zk = await space.client();
    const local = new Mutex(zk, '/lq/re', { localQueue: true });
    await local.run(async () => {
      await local.run(async (inner) => expect(inner.held).toBe(true));
    });
    expect(() => new Mutex(zk, '/lq/x', { localQueue: { maxHandoffs: -1 } })).toThrow(InvalidArgumentError);
    expect(() => new Mutex(zk, '/lq/x', { localQueue: { maxHandoffs: 1.5 } })).toThrow(InvalidArgumentError);
    await expect(local.acquire({ revocable: true })).rejects.toBeInstanceOf(InvalidArgumentError);
    expect(await nodes('/lq/re')).toEqual([]);
  });
});

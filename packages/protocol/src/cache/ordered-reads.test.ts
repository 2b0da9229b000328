import { describe, expect, it } from 'vitest';
import { ConnectionLossError, NoAuthError, NoNodeError, PacketTooLargeError } from '../errors.js';
import type { MultiReadOp, MultiReadResult } from '../client/transaction.js';
import type { Stat } from '../jute/data.js';
import { OrderedReads, READ_BATCH, type NodeRead, type ReadClient } from './ordered-reads.js';

const stat = (n: number): Stat => ({ czxid: BigInt(n), mzxid: BigInt(n), ctime: 0, mtime: 0, version: 0, cversion: 0, aversion: 0, ephemeralOwner: 0n, dataLength: 0, numChildren: 0, pzxid: BigInt(n) });

/** A fake client whose multiRead replies are settled by the test, in any order. */
function fakeClient() {
  const calls: Array<{ ops: readonly MultiReadOp[]; resolve: (r: MultiReadResult[]) => void; reject: (e: unknown) => void }> = [];
  const multiRead = (ops: readonly MultiReadOp[]) => new Promise<MultiReadResult[]>((resolve, reject) => calls.push({ ops, resolve, reject }));
  const zk: ReadClient = {
    multiRead,
    // a read of one node's data goes out as getData: recorded as a call of one op
    getData: (path) =>
      multiRead([{ type: 'getData', path }]).then((r) => {
        const one = r[0] as MultiReadResult;
        if (one.type === 'error') throw one.error;
        return one as { data: Buffer; stat: Stat };
      }),
  };
  const answer = (i: number, tree: Record<string, string[] | null>) => {
    const call = calls[i];
    if (!call) throw new Error(`no call ${i}`);
    call.resolve(
      call.ops.map((op): MultiReadResult => {
        const kids = tree[op.path];
        if (kids === null || kids === undefined) return { type: 'error', path: op.path, error: new NoNodeError(undefined, { path: op.path }) };
        return op.type === 'getData' ? { type: 'getData', path: op.path, data: Buffer.from(`${op.path}@${i}`), stat: stat(i) } : { type: 'getChildren', path: op.path, children: kids };
      }),
    );
  };
  return { zk, calls, answer };
}

function handler() {
  const seen: string[] = [];
  let done = 0;
  const failures: unknown[] = [];
  return {
    seen,
    get done() {
      return done;
    },
    failures,
    h: {
      node: (r: NodeRead) => seen.push(r.kind === 'found' ? `${r.path} ${r.data.toString()}${r.children ? ` [${r.children.join(',')}]` : ''}` : `${r.path} ${r.kind}`),
      done: () => done++,
      failed: (e: unknown) => failures.push(e),
    },
  };
}

const tick = () => new Promise((r) => setImmediate(r));

describe('tree cache reads - order', () => {
  it('results are applied in send order even when replies settle in another order', async () => {
    const { zk, calls, answer } = fakeClient();
    const reads = new OrderedReads(zk);
    const a = handler();
    const b = handler();
    reads.read(['/x'], false, a.h);
    reads.read(['/x'], false, b.h);
    expect(calls).toHaveLength(2); // both sent at once (pipelined)
    answer(1, { '/x': [] });
    await tick();
    expect(b.seen).toEqual([]); // held back: the earlier read is not in yet
    expect(reads.inFlight).toBe(2);
    answer(0, { '/x': [] });
    await tick();
    expect([...a.seen, ...b.seen]).toEqual(['/x /x@0', '/x /x@1']);
    expect([a.done, b.done]).toEqual([1, 1]);
    await reads.idle();
    expect(reads.inFlight).toBe(0);
  });

  it('control: without the reordering, the older result would be applied last', async () => {
    const { zk, calls, answer } = fakeClient();
    const order: string[] = [];
    void zk.multiRead([{ type: 'getData', path: '/x' }]).then((r) => order.push((r[0] as { data: Buffer }).data.toString()));
    void zk.multiRead([{ type: 'getData', path: '/x' }]).then((r) => order.push((r[0] as { data: Buffer }).data.toString()));
    expect(calls).toHaveLength(2);
    answer(1, { '/x': [] });
    answer(0, { '/x': [] });
    await tick();
    expect(order).toEqual(['/x@1', '/x@0']);
  });

  it('reads data and children per node; a missing node is reported missing', async () => {
    const { zk, calls, answer } = fakeClient();
    const reads = new OrderedReads(zk);
    const a = handler();
    reads.read(['/r', '/r/gone'], true, a.h);
    expect(calls[0]?.ops.map((o) => `${o.type} ${o.path}`)).toEqual(['getData /r', 'getChildren /r', 'getData /r/gone', 'getChildren /r/gone']);
    answer(0, { '/r': ['a', 'b'] });
    await tick();
    expect(a.seen).toEqual(['/r /r@0 [a,b]', '/r/gone missing']);
  });

  it('large calls go out in batches; a reply over the frame limit is read again in halves, later', async () => {
    const { zk, calls, answer } = fakeClient();
    const reads = new OrderedReads(zk);
    const a = handler();
    const paths = Array.from({ length: READ_BATCH + 2 }, (_, i) => `/n${i}`);
    const tree = Object.fromEntries(paths.map((p) => [p, []]));
    reads.read(paths, false, a.h);
    expect(calls.map((c) => c.ops.length)).toEqual([READ_BATCH, 2]);
    calls[0]?.reject(new PacketTooLargeError(2_000_000, 1_048_576));
    await tick();
    expect(calls.map((c) => c.ops.length)).toEqual([READ_BATCH, 2, READ_BATCH / 2, READ_BATCH / 2]);
    answer(1, tree);
    answer(2, tree);
    answer(3, tree);
    await tick();
    expect(a.seen).toHaveLength(paths.length);
    expect(a.seen.slice(0, 2)).toEqual([`/n${READ_BATCH} /n${READ_BATCH}@1`, `/n${READ_BATCH + 1} /n${READ_BATCH + 1}@1`]);
    expect(a.done).toBe(1);
  });

  it('a failed batch fails the call once; later reads still apply', async () => {
    const { zk, calls, answer } = fakeClient();
    const reads = new OrderedReads(zk);
    const a = handler();
    const b = handler();
    reads.read(['/x'], false, a.h);
    reads.read(['/y'], false, b.h);
    calls[0]?.reject(new ConnectionLossError());
    answer(1, { '/y': [] });
    await tick();
    expect(a.failures).toHaveLength(1);
    expect(a.done).toBe(0);
    expect(b.seen).toEqual(['/y /y@1']);
  });

  it('one node without children is read with getData: NoNode is missing, NoAuth unreadable', async () => {
    const { zk, calls, answer } = fakeClient();
    const reads = new OrderedReads(zk);
    const a = handler();
    reads.read(['/gone'], false, a.h);
    reads.read(['/secret'], false, a.h);
    answer(0, {});
    calls[1]?.resolve([{ type: 'error', path: '/secret', error: new NoAuthError(undefined, { path: '/secret' }) }]);
    await tick();
    expect(a.seen).toEqual(['/gone missing', '/secret unreadable']);
  });

  it('an empty call is done at once', async () => {
    const { zk, calls } = fakeClient();
    const a = handler();
    new OrderedReads(zk).read([], true, a.h);
    await tick();
    expect(calls).toHaveLength(0);
    expect(a.done).toBe(1);
  });
});

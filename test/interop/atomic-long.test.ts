/**
 * Wire compatibility of AtomicLong with Curator 5's DistributedAtomicLong: Java processes
 * (java/CuratorCounterParticipant.java, optimistic with RetryNTimes(10, 10 ms), promoted to an
 * InterProcessMutex) and Node sessions of the test process (the same settings) increment one
 * counter node; the final value must be the exact number of increments that reported success,
 * and all of them must. Negative control: Node increments written without the version check
 * (read, then a plain setData) lose updates, and the same check fails.
 */
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { AtomicLong, decodeLong, encodeLong } from '@zk/locks';
import type { ZooKeeper } from '@zk/protocol';
import { connectString, type TestSpace } from '../harness/fixtures.js';
import { curatorMissing, type CompiledJava } from '../harness/java.js';
import { interopHooks, Participant } from './participants.js';

const JAVA_SOURCE = fileURLToPath(new URL('./java/CuratorCounterParticipant.java', import.meta.url));

const missing = curatorMissing();

let compiled: CompiledJava | undefined;
let space: TestSpace;

/** A Java incrementer, once READY. */
async function java(id: string, path: string, lockPath: string, iterations: number): Promise<Participant> {
  const p = Participant.java(compiled!, 'CuratorCounterParticipant', [`${connectString()}${space.root}`, path, lockPath, String(iterations), id]);
  await p.until('READY');
  return p;
}

/** A Node incrementer on its own session: `iterations` increments; the ones that succeeded. */
async function node(zk: ZooKeeper, path: string, lockPath: string, iterations: number, naive: boolean): Promise<{ succeeded: number; failed: number }> {
  const counter = new AtomicLong(zk, path, { retry: { maxTries: 11, baseDelay: 10, maxDelay: 10 }, promotedToLock: { lockPath, timeout: 30_000 } });
  let succeeded = 0;
  for (let i = 0; i < iterations; i++) {
    if (naive) {
      // The control: the same encoding, but no version on the write.
      const { data } = await zk.getData(path).catch(() => ({ data: new Uint8Array() }));
      await zk.setData(path, encodeLong(decodeLong(data)! + 1n));
      succeeded++;
      continue;
    }
    if ((await counter.increment()).succeeded) succeeded++;
  }
  return { succeeded, failed: iterations - succeeded };
}

/** 2 Java + 2 Node incrementers, started together; the total they report and the counter's final value. */
async function run(path: string, iterations: number, naive: boolean): Promise<{ reported: number; failed: number; final: bigint }> {
  const lockPath = `${path}-lock`;
  const [z1, z2] = await Promise.all([space.client(), space.client()]);
  await new AtomicLong(z1, path).initialize(0); // the naive control needs the node
  const javas = await Promise.all([java('j1', path, lockPath, iterations), java('j2', path, lockPath, iterations)]);
  for (const p of javas) p.send('go');
  const nodes = await Promise.all([node(z1, path, lockPath, iterations, naive), node(z2, path, lockPath, iterations, naive)]);
  const results = [...(await Promise.all(javas.map((p) => p.result<{ id: string; succeeded: number; failed: number }>()))), ...nodes];
  const final = (await new AtomicLong(z1, path).get()).postValue;
  const reported = results.reduce((n, r) => n + r.succeeded, 0);
  const failed = results.reduce((n, r) => n + r.failed, 0);
  console.log(`interop counter${naive ? ' (control: Node without version check)' : ''}: ${JSON.stringify(results)}, final ${final}`);
  return { reported, failed, final };
}

describe.skipIf(missing !== undefined)(`interop - Curator 5 DistributedAtomicLong and AtomicLong on one counter${missing ? ` (skipped: ${missing})` : ''}`, () => {
  interopHooks([JAVA_SOURCE], { compiled: (c) => (compiled = c), space: (s) => (space = s) });

  it('2 Java + 2 Node incrementers, 100 increments each: the counter reaches the exact total', async () => {
    const { reported, failed, final } = await run('/interop/counter', 100, false);
    expect(failed).toBe(0);
    expect(reported).toBe(400);
    expect(final).toBe(400n);
    const admin = await space.admin();
    expect((await admin.getData(`${space.root}/interop/counter`)).data).toHaveLength(8);
    expect(await admin.getChildren(`${space.root}/interop/counter-lock`).catch(() => [])).toEqual([]);
  }, 120_000);

  it('negative control: Node increments without the version check lose updates, and the exact-total check fails', async () => {
    const { reported, final } = await run('/interop/counter-control', 100, true);
    expect(final).toBeLessThan(BigInt(reported));
  }, 120_000);
});

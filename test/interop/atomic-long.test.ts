/**
 * Wire compatibility of AtomicLong, AtomicInteger and AtomicValue with Curator 5's
 * DistributedAtomicLong, DistributedAtomicInteger and DistributedAtomicValue: Java processes
 * (java/CuratorCounterParticipant.java, optimistic with RetryNTimes(10, 10 ms), promoted to an
 * InterProcessMutex) and Node sessions of the test process (the same settings) increment one
 * counter node (or append entries to one value's bytes); the final value must be the exact number
 * of increments that reported success, and all of them must (every entry once). Negative
 * controls: Node writes without the version check (read, then a plain setData) lose updates, and
 * the same checks fail.
 */
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { AtomicInteger, AtomicLong, AtomicValue, decodeInt, decodeLong, encodeInt, encodeLong } from '@zk/locks';
import type { ZooKeeper } from '@zk/protocol';
import { connectString, type TestSpace } from '../harness/fixtures.js';
import { curatorMissing, type CompiledJava } from '../harness/java.js';
import { interopHooks, Participant } from './participants.js';

const JAVA_SOURCE = fileURLToPath(new URL('./java/CuratorCounterParticipant.java', import.meta.url));

const missing = curatorMissing();

let compiled: CompiledJava | undefined;
let space: TestSpace;

type Kind = 'long' | 'int' | 'value';

/** A Java incrementer (or appender), once READY. */
async function java(id: string, path: string, lockPath: string, iterations: number, kind: Kind = 'long'): Promise<Participant> {
  const p = Participant.java(compiled!, 'CuratorCounterParticipant', [`${connectString()}${space.root}`, path, lockPath, String(iterations), id, kind]);
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

const RETRY = { maxTries: 11, baseDelay: 10, maxDelay: 10 };

/** A Node AtomicInteger incrementer; `naive`: read, then a plain setData (the control). */
async function nodeInt(zk: ZooKeeper, path: string, lockPath: string, iterations: number, naive: boolean): Promise<{ succeeded: number; failed: number }> {
  const counter = new AtomicInteger(zk, path, { retry: RETRY, promotedToLock: { lockPath, timeout: 30_000 } });
  let succeeded = 0;
  for (let i = 0; i < iterations; i++) {
    if (naive) {
      const { data } = await zk.getData(path).catch(() => ({ data: new Uint8Array() }));
      await zk.setData(path, encodeInt(decodeInt(data)! + 1));
      succeeded++;
    } else if ((await counter.increment()).succeeded) succeeded++;
  }
  return { succeeded, failed: iterations - succeeded };
}

/** A Node appender of `<id>:<i>;` entries to an AtomicValue; `naive`: read, then a plain setData (the control). */
async function nodeAppend(zk: ZooKeeper, id: string, path: string, lockPath: string, iterations: number, naive: boolean): Promise<{ succeeded: number; failed: number }> {
  const value = new AtomicValue(zk, path, { retry: RETRY, promotedToLock: { lockPath, timeout: 30_000 } });
  let succeeded = 0;
  for (let i = 0; i < iterations; i++) {
    const entry = `${id}:${i};`;
    if (naive) {
      const { data } = await zk.getData(path).catch(() => ({ data: new Uint8Array() }));
      await zk.setData(path, Buffer.concat([data, Buffer.from(entry)]));
      succeeded++;
      continue;
    }
    for (let tries = 0; tries < 1000; tries++) {
      if ((await value.update((current) => Buffer.concat([current ?? Buffer.alloc(0), Buffer.from(entry)]))).succeeded) {
        succeeded++;
        break;
      }
    }
  }
  return { succeeded, failed: iterations - succeeded };
}

/** 2 Java + 2 Node participants of `kind` ('int' or 'value'), started together. */
async function runKind(kind: 'int' | 'value', path: string, iterations: number, naive: boolean) {
  const lockPath = `${path}-lock`;
  const [z1, z2] = await Promise.all([space.client(), space.client()]);
  if (kind === 'int') await new AtomicInteger(z1, path).initialize(0);
  else await new AtomicValue(z1, path).initialize('');
  const javas = await Promise.all([java('j1', path, lockPath, iterations, kind), java('j2', path, lockPath, iterations, kind)]);
  for (const p of javas) p.send('go');
  const nodes = await Promise.all(
    kind === 'int' ? [nodeInt(z1, path, lockPath, iterations, naive), nodeInt(z2, path, lockPath, iterations, naive)] : [nodeAppend(z1, 'n1', path, lockPath, iterations, naive), nodeAppend(z2, 'n2', path, lockPath, iterations, naive)],
  );
  const results = [...(await Promise.all(javas.map((p) => p.result<{ id: string; succeeded: number; failed: number }>()))), ...nodes];
  const { data } = await z1.getData(path);
  console.log(`interop ${kind}${naive ? ' (control: Node without version check)' : ''}: ${JSON.stringify(results)}, ${data.length} bytes`);
  return { reported: results.reduce((n, r) => n + r.succeeded, 0), failed: results.reduce((n, r) => n + r.failed, 0), data: Buffer.from(data) };
}

/** Each entry of an appended value, with how many times it is there. */
function entries(data: Buffer): Map<string, number> {
  const seen = new Map<string, number>();
  for (const e of data.toString().split(';').filter(Boolean)) seen.set(e, (seen.get(e) ?? 0) + 1);
  return seen;
}

describe.skipIf(missing !== undefined)(`interop - Curator 5 DistributedAtomicInteger and DistributedAtomicValue${missing ? ` (skipped: ${missing})` : ''}`, () => {
  interopHooks([JAVA_SOURCE], { compiled: (c) => (compiled = c), space: (s) => (space = s) });

  it('AtomicInteger: 2 Java + 2 Node incrementers, 100 each, on a 4-byte counter: the exact total', async () => {
    const { reported, failed, data } = await runKind('int', '/interop/int', 100, false);
    expect(failed).toBe(0);
    expect(reported).toBe(400);
    expect(data).toHaveLength(4);
    expect(decodeInt(data)).toBe(400);
  }, 120_000);

  it('AtomicValue: 2 Java + 2 Node appenders, 30 entries each, by compare-and-set: every entry exactly once', async () => {
    const { reported, data } = await runKind('value', '/interop/value', 30, false);
    expect(reported).toBe(120);
    const seen = entries(data);
    expect(seen.size).toBe(120);
    expect([...seen.values()].every((n) => n === 1)).toBe(true);
    for (const id of ['j1', 'j2', 'n1', 'n2']) for (let i = 0; i < 30; i++) expect(seen.has(`${id}:${i}`), `${id}:${i}`).toBe(true);
  }, 120_000);

  it('negative controls: Node writes without the version check lose increments and entries', async () => {
    const int = await runKind('int', '/interop/int-control', 100, true);
    expect(decodeInt(int.data)!).toBeLessThan(int.reported);
    const value = await runKind('value', '/interop/value-control', 30, true);
    expect(entries(value.data).size).toBeLessThan(value.reported);
  }, 180_000);
});

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

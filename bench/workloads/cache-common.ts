/**
 * What the tree-cache workloads share (cache.ts, cache-million.ts): the memory measure, the
 * change-latency loop on an open TreeCache, and the Curator cache driver's command exchange.
 */
import { TreeCache, type ZooKeeper } from '@zk/protocol';
import type { LineChild } from '../lib/child.js';
import { timed, type Sample } from '../lib/stats.js';

/**
 * Memory in use after a full collection (with --expose-gc), bytes: the V8 heap plus the
 * ArrayBuffers outside it (Buffer contents), so cached data counts as it does in the JVM's heap.
 */
export function memoryInUse(): number {
  for (let i = 0; i < 4; i++) (globalThis as { gc?: () => void }).gc?.();
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
}

/** `count` changes one after another: setData of `path` by `writer`, timed until `cache`'s changed event with that data. */
export function changeLatencies(cache: TreeCache, writer: ZooKeeper, path: string, count: number): Promise<Sample> {
  return timed(async () => {
    const latenciesUs: number[] = [];
    const start = performance.now();
    for (let i = 0; i < count; i++) {
      const value = `v${i}-${start}`;
      let off: () => void = () => undefined;
      const seen = new Promise<void>((resolve) => {
        off = cache.onEvent((e) => {
          if (e.type === 'changed' && e.path === path && e.node.data.toString() === value) resolve();
        });
      });
      const t0 = performance.now();
      await writer.setData(path, value);
      await seen;
      latenciesUs.push((performance.now() - t0) * 1000);
      off();
    }
    return { ops: count, latenciesUs };
  });
}

/** Sends `command` to the Curator cache driver and parses the JSON of its answer line `word` (an ERROR line rejects). */
export async function curatorCommand(driver: LineChild, command: string, word: string, timeoutMs: number): Promise<Record<string, unknown>> {
  driver.send(command);
  const line = await Promise.race([driver.line(word, timeoutMs), driver.line('ERROR', timeoutMs).then((l) => Promise.reject(new Error(`Curator cache driver: ${l.text}`)))]);
  const json = line.text.slice(word.length + 1);
  return json === '' ? {} : (JSON.parse(json) as Record<string, unknown>);
}


/**
 * One load of ours: TreeCache.open on `path` until it resolves (the whole tree cached), timed,
 * with the memory the open cache holds per node; the cache is returned open. Fails (the cache
 * closed) unless it holds `nodes` nodes.
 */
export async function loadOurs(zk: ZooKeeper, path: string, nodes: number): Promise<{ sample: Sample; cache: TreeCache }> {
  const memory0 = memoryInUse();
  let cache: TreeCache | undefined;
  const sample = await timed(async () => {
    cache = await TreeCache.open(zk, path);
    return { ops: cache.size };
  });
  const heapBytes = memoryInUse() - memory0;
  const opened = cache as TreeCache | undefined;
  if (!opened || opened.size !== nodes) {
    await opened?.close();
    throw new Error(`TreeCache loaded ${opened?.size ?? 0} nodes, expected ${nodes}`);
  }
  return { cache: opened, sample: { ...sample, metrics: { loadMs: sample.seconds * 1000, heapBytesPerNode: heapBytes / nodes } } };
}

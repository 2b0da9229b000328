/**
 * Tree-cache workloads: the initial load of a 10,000-node tree (time, and heap per cached node)
 * and the latency of a change (another session's setData until the cache reports the new data),
 * ours (TreeCache) against Curator's CuratorCache (bench/java/CacheBenchDriver.java) in the same run.
 */
import { fileURLToPath } from 'node:url';
import { TreeCache, ZooKeeper } from '@zk/protocol';
import { compileCurator, type CompiledJava } from '@zk/test/harness';
import { JVM_METER } from '../peers/java.js';
import type { Bench, Repetition } from '../lib/bench.js';
import { LineChild } from '../lib/child.js';
import { CLIENT, WORKLOAD } from '../lib/names.js';
import { timed, type Sample } from '../lib/stats.js';

const JAVA_SOURCE = fileURLToPath(new URL('../../java/CacheBenchDriver.java', import.meta.url));
/** The loaded tree: a root, 100 directories of 99 leaves each: 10,000 nodes under the root, 32 B of data each. */
const DIRS = 100;
const LEAVES = 99;
const NODES = 1 + DIRS + DIRS * LEAVES;
const PAYLOAD = 'x'.repeat(32);

/** Runs the tree-cache workloads under `base`; Curator's beside ours when `curator` (the Java peer runs). */
export async function cacheWorkloads(bench: Bench, connect: string, zk: ZooKeeper, curator: boolean, base: string): Promise<void> {
  const load = WORKLOAD.cacheLoad(NODES);
  const event = WORKLOAD.cacheEvent;
  if (!bench.wants(load) && !bench.wants(event)) return;
  const tree = `${base}/cache-tree`;
  const single = `${base}/cache-event`;
  await populate(zk, tree);
  await zk.create(single, 'v');
  await zk.create(`${single}-curator`, 'v');
  const writer = await ZooKeeper.connect(connect, { sessionTimeout: 10_000 });
  let java: CompiledJava | undefined;
  let driver: LineChild | undefined;
  try {
    if (curator) {
      java = compileCurator([JAVA_SOURCE, JVM_METER]);
      driver = new LineChild('Curator cache driver', 'java', ['-cp', java.classpath, 'CacheBenchDriver', connect]);
      await driver.line('READY', 60_000);
    }
    const curatorRun = (command: string, word: string) => async (): Promise<Record<string, unknown>> => {
      const d = driver as LineChild;
      d.send(command);
      const line = await Promise.race([d.line(word, 120_000), d.line('ERROR', 120_000).then((l) => Promise.reject(new Error(`Curator cache driver: ${l.text}`)))]);
      return JSON.parse(line.text.slice(word.length + 1)) as Record<string, unknown>;
    };
    const reps = Math.max(2, Math.min(5, Math.round(bench.scale * 5)));
    await bench.compare(
      'scale',
      load,
      'nodes',
      [
        [CLIENT.ours, () => oursLoad(zk, tree)],
        ...(driver ? [[CLIENT.curator, () => curatorLoad(curatorRun(`load ${tree}`, 'LOADED'))] as const] : []),
      ],
      reps,
    );
    const changes = bench.n(500, 50);
    await bench.compare('scale', event, 'events', [
      [CLIENT.ours, (w) => oursEvents(zk, writer, single, w ? 20 : changes)],
      ...(driver ? [[CLIENT.curator, (w: boolean) => curatorEvents(curatorRun(`latency ${single}-curator ${w ? 20 : changes}`, 'LATENCY'))] as const] : []),
    ] as ReadonlyArray<readonly [string, Repetition]>);
  } finally {
    await driver?.end();
    java?.remove();
    await writer.close();
  }
}

/** The tree, created in transactions of one directory and its leaves. */
async function populate(zk: ZooKeeper, root: string): Promise<void> {
  await zk.create(root, PAYLOAD);
  for (let i = 0; i < DIRS; i += 4) {
    await Promise.all(
      [i, i + 1, i + 2, i + 3].map((d) => {
        const t = zk.transaction().create(`${root}/d${d}`, PAYLOAD);
        for (let j = 0; j < LEAVES; j++) t.create(`${root}/d${d}/n${j}`, PAYLOAD);
        return t.commit();
      }),
    );
  }
}

/**
 * Memory in use after a full collection (with --expose-gc), bytes: the V8 heap plus the
 * ArrayBuffers outside it (Buffer contents), so cached data counts as it does in the JVM's heap.
 */
function memoryInUse(): number {
  for (let i = 0; i < 4; i++) (globalThis as { gc?: () => void }).gc?.();
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
}

/** One load: TreeCache.open until it resolves (the whole tree cached); memory held by the open cache. */
async function oursLoad(zk: ZooKeeper, path: string): Promise<Sample> {
  const memory0 = memoryInUse();
  let cache: TreeCache | undefined;
  const sample = await timed(async () => {
    cache = await TreeCache.open(zk, path);
    return { ops: cache.size };
  });
  const heapBytes = memoryInUse() - memory0;
  const size = (cache as TreeCache | undefined)?.size ?? 0;
  await cache?.close();
  if (size !== NODES) throw new Error(`TreeCache loaded ${size} nodes, expected ${NODES}`);
  return { ...sample, metrics: { loadMs: sample.seconds * 1000, heapBytesPerNode: heapBytes / size } };
}

async function curatorLoad(run: () => Promise<Record<string, unknown>>): Promise<Sample> {
  const r = await run();
  const size = Number(r.size);
  if (size !== NODES) throw new Error(`CuratorCache loaded ${size} nodes, expected ${NODES}`);
  const seconds = Number(r.loadUs) / 1e6;
  return { ops: size, seconds, latenciesUs: [], cpuUs: Number(r.cpuUs), metrics: { loadMs: seconds * 1000, heapBytesPerNode: Number(r.heapBytes) / size } };
}

/** `count` changes one after another: setData by `writer`, timed until the cache's changed event with that data. */
async function oursEvents(zk: ZooKeeper, writer: ZooKeeper, path: string, count: number): Promise<Sample> {
  const cache = await TreeCache.open(zk, path);
  try {
    return await timed(async () => {
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
  } finally {
    await cache.close();
  }
}

async function curatorEvents(run: () => Promise<Record<string, unknown>>): Promise<Sample> {
  const r = await run();
  const latenciesUs = (r.latenciesUs as number[]).map(Number);
  return { ops: latenciesUs.length, seconds: Number(r.seconds), latenciesUs, cpuUs: Number(r.cpuUs) };
}

/**
 * Tree-cache workloads: the initial load of a 10,000-node tree (time, and heap per cached node)
 * and the latency of a change (another session's setData until the cache reports the new data),
 * ours (TreeCache) against Curator's CuratorCache (bench/java/CacheBenchDriver.java) in the same run;
 * then, opt-in, the same at about a million nodes (cache-million.ts).
 */
import { fileURLToPath } from 'node:url';
import { TreeCache, ZooKeeper } from '@zk/protocol';
import { compileCurator, type CompiledJava } from '@zk/test/harness';
import { JVM_METER } from '../peers/java.js';
import type { Bench, Repetition } from '../lib/bench.js';
import { LineChild } from '../lib/child.js';
import { CLIENT, WORKLOAD } from '../lib/names.js';
import type { Sample } from '../lib/stats.js';
import { BIG_SESSION_MS, millionNodesWanted, millionWorkloads } from './cache-million.js';
import { changeLatencies, curatorCommand, loadOurs } from './cache-common.js';

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
  const small = bench.wants(load) || bench.wants(event);
  const big = millionNodesWanted() > 0;
  if (!small && !big) return;
  const tree = `${base}/cache-tree`;
  const single = `${base}/cache-event`;
  if (small) {
    await populate(zk, tree);
    await zk.create(single, 'v');
    await zk.create(`${single}-curator`, 'v');
  }
  const writer = await ZooKeeper.connect(connect, { sessionTimeout: 10_000 });
  let java: CompiledJava | undefined;
  let driver: LineChild | undefined;
  try {
    if (curator) {
      java = compileCurator([JAVA_SOURCE, JVM_METER]);
      // The big tree's sessions get 40 s (the server's default most): a 1 GiB server holding a
      // million nodes may pause that long in a collection, as may a client's full collection.
      const sessionMs = big ? BIG_SESSION_MS : 10_000;
      driver = new LineChild('Curator cache driver', 'java', ['-cp', java.classpath, 'CacheBenchDriver', connect, String(sessionMs)]);
      await driver.line('READY', 60_000);
    }
    const curatorRun = (command: string, word: string) => () => curatorCommand(driver as LineChild, command, word, 120_000);
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
    if (big) await millionWorkloads(bench, connect, driver, base);
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

/** One load: TreeCache.open until it resolves (the whole tree cached); memory held by the open cache. */
async function oursLoad(zk: ZooKeeper, path: string): Promise<Sample> {
  const { sample, cache } = await loadOurs(zk, path, NODES);
  await cache.close();
  return sample;
}

async function curatorLoad(run: () => Promise<Record<string, unknown>>): Promise<Sample> {
  const r = await run();
  const size = Number(r.size);
  if (size !== NODES) throw new Error(`CuratorCache loaded ${size} nodes, expected ${NODES}`);
  const seconds = Number(r.loadUs) / 1e6;
  return { ops: size, seconds, latenciesUs: [], cpuUs: Number(r.cpuUs), metrics: { loadMs: seconds * 1000, heapBytesPerNode: Number(r.heapBytes) / size } };
}

/** `count` changes one after another on a cache of its own (see {@link changeLatencies}). */
async function oursEvents(zk: ZooKeeper, writer: ZooKeeper, path: string, count: number): Promise<Sample> {
  const cache = await TreeCache.open(zk, path);
  try {
    return await changeLatencies(cache, writer, path, count);
  } finally {
    await cache.close();
  }
}

async function curatorEvents(run: () => Promise<Record<string, unknown>>): Promise<Sample> {
  const r = await run();
  const latenciesUs = (r.latenciesUs as number[]).map(Number);
  return { ops: latenciesUs.length, seconds: Number(r.seconds), latenciesUs, cpuUs: Number(r.cpuUs) };
}

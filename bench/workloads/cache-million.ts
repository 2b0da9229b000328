/**
 * The tree cache at scale (issue 26): a tree of about a million nodes loaded by ours (TreeCache)
 * and by Curator's CuratorCache in the same run: the load's time and CPU, the memory the open
 * cache holds per node, then the latency of a change with the big tree cached.
 *
 * Opt-in: only with `ZK_BENCH_CACHE_NODES=<n>` in the environment (the tree is rounded to
 * directories of 999 leaves: 1,000,000 gives 1,000,001 nodes), besides `--only` as usual. Curator
 * loads it twice: with CuratorCache, and with the TreeCache recipe (row client 'Curator TreeCache'). The
 * tree is populated once per run, in multi transactions of 1,000 creates (a directory and its
 * leaves), 8 in flight; each client loads it once (no warm-up load: the warm-up repetition only
 * times a few changes of a small cache). Curator's load is bounded by `ZK_BENCH_CACHE_BOUND_S`
 * (600 s by default; a cache that gains no node for 30 s after its initialized callback is not
 * waited for): then the row reports the nodes it had reached (`complete=0`), and its
 * event row is left out (with the reason in the results' skipped list).
 */
import { ZooKeeper, type TreeCache } from '@zk/protocol';
import type { Bench, Repetition } from '../lib/bench.js';
import type { LineChild } from '../lib/child.js';
import { CLIENT, WORKLOAD } from '../lib/names.js';
import type { Sample } from '../lib/stats.js';
import { changeLatencies, curatorCommand, loadOurs } from './cache-common.js';

const LEAVES = 999;
const PAYLOAD = 'x'.repeat(32);
/**
 * The row client of Curator's older TreeCache recipe: CuratorCache stops at 65,535 reads in flight
 * (its Phaser's limit), so the big tree is also loaded by the recipe CuratorCache replaced.
 */
const CURATOR_TREE_CACHE = 'Curator TreeCache';
/** The CacheBenchDriver's name for each: CuratorCache, TreeCache. */
type CuratorKind = 'cache' | 'tree';
/** The session timeout of every client of the big tree (ours and Curator's). */
export const BIG_SESSION_MS = 40_000;
/** Multi transactions in flight while populating. */
const IN_FLIGHT = 8;

/** The tree size asked for in the environment, or 0 (the workloads are off). */
export function millionNodesWanted(env: NodeJS.ProcessEnv = process.env): number {
  const n = Number(env.ZK_BENCH_CACHE_NODES ?? 0);
  return Number.isSafeInteger(n) && n >= 1000 ? n : 0;
}

/**
 * Runs the big-tree rows under `base` when {@link millionNodesWanted}: ours, and Curator's when
 * `driver` (the CacheBenchDriver process) is given.
 */
export async function millionWorkloads(bench: Bench, connect: string, driver: LineChild | undefined, base: string): Promise<void> {
  const wanted = millionNodesWanted();
  if (wanted === 0) return;
  const dirs = Math.max(1, Math.round(wanted / (LEAVES + 1)));
  const nodes = 1 + dirs * (LEAVES + 1);
  const load = WORKLOAD.cacheLoad(nodes);
  const event = WORKLOAD.cacheEventAt(nodes);
  if (!bench.wants(load) && !bench.wants(event)) return;
  const tree = `${base}/cache-million`;
  const zk = await ZooKeeper.connect(connect, { sessionTimeout: BIG_SESSION_MS });
  const writer = await ZooKeeper.connect(connect, { sessionTimeout: BIG_SESSION_MS });
  const boundS = Number(process.env.ZK_BENCH_CACHE_BOUND_S ?? 600);
  let ours: TreeCache | undefined;
  /** Curator's caches that held the whole tree (the event row runs on them): by driver kind. */
  const held = new Set<CuratorKind>();
  const curatorLoad = (client: string, kind: CuratorKind): readonly [string, Repetition] => [
    client,
    async (warmup) => {
      if (warmup || !driver) return skipped();
      const r = await curatorCommand(driver, `hold ${tree} ${boundS} ${nodes}${kind === 'tree' ? ' tree' : ''}`, 'HELD', (boundS + 120) * 1000);
      if (r.complete === true) held.add(kind);
      else bench.skipped[`${event} / ${client}`] = `${client} did not hold the ${nodes.toLocaleString('en-US')} nodes: ${JSON.stringify(r)}`;
      return curatorSample(r, nodes);
    },
  ];
  const curatorEvents = (client: string, kind: CuratorKind): readonly [string, Repetition] => [
    client,
    (w) => curatorEventSample(curatorCommand(driver as LineChild, `heldlatency ${kind} ${tree}/d${kind === 'tree' ? 2 : 1}/n0 ${w ? 20 : changes}`, 'LATENCY', 120_000)),
  ];
  const changes = bench.n(500, 50);
  try {
    const t0 = performance.now();
    await populate(zk, tree, dirs);
    process.stderr.write(`bench: ${nodes.toLocaleString('en-US')} nodes created in ${((performance.now() - t0) / 1000).toFixed(1)} s\n`);
    // CuratorCache beside ours first; the TreeCache recipe last, on its own: on a 1 GiB server
    // its two watches per node can exhaust the server's heap, which must not cost the other rows.
    const curators = driver ? [[CLIENT.curator, 'cache'] as const] : [];
    await bench.compare(
      'scale',
      load,
      'nodes',
      [[CLIENT.ours, async (warmup) => (warmup ? skipped() : oursLoad(zk, tree, nodes, (c) => (ours = c)))], ...curators.map(([client, kind]) => curatorLoad(client, kind))],
      1,
    );
    await bench.compare(
      'scale',
      event,
      'events',
      [
        [CLIENT.ours, (w) => (ours ? changeLatencies(ours, writer, `${tree}/d0/n0`, w ? 20 : changes) : Promise.reject(new Error('our cache did not load')))],
        ...curators.filter(([, kind]) => held.has(kind)).map(([client, kind]) => curatorEvents(client, kind)),
      ],
      1,
    );
    if (driver) {
      try {
        await bench.compare('scale', load, 'nodes', [curatorLoad(CURATOR_TREE_CACHE, 'tree')], 1);
        if (held.has('tree')) await bench.compare('scale', event, 'events', [curatorEvents(CURATOR_TREE_CACHE, 'tree')], 1);
      } catch (err) {
        bench.skipped[`${load} / ${CURATOR_TREE_CACHE}`] = `failed: ${err instanceof Error ? err.message : String(err)}`;
      }
    }
  } finally {
    await (ours as TreeCache | undefined)?.close();
    if (driver) await curatorCommand(driver, 'release', 'RELEASED', 60_000).catch(() => undefined);
    await writer.close();
    await zk.close();
  }
}

/** The tree: a root, `dirs` directories of {@link LEAVES} leaves, 32 B each; one multi per directory, {@link IN_FLIGHT} at a time. */
async function populate(zk: ZooKeeper, root: string, dirs: number): Promise<void> {
  await zk.create(root, PAYLOAD);
  let next = 0;
  const worker = async (): Promise<void> => {
    for (let d = next++; d < dirs; d = next++) {
      const t = zk.transaction().create(`${root}/d${d}`, PAYLOAD);
      for (let j = 0; j < LEAVES; j++) t.create(`${root}/d${d}/n${j}`, PAYLOAD);
      await t.commit();
    }
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
}

/** The warm-up repetition of a load: nothing (a second million-node load is not worth its minutes). */
async function skipped(): Promise<Sample> {
  return { ops: 0, seconds: 1, latenciesUs: [], cpuUs: 0 };
}

/** One load, the cache left open (handed to `keep`) for the event row. */
async function oursLoad(zk: ZooKeeper, path: string, nodes: number, keep: (cache: TreeCache) => void): Promise<Sample> {
  const { sample, cache } = await loadOurs(zk, path, nodes);
  keep(cache);
  return sample;
}

/**
 * Curator's load: time until the cache held every node (or the bound); `initMs` until its
 * initialized callback; `complete` 0 with the nodes it reached in ops when it did not get there.
 */
function curatorSample(r: Record<string, unknown>, nodes: number): Sample {
  const size = Number(r.size);
  const seconds = Number(r.loadUs) / 1e6;
  return {
    ops: size,
    seconds,
    latenciesUs: [],
    cpuUs: Number(r.cpuUs),
    metrics: {
      loadMs: seconds * 1000,
      initMs: Number(r.initUs) / 1000,
      heapBytesPerNode: Number(r.heapBytes) / Math.max(1, size),
      initialized: r.initialized === true ? 1 : 0,
      complete: r.complete === true && size === nodes ? 1 : 0,
      suspended: Number(r.suspended),
      lost: Number(r.lost),
    },
  };
}

async function curatorEventSample(reply: Promise<Record<string, unknown>>): Promise<Sample> {
  const r = await reply;
  const latenciesUs = (r.latenciesUs as number[]).map(Number);
  return { ops: latenciesUs.length, seconds: Number(r.seconds), latenciesUs, cpuUs: Number(r.cpuUs) };
}

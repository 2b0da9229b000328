/**
 * Recipe workloads (issue 23): the queue (put and take, one producer, one consumer, plain and safe
 * mode), the AtomicLong under contention and a discovery query, ours against Curator's
 * DistributedQueue, DistributedAtomicLong and curator-x-discovery's ServiceDiscovery
 * (bench/java/RecipeBenchDriver.java, DiscoveryBenchDriver.java) on the same server in the same run.
 *
 * Besides time and CPU, each row counts what the server received: its `mntr` packets_received
 * before and after the measured part, per item (increment, query). That counts both clients the
 * same way, from outside; it includes the pings of every session open on the server then (a few
 * per second).
 */
import { fileURLToPath } from 'node:url';
import { ZooKeeper } from '@zk/protocol';
import { AtomicLong, Queue, ServiceDiscovery, stringSerializer } from '@zk/locks';
import { compileCurator, compileJava, type CompiledJava } from '@zk/test/harness';
import { counted, serversOf } from '../lib/server-counters.js';
import { JVM_METER } from '../peers/java.js';
import type { Bench, Repetition } from '../lib/bench.js';
import { LineChild } from '../lib/child.js';
import { CLIENT, WORKLOAD } from '../lib/names.js';
import { measure, timed, type Sample } from '../lib/stats.js';

const RECIPE_SOURCE = fileURLToPath(new URL('../../java/RecipeBenchDriver.java', import.meta.url));
const DISCOVERY_SOURCE = fileURLToPath(new URL('../../java/DiscoveryBenchDriver.java', import.meta.url));
/** Sessions on the contended counter. */
const COUNTER_SESSIONS = 8;
/** Instances of the queried service. */
const INSTANCES = 10;
/** Our counter's settings, Curator's RetryNTimes(10, 10 ms) and PromotedToLock(30 s, the same retries): 11 tries, 10 ms apart at most. */
const COUNTER_RETRY = { maxTries: 11, baseDelay: 10, maxDelay: 10 } as const;
/** How long one reply of the driver may take. */
const REPLY_MS = 120_000;

/** Runs the recipe workloads under `base`; Curator's beside ours when `curator` (the Java peer runs). */
export async function recipeWorkloads(bench: Bench, connect: string, curator: boolean, base: string): Promise<void> {
  const put = WORKLOAD.queuePut;
  const takes = [false, true].map((safe) => [safe, WORKLOAD.queueTake(safe)] as const);
  const increment = WORKLOAD.atomicIncrement(COUNTER_SESSIONS);
  const query = WORKLOAD.discoveryQuery(INSTANCES);
  if (![put, increment, query, ...takes.map(([, t]) => t)].some((w) => bench.wants(w))) return;
  const servers = serversOf(connect);
  const zk = await ZooKeeper.connect(connect, { sessionTimeout: 10_000 });
  let compiled: CompiledJava[] = [];
  let driver: LineChild | undefined;
  let discovery = false;
  try {
    if (curator) ({ compiled, driver, discovery } = await startDriver(connect));
    if (curator && !discovery && bench.wants(query)) bench.skipped[`Curator (${query})`] = 'no curator-x-discovery jar for this ZooKeeper line (apt-get install libcurator-discovery-java)';
    const java = (command: string) => curatorRun(driver as LineChild, command);
    const root = `${base}/recipes`;
    await zk.create(root);
    let runs = 0;
    const fresh = (name: string) => `${root}/${name}-${++runs}`;

    const items = bench.n(2000, 50);
    await bench.compare('locks', put, 'items', [
      [CLIENT.ours, (w) => counted(servers, 'Item', () => oursPut(zk, fresh('put'), w ? 100 : items))],
      ...(driver ? [[CLIENT.curator, (w: boolean) => counted(servers, 'Item', () => java(`put ${fresh('put')} ${w ? 100 : items}`))] as const] : []),
    ] as ReadonlyArray<readonly [string, Repetition]>);

    for (const [safe, workload] of takes) {
      const lockFor = (path: string) => (safe ? `${path}-locks` : undefined);
      const filled = async (count: number) => {
        const path = fresh('take');
        await fill(zk, path, count);
        return path;
      };
      await bench.compare('locks', workload, 'items', [
        [
          CLIENT.ours,
          async (w) => {
            const path = await filled(w ? 100 : items);
            return counted(servers, 'Item', () => oursTake(zk, path, lockFor(path), w ? 100 : items));
          },
        ],
        ...(driver
          ? [
              [
                CLIENT.curator,
                async (w: boolean) => {
                  const path = await filled(w ? 100 : items);
                  return counted(servers, 'Item', () => java(`take ${path} ${lockFor(path) ?? '-'} ${w ? 100 : items}`));
                },
              ] as const,
            ]
          : []),
      ] as ReadonlyArray<readonly [string, Repetition]>);
    }

    if (bench.wants(increment)) {
      const seconds = Math.max(1, 5 * bench.scale);
      const clients = await Promise.all(Array.from({ length: COUNTER_SESSIONS }, () => ZooKeeper.connect(connect, { sessionTimeout: 10_000 })));
      try {
        const path = `${root}/counter`;
        const counters = clients.map((c) => new AtomicLong(c, path, { retry: COUNTER_RETRY, promotedToLock: { lockPath: `${path}-lock`, timeout: 30_000 } }));
        await bench.compare('locks', increment, 'increments', [
          [CLIENT.ours, (w) => counted(servers, 'Increment', () => oursIncrement(counters, w ? 1 : seconds))],
          ...(driver ? [[CLIENT.curator, (w: boolean) => counted(servers, 'Increment', () => java(`increment ${path}-curator ${path}-curator-lock ${COUNTER_SESSIONS} ${w ? 1 : seconds}`))] as const] : []),
        ] as ReadonlyArray<readonly [string, Repetition]>);
      } finally {
        await Promise.all(clients.map((c) => c.close()));
      }
    }

    if (bench.wants(query)) {
      const basePath = `${root}/services`;
      const registrar = await ZooKeeper.connect(connect, { sessionTimeout: 10_000 });
      try {
        const registered = await ServiceDiscovery.open(registrar, { basePath });
        for (let i = 0; i < INSTANCES; i++) await registered.register({ name: 'bench', id: `instance-${i}`, address: '10.0.0.1', port: 8000 + i, payload: { lang: 'node', n: i } });
        const ours = await ServiceDiscovery.open(zk, { basePath });
        const queries = bench.n(1000, 50);
        await bench.compare('locks', query, 'queries', [
          [CLIENT.ours, (w) => counted(servers, 'Query', () => oursQuery(ours, w ? 50 : queries))],
          ...(driver && discovery ? [[CLIENT.curator, (w: boolean) => counted(servers, 'Query', () => java(`query ${basePath} bench ${w ? 50 : queries} ${INSTANCES}`))] as const] : []),
        ] as ReadonlyArray<readonly [string, Repetition]>);
        await ours.close();
        await registered.close();
      } finally {
        await registrar.close();
      }
    }
  } finally {
    await driver?.end();
    for (const c of compiled) c.remove();
    await zk.close();
  }
}

/**
 * Compiles and starts the Curator driver: RecipeBenchDriver, or DiscoveryBenchDriver (its commands
 * and the discovery query) when the line's Curator classpath has curator-x-discovery.
 */
async function startDriver(connect: string): Promise<{ compiled: CompiledJava[]; driver: LineChild; discovery: boolean }> {
  const recipe = compileCurator([RECIPE_SOURCE, JVM_METER]);
  const compiled = [recipe];
  const discovery = recipe.classpath.split(':').some((jar) => jar.includes('curator-x-discovery'));
  if (discovery) compiled.push(compileJava([DISCOVERY_SOURCE], recipe.classpath.split(':')));
  const main = compiled[compiled.length - 1]!;
  const driver = new LineChild('Curator recipe driver', 'java', ['-cp', main.classpath, discovery ? 'DiscoveryBenchDriver' : 'RecipeBenchDriver', connect]);
  await driver.line('READY', 60_000);
  return { compiled, driver, discovery };
}

/** Sends one command to the driver and reads its RESULT line as a sample (rejects with the driver's error). */
async function curatorRun(driver: LineChild, command: string): Promise<Sample> {
  driver.send(command);
  const reply = (await driver.line('RESULT', REPLY_MS)).text.slice('RESULT '.length);
  if (reply.startsWith('ERROR ')) throw new Error(`Curator recipe driver, ${command}: ${reply.slice('ERROR '.length)}`);
  const r = JSON.parse(reply) as { ops: number; seconds: number; cpuUs: number; latenciesUs: number[]; metrics: Record<string, number> };
  if (r.metrics.lost) throw new Error(`Curator recipe driver, ${command}: ${r.metrics.lost} increments lost`);
  return { ops: r.ops, seconds: r.seconds, cpuUs: r.cpuUs, latenciesUs: r.latenciesUs, metrics: r.metrics };
}

/** `count` puts of `item-<i>` into a fresh queue, one after another. */
async function oursPut(zk: ZooKeeper, path: string, count: number): Promise<Sample> {
  const queue = new Queue(zk, path, { serializer: stringSerializer });
  await zk.create(path); // as Curator's start(): the queue path exists before the first put
  let i = 0;
  return measure(count, 1, () => queue.put(`item-${i++}`));
}

/** Puts `count` items into the queue at `path`, 64 at a time (not measured). */
async function fill(zk: ZooKeeper, path: string, count: number): Promise<void> {
  const queue = new Queue(zk, path, { serializer: stringSerializer });
  for (let i = 0; i < count; i += 64) await Promise.all(Array.from({ length: Math.min(64, count - i) }, (_, j) => queue.put(`item-${i + j}`)));
}

/**
 * Takes `count` items from the queue at `path` (which holds them), one at a time, in safe mode
 * each completed before the next take. Timed until the last item is handed over; latencies: the
 * gaps between items handed over (the first from the start), as the Curator side's.
 */
async function oursTake(zk: ZooKeeper, path: string, lockPath: string | undefined, count: number): Promise<Sample> {
  const queue = new Queue(zk, path, { serializer: stringSerializer, ...(lockPath === undefined ? {} : { lockPath }) });
  let last: { complete(): Promise<void> } | undefined;
  const sample = await timed(async () => {
    const latenciesUs: number[] = [];
    const start = performance.now();
    let previous = start;
    for (let i = 0; i < count; i++) {
      if (last) await last.complete();
      last = await queue.take({ timeout: REPLY_MS });
      const now = performance.now();
      latenciesUs.push((now - previous) * 1000);
      previous = now;
    }
    return { ops: count, latenciesUs, seconds: (previous - start) / 1000 };
  });
  await last?.complete();
  const left = (await queue.list()).length;
  if (left !== 0) throw new Error(`ours left ${left} items in ${path}`);
  return sample;
}

/**
 * Every counter (one per session) loops increment for `seconds` after a common start: the
 * increments that succeeded inside the window and their latency; metrics as the Curator side's.
 */
async function oursIncrement(counters: readonly AtomicLong[], seconds: number): Promise<Sample> {
  const before = (await counters[0]!.get()).postValue;
  let succeeded = 0;
  let failed = 0;
  let tries = 0;
  let promoted = 0;
  const sample = await timed(async () => {
    const latenciesUs: number[] = [];
    const deadline = performance.now() + seconds * 1000;
    await Promise.all(
      counters.map(async (counter) => {
        while (performance.now() < deadline) {
          const t0 = performance.now();
          const r = await counter.increment();
          const t = performance.now();
          if (r.succeeded) succeeded++;
          else failed++;
          if (t >= deadline || !r.succeeded) continue;
          latenciesUs.push((t - t0) * 1000);
          tries += r.stats.optimisticTries;
          if (r.stats.promotedTries > 0) promoted++;
        }
      }),
    );
    return { ops: latenciesUs.length, latenciesUs, seconds };
  });
  const lost = Number((await counters[0]!.get()).postValue - before) - succeeded;
  if (lost !== 0) throw new Error(`ours lost ${lost} increments`);
  return { ...sample, metrics: { optimisticTriesPerIncrement: tries / sample.ops, promotedShare: promoted / sample.ops, failed, lost } };
}

/** `count` queries of the service `bench`, one after another, each checked to find every instance. */
function oursQuery(discovery: ServiceDiscovery, count: number): Promise<Sample> {
  return measure(count, 1, async () => {
    const found = await discovery.queryForInstances('bench');
    if (found.length !== INSTANCES) throw new Error(`ours found ${found.length} instances, expected ${INSTANCES}`);
  });
}

/**
 * The bench: raw client, lock and scale workloads against real ZooKeeper servers, ours side by
 * side with node-zookeeper-client, ZooKeeper's Java client and Curator in the same run.
 * Medians of several repetitions with their spread; nothing here passes or fails.
 *
 *   node --expose-gc bench/dist/run.js [--connect hosts] [--reps 5] [--quick] [--only regex]
 *                                      [--no-ensemble] [--ensembles 3,5] [--no-java] [--pinned]
 *
 * Without --connect (or ZK_CONNECT) it starts a local standalone server (every workload, the
 * scale curves among them), then a local 3-node and a local 5-node ensemble (the main raw and
 * lock workloads again, marked "(3-node)" and "(5-node)").
 */
import { spawnSync } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { mkdirSync, writeFileSync, copyFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { ZooKeeper } from '@zk/protocol';
import { startZooKeeper, versionManifest, type ZooKeeperEnsemble } from '@zk/test/harness';
import { Bench } from './lib/bench.js';
import { renderJson, renderMarkdown, type ReportMeta } from './lib/report.js';
import { renderScaleSvg, renderSvg } from './lib/svg.js';
import { startJavaDriver, type JavaDriver } from './peers/java.js';
import { connectNzc, type NzcClient } from './peers/nzc.js';
import { cacheWorkloads } from './workloads/cache.js';
import { handoffWorkloads } from './workloads/handoff.js';
import { leaderWorkloads } from './workloads/leader.js';
import { lockWorkloads } from './workloads/locks.js';
import { rawWorkloads } from './workloads/raw.js';
import { recipeWorkloads } from './workloads/recipes.js';
import { scaleWorkloads } from './workloads/scale.js';
import { clientScaleWorkloads } from './workloads/scale-client.js';
import { semaphoreWorkloads } from './workloads/semaphore.js';
import { fencingWorkloads } from './workloads/fencing.js';
import { AUTH_CONNECT_WORKLOAD, authConnectWorkloads } from './workloads/auth-connect.js';
import { consistencyWorkloads } from './workloads/consistency.js';
import { FLEET_SERVER_PROPERTIES, FLEET_TICK_MS, fleetSettings, fleetWanted, fleetWorkloads } from './workloads/fleet.js';
import { serversOf } from './lib/server-counters.js';
import { WORKLOAD } from './lib/names.js';
import { commitOf, machineOf } from './lib/machine.js';
import { secureOurClient } from './lib/secure.js';
import { startTelemetry } from './lib/telemetry.js';

const args = process.argv.slice(2);
const opt = (name: string) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : undefined;
};
const flag = (name: string) => args.includes(`--${name}`);
if (flag('help')) {
  process.stdout.write(`usage: node --expose-gc bench/dist/run.js [--connect hosts] [--reps N] [--quick] [--only regex] [--no-ensemble] [--ensembles 3,5] [--no-java] [--pinned] [--acl spec]\n`);
  process.exit(0);
}
const quick = flag('quick');
const reps = Number(opt('reps') ?? (quick ? 2 : 5));
const only = opt('only');
const connectArg = opt('connect') ?? process.env.ZK_CONNECT;
// A secured ensemble (lib/secure.ts): our client alone, with zk-lock's TLS and credential variables.
const secured = connectArg ? secureOurClient(opt('acl')) : undefined;
if (opt('acl') !== undefined && !connectArg) throw new Error('--acl applies to an existing ensemble (--connect or ZK_CONNECT)');
/** The local ensembles that run the main workloads again after the standalone pass. */
const ensembles = flag('no-ensemble') ? [] : (opt('ensembles') ?? '3,5').split(',').filter(Boolean).map(Number);
for (const size of ensembles) if (size !== 3 && size !== 5) throw new Error(`--ensembles: ${size} is not 3 or 5`);

// Pinned mode: the servers on the first half of the cores, this process (and the Java driver it
// starts) on the other half, so client CPU and server CPU do not compete. The parent splits the
// cores and re-runs itself under taskset (inside, availableParallelism() sees only its half).
const pinned = flag('pinned');
const inherited = process.env.ZK_BENCH_PINNED?.split('|');
const cores = availableParallelism();
const serverCpus = inherited?.[0] ?? `0-${Math.max(0, Math.floor(cores / 2) - 1)}`;
const clientCpus = inherited?.[1] ?? `${Math.floor(cores / 2)}-${cores - 1}`;
if (pinned && !inherited) {
  if (cores < 2) throw new Error('--pinned needs at least 2 cores');
  const r = spawnSync('taskset', ['-c', clientCpus, process.execPath, ...process.execArgv, ...process.argv.slice(1)], { stdio: 'inherit', env: { ...process.env, ZK_BENCH_PINNED: `${serverCpus}|${clientCpus}` } });
  if (r.error) throw new Error(`--pinned needs taskset (util-linux): ${r.error.message}`);
  process.exit(r.status ?? 1);
}

const bench = new Bench(reps, quick ? 0.2 : 1, only ? new RegExp(only) : undefined);
if (!(globalThis as { gc?: unknown }).gc) process.stderr.write('note: run node with --expose-gc for steadier heap figures\n');
const started: ZooKeeperEnsemble[] = [];
// An accept queue of 1,024 (ZooKeeper leaves the JVM's 50 by default): 1,000 sessions dialing
// at once would otherwise overflow it, and the kernel retries a dropped SYN only after a second.
const serverOptions = { own: true, jvmOptions: ['-Xmx1g'], config: { clientPortListenBacklog: 1024 }, ...(pinned ? { cpus: serverCpus } : {}) } as const;
let serverDescription = 'external';
const versions: Record<string, string> = { 'node-zookeeper-client': '1.1.3' };
// The local servers, and the Curator the recipe, cache, leader and scale drivers compile against,
// follow ZK_VERSION (the harness's line: 3.9 brings Curator 5.7.1); the raw driver uses Debian's jars.
// Against an external ensemble on a machine without the jars there is no manifest: nothing to record.
const line = (() => {
  try {
    return versionManifest();
  } catch {
    return undefined;
  }
})();
if (line && !connectArg) versions['ZooKeeper server'] = line.version;
if (line?.curator) versions['Curator (recipe, cache, leader and scale drivers)'] = line.curator.version;

/** Every workload (or, for an ensemble pass, the main ones) against `connect`. */
async function pass(connect: string, full: boolean): Promise<void> {
  const base = `/bench-${process.pid}-${Date.now()}`;
  const zk = await ZooKeeper.connect(connect, { sessionTimeout: 10_000 });
  const coalesced = await ZooKeeper.connect(connect, { sessionTimeout: 10_000, coalesceReads: true });
  let nzc: NzcClient | undefined;
  let java: JavaDriver | undefined;
  try {
    if (secured) {
      bench.skipped['node-zookeeper-client, ZooKeeper Java client, Curator'] = `a secured ensemble (${secured.summary}): the peers are not given these credentials`;
    } else {
      nzc = await connectNzc(connect);
      if (!flag('no-java')) {
        const driver = await startJavaDriver(connect);
        if ('skipped' in driver) bench.skipped['ZooKeeper Java client, Curator'] = driver.skipped;
        else {
          java = driver;
          for (const [k, v] of Object.entries(driver.versions)) versions[k === 'zookeeper' ? 'ZooKeeper Java client' : k === 'curator' ? 'Curator' : k] = v;
        }
      } else bench.skipped['ZooKeeper Java client, Curator'] = '--no-java';
    }
    await zk.create(base);
    await rawWorkloads(bench, { connect, zk, coalesced, nzc, java, secured: secured !== undefined }, base);
    await consistencyWorkloads(bench, connect, base);
    await lockWorkloads(bench, connect, zk, java, base);
    await handoffWorkloads(bench, connect, java, base);
    await semaphoreWorkloads(bench, connect, java, base);
    await leaderWorkloads(bench, connect, java !== undefined, base);
    if (full) await scaleWorkloads(bench, connect, base, java !== undefined);
    if (full) await clientScaleWorkloads(bench, connect, zk, base, java !== undefined);
    if (full) await cacheWorkloads(bench, connect, zk, java !== undefined, base);
    if (full) await recipeWorkloads(bench, connect, java !== undefined, base);
  } finally {
    nzc?.close();
    await java?.close();
    await coalesced.close();
    await zk.close();
  }
}

// OTEL_* settings with @zk/otel and an SDK installed: our client traced and measured (lib/telemetry.ts).
const telemetry = await startTelemetry(process.env);
if (telemetry.on) {
  process.stderr.write('bench: OpenTelemetry on (OTEL_* settings): our figures include the instrumentation\n');
  bench.skipped['uninstrumented figures'] = 'OpenTelemetry on (OTEL_* settings): our client was traced and measured through @zk/otel';
} else if (process.env.OTEL_TRACES_EXPORTER || process.env.OTEL_METRICS_EXPORTER || process.env.OTEL_EXPORTER_OTLP_ENDPOINT) process.stderr.write(`bench: OpenTelemetry off: ${telemetry.why}\n`);
try {
  process.stderr.write(`bench: ${reps} repetitions${quick ? ', quick' : ''}${pinned ? `, pinned (servers on cores ${serverCpus}, clients on ${clientCpus})` : ''}\n`);
  if (connectArg) {
    await pass(connectArg, true);
  } else {
    const standalone = await startZooKeeper({ servers: 1, ...serverOptions });
    started.push(standalone);
    serverDescription = 'local ZooKeeper standalone';
    await pass(standalone.connectString, true);
    await standalone.close();
    // The same selection on each ensemble, one at a time (servers of one pass only on the cores).
    // Not started when --only leaves none of it.
    const ensembleSelection = [WORKLOAD.get1, WORKLOAD.get64, WORKLOAD.createDelete, WORKLOAD.uncontended('Mutex'), WORKLOAD.contended('Mutex', 8)];
    for (const size of ensembleSelection.some((w) => bench.wants(w)) ? ensembles : []) {
      const ensemble = await startZooKeeper({ servers: size as 3 | 5, ...serverOptions });
      started.push(ensemble);
      serverDescription += `, then a local ${size}-node ensemble`;
      bench.suffix = ` (${size}-node)`;
      bench.select(/^(getData 100 B|create\+delete|uncontended acquire\+release: Mutex|contended Mutex, 8)/);
      await pass(ensemble.connectString, false);
      await ensemble.close();
    }
  }
  // Fenced writes against plain ones on Postgres and Redis (issue 41): servers of their own.
  bench.select(undefined);
  bench.suffix = '';
  await fencingWorkloads(bench);
  // Connects with credentials, plain, digest and Kerberos (issue 40): servers and a KDC of their own.
  if (connectArg) {
    if (bench.wants(AUTH_CONNECT_WORKLOAD)) bench.skipped[AUTH_CONNECT_WORKLOAD] = 'an existing ensemble (--connect): the row needs servers of its own (a DIGEST-MD5 JAAS section, a Kerberized one and a private KDC)';
  } else await authConnectWorkloads(bench, { java: !flag('no-java'), serverOptions });
  // The lease fleet (issue 35, workloads/fleet.ts) on servers of its own with tickTime 2 s: a
  // standalone server, then a 3-node ensemble when the ensemble passes include 3.
  bench.select(undefined);
  bench.suffix = '';
  if (fleetWanted(bench)) {
    const fleetBase = `/bench-fleet-${process.pid}-${Date.now()}`;
    if (connectArg) {
      if (secured) bench.skipped['lease fleet'] = 'a secured ensemble: the fleet row runs unsecured only';
      else await fleetWorkloads(bench, { connect: connectArg, servers: serversOf(connectArg), curator: !flag('no-java') }, fleetBase);
    } else {
      for (const size of fleetSettings(process.env, bench.scale).servers.filter((s) => s === 1 || ensembles.includes(s))) {
        const ensemble = await startZooKeeper({ servers: size, ...serverOptions, tickTime: FLEET_TICK_MS, systemProperties: FLEET_SERVER_PROPERTIES });
        started.push(ensemble);
        serverDescription += `, then a local ${size === 1 ? 'standalone server' : `${size}-node ensemble`} with tickTime ${FLEET_TICK_MS} ms (lease fleet)`;
        bench.suffix = size === 1 ? '' : ` (${size}-node)`;
        await fleetWorkloads(bench, { connect: ensemble.connectString, servers: ensemble.servers, curator: !flag('no-java') }, fleetBase);
        await ensemble.close();
      }
      bench.suffix = '';
    }
  }
} finally {
  await Promise.all(started.map((e) => e.close()));
  if (telemetry.on) await telemetry.stop();
}

const meta: ReportMeta = {
  date: new Date().toISOString(),
  node: process.version,
  server: serverDescription,
  connect: connectArg ?? 'local',
  reps,
  quick,
  pinned: pinned ? { servers: serverCpus, clients: clientCpus } : undefined,
  skipped: bench.skipped,
  versions,
  machine: machineOf(),
  commit: commitOf(fileURLToPath(new URL('../..', import.meta.url))),
  command: `node ${process.execArgv.join(' ')} bench/dist/run.js ${process.argv.slice(2).join(' ')}`.replace(/ +/g, ' ').trim(),
};
process.stdout.write(renderMarkdown(bench.rows, meta));
const dir = fileURLToPath(new URL('../results/', import.meta.url));
mkdirSync(dir, { recursive: true });
const stamp = meta.date.replace(/[:.]/g, '-');
writeFileSync(`${dir}${stamp}.json`, renderJson(bench.rows, meta));
writeFileSync(`${dir}${stamp}.svg`, renderSvg(bench.rows, meta));
copyFileSync(`${dir}${stamp}.json`, `${dir}latest.json`);
copyFileSync(`${dir}${stamp}.svg`, `${dir}latest.svg`);
// The scale curves' chart, when any curve ran.
const scaleSvg = renderScaleSvg(bench.rows, meta);
if (scaleSvg !== undefined) {
  writeFileSync(`${dir}${stamp}-scale.svg`, scaleSvg);
  copyFileSync(`${dir}${stamp}-scale.svg`, `${dir}latest-scale.svg`);
}
process.stderr.write(`results: ${dir}${stamp}.json and .svg${scaleSvg === undefined ? '' : ', -scale.svg'} (also latest.*)\n`);

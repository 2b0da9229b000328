/**
 * Raw client workloads: ours, node-zookeeper-client and ZooKeeper's Java client on the same
 * server, repetitions interleaved.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { CreateMode, ZooKeeper } from '@zk/protocol';
import { bareSocket } from '../lib/bare-socket.js';
import type { Bench, Repetition } from '../lib/bench.js';
import { CLIENT, WORKLOAD } from '../lib/names.js';
import { connectLoop, measure, median, timed, type Sample } from '../lib/stats.js';
import type { JavaDriver } from '../peers/java.js';
import { connectNzc, type NzcClient } from '../peers/nzc.js';

const execFileP = promisify(execFile);

/** The clients of the raw workloads. */
export interface RawClients {
  readonly connect: string;
  readonly zk: ZooKeeper;
  /** Ours with `coalesceReads`, for the getData workload at 64 outstanding. */
  readonly coalesced: ZooKeeper;
  readonly nzc: NzcClient | undefined;
  readonly java: JavaDriver | undefined;
  /** A secured ensemble (lib/secure.ts): the fresh-process connect row is left out. */
  readonly secured?: boolean | undefined;
}

/** Runs every raw workload under `base` (created here). */
export async function rawWorkloads(bench: Bench, c: RawClients, base: string): Promise<void> {
  const { zk, coalesced, nzc, java } = c;
  const node = `${base}/node`;
  await zk.create(node, Buffer.alloc(100, 7));
  const n1 = bench.n(3000, 100);
  const n64 = bench.n(40_000, 1000);
  const warm = (n: number, w: boolean) => (w ? Math.max(100, Math.round(n / 5)) : n);

  const three = (ours: Repetition, peer: Repetition | undefined, javaRep: Repetition | undefined) =>
    [[CLIENT.ours, ours], ...(nzc && peer ? [[CLIENT.nzc, peer] as const] : []), ...(java && javaRep ? [[CLIENT.java, javaRep] as const] : [])] as const;

  const get = (outstanding: number, n: number) =>
    three(
      (w) => measure(warm(n, w), outstanding, () => zk.getData(node)),
      (w) => measure(warm(n, w), outstanding, () => nzc!.getData(node)),
      (w) => java!.run({ workload: 'getData', path: node, count: warm(n, w), outstanding }),
    );
  // The floor at one outstanding: a bare socket writing fixed getData frames (see bareGets).
  await bench.compare('raw', WORKLOAD.get1, 'ops', [...get(1, n1), [CLIENT.socketFloor, (w) => bareGets(c.connect, node, warm(n1, w))]]);
  await bench.compare('raw', WORKLOAD.get64, 'ops', get(64, n64));
  // With coalesceReads the 64 reads of a tick share one multiRead: ten times the operations, so
  // that a repetition lasts about as long as the others'. Run on its own, after the peers:
  // interleaved with them, its half a million reads per repetition left the server slower for
  // whichever client came next (0.81x node-zookeeper-client for our default client in one run).
  const n64c = n64 * 10;
  await bench.compare('raw', WORKLOAD.get64, 'ops', [[CLIENT.oursCoalesced, (w) => measure(warm(n64c, w), 64, () => coalesced.getData(node))]]);

  const payload = Buffer.alloc(100, 1);
  const nSet = Math.round(n64 / 2);
  await bench.compare(
    'raw',
    WORKLOAD.set64,
    'ops',
    three(
      (w) => measure(warm(nSet, w), 64, () => zk.setData(node, payload)),
      (w) => measure(warm(nSet, w), 64, () => nzc!.setData(node, payload)),
      (w) => java!.run({ workload: 'setData', path: node, count: warm(nSet, w), outstanding: 64, size: 100 }),
    ),
  );

  const missing = `${base}/missing`;
  await bench.compare(
    'raw',
    WORKLOAD.exists1,
    'ops',
    three(
      (w) => measure(warm(n1, w), 1, () => zk.exists(missing)),
      (w) => measure(warm(n1, w), 1, () => nzc!.exists(missing)),
      (w) => java!.run({ workload: 'exists', path: missing, count: warm(n1, w), outstanding: 1 }),
    ),
  );

  // Each half timed on its own too: the lock targets compare with one create and one delete.
  const eph = `${base}/e`;
  const nPairs = Math.round(n1 / 2);
  const pairs = (create: () => Promise<unknown>, remove: () => Promise<unknown>) => (w: boolean) =>
    timed(async () => {
      const count = warm(nPairs, w);
      const creates: number[] = [];
      const deletes: number[] = [];
      const latenciesUs: number[] = [];
      for (let i = 0; i < count; i++) {
        const t0 = performance.now();
        await create();
        const t1 = performance.now();
        await remove();
        const t2 = performance.now();
        creates.push((t1 - t0) * 1000);
        deletes.push((t2 - t1) * 1000);
        latenciesUs.push((t2 - t0) * 1000);
      }
      return { ops: count, latenciesUs, metrics: { createP50Us: median(creates), deleteP50Us: median(deletes) } };
    });
  await bench.compare(
    'raw',
    WORKLOAD.createDelete,
    'ops',
    three(
      pairs(
        () => zk.create(eph, null, { mode: CreateMode.EPHEMERAL }),
        () => zk.delete(eph),
      ),
      pairs(
        () => nzc!.createEphemeral(eph),
        () => nzc!.remove(eph),
      ),
      (w) => java!.run({ workload: 'createDelete', path: eph, count: warm(nPairs, w) }),
    ),
  );

  // Connect: a loop of new sessions, each closed (and the close awaited) before the next: the
  // steady state, after 300 connects of warm-up per client. A process connects once or a few
  // times, so the first connects run cold code: that cost is the fresh-process row below, and
  // how it settles is bench/workloads/connect-warmup.mjs. With 50 connects of warm-up this row
  // still measured warming up, in favour of whichever client ran later (ours and ours with
  // coalesceReads, the same code on connect, 478 and 579 connects/s in one run).
  const nConnect = bench.n(200, 40);
  const CONNECT_WARMUP = 300;
  const connects = (open: () => Promise<() => Promise<void> | void>) => (w: boolean) => connectLoop(w ? CONNECT_WARMUP : nConnect, open);
  await bench.compare('raw', WORKLOAD.connect, 'connects', [
    ...three(
      connects(async () => {
        const client = await ZooKeeper.connect(c.connect, { sessionTimeout: 10_000 });
        return () => client.close();
      }),
      connects(async () => {
        const client = await connectNzc(c.connect);
        return () => client.close();
      }),
      (w) => java!.run({ workload: 'connect', count: w ? CONNECT_WARMUP : nConnect }),
    ),
    // coalesceReads: true coalesces without the multiRead probe that the default ('auto') sends
    // with a new session's handshake: one server reply and one socket read fewer per connect.
    [
      CLIENT.oursCoalesced,
      connects(async () => {
        const client = await ZooKeeper.connect(c.connect, { sessionTimeout: 10_000, coalesceReads: true });
        return () => client.close();
      }),
    ],
    // What no Node client can go below: a bare net.Socket that writes a ConnectRequest, then a
    // closeSession once the handshake is answered, and waits for the server to close; no
    // parsing, no timers, no session object.
    [CLIENT.socketFloor, connects(() => bareSession(c.connect))],
  ]);

  // The first connect of a fresh process (what a CLI or a short job pays): a new Node process
  // per repetition imports the client, connects, closes. Latency: process start to connected;
  // CPU per op: the process's CPU until connected, module loading included.
  if (c.secured) {
    bench.skipped[WORKLOAD.coldConnect] = 'a secured ensemble: a fresh process would load the credential readers too, which is not what the row measures';
    return;
  }
  const nCold = bench.n(10, 4);
  // The published entry is a bundle of tsc's output: remade first if tsc wrote something newer
  // (a no-op otherwise), so the row never loads stale code.
  await execFileP(process.execPath, [BUNDLER]);
  // "ours" loads the entry the published package names (one bundled file, scripts/bundle.mjs);
  // the unbundled row loads the workspace's tsc output, one module per source file.
  const cold = (client: ColdClient) => (w: boolean) => coldConnects(client, c.connect, w ? 2 : nCold);
  await bench.compare('raw', WORKLOAD.coldConnect, 'connects', [
    [CLIENT.ours, cold('ours')],
    [CLIENT.oursModules, cold('ours-modules')],
    ...(nzc ? [[CLIENT.nzc, cold('nzc')] as const] : []),
  ]);
}

/** One session on a bare socket (see the floor row); resolves connected with its close function. */
async function bareSession(connectString: string): Promise<() => Promise<void>> {
  const session = await bareSocket(connectString);
  return () => session.close();
}

/**
 * `count` getData requests of `path`, one at a time, on a bare socket of a new session (see
 * lib/bare-socket.ts): the handshake and the close are not timed.
 */
async function bareGets(connectString: string, path: string, count: number): Promise<Sample> {
  const session = await bareSocket(connectString, path);
  try {
    return await timed(async () => {
      const latenciesUs: number[] = [];
      for (let i = 0; i < count; i++) {
        const t0 = performance.now();
        await session.getData();
        latenciesUs.push((performance.now() - t0) * 1000);
      }
      return { ops: count, latenciesUs };
    });
  } finally {
    await session.close();
  }
}

const COLD_CHILD = fileURLToPath(new URL('../../workloads/cold-connect.mjs', import.meta.url));
const BUNDLER = fileURLToPath(new URL('../../../scripts/bundle.mjs', import.meta.url));

/** The clients bench/workloads/cold-connect.mjs can load. */
type ColdClient = 'ours' | 'ours-modules' | 'nzc';

/** `count` fresh processes, one connect each (see bench/workloads/cold-connect.mjs). */
async function coldConnects(client: ColdClient, connectString: string, count: number): Promise<Sample> {
  const latenciesUs: number[] = [];
  let cpuUs = 0;
  let seconds = 0;
  const importMs: number[] = [];
  for (let i = 0; i < count; i++) {
    const { stdout } = await execFileP(process.execPath, [COLD_CHILD, client, connectString], { timeout: 60_000 });
    const r = JSON.parse(stdout) as { connectedMs: number; cpuUs: number; importMs: number };
    latenciesUs.push(r.connectedMs * 1000);
    cpuUs += r.cpuUs;
    seconds += r.connectedMs / 1000;
    importMs.push(r.importMs);
  }
  return { ops: count, seconds, latenciesUs, cpuUs, metrics: { importMs: median(importMs) } };
}

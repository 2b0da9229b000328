/**
 * Lock workloads: uncontended acquire, contended hand-offs, the ExclusiveLock herd and a
 * read-write mix (the waiters curve is in scale.ts); Curator's InterProcessMutex and
 * InterProcessReadWriteLock beside ours where it has the same recipe.
 */
import { randomUUID } from 'node:crypto';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { hostname } from 'node:os';
import { ChannelName, CreateMode, ZooKeeper, type EventMessage } from '@zk/protocol';
import { ExclusiveLock, Mutex, ReadWriteLock, type LockBase } from '@zk/locks';
import { counting, type Bench, type Repetition } from '../lib/bench.js';
import { CLIENT, WORKLOAD } from '../lib/names.js';
import { counted, serversOf } from '../lib/server-counters.js';
import { median, timed, type Sample } from '../lib/stats.js';
import type { JavaDriver } from '../peers/java.js';

type LockKind = 'Mutex' | 'ExclusiveLock' | 'write lock';

const lockOf = (kind: LockKind, zk: ZooKeeper, path: string): LockBase =>
  kind === 'Mutex' ? new Mutex(zk, path) : kind === 'ExclusiveLock' ? new ExclusiveLock(zk, `${path}/lock`) : new ReadWriteLock(zk, path).writeLock();

async function sessions(connect: string, n: number): Promise<ZooKeeper[]> {
  return Promise.all(Array.from({ length: n }, () => ZooKeeper.connect(connect, { sessionTimeout: 10_000 })));
}

/** Runs every lock workload under `base`. */
export async function lockWorkloads(bench: Bench, connect: string, zk: ZooKeeper, java: JavaDriver | undefined, base: string): Promise<void> {
  const n = bench.n(1500, 50);
  const seconds = Math.max(1, 5 * bench.scale);
  const servers = serversOf(connect);

  // Uncontended: latency of the acquire alone; requests per acquire counted on the side (a
  // diagnostics subscriber costs CPU, so never during the timed loop).
  for (const kind of ['Mutex', 'ExclusiveLock', 'write lock'] as const) {
    const lock = lockOf(kind, zk, `${base}/uncontended/${kind.replace(' ', '-')}`);
    const ours: Repetition = async (w) => {
      const sample = await counted(servers, 'Acquisition', () => timed(async () => {
        const count = w ? Math.round(n / 5) : n;
        const latenciesUs: number[] = [];
        for (let i = 0; i < count; i++) {
          const t0 = performance.now();
          const lease = await lock.acquire();
          latenciesUs.push((performance.now() - t0) * 1000);
          await lease.release();
        }
        return { ops: count, latenciesUs };
      }));
      let requests = 0;
      for (let i = 0; i < 20; i++) {
        const { result: lease, count } = await counting(ChannelName.requestStart, () => lock.acquire());
        requests += count;
        await lease.release();
      }
      return { ...sample, metrics: { ...sample.metrics, requestsPerAcquire: requests / 20, ...(w ? {} : await baseline(zk, lock, `${base}/baseline`, 300)) } };
    };
    const curator = java && kind !== 'ExclusiveLock' ? java : undefined;
    const peerPath = `${base}/uncontended-curator/${kind.replace(' ', '-')}`;
    await bench.compare('locks', WORKLOAD.uncontended(kind), 'acquisitions', [
      [CLIENT.ours, ours],
      ...(curator
        ? [[CLIENT.curator, (w: boolean) => counted(servers, 'Acquisition', () => curator.run({ workload: kind === 'Mutex' ? 'mutexUncontended' : 'writeLockUncontended', path: peerPath, count: w ? Math.round(n / 5) : n }))] as const]
        : []),
    ]);
  }

  // Contended: every session loops acquire/release with no hold; hand-offs per second and the
  // gap from one holder's release call to the next holder's acquire returning.
  for (const count of [8, 32]) {
    for (const kind of ['Mutex', 'ExclusiveLock'] as const) {
      const workload = WORKLOAD.contended(kind, count);
      if (!bench.wants(workload)) continue;
      const clients = await sessions(connect, count);
      const path = `${base}/contended-${count}/${kind}`;
      const locks = clients.map((c) => lockOf(kind, c, path));
      const ours: Repetition = (w) => counted(servers, 'Handoff', () => contend(locks, w ? 1 : seconds));
      await bench.compare('locks', workload, 'hand-offs', [
        [CLIENT.ours, ours],
        ...(java && kind === 'Mutex'
          ? [[CLIENT.curator, (w: boolean) => counted(servers, 'Handoff', () => java.run({ workload: 'mutexContended', path: `${path}-curator`, sessions: count, seconds: w ? 1 : seconds }))] as const]
          : []),
      ]);
      await Promise.all(clients.map((c) => c.close()));
    }
  }

  for (const sessionMs of [2000, 10_000]) {
    const workload = WORKLOAD.leaseHeld(sessionMs);
    if (!bench.wants(workload)) continue;
    const ours: Repetition = (w) => leaseHeld(connect, `${base}/lease-held-${sessionMs}`, sessionMs, w ? 1 : seconds);
    await bench.compare('locks', workload, 'seconds held', [[CLIENT.ours, ours]]);
  }

  const rw = WORKLOAD.readWrite(8, 1);
  if (bench.wants(rw)) {
    const clients = await sessions(connect, 9);
    const path = `${base}/rw`;
    const ours: Repetition = (w) => counted(servers, 'Acquisition', () => readWrite(clients.slice(0, 8), clients.slice(8), path, w ? 1 : seconds));
    await bench.compare('locks', rw, 'acquisitions', [
      [CLIENT.ours, ours],
      ...(java ? [[CLIENT.curator, (w: boolean) => counted(servers, 'Acquisition', () => java.run({ workload: 'readWrite', path: `${path}-curator`, readers: 8, writers: 1, seconds: w ? 1 : seconds }))] as const] : []),
    ]);
    await Promise.all(clients.map((c) => c.close()));
  }
}

/**
 * One lease held on a fresh session for `seconds`: the quorum proof's no-op writes meanwhile
 * (counted on `zk:proof`) and the client's CPU, against the same session idle for the same time
 * before.
 */
async function leaseHeld(connect: string, path: string, sessionMs: number, seconds: number): Promise<Sample> {
  const zk = await ZooKeeper.connect(connect, { sessionTimeout: sessionMs });
  try {
    await zk.ensurePath(path);
    const idleCpu0 = process.cpuUsage();
    await new Promise((r) => setTimeout(r, seconds * 1000));
    const idle = process.cpuUsage(idleCpu0);
    const lease = await new Mutex(zk, `${path}/lock`).acquire();
    let requests = 0;
    const sample = await timed(async () => {
      ({ count: requests } = await counting(ChannelName.proof, () => new Promise((r) => setTimeout(r, seconds * 1000))));
      return { ops: seconds };
    });
    await lease.release();
    return {
      ...sample,
      metrics: { requestsPerSecond: requests / sample.seconds, cpuUsPerSecond: sample.cpuUs / sample.seconds, idleCpuUsPerSecond: (idle.user + idle.system) / seconds },
    };
  } finally {
    await zk.close();
  }
}

/**
 * Watch notifications during a run. `notificationsPerRelease` counts every one the clients
 * received; `waiterNotificationsPerRelease` only those that reached a waiter. A lease watches
 * its own node (to notice a deletion by someone else), so each release also notifies the
 * releasing session about its own node: that one wakes no waiter unless the next node in the
 * queue belongs to the same session (one notification per session serves both). Nodes are
 * mapped to their sessions with {@link Wakes.own}; for sequential nodes only.
 */
class Wakes {
  readonly #events: EventMessage[] = [];
  readonly #owners = new Map<string, bigint>();
  readonly #onEvent = (m: unknown) => void this.#events.push(m as EventMessage);

  /** Starts counting notifications. */
  start(): this {
    subscribe(ChannelName.event, this.#onEvent);
    return this;
  }
  /** Records that `sessionId` created the sequential node `node`. */
  own(node: string, sessionId: bigint): void {
    this.#owners.set(node, sessionId);
  }
  /** Stops listening; the figures per hand-off. */
  done(handoffs: number): Record<string, number> {
    unsubscribe(ChannelName.event, this.#onEvent);
    const seq = (p: string) => Number(p.slice(-10));
    const nodes = [...this.#owners.keys()].sort((a, b) => seq(a) - seq(b));
    const next = new Map(nodes.map((n, i) => [n, nodes[i + 1]]));
    let waiters = 0;
    for (const e of this.#events) {
      const owner = this.#owners.get(e.path);
      const successor = next.get(e.path);
      if (owner !== e.sessionId || (successor !== undefined && this.#owners.get(successor) === e.sessionId)) waiters++;
    }
    const per = (n: number) => n / Math.max(1, handoffs);
    return { notificationsPerRelease: per(this.#events.length), ...(this.#owners.size ? { waiterNotificationsPerRelease: per(waiters) } : {}) };
  }
}

/**
 * The acquire against the round trips it is made of, interleaved op by op so that server state
 * and warm-up weigh on each alike (separate workloads run seconds apart drift): a plain
 * ephemeral create, the ephemeral-sequential create2 a lock node needs, the same create2 with
 * the listing sent behind it in the same write (the acquire's one round trip on the raw client,
 * no lock code: the floor of the acquire), and the acquire. Ratios of p50s; not part of the
 * timed sample.
 */
/** The pair's node name and data: a protected lock node's, as a Mutex's (a random id, host and pid JSON of the same length). */
const PAIR_ID = randomUUID();
const PAIR_DATA = Buffer.from(JSON.stringify({ host: hostname(), pid: process.pid }));

async function baseline(zk: ZooKeeper, lock: LockBase, path: string, rounds: number): Promise<Record<string, number>> {
  await zk.create(path).catch(() => undefined);
  const create: number[] = [];
  const create2: number[] = [];
  const pair: number[] = [];
  const acquire: number[] = [];
  const dir = `${path}/queue`;
  await zk.create(dir).catch(() => undefined);
  for (let i = 0; i < rounds; i++) {
    let t = performance.now();
    const plain = await zk.create(`${path}/plain`, null, { mode: CreateMode.EPHEMERAL });
    create.push((performance.now() - t) * 1000);
    await zk.delete(plain);
    t = performance.now();
    const seq = await zk.createWithStat(`${path}/seq-`, null, { mode: CreateMode.EPHEMERAL_SEQUENTIAL });
    create2.push((performance.now() - t) * 1000);
    await zk.delete(seq.path);
    t = performance.now();
    const created = zk.createWithStat(`${dir}/_c_${PAIR_ID}-lock-`, PAIR_DATA, { mode: CreateMode.EPHEMERAL_SEQUENTIAL });
    const listed = zk.getChildren(dir);
    const node = await created;
    await listed;
    pair.push((performance.now() - t) * 1000);
    await zk.delete(node.path);
    t = performance.now();
    const lease = await lock.acquire();
    acquire.push((performance.now() - t) * 1000);
    await lease.release();
  }
  return {
    acquireOverCreate: median(acquire) / median(create),
    acquireOverCreate2: median(acquire) / median(create2),
    pairOverCreate: median(pair) / median(create),
    acquireOverPair: median(acquire) / median(pair),
    createP50Us: median(create),
  };
}

/** Sessions contending on one lock for `seconds`. */
async function contend(locks: readonly LockBase[], seconds: number): Promise<Sample> {
  const gaps: number[] = [];
  // How long each release (its delete) took, under the same load: what a hand-off waits for.
  const releases: number[] = [];
  let lastRelease: number | undefined;
  const deadline = performance.now() + seconds * 1000;
  const wakes = new Wakes().start();
  const sample = await timed(async () => {
    await Promise.all(
      locks.map(async (lock) => {
        while (performance.now() < deadline) {
          const lease = await lock.acquire();
          const t = performance.now();
          if (lock instanceof Mutex) wakes.own(lease.node, lock.zk.sessionId);
          if (t < deadline && lastRelease !== undefined) gaps.push((t - lastRelease) * 1000);
          const r = (lastRelease = performance.now());
          await lease.release();
          if (t < deadline) releases.push((performance.now() - r) * 1000);
        }
      }),
    );
    return { ops: gaps.length, latenciesUs: gaps, seconds };
  });
  return { ...sample, metrics: { ...wakes.done(gaps.length), releaseP50Us: median(releases) } };
}

/** Readers and writers, each its own session, looping on one read-write lock for `seconds`. */
async function readWrite(readers: readonly ZooKeeper[], writers: readonly ZooKeeper[], path: string, seconds: number): Promise<Sample> {
  let reads = 0;
  let writes = 0;
  const deadline = performance.now() + seconds * 1000;
  const loop = async (lock: LockBase, count: () => void) => {
    while (performance.now() < deadline) {
      const lease = await lock.acquire();
      if (performance.now() < deadline) count();
      await lease.release();
    }
  };
  return timed(async () => {
    await Promise.all([
      ...readers.map((c) => loop(new ReadWriteLock(c, path).readLock(), () => reads++)),
      ...writers.map((c) => loop(new ReadWriteLock(c, path).writeLock(), () => writes++)),
    ]);
    return { ops: reads + writes, seconds, metrics: { readsPerSec: reads / seconds, writesPerSec: writes / seconds } };
  });
}

/**
 * Workload and client names shared by the workloads, the Java driver's wrapper, the report and
 * the chart: a row is matched to its peers and to a target by these strings.
 */

/** The clients a row can come from. */
export const CLIENT = {
  ours: 'ours',
  /**
   * Ours with `coalesceReads: true` (reads of one tick in one multiRead, without the multiRead
   * probe the default sends with each handshake), on the getData and connect workloads.
   */
  oursCoalesced: 'ours, coalesceReads',
  /** Ours with the Mutex `localQueue` option (in-process hand-offs), on the hand-off workloads. */
  oursLocalQueue: 'ours, localQueue',
  /**
   * Ours loaded as tsc's one module per source file (the workspace build) instead of the
   * published single-file entry, on the first-connect workload.
   */
  oursModules: 'ours, tsc modules (unbundled)',
  nzc: 'node-zookeeper-client',
  java: 'ZooKeeper Java client',
  curator: 'Curator',
  /** No client: a bare net.Socket sending the handshake and closeSession only, on the connect workload (the floor). */
  socketFloor: 'bare socket (floor)',
} as const;

/** A client name. */
export type ClientName = (typeof CLIENT)[keyof typeof CLIENT];

/**
 * Ours in the lease fleet row (issue 35) with the quorum proof's connect options (`leaseProof`,
 * and `serverTickTime` when given); plain {@link CLIENT.ours} is the default (neither set).
 */
export function oursFleetClient(leaseProof: string | undefined, serverTickTime: number | undefined): string {
  if (leaseProof === undefined && serverTickTime === undefined) return CLIENT.ours;
  return `ours, leaseProof ${leaseProof ?? 'auto'}${serverTickTime === undefined ? '' : `, serverTickTime ${serverTickTime}`}`;
}

/** True for a row of ours in the lease fleet with options ({@link oursFleetClient}). */
export const isOursFleetClient = (client: string): boolean => client.startsWith('ours, leaseProof ');

/** Workload names. */
export const WORKLOAD = {
  get1: 'getData 100 B, 1 outstanding',
  get64: 'getData 100 B, 64 outstanding',
  set64: 'setData 100 B, 64 outstanding',
  exists1: 'exists (missing), 1 outstanding',
  /** Metrics: createP50Us, deleteP50Us (each half of the pair, timed on its own). */
  createDelete: 'create+delete ephemeral, 1 outstanding',
  /** Latency: TCP connect to a usable session; then close (awaited). */
  connect: 'connect (new session)',
  /** A fresh process per connect. Latency: process start to a usable session; CPU: the process's until then. Metric: importMs. */
  coldConnect: 'first connect of a fresh process',
  /** Latency: the acquire alone; ops: acquire+release cycles. Metric (ours): requestsPerAcquire. */
  uncontended: (lock: 'Mutex' | 'ExclusiveLock' | 'write lock') => `uncontended acquire+release: ${lock}`,
  /** Ops: hand-offs; latency: hand-off gap (release call to the next holder's acquire returning). */
  contended: (lock: 'Mutex' | 'ExclusiveLock', sessions: number) => `contended ${lock}, ${sessions} sessions`,
  /** Ops: acquisitions of one permit (each session loops acquire/release, no hold); latency: the acquire. Metric: releaseP50Us. */
  semaphore: (sessions: number, permits: number) => `contended Semaphore (${permits} permits), ${sessions} sessions`,
  /**
   * Ops: failovers, each with new participant processes; latency: from the SIGKILL (or the start
   * of the partition) to the next leader's process saying it leads. Metrics: sessionTimeoutMs,
   * rttUs, maxOverTimeoutPlusRtt; for a partition signalMs, gapMs, minGapMs.
   */
  leaderFailover: (how: 'SIGKILL' | 'partition', sessionMs: number) => `leader failover, ${how}, session ${sessionMs.toLocaleString('en-US')} ms`,
  /** Ops: leadership changes; latency: the leader giving up to the next one told. Metrics: notificationsPerChange, wokenPerChange, wokenMax. */
  leaderLatch: (n: number) => `LeaderLatch, ${n} participants`,
  /**
   * Ops: hand-offs; latency: the gap from a release call to the next holder's acquire returning.
   * Metrics: longestWaitMs (the longest acquire), minShare (ours: the least served session's share
   * of the hand-offs times the number of sessions; 1 when even).
   */
  localHandoffs: (sessions: number, perSession: number) => (sessions === 1 ? `one process, ${perSession} contenders on one Mutex` : `${sessions} sessions x ${perSession} contenders on one Mutex`),
  /** Metrics: readsPerSec, writesPerSec. */
  readWrite: (readers: number, writers: number) => `ReadWriteLock, ${readers} readers + ${writers} writer${writers === 1 ? '' : 's'}`,
  /**
   * The quorum proof's cost: one Mutex lease held on one session for the repetition. Ops: seconds
   * held. Metrics: requestsPerSecond (the proof's writes, counted on `zk:proof`),
   * cpuUsPerSecond of the client, and the same session's idle CPU before the lease (idleCpuUsPerSecond).
   */
  leaseHeld: (sessionMs: number) => `one lease held, session ${sessionMs.toLocaleString('en-US')} ms`,
  /**
   * Issue 35: `n` sessions each holding one Mutex lease (Curator: InterProcessMutex), idle, with
   * session timeout `t` s, on servers with tickTime 2 s (bench/workloads/fleet.ts). Ops: the
   * leader's transactions in the hold window; latency: an unrelated client's getData. Metrics per
   * holder: txnsPerHolderPerSec, logBytesPerHolderPerHour, fsyncsPerHolderPerSec,
   * snapshotsPerHolderPerHour, leaderCpuUsPerHolderPerSec; readP99Us, writeP99Us;
   * releasedTxnsPerHolderPerSec (after every lease is released, the sessions still open).
   */
  leaseFleet: (n: number, t: number) => `lease fleet, ${n.toLocaleString('en-US')} sessions, T = ${t} s`,
  /** Metrics: notificationsPerRelease, heapMiB. */
  waiters: (n: number) => `${n.toLocaleString('en-US')} waiters on one lock`,
  /** Metric: heapMiB. */
  manyLocks: (n: number) => `${n.toLocaleString('en-US')} locks held on one session`,
  /** Metrics: heapMiB, connectMs. */
  manySessions: (n: number) => `${n} sessions in one process`,
  /** Ops: nodes loaded (the load's time; no latencies). Metrics: loadMs, heapBytesPerNode (heap the open cache holds). */
  cacheLoad: (n: number) => `tree cache initial load, ${n.toLocaleString('en-US')} nodes`,
  /** Ops: changes; latency: another session's setData call until the cache reports the new data. */
  cacheEvent: 'tree cache event latency (setData by another session)',
  /** The same with a big tree cached (opt-in, `ZK_BENCH_CACHE_NODES`: bench/workloads/cache-million.ts). */
  cacheEventAt: (n: number) => `tree cache event latency, ${n.toLocaleString('en-US')} nodes cached`,
  /**
   * Queue (Curator's DistributedQueue), one producer: items put one after another, each awaited.
   * Latency: the put. Metric: serverRequestsPerItem (the server's `mntr` packets_received over the puts).
   */
  queuePut: 'queue put (1 producer)',
  /**
   * Queue, one consumer taking the items a queue already holds (safe mode: with a lock path, each
   * item completed before the next). Latency: the gap between items handed to the consumer.
   * Metric: serverRequestsPerItem.
   */
  queueTake: (safe: boolean) => `queue take${safe ? ', safe mode' : ''} (1 consumer)`,
  /**
   * AtomicLong (Curator's DistributedAtomicLong), each session looping increment on one counter.
   * Ops: increments succeeded; latency: the increment. Metrics: optimisticTriesPerIncrement,
   * promotedShare, failed, lost, serverRequestsPerIncrement.
   */
  atomicIncrement: (sessions: number) => `AtomicLong increment, ${sessions} sessions contended`,
  /** ServiceDiscovery.queryForInstances of a name, one after another. Latency: the query. Metric: serverRequestsPerQuery. */
  discoveryQuery: (instances: number) => `discovery query (${instances} instances)`,
} as const;

/**
 * Scale curves (issue 16): one workload per point, named {@link curvePoint}(curve, n); the report
 * gathers the points of a curve into one table and the chart draws each curve against n.
 */
export const CURVE = {
  /** Ops: watches re-armed; latency: none. Metric: rearmMs (connection cut until every watch is re-armed). */
  reconnectWatches: 'reconnect with watches',
  /** Metrics: connectMs (the lot, in parallel), heapKiBPerSession. */
  sessions: 'sessions in one process',
  /** Metrics: heapKiBPerWaiter, notificationsPerRelease; ops: hand-offs. */
  waiters: 'waiters on one lock',
  /** Metrics: heapKiBPerLock, rssKiBPerLock; ops: acquisitions. */
  locksHeld: 'locks held on one session',
} as const;

/** A curve's name. */
export type CurveName = (typeof CURVE)[keyof typeof CURVE];

/** The workload name of the point `n` of `curve`: `"<curve>: n = 1,000"`. */
export function curvePoint(curve: CurveName, n: number): string {
  return `${curve}: n = ${n.toLocaleString('en-US')}`;
}

/** The curve and n of a workload named by {@link curvePoint} (a pass suffix such as ` (3-node)` is kept in `suffix`), or undefined. */
export function parseCurvePoint(workload: string): { curve: CurveName; n: number; suffix: string } | undefined {
  const m = /^(.*): n = ([\d,]+)(.*)$/.exec(workload);
  if (!m) return undefined;
  const curve = Object.values(CURVE).find((c) => c === m[1]);
  return curve === undefined ? undefined : { curve, n: Number(m[2]!.replaceAll(',', '')), suffix: m[3]! };
}

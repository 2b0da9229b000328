/**
 * Minimum acquisition rates (acquisitions per second of the run) of each nemesis, so a run that
 * stalls fails (with the participants' errors) instead of passing on a handful of acquisitions.
 * Chosen from measured CI-size runs on this 2-core machine (docs/site/guides/fault-results.md,
 * moved there from the README) at about a third of the slowest measured rate; where a loaded run
 * (29 November: two fault files at once beside the integration files and other engineers' work,
 * load 7 to 13) fell below that, at about half of what it made there.
 */
export const MIN_RATE = {
  /** measured 6.1-7.1/s in five runs */
  sigkill: 2,
  /** measured 2.3-2.4/s (a 400 ms-per-write victim and one pause of more than the session timeout) */
  sigstop: 0.8,
  /** measured 5.0-5.9/s */
  partition: 1.5,
  /** measured 10.9-11.9/s, 2.2/s loaded (one run at ZK_FAULTS_SCALE=10 once made 1/s) */
  leader: 1,
  /** measured 5.1-10.1/s */
  rwSigkill: 1.5,
  /** measured 5.1/s (4 participants; each kill leaves no leader for about the 2 s session timeout) */
  latchSigkill: 1.5,
  /** measured 26.7/s, 5.9/s loaded (5 participants on 3 permits: a kill takes one permit away for the session timeout) */
  semaphoreSigkill: 3,
  /** measured 2.1/s (as the Mutex's SIGSTOP run) */
  latchSigstop: 0.7,
  /** measured 10.1/s, 2.9/s loaded */
  semaphoreSigstop: 1.5,
} as const;

/**
 * The soak's minimum rates (8 processes, 1 ms of work per write, a fault every 5 s or so), about
 * a third of the slowest measured 60 s round (two 19-round soaks).
 */
export const SOAK_MIN_RATE = {
  /** measured 88-117/s per round */
  sigkill: 35,
  /** measured 19.6-22/s (a 100 ms-per-write victim holds the lock for 300 ms at each of its turns) */
  sigstop: 6,
  /** measured 71-79/s */
  partition: 25,
  /** measured 110-124/s */
  leader: 40,
  /** measured 131-171/s */
  rwSigkill: 45,
  // The leader elections and the semaphore (3 permits), from one soak of 30 s rounds (two rounds
  // of most; 23 November 2026, 12:07).
  /** measured 69.6-84.1/s */
  latchSigkill: 23,
  /** measured 71.9-97.8/s */
  selectorSigkill: 24,
  /** measured 194-197/s */
  semaphoreSigkill: 64,
  /** measured 17.0-17.2/s (a 100 ms-per-write victim, as the Mutex's) */
  latchSigstop: 5.5,
  /** measured 16.8-17.2/s */
  selectorSigstop: 5.5,
  /** measured 148-164/s */
  semaphoreSigstop: 49,
  /** measured 56.9-59.1/s */
  latchPartition: 19,
  /** measured 59.3/s */
  selectorPartition: 19,
  /** measured 64.1/s */
  semaphorePartition: 21,
  /** measured 91.0/s */
  latchLeader: 30,
  /** measured 90.1/s */
  selectorLeader: 30,
  /** measured 123.6/s */
  semaphoreLeader: 41,
} as const;

/**
 * Minimum rates of the network nemeses (network.ts, CI size; the soak runs them at the same
 * size), about a third of the measured rate (2-core machine, 23 November 2026: latency 1.4/s,
 * one-way partition 1.3, storm 1.4, SIGKILL mixed 3.1, partition mixed 0.7; slow victims hold the
 * lock 3 s at a time and the partitions stall it for seconds).
 */
export const NETWORK_MIN_RATE = {
  latency: 0.5,
  oneWay: 0.4,
  storm: 0.5,
  mixedKill: 1,
  mixedPartition: 0.25,
  /** measured 2.6-2.9/s (3 Node + 2 Curator LeaderSelectors, three runs) */
  selectorMixedKill: 0.8,
  /** measured 2.1/s (LeaderLatch, one run) */
  latchMixedKill: 0.7,
  /** measured 16.1/s (Semaphore of 3 permits, one run) */
  semaphoreMixedKill: 5,
} as const;
/**
 * The storm's bound on connections per second. A client whose reconnect backs off stays far
 * below (the back-off's delays alone allow about 8 in the first second); one that does not made
 * thousands (10,029 in 6 s from one client before the back-off).
 */
export const MAX_STORM_CONNECTIONS_PER_SECOND = 20;

/**
 * Minimum rates of the nemeses between the servers (quorum.ts), by nemesis: about a third of the
 * slowest recipe of the nemesis in one run of the full matrix with the quorum proof
 * (ZK_FAULTS_QUORUM_MATRIX=1, 2-core machine, 26 November 2026). The nemesis sets the pace: each
 * strike stalls the lock until the victim's session expires (about T after a follower's cut;
 * syncLimit ticks, an election and T after the leader's), and a slow victim holds it meanwhile.
 */
export const QUORUM_MIN_RATE = {
  /** measured 5.8/s (LeaderLatch) to 12.6/s (Semaphore) */
  isolateFollower: 2,
  /** measured 0.59/s (Mutex) to 1.03/s (ReadWriteLock) */
  isolateLeader: 0.2,
  /** measured 5.8/s (Mutex) to 11.4/s (Semaphore) */
  splitFive: 2,
  /** measured 5.3/s (LeaderLatch) to 13.3/s (Semaphore) */
  bridge: 1.5,
  /** measured 3.5/s (LeaderLatch) to 11.0/s (Semaphore) */
  oneWay: 1,
  /** measured 0.50/s (ReadWriteLock) to 2.6/s (Semaphore) */
  pauseLeader: 0.15,
  /** measured 2.7/s (ReadWriteLock) to 4.8/s (Semaphore) */
  rollingRestart: 0.9,
} as const;

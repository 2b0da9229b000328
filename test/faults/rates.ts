/**
 * Minimum acquisition rates (acquisitions per second of the run) of each nemesis, so a run that
 * stalls fails (with the participants' errors) instead of passing on a handful of acquisitions.
 * Chosen from measured CI-size runs on this 2-core machine (README, "Proving the locks under
 * failure") at about a third of the slowest measured rate.
 */
export const MIN_RATE = {
  /** measured 6.1-7.1/s in five runs */
  sigkill: 2,
  /** measured 2.3-2.4/s (a 400 ms-per-write victim and one pause of more than the session timeout) */
  sigstop: 0.8,
  /** measured 5.0-5.9/s */
  partition: 1.5,
  /** measured 10.9-11.9/s (one run at ZK_FAULTS_SCALE=10 once made 1/s: it would fail now) */
  leader: 3,
  /** measured 5.1-10.1/s */
  rwSigkill: 1.5,
  /** measured 5.1/s (4 participants; each kill leaves no leader for about the 2 s session timeout) */
  latchSigkill: 1.5,
  /** measured 4.1/s (as the latch) */
  selectorSigkill: 1.2,
  /** measured 26.7/s (5 participants on 3 permits: a kill takes one permit away for the session timeout) */
  semaphoreSigkill: 8,
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
} as const;

/**
 * Minimum rates of the network nemeses (network.ts, CI size; the soak runs them at the same
 * size), about a third of the measured rate (2-core machine, 23 November 2026: latency 1.4/s,
 * one-way partition 1.3, storm 1.4, SIGKILL mixed 3.1, partition mixed 0.7; slow victims hold the
 * lock 3 s at a time and the partitions stall it for seconds).
 */
export const NETWORK_MIN_RATE = { latency: 0.5, oneWay: 0.4, storm: 0.5, mixedKill: 1, mixedPartition: 0.25 } as const;
/**
 * The storm's bound on connections per second. A client whose reconnect backs off stays far
 * below (the back-off's delays alone allow about 8 in the first second); one that does not made
 * thousands (10,029 in 6 s from one client before the back-off).
 */
export const MAX_STORM_CONNECTIONS_PER_SECOND = 20;

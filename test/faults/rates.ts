/**
 * Minimum acquisition rates (acquisitions per second of the run) of each nemesis, so a run that
 * stalls fails (with the participants' errors) instead of passing on a handful of acquisitions.
 * Chosen from measured CI-size runs on this 2-core machine (README, "Proving the locks under
 * failure") at about a third of the slowest measured rate.
 */
export const MIN_RATE = {
  /** measured 6.1/s */
  sigkill: 2,
  /** measured 2.4/s (a 400 ms-per-write victim and one pause of more than the session timeout) */
  sigstop: 0.8,
  /** measured 5.0/s */
  partition: 1.5,
  /** measured 10.9/s */
  leader: 3,
  /** measured 5.5/s */
  rwSigkill: 1.5,
} as const;

/**
 * The soak's minimum rates (8 processes, 1 ms of work per write, a fault every 5 s or so), about
 * a third of a measured 60 s round each.
 */
export const SOAK_MIN_RATE = {
  /** measured 116.9/s */
  sigkill: 35,
  /** measured 19-22/s (a 100 ms-per-write victim holds the lock for 300 ms at each of its turns) */
  sigstop: 6,
  /** measured 75.9/s */
  partition: 25,
  /** measured 120.9/s */
  leader: 40,
  /** measured 147.5/s */
  rwSigkill: 45,
} as const;

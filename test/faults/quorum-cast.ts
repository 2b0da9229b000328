/**
 * Who runs a quorum nemesis (quorum.ts) and where: the recipe, the Curator contenders, how many
 * strikes must test the lock, the ensemble's timing and the participants' proof mode, and what a
 * run returns.
 */
import type { CuratorParticipants } from './java-participant.js';
import type { NemesisResult } from './nemeses.js';
import type { StrikeResult } from './quorum-strikes.js';

/** The ensemble's tick, ms: the participants' session timeout ({@link SESSION_TIMEOUT}) is two ticks. */
export const TICK_MS = 1000;
/** The ensemble's syncLimit, ticks: how long a cut-off server may go on serving. */
export const SYNC_LIMIT = 5;

/** The recipes of these nemeses (participant kinds). */
export type QuorumKind = 'mutex' | 'rw' | 'latch' | 'semaphore';

/** Who runs, and how big a run is. */
export interface QuorumCast {
  kind: QuorumKind;
  /** A semaphore's permits (default 3). */
  permits?: number;
  /** Curator contenders (InterProcessMutex, LeaderLatch, InterProcessSemaphoreV2); 0 for `rw` (the Curator participant has no read-write lock). */
  javas: number;
  /** The compiled Curator participant; needed when `javas` > 0 or a Curator victim is asked for. */
  curator?: CuratorParticipants | undefined;
  /** Strikes to make. */
  strikes: number;
  /** Strikes that must have tested the lock (see {@link StrikeResult.tested}). */
  minStrikes: number;
  /** Minimum acquisitions per second of the run. */
  minPerSecond: number;
  /** Work after each write of the fast contenders, ms (default 20). */
  workMs?: number;
  /**
   * The ensemble's timing and the Node participants' proof (issue 35): default tick {@link TICK_MS},
   * syncLimit {@link SYNC_LIMIT}, leaseProof 'auto' with the tick unknown (so writes). A sync
   * proof needs T to be many ticks: {@link SYNC_PROFILE}.
   */
  proof?: ProofProfile;
}

/** An ensemble's tick and syncLimit, and the leaseProof mode (with serverTickTime set to the tick when `tellTick`). */
export interface ProofProfile {
  mode: 'auto' | 'write' | 'sync' | 'off';
  tickMs: number;
  syncLimit: number;
  tellTick: boolean;
}

/**
 * Sync proofs under the nemeses: T = 2 s is 8 ticks of 250 ms, and syncLimit 12 keeps a cut-off
 * server serving for 3 s, past T, as the default profile's 5 ticks of 1 s do (the case of issue 21).
 */
export const SYNC_PROFILE: ProofProfile = { mode: 'sync', tickMs: 250, syncLimit: 12, tellTick: true };
/** The default profile: tick {@link TICK_MS}, syncLimit {@link SYNC_LIMIT}, leaseProof 'auto' with the tick unknown. */
export const DEFAULT_PROFILE: ProofProfile = { mode: 'auto', tickMs: TICK_MS, syncLimit: SYNC_LIMIT, tellTick: false };

/** Where a run works: its participants' chroot and lock. */
export interface QuorumContext {
  root: string;
  lockPath?: string;
}

/** What a quorum nemesis run found. */
export interface QuorumResult extends NemesisResult {
  strikes: StrikeResult[];
  /** Strikes not made, and why (a victim that never held, a target whose role had changed). */
  notMade: string[];
}

/**
 * The nemeses between the servers (quorum.ts; issue 21), CI size: each on an ensemble of its own
 * whose server-to-server links go through fault proxies (tickTime 1 s, syncLimit 5, sessions of
 * T = 2 s), one run per nemesis with the recipes spread across them; Node participants and, when
 * a JVM with Curator is here, Curator contenders in the same histories. The history checker
 * verifies exclusion, token growth and lost-lease signals; each run also requires that its
 * strikes tested the lock (the victim held when the fault came, and its place was taken during
 * the fault while it held or after it learned it had lost it). Each test records its summary row.
 *
 * `ZK_FAULTS_QUORUM_MATRIX=1` runs every nemesis on every recipe (Mutex, ReadWriteLock,
 * LeaderLatch, Semaphore); `ZK_FAULTS_SCALE=n` makes n times as many strikes. Skipped on an
 * external ensemble (ZK_CONNECT): the nemeses stop, pause and cut the servers.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { curatorMissing } from '../harness/java.js';
import { CuratorParticipants } from './java-participant.js';
import { bridge, isolateFollower, isolateLeader, oneWay, pauseLeader, rollingRestart, splitFive, SYNC_PROFILE, type ProofProfile, type QuorumCast, type QuorumContext, type QuorumKind, type QuorumResult } from './quorum.js';
import { victimControl } from './quorum-controls.js';
import { QUORUM_MIN_RATE } from './rates.js';
import { report } from './report.js';
import { recordRow } from './summary.js';

const SCALE = Math.max(1, Number(process.env.ZK_FAULTS_SCALE ?? 1));
const MATRIX = Boolean(process.env.ZK_FAULTS_QUORUM_MATRIX);
const soak = Boolean(process.env.ZK_FAULTS_SOAK);
const external = Boolean(process.env.ZK_CONNECT);
const missing = curatorMissing();
const javaNote = missing ? ` (Curator participants left out: ${missing})` : '';

let curator: CuratorParticipants | undefined;
beforeAll(() => {
  if (!missing && !soak && !external) curator = CuratorParticipants.compile();
}, 120_000);
afterAll(() => curator?.remove());

/** Each run has its own ensemble; the chroot only keeps the layout of the other fault suites. */
const ctx = (): QuorumContext => ({ root: `/q-${randomUUID()}` });

/** One nemesis, the recipe it runs on in CI, and what it must show. */
interface Nemesis {
  key: keyof typeof QUORUM_MIN_RATE;
  title: string;
  run: (ctx: QuorumContext, cast: QuorumCast) => Promise<QuorumResult>;
  kind: QuorumKind;
  strikes: number;
}

const NEMESES: Nemesis[] = [
  { key: 'isolateFollower', title: "the holder's follower isolated from both other servers (issue 21)", run: isolateFollower, kind: 'mutex', strikes: 2 },
  { key: 'isolateLeader', title: 'the leader isolated from both followers, participants on both sides', run: isolateLeader, kind: 'latch', strikes: 2 },
  { key: 'splitFive', title: "5 servers split 2 | 3, the holder's follower in the minority", run: splitFive, kind: 'rw', strikes: 2 },
  { key: 'bridge', title: "a bridge: the holder's follower cut from the leader, the other follower seeing both", run: bridge, kind: 'semaphore', strikes: 2 },
  { key: 'oneWay', title: "one-way loss between the leader and the holder's follower, each direction in turn", run: oneWay, kind: 'latch', strikes: 2 },
  { key: 'pauseLeader', title: 'the leader paused (SIGSTOP) beyond syncLimit ticks, then resumed', run: pauseLeader, kind: 'mutex', strikes: 2 },
  { key: 'rollingRestart', title: "rolling restart of every server, each down until its holder's session expired", run: rollingRestart, kind: 'semaphore', strikes: 3 },
];
const KINDS: QuorumKind[] = ['mutex', 'rw', 'latch', 'semaphore'];

/**
 * A Semaphore of 2 permits here: a permit's place is taken only when that many other holders
 * hold at once, and every layout keeps at least two contenders off the struck server (with 3, a
 * restarted leader's victim, whose server also held a Node and the Curator contender, left too
 * few to ever take its permit).
 */
const cast = (kind: QuorumKind, strikes: number, minPerSecond: number, proof?: ProofProfile): QuorumCast => ({
  kind,
  ...(proof ? { proof } : {}),
  permits: kind === 'semaphore' ? 2 : undefined,
  javas: kind === 'rw' || !curator ? 0 : 1,
  curator,
  strikes: strikes * SCALE,
  minStrikes: Math.min(2, strikes) * SCALE,
  minPerSecond,
});

describe.skipIf(soak)('faults - nemeses between the servers', () => {
  for (const n of NEMESES) {
    for (const kind of MATRIX ? KINDS : [n.kind]) {
      const curatorNote = kind === 'rw' ? ' (Node only: the Curator participant has no ReadWriteLock)' : javaNote;
      it.skipIf(external)(`${n.title} (${kind}): the holder's lease signal aborts before anyone takes its place${curatorNote}`, async () => {
        const result = await n.run(ctx(), cast(kind, n.strikes, QUORUM_MIN_RATE[n.key]));
        report(result, { strikes: result.strikes, ...(result.notMade.length ? { notMade: result.notMade } : {}) });
      }, 180_000 * SCALE);
    }
  }

  // Curator's InterProcessMutex has two holders in issue 21's case (7 of 7 runs by hand at T = 2
  // s): it learns of trouble only when its server gives up, syncLimit ticks after the cut. So
  // does ours with leaseProof 'off' (issue 35: the mode that is Curator's guarantee). The checker
  // must say so. Skipped (and said) in a run where the victim's place happened not to be taken
  // while it held.
  for (const victim of ['java', 'node'] as const) {
    const what = victim === 'java' ? 'a Curator holder' : "a holder of ours with leaseProof 'off'";
    const skipped = victim === 'java' ? missing : undefined;
    it.skipIf(external || Boolean(skipped))(`(negative control) ${what} on the isolated follower: the checker finds two holders${skipped ? ` (skipped: ${skipped})` : ''}`, async ({ skip }) => {
      const result = await victimControl(ctx(), { ...cast('mutex', 2, QUORUM_MIN_RATE.isolateFollower), javas: 0 }, victim);
      recordRow(result.row);
      console.log(`${result.row.nemesis}: ${JSON.stringify({ ...result.counts, strikes: result.strikes, violations: result.verdict.violations.slice(0, 5) })}`);
      if (result.counts.victimOverlaps === 0) skip(`the victim's place was not taken while it held in this run (${result.strikes.length} strikes): nothing to catch`);
      expect(result.caught, `violations: ${result.verdict.violations.join(' | ')}`).toBeGreaterThan(0);
    }, 180_000 * SCALE);
  }
});

/**
 * The same nemeses with sync proofs (issue 35): leaseProof 'sync' with serverTickTime told, on an
 * ensemble whose T = 2 s is 8 ticks of 250 ms (syncLimit 12: a cut-off server still serves for
 * 3 s, past T). A sync proves its confirmed requests at most 1.5 ticks and a margin before it was
 * sent (@zk/protocol's quorum-proof.ts); these runs check that under every fault between the
 * servers. Node participants only where the nemesis has Curator ones too: they are unaffected.
 */
describe.skipIf(soak)('faults - nemeses between the servers, sync proofs', () => {
  for (const n of NEMESES) {
    it.skipIf(external)(`${n.title} (${n.kind}, leaseProof 'sync', tick 250 ms): the holder's lease signal aborts before anyone takes its place`, async () => {
      const result = await n.run(ctx(), cast(n.kind, n.strikes, QUORUM_MIN_RATE[n.key], SYNC_PROFILE));
      report(result, { strikes: result.strikes, ...(result.notMade.length ? { notMade: result.notMade } : {}) });
    }, 180_000 * SCALE);
  }
});

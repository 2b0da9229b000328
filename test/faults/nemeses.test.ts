/**
 * The locks under failure, CI size: participant processes contend on one lock while a nemesis
 * strikes (nemeses.ts); the history checker then verifies exclusion, token growth and lost-lease
 * signals, the fenced resource's log shows what fencing buys, and every run must keep a minimum
 * acquisition rate. Each test records its row (summary.ts): the table is written to
 * test/.work/faults-summary.md and `node scripts/faults-table.mjs` prints it.
 *
 * `ZK_FAULTS_SCALE=5 npm run test:faults` stretches every run five times; the soak
 * (`npm run test:faults -- --soak 45m`) is soak.test.ts.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { connectString, TestSpace } from '../harness/fixtures.js';
import { curatorMissing } from '../harness/java.js';
import { CuratorParticipants } from './java-participant.js';
import { capacityControl, cheatControl, leaderKills, partitionHolder, sigkillHolders, sigstopHolder } from './nemeses.js';
import { recordRow } from './summary.js';
import { report } from './report.js';
import { MIN_RATE } from './rates.js';

/** The CI run is the bounded subset; ZK_FAULTS_SCALE multiplies every duration. */
const SCALE = Math.max(1, Number(process.env.ZK_FAULTS_SCALE ?? 1));
const soak = Boolean(process.env.ZK_FAULTS_SOAK);

/**
 * A Curator participant (InterProcessMutex; LeaderLatch, InterProcessSemaphoreV2 in those runs)
 * among the contenders of the SIGSTOP and leader-kill runs when a JVM with Curator's jars is here; the SIGKILL and partition runs with Curator are in
 * network.test.ts. Without them the runs are Node only (the test names say so).
 */
const missingJava = curatorMissing();
const withJava = missingJava ? ` (Curator participants left out: ${missingJava})` : ', a Curator participant among them';
let curator: CuratorParticipants | undefined;
beforeAll(() => {
  if (!missingJava && !soak) curator = CuratorParticipants.compile();
}, 120_000);
afterAll(() => curator?.remove());

let space: TestSpace;
beforeEach(async () => {
  space = new TestSpace();
  await space.admin();
});
afterEach(async () => {
  await space.close();
});

const ctx = () => ({ connect: connectString(), root: space.root });

describe.skipIf(soak)('faults - nemeses', () => {
  it('SIGKILL of random holders: no overlap, growing tokens, the lock passes on only after the session could expire', async () => {
    report(await sigkillHolders(ctx(), { processes: 5, durationMs: 16_000 * SCALE, workMs: 20, killEveryMs: 1500, minKills: 3, minPerSecond: MIN_RATE.sigkill }));
  }, 60_000 * SCALE);

  it(`SIGSTOP of the holder beyond the session timeout (the GC pause): only the paused overlap is excused, and the fenced resource rejects every stale write${withJava}`, async () => {
    report(await sigstopHolder(ctx(), { processes: 5, durationMs: 8000 * SCALE, workMs: 50, pauses: SCALE, minPerSecond: MIN_RATE.sigstop, curator, javas: 1 }));
  }, 60_000 * SCALE);

  it('a holder partitioned from every server beyond its session timeout: its signal aborts before the next holder acquires', async () => {
    report(await partitionHolder(ctx(), { processes: 5, durationMs: 14_000 * SCALE, workMs: 30, minPartitions: 2, minPerSecond: MIN_RATE.partition }));
  }, 90_000 * SCALE);

  it.skipIf(process.env.ZK_CONNECT)(`leader killed and restarted every few seconds on a 3-node ensemble: exclusion holds${withJava}`, async () => {
    report(await leaderKills({ root: space.root }, { processes: 5, durationMs: 18_000 * SCALE, workMs: 20, killEveryMs: 2500, minKills: 3, minPerSecond: MIN_RATE.leader, curator, javas: 1 }));
  }, 120_000 * SCALE);

  it('SIGKILL of random holders of a ReadWriteLock (random read and write holds): no reader overlaps a writer', async () => {
    report(await sigkillHolders(ctx(), { processes: 5, durationMs: 14_000 * SCALE, workMs: 20, killEveryMs: 1500, minKills: 2, kind: 'rw', minPerSecond: MIN_RATE.rwSigkill }));
  }, 60_000 * SCALE);

  // The leader elections and the semaphore under the same nemeses (the soak runs every nemesis on
  // each; the LeaderSelector's CI run is the Curator and Node one in network.test.ts): one acting
  // leader; at most 3 permit holders, all 3 reached.
  it('SIGKILL of the LeaderLatch leader: one acting leader, growing term tokens, leadership passes on only after the session could expire', async () => {
    report(await sigkillHolders(ctx(), { kind: 'latch', processes: 4, durationMs: 11_000 * SCALE, workMs: 20, killEveryMs: 1500, minKills: 2, minPerSecond: MIN_RATE.latchSigkill }));
  }, 60_000 * SCALE);

  it('SIGKILL of Semaphore permit holders (3 permits): never more than 3 holders, all 3 held, a permit passes on only after the session could expire', async () => {
    report(await sigkillHolders(ctx(), { kind: 'semaphore', permits: 3, processes: 5, durationMs: 9000 * SCALE, workMs: 20, killEveryMs: 1500, minKills: 2, minPerSecond: MIN_RATE.semaphoreSigkill }));
  }, 60_000 * SCALE);

  // The GC pause of a leader (the double leader of Curator's tracker) and of a permit holder: the
  // woken process's stale writes must be refused (the semaphore's resource asks ZooKeeper whether
  // the writer's lease node still lives: no token order works across permits).
  it(`SIGSTOP of the LeaderLatch leader beyond the session timeout: only the paused term overlaps, and its stale writes are refused${withJava.replace('participant', 'LeaderLatch')}`, async () => {
    report(await sigstopHolder(ctx(), { kind: 'latch', processes: 5, durationMs: 8000 * SCALE, workMs: 50, pauses: SCALE, minPerSecond: MIN_RATE.latchSigstop, curator, javas: 1 }));
  }, 60_000 * SCALE);

  it(`SIGSTOP of a Semaphore permit holder (3 permits) beyond the session timeout: only the paused holder makes a fourth, and its stale writes are refused${withJava.replace('participant', 'InterProcessSemaphoreV2')}`, async () => {
    report(await sigstopHolder(ctx(), { kind: 'semaphore', permits: 3, processes: 5, durationMs: 8000 * SCALE, workMs: 50, pauses: SCALE, minPerSecond: MIN_RATE.semaphoreSigstop, curator, javas: 1 }));
  }, 60_000 * SCALE);

  it('the checker catches semaphore participants that take 4 permits where 3 are allowed', async () => {
    const result = await capacityControl(ctx(), { permits: 3, processes: 5, durationMs: 3000 * SCALE, workMs: 20 });
    recordRow(result.row);
    expect(result.problems).toEqual([]);
    expect(result.verdict.violations.length).toBeGreaterThan(0);
  }, 60_000 * SCALE);

  it('the checker catches a broken participant that skips the lock', async () => {
    const result = await cheatControl(ctx(), { processes: 5, durationMs: 3000 * SCALE, workMs: 20 });
    recordRow(result.row);
    expect(result.problems).toEqual([]);
    expect(result.verdict.violations.length).toBeGreaterThan(0);
  }, 60_000 * SCALE);
});

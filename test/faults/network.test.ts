/**
 * The network nemeses (network.ts), CI size: every participant behind a proxy of its own, the
 * proxy delays, drops one way, storms or partitions; Node participants (participant.mjs) and
 * Curator participants (java/CuratorFaultParticipant.java, InterProcessMutex on the same lock)
 * in the same histories. The history checker verifies exclusion, token growth and lost-lease
 * signals across both languages, and the fenced resource must accept no stale write. Each test
 * records its summary row (summary.ts).
 *
 * Without javac or Curator's jars the Curator participants are left out (each test's name says
 * so) and the tests that are about them are skipped.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { connectString, TestSpace } from '../harness/fixtures.js';
import { curatorMissing } from '../harness/java.js';
import { CuratorParticipants } from './java-participant.js';
import { latencyJitter, mixedSigkill, partitionHolders, storm } from './network.js';
import { MAX_STORM_CONNECTIONS_PER_SECOND, NETWORK_MIN_RATE } from './rates.js';
import { report } from './report.js';

/** ZK_FAULTS_SCALE multiplies every duration, as in nemeses.test.ts. */
const SCALE = Math.max(1, Number(process.env.ZK_FAULTS_SCALE ?? 1));
const soak = Boolean(process.env.ZK_FAULTS_SOAK);
const missing = curatorMissing();
const javaNote = missing ? ` (Curator participants left out: ${missing})` : '';
/** Curator participants per test when a JVM with Curator is here. */
const JAVAS = missing ? 0 : 1;

const MIN_RATE = NETWORK_MIN_RATE;

let space: TestSpace;
let curator: CuratorParticipants | undefined;

beforeAll(() => {
  if (!missing && !soak) curator = CuratorParticipants.compile();
}, 120_000);
afterAll(() => curator?.remove());
beforeEach(async () => {
  space = new TestSpace();
  await space.admin();
});
afterEach(async () => {
  await space.close();
});

// The shared server's tick (the harness default, 500 ms), told to the participants: with 50-200 ms
// each way and T = 2 s, the quorum proof's default margin (a tick of T/2) leaves a Node lease no
// time to be proven (0 Node acquisitions in a run); the real tick does. Forked workers: this
// process's env only.
process.env.ZK_SERVER_TICK_TIME = '500';
const ctx = () => ({ connect: connectString(), root: space.root });

describe.skipIf(soak)('faults - network nemeses', () => {
  it.skipIf(missing)(`Java's System.nanoTime() reads the clock of process.hrtime.bigint() (CLOCK_MONOTONIC), so Curator and Node events share one timeline${javaNote}`, async () => {
    const window = await curator!.clockWindowNs(5);
    console.log(`clock check: Java's nanoTime fell inside each Node [before, after] window; widest window ${(Number(window) / 1e6).toFixed(2)} ms`);
    expect(window).toBeLessThan(1_000_000_000n);
  });

  it(`latency and jitter of 50-200 ms each way on every participant's connection: exclusion holds and the lock keeps moving${javaNote}`, async () => {
    report(await latencyJitter(ctx(), { nodes: 3, javas: JAVAS, curator, durationMs: 12_000 * SCALE, workMs: 20, minPerSecond: MIN_RATE.latency }, { min: 50, max: 200 }));
  }, 60_000 * SCALE);

  it(`one-way partition of the holder (server-to-client dropped, its requests still arrive) beyond the session timeout: its lease is lost before the next holder acquires${javaNote}`, async () => {
    const result = await partitionHolders(ctx(), { mode: 'drop', nodes: 2, javas: JAVAS, curator, durationMs: 16_000 * SCALE, workMs: 30, slowWorkMs: 1000, partitionMs: 4000, minStrikes: 2, minPerSecond: MIN_RATE.oneWay });
    report(result, { strikes: result.strikes });
  }, 90_000 * SCALE);

  it(`storm server for the holder (each handshake answered, then an undecodable frame): connections per second stay bounded, and its lease is lost within the session timeout, before the next holder acquires${javaNote}`, async () => {
    const result = await storm(ctx(), { nodes: 3, javas: JAVAS, curator, durationMs: 12_000 * SCALE, workMs: 20, slowWorkMs: 1000, stormMs: 5000, maxPerSecond: MAX_STORM_CONNECTIONS_PER_SECOND, minPerSecond: MIN_RATE.storm });
    report(result, { perSecond: result.perSecond, strike: result.strike });
  }, 60_000 * SCALE);

  // The LeaderSelector's CI run (nemeses.test.ts has the latch's and the semaphore's): one acting
  // leader across the languages, Curator's LeaderSelector and ours in one queue (Node only when
  // Curator is missing).
  it(`SIGKILL of the LeaderSelector leader, Curator and Node leaders in turn: one acting leader across the languages, term tokens grow, no stale write accepted${javaNote}`, async () => {
    report(await mixedSigkill(ctx(), { kind: 'selector', nodes: 3, javas: 2 * JAVAS, curator, durationMs: 10_000 * SCALE, workMs: 20, everyMs: 1500, minKills: 3, minPerSecond: MIN_RATE.selectorMixedKill }));
  }, 90_000 * SCALE);

  describe.skipIf(missing)(`Curator and Node on one lock${missing ? ` (skipped: ${missing})` : ''}`, () => {
    it('SIGKILL of the holder, Curator and Node holders in turn: exclusion holds across the languages and the fenced resource accepts no stale write', async () => {
      report(await mixedSigkill(ctx(), { nodes: 3, javas: 2, curator, durationMs: 12_000 * SCALE, workMs: 20, everyMs: 1500, minKills: 3, minPerSecond: MIN_RATE.mixedKill }));
    }, 90_000 * SCALE);

    it('a holder partitioned from the server beyond its session timeout, Curator and Node holders in turn: each lease is lost before the next holder acquires, across the languages', async () => {
      const result = await partitionHolders(ctx(), { mode: 'block', nodes: 2, javas: 1, curator, durationMs: 16_000 * SCALE, workMs: 30, slowWorkMs: 1000, partitionMs: 4000, minStrikes: 2, minPerSecond: MIN_RATE.mixedPartition });
      report(result, { strikes: result.strikes });
    }, 90_000 * SCALE);
  });
});

/**
 * The soak, run by hand: `npm run test:faults -- --soak 45m` (the bootstrap sets ZK_FAULTS_SOAK
 * and runs this file only). Runs every nemesis in turn, a round of ZK_FAULTS_SOAK_ROUND (default
 * 60s) each, with faster participants than CI (more processes, 1 ms of work per write), the same
 * four nemeses (SIGKILL, SIGSTOP, partition, leader kills) on a LeaderLatch, a LeaderSelector and a
 * Semaphore of 3 permits (a Curator participant of the same recipe among the SIGSTOP and
 * leader-kill contenders), then the network nemeses of network.ts at their CI size with Curator
 * participants beside ours (when a JVM with Curator's jars is here; the mixed SIGKILL on each
 * recipe too), until
 * ZK_FAULTS_SOAK_TARGET acquisitions in total (default 100,000) or the soak's duration, whichever
 * comes first (a round under way finishes). Every round must pass what the CI run requires; the
 * per-nemesis table (summed over rounds) goes to test/.work/faults-soak.md and the rows to
 * test/.work/faults-rows.jsonl (so `node scripts/faults-table.mjs` prints it too).
 * ZK_FAULTS_SOAK_ROUNDS=latchSigkill,semaphoreSigstop (names as in `rounds` below; `quorum*` for
 * every name with that prefix) runs only those. The nemeses between the servers (quorum.ts) come
 * last, each on every recipe. Skipped unless ZK_FAULTS_SOAK is set; `npm test` never runs it.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectString, TestSpace } from '../harness/fixtures.js';
import { keepEvidence, leaderKills, partitionHolder, sigkillHolders, sigstopHolder, type NemesisContext, type NemesisResult, type Sizing } from './nemeses.js';
import { recordRow, renderTable, WORK_DIR, type NemesisRow } from './summary.js';
import { MAX_STORM_CONNECTIONS_PER_SECOND, NETWORK_MIN_RATE, SOAK_MIN_RATE } from './rates.js';
import { curatorMissing } from '../harness/java.js';
import { CuratorParticipants } from './java-participant.js';
import { latencyJitter, mixedSigkill, partitionHolders, storm, type Cast } from './network.js';
import { bridge, isolateFollower, isolateLeader, oneWay, pauseLeader, rollingRestart, splitFive, type QuorumCast, type QuorumContext, type QuorumKind, type QuorumResult } from './quorum.js';
import { QUORUM_MIN_RATE } from './rates.js';

/** `45m`, `90s`, `1.5h`, `500ms` or a number of ms. */
function parseDuration(text: string): number {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(text.trim());
  if (!m) throw new Error(`not a duration: ${text} (use e.g. 45m, 90s, 2h)`);
  return Number(m[1]) * { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[(m[2] ?? 'ms') as 'ms' | 's' | 'm' | 'h'];
}

const SOAK = process.env.ZK_FAULTS_SOAK;
const durationMs = SOAK ? parseDuration(SOAK) : 0;
const roundMs = parseDuration(process.env.ZK_FAULTS_SOAK_ROUND ?? '60s');
const target = Number(process.env.ZK_FAULTS_SOAK_TARGET ?? 100_000);
const processes = Number(process.env.ZK_FAULTS_SOAK_PROCESSES ?? 8);
const workMs = Number(process.env.ZK_FAULTS_SOAK_WORK_MS ?? 1);

type Round = (ctx: NemesisContext) => Promise<NemesisResult>;
/** Curator participants join the network rounds when a JVM with Curator is here (compiled in beforeAll). */
const missingJava = curatorMissing();
let curator: CuratorParticipants | undefined;
/** The network nemeses at their CI size (network.test.ts): slow by nature, a few acquisitions a second. */
const cast = (nodes: number, javas: number, durationMs: number, minPerSecond: number): Cast => ({ nodes, javas: curator ? javas : 0, curator, durationMs, workMs: 20, minPerSecond });
/** The leader elections and the semaphore, each under the four process and server nemeses. */
const RECIPES: { kind: 'latch' | 'selector' | 'semaphore'; permits?: number }[] = [{ kind: 'latch' }, { kind: 'selector' }, { kind: 'semaphore', permits: 3 }];
const recipeRounds = (nemesis: 'Sigkill' | 'Sigstop' | 'Partition' | 'Leader'): [string, Round][] =>
  RECIPES.map((r) => {
    const min = SOAK_MIN_RATE[`${r.kind}${nemesis}`];
    // A Curator participant of the same recipe among the contenders where the Mutex rounds have
    // one (read when the round runs: `curator` is compiled in beforeAll).
    const base = (): Sizing => ({ ...r, processes, durationMs: roundMs, workMs, minPerSecond: min, curator, javas: nemesis === 'Sigstop' || nemesis === 'Leader' ? 1 : 0 });
    const run: Round =
      nemesis === 'Sigkill'
        ? (ctx) => sigkillHolders(ctx, { ...base(), killEveryMs: 5000, minKills: Math.floor(roundMs / 10_000) })
        : nemesis === 'Sigstop'
          ? (ctx) => sigstopHolder(ctx, { ...base(), victimWorkMs: 100, pauses: Math.floor(roundMs / 10_000) })
          : nemesis === 'Partition'
            ? (ctx) => partitionHolder(ctx, { ...base(), gapMs: 4000, minPartitions: Math.floor(roundMs / 20_000) })
            : (ctx) => leaderKills(ctx, { ...base(), killEveryMs: 5000, minKills: Math.floor(roundMs / 10_000) });
    return [`${r.kind}${nemesis}`, run];
  });
/**
 * The nemeses between the servers (quorum.ts), each on every recipe, with fast contenders (1 ms of
 * work) and 4 strikes a round; an ensemble of their own each, so not on an external one. Named
 * `quorum-<nemesis>-<kind>` (`ZK_FAULTS_SOAK_ROUNDS='quorum*'` runs only them).
 */
const QUORUM_NEMESES: [keyof typeof QUORUM_MIN_RATE, (ctx: QuorumContext, cast: QuorumCast) => Promise<QuorumResult>][] = [
  ['isolateFollower', isolateFollower],
  ['isolateLeader', isolateLeader],
  ['splitFive', splitFive],
  ['bridge', bridge],
  ['oneWay', oneWay],
  ['pauseLeader', pauseLeader],
  ['rollingRestart', rollingRestart],
];
const QUORUM_KINDS: QuorumKind[] = ['mutex', 'rw', 'latch', 'semaphore'];
const quorumRounds = (): [string, Round][] =>
  process.env.ZK_CONNECT
    ? []
    : QUORUM_KINDS.flatMap((kind) =>
        QUORUM_NEMESES.map(([key, run]): [string, Round] => [
          `quorum-${key}-${kind}`,
          (ctx) => run({ root: ctx.root, lockPath: ctx.lockPath }, { kind, permits: kind === 'semaphore' ? 2 : undefined, javas: kind === 'rw' || !curator ? 0 : 1, curator, strikes: 4, minStrikes: 2, minPerSecond: QUORUM_MIN_RATE[key], workMs: workMs }),
        ]),
      );
const allRounds: [name: string, run: Round][] = [
  ['sigkill', (ctx) => sigkillHolders(ctx, { processes, durationMs: roundMs, workMs, killEveryMs: 5000, minKills: Math.floor(roundMs / 10_000), minPerSecond: SOAK_MIN_RATE.sigkill })],
  ['sigstop', (ctx) => sigstopHolder(ctx, { processes, durationMs: roundMs, workMs, victimWorkMs: 100, pauses: Math.floor(roundMs / 10_000), minPerSecond: SOAK_MIN_RATE.sigstop, curator, javas: 1 })],
  ['partition', (ctx) => partitionHolder(ctx, { processes, durationMs: roundMs, workMs, gapMs: 4000, minPartitions: Math.floor(roundMs / 20_000), minPerSecond: SOAK_MIN_RATE.partition })],
  ...(process.env.ZK_CONNECT ? [] : [['leader', (ctx: NemesisContext) => leaderKills(ctx, { processes, durationMs: roundMs, workMs, killEveryMs: 5000, minKills: Math.floor(roundMs / 10_000), minPerSecond: SOAK_MIN_RATE.leader, curator, javas: 1 })] as [string, Round]]),
  ['rwSigkill', (ctx) => sigkillHolders(ctx, { processes, durationMs: roundMs, workMs, killEveryMs: 5000, minKills: Math.floor(roundMs / 10_000), kind: 'rw', minPerSecond: SOAK_MIN_RATE.rwSigkill })],
  ...recipeRounds('Sigkill'),
  ...recipeRounds('Sigstop'),
  ...recipeRounds('Partition'),
  ...(process.env.ZK_CONNECT ? [] : recipeRounds('Leader')),
  ['latency', (ctx) => latencyJitter(ctx, cast(3, 1, 12_000, NETWORK_MIN_RATE.latency), { min: 50, max: 200 })],
  ['oneWay', (ctx) => partitionHolders(ctx, { ...cast(2, 1, 16_000, NETWORK_MIN_RATE.oneWay), mode: 'drop', slowWorkMs: 1000, partitionMs: 4000, minStrikes: 2 })],
  ['storm', (ctx) => storm(ctx, { ...cast(3, 1, 12_000, NETWORK_MIN_RATE.storm), slowWorkMs: 1000, stormMs: 5000, maxPerSecond: MAX_STORM_CONNECTIONS_PER_SECOND })],
  ...(missingJava
    ? []
    : ([
        ['mixedSigkill', (ctx) => mixedSigkill(ctx, { ...cast(3, 2, 12_000, NETWORK_MIN_RATE.mixedKill), everyMs: 1500, minKills: 3 })],
        ['mixedPartition', (ctx) => partitionHolders(ctx, { ...cast(2, 1, 16_000, NETWORK_MIN_RATE.mixedPartition), mode: 'block', slowWorkMs: 1000, partitionMs: 4000, minStrikes: 2 })],
        ['latchMixedSigkill', (ctx) => mixedSigkill(ctx, { ...cast(3, 2, 12_000, NETWORK_MIN_RATE.latchMixedKill), kind: 'latch', everyMs: 1500, minKills: 3 })],
        ['selectorMixedSigkill', (ctx) => mixedSigkill(ctx, { ...cast(3, 2, 12_000, NETWORK_MIN_RATE.selectorMixedKill), kind: 'selector', everyMs: 1500, minKills: 3 })],
        ['semaphoreMixedSigkill', (ctx) => mixedSigkill(ctx, { ...cast(3, 2, 12_000, NETWORK_MIN_RATE.semaphoreMixedKill), kind: 'semaphore', permits: 3, everyMs: 1500, minKills: 3 })],
      ] as [string, Round][])),
  ...quorumRounds(),
];
const only = process.env.ZK_FAULTS_SOAK_ROUNDS?.split(',').map((n) => n.trim());
const named = (name: string) => only!.some((o) => (o.endsWith('*') ? name.startsWith(o.slice(0, -1)) : name === o));
const rounds = only ? allRounds.filter(([name]) => named(name)) : allRounds;
if (SOAK && rounds.length === 0) throw new Error(`ZK_FAULTS_SOAK_ROUNDS=${process.env.ZK_FAULTS_SOAK_ROUNDS} names no round (rounds: ${allRounds.map(([n]) => n).join(', ')})`);

let space: TestSpace;
beforeAll(async () => {
  space = new TestSpace();
  await space.admin();
  if (SOAK && !missingJava) curator = CuratorParticipants.compile();
}, 120_000);
afterAll(async () => {
  curator?.remove();
  await space?.close();
});

describe.runIf(SOAK)('faults - soak', () => {
  it(`every nemesis in turn until ${target} acquisitions or ${SOAK}`, async () => {
    const started = Date.now();
    const rows: NemesisRow[] = [];
    const problems: string[] = [];
    let total = 0;
    let round = 0;
    while (total < target && Date.now() - started < durationMs) {
      const [name, run] = rounds[round % rounds.length]!;
      const result = await run({ connect: connectString(), root: space.root, lockPath: `/faults/soak-${round}` });
      round++;
      recordRow(result.row);
      rows.push(result.row);
      total += result.row.acquisitions;
      const evidence = keepEvidence(result);
      problems.push(...result.problems.map((p) => `round ${round} (${name}): ${p}${evidence ? ` (history in ${evidence})` : ''}`));
      const elapsed = (Date.now() - started) / 1000;
      console.log(`[soak] round ${round} ${name}: ${result.row.acquisitions} acquisitions, ${(result.row.acquisitions / (result.row.durationMs / 1000)).toFixed(1)}/s, ${result.problems.length} problems, ${JSON.stringify(result.counts)}; total ${total} in ${elapsed.toFixed(0)} s (${(total / elapsed).toFixed(1)}/s)`);
    }
    const elapsedMs = Date.now() - started;
    const head = `Soak of ${new Date(started).toISOString()}: ${round} rounds of ${roundMs / 1000} s, ${processes} processes, ${workMs} ms work per write; ${total.toLocaleString('en-US')} acquisitions in ${(elapsedMs / 60_000).toFixed(1)} min (${(total / (elapsedMs / 1000)).toFixed(1)}/s overall, round set-up included); target ${target.toLocaleString('en-US')} ${total >= target ? 'reached' : 'NOT reached'}; ${problems.length} problems.`;
    mkdirSync(WORK_DIR, { recursive: true });
    writeFileSync(`${WORK_DIR}faults-soak.md`, `${head}\n\n${renderTable(rows)}\n${problems.length ? `\nProblems:\n${problems.map((p) => `- ${p}`).join('\n')}\n` : ''}`);
    console.log(`${head}\n${renderTable(rows)}`);
    expect(problems).toEqual([]);
  }, durationMs + 15 * 60_000);
});

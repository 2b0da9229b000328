/**
 * DoubleBarrier under failure (issue 23): four member processes, each behind a TCP proxy of its
 * own, enter and leave one barrier per round (barrier-member.mjs) while the harness SIGKILLs a
 * member waiting in enter (a replacement takes its place once its node is gone), SIGKILLs one
 * waiting in leave, cuts one off for T/4 in enter and one for 2.5 T in leave (its session
 * expires). The checker (barrier-check.ts) requires that nobody passes enter early or completes
 * leave while a live member is inside, and that no live member waits forever: each wait completes
 * within a bound once nothing it waits for is missing (a dead member's node goes with its
 * session). Negative control: the same promise kept with persistent member nodes leaves the
 * survivors of a member killed inside the barrier waiting until their timeout.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ZooKeeper } from '@zk/protocol';
import { connectString, TestSpace } from '../harness/fixtures.js';
import { TcpProxy, waitFor } from '../harness/index.js';
import { killAll, Participant } from '../interop/participants.js';
import { BARRIER_MEMBER, checkBarrier, parseBarrierLines, type BarrierEvent, type BarrierVerdict } from './barrier-check.js';
import { recordOperationsRow } from './summary.js';

const T = 2000;
const N = 4;
const BOUND = 2500;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
type MemberEvent = Extract<BarrierEvent, { round: number }>;
const at = (ms: number) => BigInt(ms) * 1_000_000n;
const ev = (who: string, ms: number, kind: 'entering' | 'entered' | 'enter-failed' | 'leaving' | 'left' | 'leave-failed', round = 0): BarrierEvent => ({ who, t: at(ms), kind, round });
const options = { members: 2, sessionTimeoutMs: T, boundMs: BOUND };

describe('faults - double barrier checker', () => {
  const good = [ev('a', 0, 'entering'), ev('b', 10, 'entering'), ev('a', 12, 'entered'), ev('b', 12, 'entered'), ev('a', 20, 'leaving'), ev('b', 25, 'leaving'), ev('a', 27, 'left'), ev('b', 27, 'left')];

  it('passes a round where both enter, then both leave', () => {
    expect(checkBarrier(good, options)).toMatchObject({ entered: 2, left: 2, violations: [] });
  });

  it('fails when a member passes enter before every member arrived, or leaves while one is inside', () => {
    const early = [ev('a', 0, 'entering'), ev('a', 5, 'entered'), ...good.slice(1).filter((e) => !(e.who === 'a' && e.kind === 'entered'))];
    expect(checkBarrier(early, options).violations).toEqual(['a passed enter of round 0 when only 1 of 2 members had begun entering']);
    const leftEarly = [...good.slice(0, 5), ev('a', 22, 'left'), ev('b', 25, 'leaving'), ev('b', 27, 'left')];
    expect(checkBarrier(leftEarly, options).violations).toEqual(['a completed leave of round 0 while b, inside, had not begun leaving']);
  });

  it('fails when a live member waits forever, or long after a dead member\'s session is gone; a killed member\'s own wait is excused', () => {
    const inside = good.slice(0, 4);
    const killed: BarrierEvent = { who: 'b', t: at(30), kind: 'killed' };
    const forever = [...inside, ev('b', 25, 'leaving'), killed, ev('a', 40, 'leaving'), { ...ev('a', 15_040, 'leave-failed'), message: 'BarrierTimeoutError' }];
    expect(checkBarrier(forever, options).violations).toEqual(["a's leave of round 0 never completed (BarrierTimeoutError)"]);
    const slow = [...inside, ev('b', 25, 'leaving'), killed, ev('a', 40, 'leaving'), ev('a', 30 + T + BOUND + 100, 'left')];
    expect(checkBarrier(slow, options).violations).toEqual([`a's leave of round 0 completed ${BOUND + 100} ms after nothing it waited for was missing (bound ${BOUND} ms)`]);
    const inTime = [...inside, ev('b', 25, 'leaving'), killed, ev('a', 40, 'leaving'), ev('a', 30 + T + 600, 'left')];
    expect(checkBarrier(inTime, options)).toMatchObject({ violations: [], longestWaitMs: 600 });
  });
});

/** Member processes behind their own proxies, and the harness's events. */
class BarrierRun {
  readonly members = new Map<string, { p: Participant; proxy: TcpProxy }>();
  readonly harness: BarrierEvent[] = [];
  readonly proxies: TcpProxy[] = [];
  #next = 0;

  constructor(
    readonly space: TestSpace,
    readonly zk: ZooKeeper,
    readonly variant: 'recipe' | 'persistent',
    readonly rounds: number,
    readonly waitMs: number,
  ) {}

  /** Starts a member at round `first`; `go()` lets it begin (once it is connected). */
  async spawn(first: number, go = true): Promise<string> {
    const [host, port] = connectString().split(',')[0]!.split(':');
    const proxy = await TcpProxy.start({ host: host!, port: Number(port) });
    this.proxies.push(proxy);
    const who = `m${this.#next++}`;
    const p = Participant.node(BARRIER_MEMBER, [`${proxy.connectString}${this.space.root}`, '/db', who, String(first), String(this.rounds), String(N), String(T), String(this.waitMs), this.variant]);
    this.members.set(who, { p, proxy });
    await p.untilMatch((l) => l.includes('"ready"'), 'ready');
    if (go) p.send('go');
    return who;
  }

  /** Lets every member begin. */
  go(): void {
    for (const { p } of this.members.values()) p.send('go');
  }

  events(): BarrierEvent[] {
    return [...this.harness, ...[...this.members.values()].flatMap((m) => parseBarrierLines(m.p.lines))];
  }

  /** The first member to log `kind` in a round after `after` (the others not yet there): it is waiting. */
  async first(kind: 'entering' | 'entered' | 'leaving', after: number): Promise<{ who: string; round: number }> {
    const firstOfRound = (line: string) => {
      if (!line.includes(`"${kind}"`)) return false;
      const { round } = JSON.parse(line) as { round: number };
      return round > after && this.events().filter((e) => e.kind === kind && e.round === round).length === 1;
    };
    const found = await Promise.race([...this.members.values()].map(({ p }) => p.untilMatch(firstOfRound, `the first ${kind}`).catch(() => new Promise<string>(() => {}))));
    const { who, round } = JSON.parse(found) as { who: string; round: number };
    return { who, round };
  }

  /** SIGKILL; its proxy holds its bytes first, so nothing it sends once the harness has chosen it (a leave's delete) reaches the server. */
  kill(who: string): void {
    const { p, proxy } = this.members.get(who)!;
    proxy.pause();
    this.harness.push({ who, t: process.hrtime.bigint(), kind: 'killed' });
    p.proc.kill('SIGKILL');
  }

  /** The killed member's node in round `round` (its data is its name) is gone with its session. */
  async nodeGone(who: string, round: number): Promise<void> {
    await waitFor(`${who}'s node in round ${round} gone`, async () => {
      const children = await this.zk.getChildren(`/db/r${round}`).catch(() => [] as string[]);
      const data = await Promise.all(children.map((c) => this.zk.getData(`/db/r${round}/${c}`).then((d) => d.data.toString(), () => '')));
      return data.includes(who) ? undefined : true;
    }, 3 * T, 50);
  }

  async close(): Promise<void> {
    for (const p of this.proxies) await p.close();
  }
}

/** The run's summary row: enters that passed, the longest wait once nothing was missing, failed waits. */
function record(run: BarrierRun, nemesis: string, verdict: BarrierVerdict, started: number): void {
  const failed = run.events().filter((e) => e.kind.endsWith('-failed')).length;
  recordOperationsRow({ nemesis, processes: run.members.size, operations: verdict.entered, violations: verdict.violations.length, longestDetectionMs: verdict.longestWaitMs, participantErrors: failed, durationMs: Date.now() - started });
}

describe('faults - DoubleBarrier members killed and cut off mid-enter and mid-leave', () => {
  let space: TestSpace;
  let run: BarrierRun | undefined;
  beforeEach(async () => {
    space = new TestSpace();
    await space.admin();
  });
  afterEach(async () => {
    await killAll();
    await run?.close();
    await space.close();
  });

  it('no member passes early, none is left behind: every wait completes within the bound', async () => {
    const started = Date.now();
    run = new BarrierRun(space, await space.client(), 'recipe', 16, 15_000);
    for (let i = 0; i < N; i++) await run.spawn(0, false);
    run.go();
    // SIGKILL of a member waiting in enter; its replacement enters the same round unless the round passed with the dead member's node.
    const enter = await run.first('entering', 0);
    run.kill(enter.who);
    await run.nodeGone(enter.who, enter.round);
    const passed = (await run.zk.exists(`/db/r${enter.round}/ready`)) !== null || run.events().some((e) => e.kind === 'entered' && e.round === enter.round);
    await run.spawn(passed ? enter.round + 1 : enter.round);
    // SIGKILL of a member waiting in leave; its replacement starts with the next round.
    const leave = await run.first('leaving', enter.round);
    run.kill(leave.who);
    await run.spawn(leave.round + 1);
    // SIGKILL of a member inside the barrier (passed enter, not yet leaving); its replacement starts with the next round.
    const inside = await run.first('entered', leave.round);
    run.kill(inside.who);
    await run.spawn(inside.round + 1);
    // A member cut off for T/4 in enter (its session survives: with the client's reconnect
    // back-off, T/2 can already make the client declare the session lost).
    const cut = await run.first('entering', inside.round);
    run.members.get(cut.who)!.proxy.block();
    await sleep(T / 4);
    run.members.get(cut.who)!.proxy.unblock();
    // A member cut off for 2.5 T in leave: its session expires and its node goes with it.
    const lost = await run.first('leaving', cut.round);
    const from = process.hrtime.bigint();
    run.members.get(lost.who)!.proxy.block();
    await sleep(2.5 * T);
    run.members.get(lost.who)!.proxy.unblock();
    run.harness.push({ who: lost.who, t: from, kind: 'isolated', to: process.hrtime.bigint() });
    await Promise.all([...run.members.values()].map((m) => m.p.exited));

    const events = run.events();
    const verdict = checkBarrier(events, { members: N, sessionTimeoutMs: T, boundMs: BOUND });
    const failed = events.filter((e): e is MemberEvent => 'round' in e && e.kind.endsWith('-failed'));
    const killedAt = (who: string) => run!.harness.find((e) => e.who === who && e.kind === 'killed')!.t;
    // Not vacuous: the survivors of the member killed in leave completed their leave after the kill.
    const waitedFor = (victim: { who: string; round: number }) => events.filter((e) => e.kind === 'left' && e.round === victim.round && e.who !== victim.who && e.t > killedAt(victim.who)).length;
    const waitedForDead = [waitedFor(leave), waitedFor(inside)];
    record(run, `DoubleBarrier (${N} members): SIGKILL in enter, inside and in leave, cut off T/4 in enter and 2.5 T in leave`, verdict, started);
    console.log(`double barrier: ${JSON.stringify({ ...verdict, enterKill: { ...enter, passed }, leaveKill: leave, insideKill: inside, cut, lost, waitedForDead, failed: failed.map((e) => `${e.who} r${e.round}: ${e.message}`) })}`);
    expect(verdict.violations).toEqual([]);
    expect(waitedForDead).toEqual([N - 1, N - 1]);
    expect(verdict.entered).toBeGreaterThanOrEqual(16 * N - 4);
  }, 90_000);

  it('negative control (persistent member nodes): the survivors of a member killed inside the barrier wait until their timeout', async () => {
    const started = Date.now();
    run = new BarrierRun(space, await space.client(), 'persistent', 4, 2.5 * T);
    for (let i = 0; i < N; i++) await run.spawn(0, false);
    run.go();
    const inside = await run.first('entered', 0);
    run.kill(inside.who);
    // The replacement comes once the survivors gave up on that round (so the next round is not out of step).
    await waitFor('the survivors done with the round', () => (run!.events().filter((e) => 'round' in e && e.round === inside.round && (e.kind === 'left' || e.kind === 'leave-failed')).length >= N - 1 ? true : undefined), 4 * T, 20);
    await run.spawn(inside.round + 1);
    await Promise.all([...run.members.values()].map((m) => m.p.exited));
    const verdict = checkBarrier(run.events(), { members: N, sessionTimeoutMs: T, boundMs: BOUND });
    record(run, '(control) a double barrier with persistent member nodes: SIGKILL inside', verdict, started);
    console.log(`double barrier control: ${JSON.stringify({ ...verdict, insideKill: inside })}`);
    // Each survivor is left behind in that round, and only there.
    expect(verdict.violations).toEqual(Array.from({ length: N - 1 }, () => expect.stringMatching(new RegExp(`^m\\d+'s leave of round ${inside.round} never completed`))));
  }, 60_000);
});

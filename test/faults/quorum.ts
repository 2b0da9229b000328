/**
 * The nemeses between the servers (quorum.test.ts; issue 21): faults on the links between the
 * ZooKeeper servers of an ensemble of the test's own (`startZooKeeper({ serverLinks: true })`,
 * tickTime 1 s, syncLimit 5), not between a client and its server. Every participant is pinned to
 * one server (its connect string names that server alone), so the nemesis knows whom a fault cuts
 * off; every participant's session timeout T is 2 s, two ticks.
 *
 * Why these faults: a follower cut off from the leader keeps answering its clients' pings and
 * reads for up to syncLimit ticks, while the leader, which alone expires sessions and hears of
 * the follower's clients only through the follower, expires them about T after the cut. A
 * client that trusts its server's answers then still believes it holds a lock another client has
 * already taken (issue 21: 5 of 5 runs at T = 2 s).
 *
 * Each nemesis repeats a strike: a fresh slow Node participant (the victim: each of its writes
 * followed by `slowWorkMs`, so its hold outlasts the session's expiry) is started pinned to the
 * server about to be struck; once it holds the lock, the fault (a partition, a bridge, a one-way
 * loss, SIGSTOP of the leader, a restart) lasts at least `minMs` and until another participant
 * has taken the victim's place (at most `maxMs`); then it is healed, every server must serve
 * again and the lock must move before the next strike. Fast Node contenders (and Curator ones,
 * placed where they are contenders, not victims: on a server that is not struck where the
nemesis allows, and holding 60 ms at a time, so that on a struck server they are waiters, never
the holder whose session expires) are pinned across the servers. The history
 * checker judges the whole run as usual: a victim whose lease signal had not aborted when its place
 * was taken is a violation (two holders). Each strike is analysed too (analyseStrike): whether it
 * tested anything (the victim held at the fault and its place was taken while it still held it,
 * or after it learned it had lost it), how long the struck server kept serving, when the victim
 * learned, and the margin to the next holder.
 */
import type { QuorumCast, QuorumContext, QuorumResult } from './quorum-cast.js';
import { DEFAULT_PROFILE } from './quorum-cast.js';
import { SESSION_TIMEOUT } from './fixture.js';
import { strikeRun } from './quorum-run.js';

export { SYNC_LIMIT, SYNC_PROFILE, TICK_MS, type ProofProfile, type QuorumCast, type QuorumContext, type QuorumKind, type QuorumResult } from './quorum-cast.js';

/** A partition's timing: at least 3T (past syncLimit: the cut server gives up), until the victim's place is taken, at most 15 s. */
export const PARTITION = { minMs: 3 * SESSION_TIMEOUT, maxMs: 15_000 };
/** Victims struck on a follower: their place is taken about T after the fault; a hold of 3 x 1.5 s outlasts it. */
export const FOLLOWER_VICTIM_WORK_MS = 1500;
/**
 * Victims struck on the leader: the others need syncLimit ticks to leave it, an election, then T
 * before its session expires (about 8 s); a hold of 3 x 3.5 s outlasts that.
 */
const LEADER_VICTIM_WORK_MS = 3500;

/**
 * 1. The holder's follower isolated from both other servers (issue 21's case): the holder is
 * connected only to it; contenders on every server, Curator ones on the leader. The two followers
 * take turns. Before the quorum proof (d69f599): two holders at both strikes, the follower served
 * its clients 5.0 s after the cut (syncLimit), the victim's place was taken after 2.2-2.9 s.
 */
export function isolateFollower(ctx: QuorumContext, cast: QuorumCast): Promise<QuorumResult> {
  return strikeRun(ctx, cast, {
    name: `the holder's follower isolated from the other servers for ${PARTITION.minMs / 1000}+ s, 3 servers`,
    servers: 3,
    layout: (r) => ({ nodes: [r.leader, ...r.followers], javas: [r.leader], resource: [r.leader] }),
    duringFault: true,
    plan: async (run, i) => {
      const r = await run.roles();
      const target = r.followers[i % r.followers.length]!;
      return { what: `follower ${target} isolated`, target, fault: () => run.links.isolate(target, 'hold'), heal: () => run.links.heal(), ...PARTITION, slowWorkMs: FOLLOWER_VICTIM_WORK_MS, watchServing: true, targetIs: 'follower' };
    },
  });
}

/**
 * 2. The leader isolated from both followers, participants on both sides: the victim on the
 * leader, contenders on every server, Curator ones on a follower. Each strike isolates whoever
 * leads at that moment (the old leader rejoins as a follower after the heal). Not a case of issue
 * 21 at these timings: the followers leave the leader after syncLimit ticks and only then elect
 * another, whose tracker gives every session a fresh T, while the old leader gives up at about the
 * same time (within a tick: measured 5.0-6.0 s) and its clients' leases abort on the disconnect.
 * Before the quorum proof the victim learned 1.8-3.0 s before its place was taken.
 */
export function isolateLeader(ctx: QuorumContext, cast: QuorumCast): Promise<QuorumResult> {
  return strikeRun(ctx, cast, {
    name: `the leader isolated from the followers for ${PARTITION.minMs / 1000}+ s, 3 servers`,
    servers: 3,
    layout: (r) => ({ nodes: [r.leader, ...r.followers], javas: [r.followers[0]!], resource: [...r.followers] }),
    duringFault: true,
    plan: async (run) => {
      const r = await run.roles();
      return { what: `leader ${r.leader} isolated`, target: r.leader, fault: () => run.links.isolate(r.leader, 'hold'), heal: () => run.links.heal(), ...PARTITION, slowWorkMs: LEADER_VICTIM_WORK_MS, watchServing: true, targetIs: 'leader' };
    },
  });
}

/**
 * 3. Five servers split 2 | 3: the minority is two followers, one of them the victim's; the
 * leader keeps its majority. Contenders on the leader, two majority followers and the other
 * minority follower. Five servers (and 4-5 participants) ran reliably on this 2-core machine.
 * Before the quorum proof: two holders at both strikes.
 */
export function splitFive(ctx: QuorumContext, cast: QuorumCast): Promise<QuorumResult> {
  return strikeRun(ctx, cast, {
    name: `two followers split from the other three servers for ${PARTITION.minMs / 1000}+ s, 5 servers`,
    servers: 5,
    layout: (r) => ({ nodes: [r.leader, r.followers[0]!, r.followers[1]!, r.followers[3]!], javas: [r.leader], resource: [r.leader] }),
    duringFault: true,
    plan: async (run, i) => {
      const r = await run.roles();
      // The victim's server and another follower make the minority; the strikes take turns between the last two followers.
      const minority = i % 2 === 0 ? [r.followers[2]!, r.followers[3]!] : [r.followers[3]!, r.followers[2]!];
      const majority = [r.leader, ...r.followers.filter((id) => !minority.includes(id))];
      return { what: `followers ${minority.join(', ')} split from ${majority.join(', ')}`, target: minority[0]!, fault: () => run.links.partition([minority, majority], 'hold'), heal: () => run.links.heal(), ...PARTITION, slowWorkMs: FOLLOWER_VICTIM_WORK_MS, watchServing: true, targetIs: 'follower' };
    },
  });
}

/**
 * 4. A bridge: the victim's follower cut from the leader, the other follower seeing both (3
 * servers: the only link cut is leader - victim's follower). Contenders on every server (two on
 * the leader), Curator ones on the leader. Before the quorum proof: two holders (over the
 * semaphore's capacity) at both strikes.
 */
export function bridge(ctx: QuorumContext, cast: QuorumCast): Promise<QuorumResult> {
  return strikeRun(ctx, cast, {
    name: `a bridge: the holder's follower cut from the leader, the other follower seeing both, ${PARTITION.minMs / 1000}+ s, 3 servers`,
    servers: 3,
    layout: (r) => ({ nodes: [r.leader, r.leader, ...r.followers], javas: [r.leader], resource: [r.leader] }),
    duringFault: true,
    plan: async (run, i) => {
      const r = await run.roles();
      const target = r.followers[i % 2]!;
      const other = r.followers[(i + 1) % 2]!;
      return { what: `follower ${target} cut from leader ${r.leader}, bridged by ${other}`, target, fault: () => run.links.bridge([r.leader], [target], other, 'hold'), heal: () => run.links.heal(), ...PARTITION, slowWorkMs: FOLLOWER_VICTIM_WORK_MS, watchServing: true, targetIs: 'follower' };
    },
  });
}

/**
 * 5. One server link losing its bytes one way (silently dropped): leader -> the victim's follower,
 * then the follower -> leader, in turn. Contenders on every server, Curator ones on the leader.
 * Before the quorum proof, leader -> follower lost: as an isolation (the follower hears nothing,
 * served 5.0 s; two holders); follower -> leader lost: the follower still hears the leader, so
 * it applies the leader's closeSession and drops the victim's connection, but only as the next
 * holder acquires (the victim's signal aborted 330-340 ms after its place was taken: a late
 * signal, twice).
 */
export function oneWay(ctx: QuorumContext, cast: QuorumCast): Promise<QuorumResult> {
  return strikeRun(ctx, cast, {
    name: `one-way loss between the leader and the holder's follower (each direction in turn) for ${PARTITION.minMs / 1000}+ s, 3 servers`,
    servers: 3,
    layout: (r) => ({ nodes: [r.leader, ...r.followers], javas: [r.leader], resource: [r.leader] }),
    duringFault: true,
    plan: async (run, i) => {
      const r = await run.roles();
      const target = r.followers[0]!;
      const [from, to] = i % 2 === 0 ? [r.leader, target] : [target, r.leader];
      return { what: `server ${from} -> server ${to} dropped`, target, fault: () => run.links.oneWay(from, to, 'drop'), heal: () => run.links.heal(), ...PARTITION, slowWorkMs: FOLLOWER_VICTIM_WORK_MS, watchServing: true, targetIs: 'follower' };
    },
  });
}

/**
 * 6. The leader paused (SIGSTOP) for longer than syncLimit ticks (at least 7 s: the followers
 * leave it and elect another), then resumed. The victim on the leader, contenders on every
 * server, Curator ones on a follower. Not a case of issue 21: nobody expires a session while the
 * leader is frozen, the new leader gives every session a fresh T, and the victim's client hears
 * nothing from its frozen server, so its lease aborts on its own (1.6 s before the quorum proof).
 */
export function pauseLeader(ctx: QuorumContext, cast: QuorumCast): Promise<QuorumResult> {
  const { syncLimit, tickMs } = cast.proof ?? DEFAULT_PROFILE;
  const pause = { minMs: (syncLimit + 2) * tickMs, maxMs: 15_000 };
  return strikeRun(ctx, cast, {
    name: `the leader paused (SIGSTOP) for ${pause.minMs / 1000}+ s, then resumed, 3 servers`,
    servers: 3,
    layout: (r) => ({ nodes: [r.leader, ...r.followers], javas: [r.followers[0]!], resource: [...r.followers] }),
    duringFault: true,
    plan: async (run) => {
      const r = await run.roles();
      const leader = run.server(r.leader);
      return { what: `leader ${r.leader} paused`, target: r.leader, fault: () => leader.pause(), heal: () => leader.resume(), ...pause, slowWorkMs: LEADER_VICTIM_WORK_MS, watchServing: false, targetIs: 'leader' };
    },
  });
}

/**
 * 7. Rolling restarts: every server in turn stopped (SIGTERM) and started again, followers first,
 * the leader last, the victim on the server restarted. A plain restart (about 1.2 s here) is
 * shorter than T: the victim's session lives on, its place is never taken and nothing is tested
 * but the lease's caution. So each server stays down until the victim's place was taken (its
 * session expired: about T after a follower's stop; an election and T after the leader's), at
 * most 10 s. Contenders on every server, Curator ones on the server restarted last. Not a case of
 * issue 21: a stopped server drops its clients at once (their leases abort 0.7 s after the stop).
 */
export function rollingRestart(ctx: QuorumContext, cast: QuorumCast): Promise<QuorumResult> {
  let order: number[] = [];
  return strikeRun(ctx, { ...cast, strikes: Math.max(cast.strikes, 3) }, {
    name: "rolling restart of every server, each down until its holder's session expired, 3 servers",
    servers: 3,
    layout: (r) => {
      order = [...r.followers, r.leader];
      return { nodes: [r.leader, ...r.followers], javas: [r.leader], resource: [r.leader, ...r.followers] };
    },
    duringFault: true,
    plan: async (run, i) => {
      const target = order[i % order.length]!;
      const server = run.server(target);
      const targetIs = (await run.roles()).leader === target ? 'leader' : 'follower';
      return { what: `server ${target} (${targetIs}) restarted`, target, fault: () => server.stop(), heal: () => server.start(), minMs: 0, maxMs: 10_000, slowWorkMs: LEADER_VICTIM_WORK_MS, watchServing: false, targetIs };
    },
  });
}

/**
 * The negative controls of the quorum nemeses: issue 21's case (quorum.ts's isolateFollower) with
 * a victim that trusts its server's answers, which the checker must catch holding with the next
 * holder.
 */
import { FOLLOWER_VICTIM_WORK_MS, PARTITION } from './quorum.js';
import { DEFAULT_PROFILE, type QuorumCast, type QuorumContext, type QuorumResult } from './quorum-cast.js';
import { castName, QuorumRun, strikeRepeatedly } from './quorum-run.js';

/**
 * The negative controls: issue 21's case with a victim that trusts its server's answers on the
 * isolated follower (slow), Node contenders on every server: a Curator InterProcessMutex
 * (`victim` 'java'), or ours with `leaseProof: 'off'` (`victim` 'node', every Node participant
 * of the run in that mode). Neither learns anything while its follower answers (Curator's
 * SUSPENDED, our lease's signal, come only when the follower gives up, syncLimit ticks after the
 * cut), so the checker must find it holding with the next holder. `counts.victimOverlaps` counts
 * the strikes where it did; the caller asserts the checker's violations name the victim.
 */
export async function victimControl(ctx: QuorumContext, cast: QuorumCast, victim: 'java' | 'node'): Promise<QuorumResult & { caught: number }> {
  if (victim === 'java' && !cast.curator) throw new Error('the negative control needs the compiled Curator participant');
  const c: QuorumCast = { ...cast, javas: 0, ...(victim === 'node' ? { proof: { ...DEFAULT_PROFILE, mode: 'off' as const } } : {}) };
  const run = await QuorumRun.start(ctx, c, 3, (r) => ({ nodes: [r.leader, r.leader, ...r.followers], javas: [], resource: [r.leader] }));
  try {
    await strikeRepeatedly(run, async (i) => {
      const r = await run.roles();
      const target = r.followers[i % r.followers.length]!;
      return { what: `follower ${target} isolated`, target, fault: () => run.links.isolate(target, 'hold'), heal: () => run.links.heal(), ...PARTITION, slowWorkMs: FOLLOWER_VICTIM_WORK_MS, watchServing: true, victim, targetIs: 'follower' };
    });
  } catch (err) {
    await run.close();
    throw err;
  }
  const counts: Record<string, number> = {};
  const who = victim === 'java' ? 'a Curator holder' : "a holder of ours with leaseProof 'off'";
  const result = await run.finish(`(control) ${who} on the isolated follower, 3 servers (${castName({ ...cast, javas: victim === 'java' ? 1 : 0 }, 4)})`, counts, () => []);
  const caught = result.verdict.violations.filter((v) => (victim === 'java' ? /\bjv\d+\b/ : /\bv\d+\b/).test(v)).length;
  counts.victimOverlaps = result.strikes.filter((s) => s.overlapped).length;
  counts.caught = caught;
  return { ...result, caught };
}

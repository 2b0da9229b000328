/**
 * The issue-21 experiment, by hand (not part of CI): a 3-server ensemble (tickTime 1000,
 * syncLimit 5) whose server-to-server links go through proxies; holder H holds a Mutex through
 * one server only, waiter W waits through another, an observer watches H's lock node. Then H's
 * server is cut off from both others (bytes held silently), and we log, on one clock:
 * - when W acquired, and whether H's `lease.signal` had aborted by then (two holders if not);
 * - when the ensemble expired H's session (the observer's NodeDeleted of H's node: the commit of
 *   closeSession) and when H's client reported `lost` (or `expired`).
 *
 *   node test/dist/faults/quorum-experiment.js [follower|leader] [T,T,...] [runs]
 *
 * `follower`: H on a follower, W and the observer on the leader. `leader`: H on the leader, W and
 * the observer on a follower (the followers elect a new leader, which restarts session clocks).
 */
import { ZooKeeper } from '@zk/protocol';
import { Mutex } from '@zk/locks';
import { startZooKeeper } from '../harness/zookeeper.js';

interface Run {
  t: number;
  twoHolders: boolean;
  /** W's acquire minus H's signal abort, ms (negative: W acquired first). */
  signalMargin: number;
  /** H's `lost` (or `expired` if no lost) minus the ensemble's expiry, ms (positive: late). */
  lostVsExpiry: number;
}

async function once(scenario: 'follower' | 'leader', t: number, i: number): Promise<Run> {
  const ensemble = await startZooKeeper({ servers: 3, own: true, serverLinks: true, tickTime: 1000, config: { syncLimit: 5 } });
  try {
    const leader = await ensemble.leader();
    if (!leader) throw new Error('no leader');
    const other = ensemble.servers.find((s) => s.id !== leader.id)!;
    const [hServer, wServer] = scenario === 'follower' ? [other, leader] : [leader, other];
    const h = await ZooKeeper.connect(hServer.connectString, { sessionTimeout: t });
    const w = await ZooKeeper.connect(wServer.connectString, { sessionTimeout: 30_000 });
    const obs = await ZooKeeper.connect(wServer.connectString, { sessionTimeout: 30_000 });
    const path = `/exp/${scenario}-${t}-${i}`;
    const lease = await new Mutex(h, path).acquire();
    let signalAt = Infinity;
    lease.signal.addEventListener('abort', () => (signalAt = performance.now()));
    let lostAt = Infinity;
    h.onStateChange((s) => {
      if ((s === 'lost' || s === 'expired') && lostAt === Infinity) lostAt = performance.now();
    });
    let expiredAt = Infinity;
    const deleted = new Promise<void>((resolve) => {
      void obs.exists(lease.node, { watch: (e) => (e.type === 'NodeDeleted' && (expiredAt = performance.now()), resolve()) });
    });
    let waiterAt = Infinity;
    let signalAbortedAtAcquire = false;
    const waiter = new Mutex(w, path).acquire({ timeout: 60_000 }).then((l) => {
      waiterAt = performance.now();
      signalAbortedAtAcquire = lease.signal.aborted;
      return l;
    });
    // Let W queue behind H.
    while ((await w.getChildren(path)).length < 2) await new Promise((r) => setTimeout(r, 20));
    const cutAt = performance.now();
    ensemble.links!.isolate(hServer.id, 'hold');
    const wl = await waiter;
    await deleted;
    // H's client reports lost/expired at the latest when its server drops it and the loss timer runs.
    const until = performance.now() + 3 * t + 15_000;
    while (lostAt === Infinity && performance.now() < until) await new Promise((r) => setTimeout(r, 50));
    console.log(
      JSON.stringify({ scenario, t, run: i, cutToExpiry: Math.round(expiredAt - cutAt), cutToW: Math.round(waiterAt - cutAt), cutToSignal: Math.round(signalAt - cutAt), cutToLost: Math.round(lostAt - cutAt), signalBeforeW: signalAbortedAtAcquire }),
    );
    ensemble.links!.heal();
    await wl.release().catch(() => undefined);
    await Promise.all([h.close(), w.close(), obs.close()]).catch(() => undefined);
    return { t, twoHolders: !signalAbortedAtAcquire, signalMargin: waiterAt - signalAt, lostVsExpiry: lostAt - expiredAt };
  } finally {
    await ensemble.close();
  }
}

const scenario = (process.argv[2] ?? 'follower') as 'follower' | 'leader';
const timeouts = (process.argv[3] ?? '2000,4000,5000,6000,8000').split(',').map(Number);
const runs = Number(process.argv[4] ?? 3);
const rows: string[] = [];
for (const t of timeouts) {
  const results: Run[] = [];
  for (let i = 0; i < runs; i++) results.push(await once(scenario, t, i));
  const two = results.filter((r) => r.twoHolders).length;
  const late = results.map((r) => Math.round(r.lostVsExpiry));
  const margins = results.map((r) => Math.round(r.signalMargin));
  rows.push(`| ${scenario} | ${t} | ${two} of ${runs} | ${margins.join(', ')} | ${late.join(', ')} |`);
}
console.log('| H on | T (ms) | two holders | W acquire - H signal (ms) | H lost - expiry (ms) |');
console.log('| --- | --- | --- | --- | --- |');
for (const r of rows) console.log(r);
process.exit(0);

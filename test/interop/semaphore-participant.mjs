// The @zk/locks side of the semaphore interop tests (semaphore.test.ts): the same arguments,
// start barrier, marker-file protocol and result line as java/CuratorSemaphoreParticipant.java
// (its header documents them). Plain ESM on the built packages (run `tsc -b` first).
//   node semaphore-participant.mjs connect path fixed|count|mutex|none limit countPath|- iterations|hold markerDir id [sessionTimeout]
// Differences from the Java side: with a limit of 2 or more, a seeded half of the holds take 2
// permits at once (acquire(2): one marker per permit, logged as "<id> 2"); a hold run prints
// "TOKEN <fencingToken> <sessionTimeout>" after ACQUIRED.
import { Semaphore, SemaphoreMutex, SharedCount } from '@zk/locks';
import { awaitStart, countHolds, expectArgs, holdUntilLine, Markers, result, seededRandom, withClient } from './interop.mjs';

const [connect, path, kind, limitArg, countPath, iterationsArg, dir, id, timeoutArg] = expectArgs(
  'semaphore-participant.mjs connect path kind limit countPath iterations markerDir id [sessionTimeout]',
  8,
  9,
);
const limit = Number(limitArg);
const markers = new Markers(dir, id);
// Each participant's mix of 1- and 2-permit holds is reproducible.
const random = seededRandom(id);

/** One hold of `qty` permits: a marker per permit, then count every permit marker present. */
async function hold(n, qty, slow) {
  const mine = [];
  for (let k = 0; k < qty; k++) mine.push(await markers.claim(`permit-${id}-${n}-${k}`));
  if ((await markers.count('permit-')) > limit) markers.violations++;
  await markers.log(String(qty));
  await Markers.pause(slow);
  for (const marker of mine) await markers.drop(marker);
}

let qty = 1; // the permits of the current hold

/** Takes the permits of one hold: two at once in a seeded half of the holds when the limit allows, else one. */
async function acquirePermits(semaphore) {
  qty = kind !== 'mutex' && limit >= 2 && random() < 0.5 ? 2 : 1;
  const leases = qty === 1 ? [await semaphore.acquire()] : await semaphore.acquire(qty);
  return { release: async () => { for (const lease of leases) await lease.release(); } };
}

await withClient(connect, Number(timeoutArg ?? 10_000), async (zk) => {
  const count = kind === 'count' ? new SharedCount(zk, countPath, limit) : undefined;
  try {
    let semaphore;
    if (kind === 'mutex') semaphore = new SemaphoreMutex(zk, path);
    else if (count) {
      await count.start();
      semaphore = new Semaphore(zk, path, { maxLeases: count });
    } else semaphore = new Semaphore(zk, path, { maxLeases: limit });
    if (iterationsArg === 'hold') return await holdUntilLine(() => semaphore.acquire(), (lease) => `TOKEN ${lease.fencingToken} ${zk.sessionTimeout}`);
    const iterations = Number(iterationsArg);
    await awaitStart();
    const acquisitions = await countHolds(() => acquirePermits(semaphore), kind === 'none', iterations, (n, slow) => hold(n, qty, slow));
    result(id, acquisitions, markers.violations);
  } finally {
    await count?.close();
  }
});

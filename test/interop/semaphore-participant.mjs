// The @zk/locks side of the semaphore interop tests (semaphore.test.ts): the same arguments,
// start barrier, marker-file protocol and result line as java/CuratorSemaphoreParticipant.java
// (its header documents them). Plain ESM on the built packages (run `tsc -b` first).
//   node semaphore-participant.mjs connect path fixed|count|mutex|none limit countPath|- iterations|hold markerDir id [sessionTimeout]
// Differences from the Java side: with a limit of 2 or more, a seeded half of the holds take 2
// permits at once (acquire(2): one marker per permit, logged as "<id> 2"); a hold run prints
// "TOKEN <fencingToken> <sessionTimeout>" after ACQUIRED.
import { appendFile, readdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { ZooKeeper } from '@zk/protocol';
import { Semaphore, SemaphoreMutex, SharedCount } from '@zk/locks';

const args = process.argv.slice(2);
if (args.length !== 8 && args.length !== 9) {
  process.stderr.write('usage: semaphore-participant.mjs connect path kind limit countPath iterations markerDir id [sessionTimeout]\n');
  process.exit(2);
}
const [connect, path, kind, limitArg, countPath, iterationsArg, dir, id, timeoutArg] = args;
const limit = Number(limitArg);
const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
const nextLine = () => lines.next();
const say = (line) => process.stdout.write(`${line}\n`);

let violations = 0;

// A small generator seeded from the id: each participant's mix of 1- and 2-permit holds is reproducible.
let seed = [...id].reduce((h, c) => (Math.imul(h, 31) + c.charCodeAt(0)) >>> 0, 7);
const random = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32;

/** One hold of `qty` permits: a marker per permit, then count every permit marker present. */
async function hold(n, qty, slow) {
  const markers = Array.from({ length: qty }, (_, k) => join(dir, `permit-${id}-${n}-${k}`));
  for (const m of markers) await writeFile(m, id, { flag: 'wx' });
  const inside = (await readdir(dir)).filter((f) => f.startsWith('permit-')).length;
  if (inside > limit) violations++;
  // One short O_APPEND write per hold: appends from several processes do not interleave.
  await appendFile(join(dir, 'log'), `${id} ${qty}\n`);
  await new Promise((resolve) => (slow ? setTimeout(resolve, 1) : setImmediate(resolve)));
  for (const m of markers) await rm(m);
}

const zk = await ZooKeeper.connect(connect, { sessionTimeout: Number(timeoutArg ?? 10_000) });
let count;
try {
  let semaphore;
  if (kind === 'mutex') semaphore = new SemaphoreMutex(zk, path);
  else if (kind === 'count') {
    count = new SharedCount(zk, countPath, limit);
    await count.start();
    semaphore = new Semaphore(zk, path, { maxLeases: count });
  } else semaphore = new Semaphore(zk, path, { maxLeases: limit });
  if (iterationsArg === 'hold') {
    const lease = await semaphore.acquire();
    say('ACQUIRED');
    say(`TOKEN ${lease.fencingToken} ${zk.sessionTimeout}`);
    await nextLine();
    await lease.release();
    say('RELEASED');
  } else {
    const iterations = Number(iterationsArg);
    say('READY');
    await nextLine();
    let acquisitions = 0;
    for (let n = 0; n < iterations; n++) {
      if (kind === 'none') {
        acquisitions++; // a "hold" without a semaphore
        await hold(n, 1, true);
        continue;
      }
      const qty = kind !== 'mutex' && limit >= 2 && random() < 0.5 ? 2 : 1;
      const leases = qty === 1 ? [await semaphore.acquire()] : await semaphore.acquire(qty);
      try {
        acquisitions++;
        await hold(n, qty, false);
      } finally {
        for (const lease of leases) await lease.release();
      }
    }
    say(JSON.stringify({ id, acquisitions, violations }));
  }
} finally {
  await count?.close();
  await zk.close();
  process.stdin.destroy();
}

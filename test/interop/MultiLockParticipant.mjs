// The @zk/locks side of the MultiLock interop test (multi-lock.test.ts): the same arguments,
// start barrier, marker files and result line as java/MultiLockParticipant.java (its header
// documents them). Plain ESM on the built packages (`tsc -b` first).
//   node MultiLockParticipant.mjs connectString paths multi|mutex|none iterations|hold markerDir id
// `multi` is a MultiLock of Mutexes over the paths in the order given (it sorts them itself).
import { appendFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { ZooKeeper } from '@zk/protocol';
import { MultiLock, Mutex } from '@zk/locks';

const args = process.argv.slice(2);
if (args.length !== 6) {
  process.stderr.write('usage: MultiLockParticipant.mjs connect paths mode iterations markerDir id\n');
  process.exit(2);
}
const [connect, pathList, mode, iterationsArg, dir, id] = args;
const paths = pathList.split(',');
const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
const say = (line) => process.stdout.write(`${line}\n`);

let violations = 0;

async function hold(held, slow) {
  const mine = [];
  for (const lockPath of held) {
    const marker = join(dir, lockPath.replaceAll('/', '_'));
    try {
      await writeFile(marker, id, { flag: 'wx' });
      mine.push(marker);
    } catch (err) {
      if (err.code !== 'EEXIST') throw err;
      violations++; // another holder of this path is inside
    }
  }
  // One short O_APPEND write per hold: appends from several processes do not interleave.
  await appendFile(join(dir, 'log'), `${id} ${mode}\n`);
  await new Promise((resolve) => (slow ? setTimeout(resolve, 1) : setImmediate(resolve)));
  for (const marker of mine) await rm(marker);
}

const zk = await ZooKeeper.connect(connect, { sessionTimeout: 10_000 });
try {
  const lock = mode === 'multi' ? new MultiLock(paths.map((p) => new Mutex(zk, p))) : new Mutex(zk, paths[0]);
  const held = mode === 'mutex' ? paths.slice(0, 1) : paths;
  if (iterationsArg === 'hold') {
    const lease = await lock.acquire();
    say('ACQUIRED');
    await lines.next();
    await lease.release();
    say('RELEASED');
  } else {
    const iterations = Number(iterationsArg);
    say('READY');
    await lines.next();
    let acquisitions = 0;
    for (let n = 0; n < iterations; n++) {
      if (mode === 'none') {
        acquisitions++; // a "hold" without a lock
        await hold(held, true);
        continue;
      }
      const lease = await lock.acquire();
      try {
        acquisitions++;
        await hold(held, false);
      } finally {
        await lease.release();
      }
    }
    say(JSON.stringify({ id, acquisitions, violations }));
  }
} finally {
  await zk.close();
  process.stdin.destroy();
}

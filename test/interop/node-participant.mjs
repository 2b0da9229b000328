// The @zk/locks side of the interop tests (curator.test.ts): the same arguments, start barrier,
// marker-file protocol and result line as java/CuratorParticipant.java (its header documents
// them). Plain ESM on the built packages (the test command runs `tsc -b` first), so it needs no
// TypeScript loader.
//   node node-participant.mjs connectString lockPath mutex|read|write|rw-mixed|none iterations|hold markerDir id
import { appendFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { ZooKeeper } from '@zk/protocol';
import { Mutex, ReadWriteLock } from '@zk/locks';

const args = process.argv.slice(2);
if (args.length !== 6) {
  process.stderr.write('usage: node-participant.mjs connect lockPath mode iterations markerDir id\n');
  process.exit(2);
}
const [connect, lockPath, mode, iterationsArg, dir, id] = args;
const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
const nextLine = () => lines.next();
const say = (line) => process.stdout.write(`${line}\n`);

let violations = 0;

// A small generator seeded from the id: each participant's mix of reads and writes is reproducible.
let seed = [...id].reduce((h, c) => (Math.imul(h, 31) + c.charCodeAt(0)) >>> 0, 7);
const random = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32;

async function log(kind) {
  // One short O_APPEND write per hold: appends from several processes do not interleave.
  await appendFile(join(dir, 'log'), `${id} ${kind}\n`);
}

async function exclusiveHold(slow) {
  const writer = join(dir, 'writer');
  let mine = true;
  try {
    await writeFile(writer, id, { flag: 'wx' });
  } catch (err) {
    if (err.code !== 'EEXIST') throw err;
    violations++; // another exclusive holder is inside; its file is not ours to delete
    mine = false;
  }
  if ((await readdir(dir)).some((f) => f.startsWith('reader-'))) violations++;
  await log('w');
  await new Promise((resolve) => (slow ? setTimeout(resolve, 1) : setImmediate(resolve)));
  if (mine) await rm(writer);
}

async function readHold(n) {
  const marker = join(dir, `reader-${id}-${n}`);
  await writeFile(marker, id, { flag: 'wx' });
  if (await stat(join(dir, 'writer')).then(() => true, () => false)) violations++;
  await log('r');
  await new Promise((resolve) => setImmediate(resolve));
  await rm(marker);
}

const zk = await ZooKeeper.connect(connect, { sessionTimeout: 10_000 });
try {
  const mutex = new Mutex(zk, lockPath);
  const rw = new ReadWriteLock(zk, lockPath);
  const lockFor = (read) => (mode === 'mutex' ? mutex : read ? rw.readLock() : rw.writeLock());
  if (iterationsArg === 'hold') {
    const lease = await lockFor(mode === 'read').acquire();
    say('ACQUIRED');
    await nextLine();
    await lease.release();
    say('RELEASED');
  } else {
    const iterations = Number(iterationsArg);
    say('READY');
    await nextLine();
    let acquisitions = 0;
    for (let n = 0; n < iterations; n++) {
      const read = mode === 'read' || (mode === 'rw-mixed' && random() < 0.5);
      if (mode === 'none') {
        acquisitions++; // a "hold" without a lock
        await exclusiveHold(true);
        continue;
      }
      const lease = await lockFor(read).acquire();
      try {
        acquisitions++;
        if (read) await readHold(n);
        else await exclusiveHold(false);
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

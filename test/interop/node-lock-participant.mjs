// The Node participant of the interop tests: the same protocol as java/CuratorLockParticipant.java,
// on the built packages (the test command builds before testing).
//   <connect> <lockPath> mutex|rw <iterations> <markerDir> <id>
import { mkdir, readdir, rm, writeFile, access } from 'node:fs/promises';
import { join } from 'node:path';
import { ZooKeeper } from '@zk/protocol';
import { Mutex, ReadWriteLock } from '@zk/locks';

const [connect, lockPath, mode, iterationsText, dir, id] = process.argv.slice(2);
const iterations = Number(iterationsText);
await mkdir(dir, { recursive: true });
const zk = await ZooKeeper.connect(connect, { sessionTimeout: 10_000 });
const mutex = new Mutex(zk, lockPath);
const rw = new ReadWriteLock(zk, lockPath);
let violations = 0;
let seed = [...id].reduce((h, c) => (h * 31 + c.charCodeAt(0)) >>> 0, 7);
const random = () => ((seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32);

async function exclusiveHold() {
  const writer = join(dir, 'writer');
  try {
    await writeFile(writer, id, { flag: 'wx' });
  } catch (err) {
    if (err.code === 'EEXIST') return 1; // another exclusive holder is inside
    throw err;
  }
  const readers = (await readdir(dir)).filter((f) => f.startsWith('reader-')).length;
  await new Promise((r) => setImmediate(r));
  await rm(writer);
  return readers > 0 ? 1 : 0;
}

async function readHold(n) {
  const mine = join(dir, `reader-${id}-${n}`);
  await writeFile(mine, id, { flag: 'wx' });
  const writerInside = await access(join(dir, 'writer')).then(() => true, () => false);
  await new Promise((r) => setImmediate(r));
  await rm(mine);
  return writerInside ? 1 : 0;
}

for (let n = 0; n < iterations; n++) {
  const read = mode === 'rw' && random() < 0.5;
  const lock = mode === 'mutex' ? mutex : read ? rw.readLock() : rw.writeLock();
  const lease = await lock.acquire();
  try {
    violations += read ? await readHold(n) : await exclusiveHold();
  } finally {
    await lease.release();
  }
}
process.stdout.write(`${JSON.stringify({ id, acquisitions: iterations, violations })}\n`);
await zk.close();

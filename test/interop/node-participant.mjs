// The @zk/locks side of the interop tests (curator.test.ts): the same arguments, start barrier,
// marker-file protocol and result line as java/CuratorParticipant.java (its header documents
// them). Plain ESM on the built packages (the test command runs `tsc -b` first), so it needs no
// TypeScript loader.
//   node node-participant.mjs connectString lockPath mutex|read|write|rw-mixed|none iterations|hold markerDir id
import { Mutex, ReadWriteLock } from '@zk/locks';
import { awaitStart, countHolds, expectArgs, holdUntilLine, Markers, result, seededRandom, withClient } from './interop.mjs';

const [connect, lockPath, mode, iterationsArg, dir, id] = expectArgs('node-participant.mjs connect lockPath mode iterations markerDir id', 6);
const markers = new Markers(dir, id);
// Each participant's mix of reads and writes is reproducible.
const random = seededRandom(id);

/** An exclusive hold; `slow` widens the window (only the unlocked control uses it). */
async function exclusiveHold(slow) {
  const writer = await markers.claim('writer');
  if ((await markers.count('reader-')) > 0) markers.violations++;
  await markers.log('w');
  await Markers.pause(slow);
  await markers.drop(writer);
}

async function readHold(n) {
  const reader = await markers.claim(`reader-${id}-${n}`);
  if (await markers.exists('writer')) markers.violations++;
  await markers.log('r');
  await Markers.pause(false);
  await markers.drop(reader);
}

await withClient(connect, 10_000, async (zk) => {
  const mutex = new Mutex(zk, lockPath);
  const rw = new ReadWriteLock(zk, lockPath);
  const lockFor = (read) => (mode === 'mutex' ? mutex : read ? rw.readLock() : rw.writeLock());
  if (iterationsArg === 'hold') return holdUntilLine(() => lockFor(mode === 'read').acquire());
  const iterations = Number(iterationsArg);
  await awaitStart();
  let read = false; // what the current hold took, decided at each acquire
  const acquire = () => {
    read = mode === 'read' || (mode === 'rw-mixed' && random() < 0.5);
    return lockFor(read).acquire();
  };
  const acquisitions = await countHolds(acquire, mode === 'none', iterations, (n, slow) => (read ? readHold(n) : exclusiveHold(slow)));
  result(id, acquisitions, markers.violations);
});

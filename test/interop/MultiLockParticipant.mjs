// The @zk/locks side of the MultiLock interop test (multi-lock.test.ts): the same arguments,
// start barrier, marker files and result line as java/MultiLockParticipant.java (its header
// documents them). Plain ESM on the built packages (`tsc -b` first).
//   node MultiLockParticipant.mjs connectString paths multi|mutex|none iterations|hold markerDir id
// `multi` is a MultiLock of Mutexes over the paths in the order given (it sorts them itself).
import { MultiLock, Mutex } from '@zk/locks';
import { awaitStart, countHolds, expectArgs, holdUntilLine, Markers, result, withClient } from './interop.mjs';

const [connect, pathList, mode, iterationsArg, dir, id] = expectArgs('MultiLockParticipant.mjs connect paths mode iterations markerDir id', 6);
const paths = pathList.split(',');
const markers = new Markers(dir, id);

/** One hold of every path in `held`; `slow` widens the window (only the unlocked control uses it). */
async function hold(held, slow) {
  const mine = [];
  // Another holder of a path inside too is a violation (counted by claim).
  for (const lockPath of held) mine.push(await markers.claim(lockPath.replaceAll('/', '_')));
  await markers.log(mode);
  await Markers.pause(slow);
  for (const marker of mine) await markers.drop(marker);
}

await withClient(connect, 10_000, async (zk) => {
  const lock = mode === 'multi' ? new MultiLock(paths.map((p) => new Mutex(zk, p))) : new Mutex(zk, paths[0]);
  const held = mode === 'mutex' ? paths.slice(0, 1) : paths;
  if (iterationsArg === 'hold') return holdUntilLine(() => lock.acquire());
  const iterations = Number(iterationsArg);
  await awaitStart();
  const acquisitions = await countHolds(() => lock.acquire(), mode === 'none', iterations, (n, slow) => hold(held, slow));
  result(id, acquisitions, markers.violations);
});

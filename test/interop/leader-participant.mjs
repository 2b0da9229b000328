// The @zk/locks side of the leader interop tests (leader.test.ts): the same arguments, barrier,
// marker-file protocol and result line as java/CuratorLeaderParticipant.java (its header
// documents them). Plain ESM on the built packages.
//   node leader-participant.mjs connectString path latch|selector|none terms|hold markerDir id
import { LeaderLatch, LeaderSelector } from '@zk/locks';
import { awaitStart, expectArgs, Markers, nextLine, result, say, withClient } from './interop.mjs';

const [connect, path, mode, termsArg, dir, id] = expectArgs('leader-participant.mjs connect path mode terms markerDir id', 6);
const markers = new Markers(dir, id);

/** One leader's term; `slow` widens the window (only the control uses it). */
async function term(slow) {
  // Another leader acting too is a violation (counted by claim).
  const marker = await markers.claim('leader');
  await markers.log('L');
  await Markers.pause(slow);
  await markers.drop(marker);
}

const describe = (participants) => participants.map((p) => `${p.id}:${p.isLeader}`).join(',');

async function hold(zk) {
  const recipe = mode === 'latch' ? new LeaderLatch(zk, path, { id }) : new LeaderSelector(zk, path, { id });
  let leave;
  const left = new Promise((resolve) => (leave = resolve));
  if (recipe instanceof LeaderLatch) {
    recipe.start();
    await waitQueued(recipe);
    say('QUEUED');
    void recipe.leadership().then(() => say('LEADER'));
  } else {
    recipe.start(async () => {
      say('LEADER');
      await left;
    });
    await waitQueued(recipe);
    say('QUEUED');
  }
  for (let line; (line = await nextLine()) !== undefined; ) {
    if (line === 'participants') say(`PARTICIPANTS ${describe(await recipe.participants())}`);
    if (line === 'leave') break;
  }
  leave();
  await recipe.close();
  say('LEFT');
}

/** Waits until a node with our id is among the participants. */
async function waitQueued(recipe) {
  while (!(await recipe.participants()).some((p) => p.id === id)) await new Promise((resolve) => setTimeout(resolve, 5));
}

await withClient(connect, 10_000, async (zk) => {
  if (termsArg === 'hold') return hold(zk);
  const terms = Number(termsArg);
  await awaitStart();
  let done = 0;
  if (mode === 'latch') {
    // One latch; each term ends with release(), which queues it again at the back.
    const latch = new LeaderLatch(zk, path, { id });
    latch.start();
    while (done < terms) {
      const leadership = await latch.leadership();
      await term(false);
      done++;
      await leadership.release();
    }
    await latch.close();
  } else if (mode === 'selector') {
    const selector = new LeaderSelector(zk, path, { id });
    let finish;
    const finished = new Promise((resolve) => (finish = resolve));
    selector.start(async () => {
      if (done >= terms) return;
      await term(false);
      if (++done >= terms) finish();
    }, { autoRequeue: true });
    await finished;
    await selector.close();
  } else {
    for (; done < terms; done++) await term(true); // a "term" without an election
  }
  result(id, done, markers.violations);
});

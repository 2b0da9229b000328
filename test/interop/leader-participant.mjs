// The @zk/locks side of the leader interop tests (leader.test.ts): the same arguments, barrier,
// marker-file protocol and result line as java/CuratorLeaderParticipant.java (its header
// documents them). Plain ESM on the built packages.
//   node leader-participant.mjs connectString path latch|selector|none terms|hold markerDir id
import { appendFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { ZooKeeper } from '@zk/protocol';
import { LeaderLatch, LeaderSelector } from '@zk/locks';

const args = process.argv.slice(2);
if (args.length !== 6) {
  process.stderr.write('usage: leader-participant.mjs connect path mode terms markerDir id\n');
  process.exit(2);
}
const [connect, path, mode, termsArg, dir, id] = args;
const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
const nextLine = async () => (await lines.next()).value;
const say = (line) => process.stdout.write(`${line}\n`);
let violations = 0;

async function term(slow) {
  const marker = join(dir, 'leader');
  let mine = true;
  try {
    await writeFile(marker, id, { flag: 'wx' });
  } catch (err) {
    if (err.code !== 'EEXIST') throw err;
    violations++; // another leader is acting; its file is not ours to delete
    mine = false;
  }
  await appendFile(join(dir, 'log'), `${id} L\n`);
  await new Promise((resolve) => (slow ? setTimeout(resolve, 1) : setImmediate(resolve)));
  if (mine) await rm(marker);
}

const describe = (participants) => participants.map((p) => `${p.id}:${p.isLeader}`).join(',');

async function hold() {
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

const zk = await ZooKeeper.connect(connect, { sessionTimeout: 10_000 });
try {
  if (termsArg === 'hold') await hold();
  else {
    const terms = Number(termsArg);
    say('READY');
    await nextLine();
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
    say(JSON.stringify({ id, acquisitions: done, violations }));
  }
} finally {
  await zk.close();
  process.stdin.destroy();
}

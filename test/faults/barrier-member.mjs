// A double-barrier member of the fault suite (double-barrier.test.ts): enters and leaves one
// barrier per round, `<base>/r<round>`, for rounds <first>..<rounds>-1, logging JSON lines with
// CLOCK_MONOTONIC times, checked by barrier-check.ts.
//   <connect> <base> <who> <first> <rounds> <members> <sessionTimeoutMs> <waitTimeoutMs> <variant>
// variant:
//   `recipe`      DoubleBarrier (ephemeral member nodes; the recipe under test);
//   `persistent`  the negative control: the recipe's protocol in miniature (a `ready` node, leave
//                 waits for no member node to be left) with PERSISTENT member nodes (a member that
//                 dies leaves its node behind), polled every 50 ms.
// Lines: `entering`/`entered`, `leaving`/`left` {round}; `enter-failed`/`leave-failed` {round,
// message} when a wait rejected (a timeout, a session that ended). A member whose enter failed
// because its session ended enters the same round again on a new session; after any other failed
// wait it goes on with the next round. Before each enter it sleeps 0-150 ms at random, before each
// leave 50-200 ms (arrivals spread, so one member can be caught waiting, or inside). It starts its first round when it
// reads a line on stdin (the harness starts the first members together).
import { randomUUID } from 'node:crypto';
import { createInterface } from 'node:readline';
import { ZooKeeper } from '@zk/protocol';
import { DoubleBarrier } from '@zk/locks';

const [connect, base, who, firstText, roundsText, membersText, sessionTimeoutText, waitText, variant] = process.argv.slice(2);
const members = Number(membersText);
const waitMs = Number(waitText);
const now = () => process.hrtime.bigint().toString();
const log = (event) => process.stdout.write(`${JSON.stringify({ who, t: now(), ...event })}\n`);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const connectClient = () => ZooKeeper.connect(connect, { sessionTimeout: Number(sessionTimeoutText), connectTimeout: 5000 });
const ended = (zk) => zk.state === 'expired' || zk.state === 'lost' || zk.state === 'closed';

process.on('uncaughtException', (err) => {
  log({ kind: 'error', message: `crash: ${String(err?.stack ?? err)}` });
  process.exit(1);
});

/**
 * The control's barrier: the recipe's protocol in miniature (a `ready` node made by the member
 * that counts `members` nodes; leave deletes its node and waits for none to be left), polled
 * every 50 ms, with PERSISTENT member nodes.
 */
class PersistentBarrier {
  constructor(zk, path) {
    this.zk = zk;
    this.path = path;
  }
  async #until(done, what) {
    const deadline = Date.now() + waitMs;
    for (;;) {
      if (await done()) return;
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what} (${(await this.#members()).length} member nodes)`);
      await sleep(50);
    }
  }
  async #members() {
    return (await this.zk.getChildren(this.path)).filter((c) => c !== 'ready');
  }
  async enter() {
    this.node = `${this.path}/${randomUUID()}`;
    await this.zk.create(this.node, who, { parents: true });
    if ((await this.#members()).length >= members) await this.zk.create(`${this.path}/ready`).catch(() => undefined);
    await this.#until(async () => (await this.zk.exists(`${this.path}/ready`)) !== null, 'ready');
  }
  async leave() {
    await this.zk.delete(this.node);
    await this.#until(async () => (await this.#members()).length === 0, 'every member to leave');
    await this.zk.delete(`${this.path}/ready`).catch(() => undefined);
  }
}

let zk = await connectClient();
log({ kind: 'ready' });
const go = createInterface({ input: process.stdin });
await new Promise((resolve) => go.once('line', resolve));
go.close();
process.stdin.destroy(); // nothing more to read: let the process end after its last round
for (let round = Number(firstText); round < Number(roundsText); ) {
  if (ended(zk)) {
    await zk.close();
    zk = await connectClient();
  }
  const path = `${base}/r${round}`;
  const barrier = variant === 'persistent' ? new PersistentBarrier(zk, path) : new DoubleBarrier(zk, path, members, { data: who });
  await sleep(Math.random() * 150);
  log({ kind: 'entering', round });
  try {
    await barrier.enter({ timeout: waitMs });
  } catch (err) {
    log({ kind: 'enter-failed', round, message: `${err?.name}: ${String(err?.message ?? err)}` });
    if (!ended(zk)) round++;
    continue;
  }
  log({ kind: 'entered', round });
  await sleep(50 + Math.random() * 150); // inside for 50 ms at least: the harness can catch it there
  log({ kind: 'leaving', round });
  try {
    await barrier.leave({ timeout: waitMs });
    log({ kind: 'left', round });
  } catch (err) {
    log({ kind: 'leave-failed', round, message: `${err?.name}: ${String(err?.message ?? err)}` });
  }
  round++;
}
await zk.close();
log({ kind: 'done' });

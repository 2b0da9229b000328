// A counter participant of the fault suite (atomic-long.test.ts): increments one counter until its
// time is up, logging JSON lines with CLOCK_MONOTONIC times, checked by counter-check.ts.
//   <connect> <path> <lockPath> <who> <durationMs> <sessionTimeoutMs> <variant> <pauseMs>
// (pauseMs: a sleep between increments, which bounds the count and the CPU a run takes).
// variant:
//   `atomic`  AtomicLong with promotedToLock (the recipe under test);
//   `naive`   the negative control: getData, then setData WITHOUT the version read ("read, add
//             one, write back"), so two writers that read the same value write the same one.
// Lines: `begin` before each increment; then `ok` {pre, post} when it succeeded, `failed` when
// nothing was written (tries or the mutex timeout ran out), `maybe` {pre, attempted, message}
// when the call rejected (a lost reply, a session that ended with a write in flight: the
// increment may or may not have been applied). A `begin` with nothing after it (the process was
// killed) is a maybe too. `error` for what happened between increments (a reconnect that failed).
import { ZooKeeper } from '@zk/protocol';
import { AtomicLong, encodeLong, decodeLong } from '@zk/locks';

const [connect, path, lockPath, who, durationText, sessionTimeoutText, variant, pauseText] = process.argv.slice(2);
const now = () => process.hrtime.bigint().toString();
const log = (event) => process.stdout.write(`${JSON.stringify({ who, t: now(), ...event })}\n`);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const end = Date.now() + Number(durationText);
const connectClient = () => ZooKeeper.connect(connect, { sessionTimeout: Number(sessionTimeoutText), connectTimeout: 5000 });
const ended = (zk) => zk.state === 'expired' || zk.state === 'lost' || zk.state === 'closed';

process.on('uncaughtException', (err) => {
  log({ kind: 'error', message: `crash: ${String(err?.stack ?? err)}` });
  process.exit(1);
});

/** The naive increment: read, add one, write back unconditionally (no version). */
async function naive(zk) {
  const { data } = await zk.getData(path); // the harness created the counter
  const pre = decodeLong(data) ?? 0n;
  const post = pre + 1n;
  await zk.setData(path, encodeLong(post));
  return { succeeded: true, preValue: pre, postValue: post };
}

let zk = await connectClient();
let counter = new AtomicLong(zk, path, { promotedToLock: { lockPath, timeout: 5000 } });
log({ kind: 'ready' });
while (Date.now() < end) {
  if (ended(zk)) {
    await zk.close();
    try {
      zk = await connectClient();
    } catch (err) {
      log({ kind: 'error', message: `reconnect: ${String(err?.message ?? err)}` });
      await sleep(100);
      continue;
    }
    counter = new AtomicLong(zk, path, { promotedToLock: { lockPath, timeout: 5000 } });
  }
  log({ kind: 'begin' });
  try {
    const r = variant === 'naive' ? await naive(zk) : await counter.increment();
    if (r.succeeded) log({ kind: 'ok', pre: r.preValue.toString(), post: r.postValue.toString() });
    else log({ kind: 'failed', pre: r.preValue.toString() });
    await sleep(Number(pauseText));
  } catch (err) {
    log({ kind: 'maybe', pre: err?.preValue?.toString(), attempted: err?.attempted?.toString(), message: `${err?.name}: ${String(err?.message ?? err)}` });
    if (!ended(zk)) await sleep(100);
  }
}
await zk.close();
log({ kind: 'done' });

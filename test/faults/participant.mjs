// A fault-suite participant: loops acquire -> three writes to the guarded resource -> release,
// logging every step as JSON lines with CLOCK_MONOTONIC times (process.hrtime.bigint(), one clock
// for every process of the machine). Runs the built packages.
//   <connect> <lockPath> <who> <durationMs> <sessionTimeoutMs> <resourceUrl> <workMs> [kind] [permits]
// kind: `mutex` (default); `rw` takes the read or the write side at random; `latch` and
// `selector` take part in a leader election (LeaderLatch, LeaderSelector): a "hold" is a term of
// leadership, from the moment it came to the moment it is given up (a latch's
// leadership.release() after the work, a selector's function returning), and a leader stops
// writing once leadership.signal aborts; `semaphore` takes one of `permits` permits of a
// Semaphore; `cheat` skips the lock altogether (a broken participant, to show the checker
// catches it). Locks and permits write whatever happened meanwhile ("I think I hold it"): the
// resource must refuse what is stale. Writes carry the fencing token and the node it belongs to
// (a semaphore's resource asks ZooKeeper whether that lease is alive). Every failure is logged as
// {kind:'error', message} (a failed acquire, a session that could not be opened, a crash), so a
// run that makes little progress says why. The fixture (fixture.ts) parses these lines.
import { request } from 'node:http';
import { ZooKeeper } from '@zk/protocol';
import { LeaderLatch, LeaderSelector, Mutex, ReadWriteLock, Semaphore } from '@zk/locks';

const [connect, lockPath, who, durationText, sessionTimeoutText, resourceUrl, workText, kind = 'mutex', permitsText = '1'] = process.argv.slice(2);
const now = () => process.hrtime.bigint().toString();
const log = (event) => process.stdout.write(`${JSON.stringify({ who, t: now(), ...event })}\n`);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const write = (token, node) =>
  new Promise((resolve) => {
    const req = request(`${resourceUrl}?who=${who}&token=${token}&node=${encodeURIComponent(node)}`, { method: 'POST' }, (res) => {
      res.resume();
      res.on('end', resolve);
    });
    req.on('error', resolve);
    req.end();
  });

const end = Date.now() + Number(durationText);
// ZK_SERVER_TICK_TIME: the ensemble's tickTime when the test knows it (the quorum proof's margin,
// @zk/locks README "What a lease rests on"); unset, the client assumes the largest tick, T/2.
const serverTickTime = Number(process.env.ZK_SERVER_TICK_TIME) || undefined;
// ZK_LEASE_PROOF: the client's leaseProof mode (default 'auto'; the fault suites run each mode).
const leaseProof = process.env.ZK_LEASE_PROOF || undefined;
const connectClient = () => ZooKeeper.connect(connect, { sessionTimeout: Number(sessionTimeoutText), connectTimeout: 5000, serverTickTime, leaseProof });
process.on('uncaughtException', (err) => {
  log({ kind: 'error', message: `crash: ${String(err?.stack ?? err)}` });
  process.exit(1);
});
process.on('unhandledRejection', (err) => {
  log({ kind: 'error', message: `unhandled rejection: ${String(err?.stack ?? err)}` });
  process.exit(1);
});
let zk;
while (!zk) {
  try {
    zk = await connectClient();
  } catch (err) {
    log({ kind: 'error', message: `connect: ${String(err?.message ?? err)}` });
    if (Date.now() >= end) process.exit(0);
    await sleep(100);
  }
}
/** The recipe of this participant's kind on the current client (an election joined once per client). */
const makeLocks = () => ({
  mutex: new Mutex(zk, lockPath),
  rw: new ReadWriteLock(zk, lockPath),
  semaphore: kind === 'semaphore' ? new Semaphore(zk, lockPath, { maxLeases: Number(permitsText) }) : undefined,
  selector: kind === 'selector' ? new LeaderSelector(zk, lockPath, { id: who }) : undefined,
  latch: undefined,
});
let locks = makeLocks();
/** The latch of this client, started; a new one when the last closed by itself (its session ended). */
const latch = async () => {
  if (locks.latch?.state === 'closed') await locks.latch.close();
  if (!locks.latch || locks.latch.state === 'closed') {
    locks.latch = new LeaderLatch(zk, lockPath, { id: who });
    locks.latch.start();
  }
  return locks.latch;
};

/**
 * One hold: logs `acquired`, three writes with `workMs` after each, `released`; `lost` when the
 * signal aborts. A leader (`stopOnAbort`) writes no more once its signal aborted.
 */
async function hold(token, node, signal, mode, stopOnAbort) {
  log({ kind: 'acquired', token: token.toString(), mode });
  const onLost = () => log({ kind: 'lost', reason: String(signal.reason?.message ?? signal.reason) });
  if (signal.aborted) onLost();
  else signal.addEventListener('abort', onLost, { once: true });
  for (let k = 0; k < 3; k++) {
    if (stopOnAbort && signal.aborted) break;
    if (stopBeforeWrite && k > 0 && mode === 'write') {
      stopBeforeWrite = false;
      log({ kind: 'stopping' });
      process.kill(process.pid, 'SIGSTOP');
    }
    // "I think I hold it": unless told to stop, the write goes out whatever happened meanwhile.
    if (mode === 'write') await write(token, node);
    await sleep(Number(workText));
  }
  log({ kind: 'released' });
  signal.removeEventListener('abort', onLost);
}

// The SIGSTOP nemesis's pause at a fixed point (nemeses.ts, sigstopHolder): told by SIGUSR2, the
// participant stops itself (logging `stopping` first) just before its next write in a hold where it
// has written already, after it checked its signal. Woken, that write goes out before any timer
// can tell it the lease was lost: a GC pause between the check and the write, the case fencing is
// for. (A SIGSTOP from outside lands anywhere: a leader then often learns of its loss first and
// writes nothing stale, which tested no fencing.)
let stopBeforeWrite = false;
process.on('SIGUSR2', () => {
  stopBeforeWrite = true;
});

const failed = async (err, what = '') => {
  log({ kind: 'error', message: `${what}${String(err?.message ?? err)}` });
  await sleep(50);
};

while (Date.now() < end) {
  if (zk.state === 'expired' || zk.state === 'lost' || zk.state === 'closed') {
    // A session that is gone stays gone: start a new one, as an application would.
    await locks.latch?.close().catch(() => undefined);
    await locks.selector?.close().catch(() => undefined);
    await zk.close();
    try {
      zk = await connectClient();
    } catch (err) {
      log({ kind: 'error', message: `reconnect after ${zk.state}: ${String(err?.message ?? err)}` });
      await sleep(100);
      continue;
    }
    locks = makeLocks();
  }
  const mode = kind === 'rw' && Math.random() < 0.5 ? 'read' : 'write';
  if (kind === 'cheat') {
    // Believes it holds the lock without asking: the checker must catch this.
    log({ kind: 'acquired', token: '0', mode });
    for (let k = 0; k < 3; k++) await sleep(Number(workText));
    log({ kind: 'released' });
    continue;
  }
  if (kind === 'latch') {
    let leadership;
    try {
      leadership = await (await latch()).leadership({ timeout: 5000 });
    } catch (err) {
      await failed(err, 'leadership: ');
      continue;
    }
    await hold(leadership.fencingToken, leadership.node, leadership.signal, 'write', true);
    // The term ends here; the latch queues again at the back.
    await leadership.release().catch((err) => log({ kind: 'error', message: `release: ${String(err?.message ?? err)}` }));
    continue;
  }
  if (kind === 'selector') {
    try {
      await locks.selector.run((leadership) => hold(leadership.fencingToken, leadership.node, leadership.signal, 'write', true), { timeout: 5000 });
    } catch (err) {
      await failed(err, 'run: ');
    }
    continue;
  }
  const lock = kind === 'semaphore' ? locks.semaphore : kind === 'rw' ? (mode === 'read' ? locks.rw.readLock() : locks.rw.writeLock()) : locks.mutex;
  let lease;
  try {
    lease = await lock.acquire({ timeout: 5000 });
  } catch (err) {
    await failed(err);
    continue;
  }
  await hold(lease.fencingToken, lease.node, lease.signal, mode, false);
  await lease.release().catch((err) => log({ kind: 'error', message: `release: ${String(err?.message ?? err)}` }));
}
await locks.latch?.close().catch(() => undefined);
await locks.selector?.close().catch(() => undefined);
await zk.close();

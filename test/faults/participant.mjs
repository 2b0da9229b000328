// A fault-suite participant: loops acquire -> three writes to the guarded resource -> release,
// logging every step as JSON lines with CLOCK_MONOTONIC times (process.hrtime.bigint(), one clock
// for every process of the machine). Runs the built packages.
//   <connect> <lockPath> <who> <durationMs> <sessionTimeoutMs> <resourceUrl> <workMs> [mutex|rw|cheat]
// `rw` takes the read or the write side at random; `cheat` skips the lock altogether (a broken
// participant, to show the checker catches it). Every failure is logged as
// {kind:'error', message} (a failed acquire, a session that could not be opened, a crash), so a
// run that makes little progress says why. The fixture (fixture.ts) parses these lines.
import { request } from 'node:http';
import { ZooKeeper } from '@zk/protocol';
import { Mutex, ReadWriteLock } from '@zk/locks';

const [connect, lockPath, who, durationText, sessionTimeoutText, resourceUrl, workText, kind = 'mutex'] = process.argv.slice(2);
const now = () => process.hrtime.bigint().toString();
const log = (event) => process.stdout.write(`${JSON.stringify({ who, t: now(), ...event })}\n`);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const write = (token) =>
  new Promise((resolve) => {
    const req = request(`${resourceUrl}?who=${who}&token=${token}`, { method: 'POST' }, (res) => {
      res.resume();
      res.on('end', resolve);
    });
    req.on('error', resolve);
    req.end();
  });

const end = Date.now() + Number(durationText);
const connectClient = () => ZooKeeper.connect(connect, { sessionTimeout: Number(sessionTimeoutText), connectTimeout: 5000 });
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
const makeLocks = () => ({ mutex: new Mutex(zk, lockPath), rw: new ReadWriteLock(zk, lockPath) });
let locks = makeLocks();
while (Date.now() < end) {
  if (zk.state === 'expired' || zk.state === 'lost') {
    // A session that is gone stays gone: start a new one, as an application would.
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
  const lock = kind === 'rw' ? (mode === 'read' ? locks.rw.readLock() : locks.rw.writeLock()) : locks.mutex;
  let lease;
  try {
    lease = await lock.acquire({ timeout: 5000 });
  } catch (err) {
    log({ kind: 'error', message: String(err?.message ?? err) });
    await sleep(50);
    continue;
  }
  log({ kind: 'acquired', token: lease.fencingToken.toString(), mode });
  const onLost = () => log({ kind: 'lost', reason: String(lease.signal.reason?.message ?? lease.signal.reason) });
  lease.signal.addEventListener('abort', onLost, { once: true });
  for (let k = 0; k < 3; k++) {
    // "I think I hold the lock": the write goes out whatever happened meanwhile.
    if (mode === 'write') await write(lease.fencingToken);
    await sleep(Number(workText));
  }
  log({ kind: 'released' });
  lease.signal.removeEventListener('abort', onLost);
  await lease.release().catch((err) => log({ kind: 'error', message: `release: ${String(err?.message ?? err)}` }));
}
await zk.close();

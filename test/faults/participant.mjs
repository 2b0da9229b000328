// A fault-suite participant: loops acquire -> three writes to the guarded resource -> release,
// logging every step as JSON lines with CLOCK_MONOTONIC times (process.hrtime.bigint(), one clock
// for every process of the machine). Runs the built packages.
//   <connect> <lockPath> <who> <durationMs> <sessionTimeoutMs> <resourceUrl> <workMs> [mutex|rw|cheat]
// `rw` takes the read or the write side at random; `cheat` skips the lock altogether (a broken
// participant, to show the checker catches it).
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
let zk = await connectClient();
const makeLocks = () => ({ mutex: new Mutex(zk, lockPath), rw: new ReadWriteLock(zk, lockPath) });
let locks = makeLocks();
while (Date.now() < end) {
  if (zk.state === 'expired' || zk.state === 'lost') {
    // A session that is gone stays gone: start a new one, as an application would.
    await zk.close();
    try {
      zk = await connectClient();
    } catch {
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
  lease.signal.addEventListener('abort', () => log({ kind: 'lost' }), { once: true });
  for (let k = 0; k < 3; k++) {
    // "I think I hold the lock": the write goes out whatever happened meanwhile.
    if (mode === 'write') await write(lease.fencingToken);
    await sleep(Number(workText));
  }
  log({ kind: 'released' });
  await lease.release().catch(() => undefined);
}
await zk.close();

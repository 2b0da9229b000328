// A lock-set participant (issue 21 part 3, after Jepsen's lock workloads): loops acquire a Mutex ->
// read a register (a list of items) -> work -> append its own next item -> write the register back
// -> release, logging JSON lines (acquired, read, ack, rejected, error) with CLOCK_MONOTONIC times.
//   <connect> <lockPath> <who> <durationMs> <sessionTimeoutMs> <variant> <register> <workMs>
// variant:
//   `znode-fenced`  the register is a znode, written with lease.fenced() (a multi whose first op
//                   checks the lock node: a holder whose node is gone cannot write);
//   `znode-plain`   the same znode written with a plain setData ("I think I hold it");
//   the znode is read and (plain) written through a second client with a 30 s session, as an
//   application's data client would be: a write through the lock's own session would fail with
//   it once it expired, which already fences a pause that outlives the session;
//   `store-fenced`  the register is an external store (lockset.ts's RegisterStore) that rejects
//                   any operation carrying a fencing token lower than the highest it has seen;
//   `store-plain`   the same store, tokens ignored.
//   `pg-fenced`     the register is a row of a real Postgres (<register> its URL; table
//                   lockset_register, id 1, items a JSON text), read and written with @zk/locks'
//                   fencedWrite (the read too: it records the token, so a stale holder that read
//                   before the next holder's read cannot write back after it);
//   `pg-plain`      the same row, a plain SELECT and UPDATE;
//   `redis-fenced`  the register is the key {lockset}:register of a real Redis (<register> its
//                   URL), read with fencedGet and written with fencedSet;
//   `redis-plain`   the same key, plain GET and SET.
// <register>: the znode path (under the chroot of <connect>) or the store's URL. The write goes out
// whatever happened meanwhile, as a holder that does not look at its signal would: only fencing
// can refuse it. `ack` means the write was accepted: that item must be in the final register.
import { request } from 'node:http';
import { ZooKeeper } from '@zk/protocol';
import { Mutex, StaleTokenError, fencedGet, fencedSet, fencedWrite } from '@zk/locks';

const [connect, lockPath, who, durationText, sessionTimeoutText, variant, register, workText] = process.argv.slice(2);
const now = () => process.hrtime.bigint().toString();
const log = (event) => process.stdout.write(`${JSON.stringify({ who, t: now(), ...event })}\n`);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const end = Date.now() + Number(durationText);
const serverTickTime = Number(process.env.ZK_SERVER_TICK_TIME) || undefined;
// ZK_LEASE_PROOF: the client's leaseProof mode (default 'auto'; the fault suites run each mode).
const leaseProof = process.env.ZK_LEASE_PROOF || undefined;
const connectClient = () => ZooKeeper.connect(connect, { sessionTimeout: Number(sessionTimeoutText), connectTimeout: 5000, serverTickTime, leaseProof });

/** One call to the store: resolves with [status, body]. */
const store = (method, token, body) =>
  new Promise((resolve) => {
    const fenced = variant === 'store-fenced' ? `?token=${token}` : '';
    const req = request(`${register}${fenced}`, { method }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve([res.statusCode, Buffer.concat(chunks).toString()]));
    });
    req.on('error', (err) => resolve([0, String(err.message)]));
    req.end(body);
  });

/** The real stores' register (pg-*, redis-*), fenced under the resource `lockset` when asked. */
const fenced = variant.endsWith('-fenced');
const pool = variant.startsWith('pg') ? new (await import('pg')).default.Pool({ connectionString: register, max: 2 }) : undefined;
const redis = variant.startsWith('redis') ? new (await import('ioredis')).Redis(register) : undefined;
const REDIS_KEY = '{lockset}:register';
const SELECT = 'SELECT items FROM lockset_register WHERE id = 1';
const UPDATE = 'UPDATE lockset_register SET items = $1 WHERE id = 1';
const refusedStale = (err) => {
  if (err instanceof StaleTokenError) return false;
  throw err;
};

async function read(_zk, token) {
  if (pool) {
    const fence = { resource: 'lockset', token };
    const { rows } = fenced ? await fencedWrite(pool, fence, (c) => c.query(SELECT)) : await pool.query(SELECT);
    return JSON.parse(rows[0].items);
  }
  if (redis) return JSON.parse((fenced ? await fencedGet(redis, { resource: 'lockset', token }, REDIS_KEY) : await redis.get(REDIS_KEY)) ?? '[]');
  if (variant.startsWith('store')) {
    const [status, body] = await store('GET', token);
    if (status !== 200) throw new Error(`store read refused (${status}): ${body}`);
    return JSON.parse(body);
  }
  const { data } = await dataZk.getData(register);
  return data.length === 0 ? [] : JSON.parse(data.toString());
}

/** Writes the register; true when it was accepted. */
async function writeBack(zk, lease, items) {
  const body = JSON.stringify(items);
  const fence = { resource: 'lockset', token: lease.fencingToken };
  if (pool) return fenced ? await fencedWrite(pool, fence, (c) => c.query(UPDATE, [body])).then(() => true, refusedStale) : (await pool.query(UPDATE, [body]), true);
  if (redis) return fenced ? await fencedSet(redis, fence, REDIS_KEY, body).then(() => true, refusedStale) : (await redis.set(REDIS_KEY, body), true);
  if (variant.startsWith('store')) {
    const [status] = await store('PUT', lease.fencingToken, body);
    return status === 200;
  }
  if (variant === 'znode-fenced') {
    await lease.fenced().setData(register, body).commit();
    return true;
  }
  await dataZk.setData(register, body);
  return true;
}

process.on('uncaughtException', (err) => {
  log({ kind: 'error', message: `crash: ${String(err?.stack ?? err)}` });
  process.exit(1);
});
let zk = await connectClient();
const dataZk = variant.startsWith('znode') ? await ZooKeeper.connect(connect, { sessionTimeout: 30_000, connectTimeout: 5000 }) : undefined;
let mutex = new Mutex(zk, lockPath);
let n = 0;
while (Date.now() < end) {
  if (zk.state === 'expired' || zk.state === 'lost' || zk.state === 'closed') {
    await zk.close();
    try {
      zk = await connectClient();
    } catch (err) {
      log({ kind: 'error', message: `reconnect: ${String(err?.message ?? err)}` });
      await sleep(100);
      continue;
    }
    mutex = new Mutex(zk, lockPath);
  }
  let lease;
  try {
    lease = await mutex.acquire({ timeout: 5000 });
  } catch (err) {
    log({ kind: 'error', message: `acquire: ${String(err?.message ?? err)}` });
    await sleep(50);
    continue;
  }
  log({ kind: 'acquired', token: lease.fencingToken.toString() });
  const item = `${who}-${n++}`;
  try {
    const items = await read(zk, lease.fencingToken);
    log({ kind: 'read', size: items.length });
    await sleep(Number(workText));
    if (await writeBack(zk, lease, [...items, item])) log({ kind: 'ack', item });
    else log({ kind: 'rejected', item });
  } catch (err) {
    log({ kind: 'rejected', item, message: String(err?.message ?? err) });
  }
  await lease.release().catch(() => undefined);
  log({ kind: 'released' });
}
await zk.close();
await dataZk?.close();
await pool?.end();
redis?.disconnect();

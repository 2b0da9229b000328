/**
 * The lock-set workload (lockset.ts) on real stores (issue 41): the register is a Postgres row or
 * a Redis key, written by holders of one Mutex under the nemeses that break a lock's promise: a
 * holder SIGSTOPped beyond its session timeout between its read and its write, and a holder whose
 * server is cut off from the quorum while it works. With @zk/locks' fencing (fencedWrite;
 * fencedGet/fencedSet) every acknowledged item must be in the register exactly once; the plain
 * reads and writes are the negative control and must lose items. Kept short: two pauses, two cuts.
 */
import pg from 'pg';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, beforeEach, afterEach, describe, expect, it } from 'vitest';
import { fencingTableSql } from '@zk/locks';
import { connectString, TestSpace } from '../harness/fixtures.js';
import { startZooKeeper } from '../harness/zookeeper.js';
import { startPostgres, type PostgresServer } from '../harness/postgres.js';
import { startRedis, type RedisServer } from '../harness/redis.js';
import { checkLockSet, LockSetRun, type LockSetVariant } from './lockset.js';

const T = 2000;
const external = Boolean(process.env.ZK_CONNECT);
const REDIS_KEY = '{lockset}:register';

let postgres: PostgresServer;
let redisServer: RedisServer;
let pool: pg.Pool;
let redis: Redis;

beforeAll(async () => {
  [postgres, redisServer] = await Promise.all([startPostgres(), startRedis()]);
  pool = new pg.Pool({ connectionString: postgres.url, max: 2 });
  redis = new Redis(redisServer.port, '127.0.0.1');
  await pool.query(fencingTableSql());
  await pool.query('CREATE TABLE lockset_register (id int PRIMARY KEY, items text NOT NULL)');
}, 120_000);

afterAll(async () => {
  redis?.disconnect();
  await pool?.end();
  await Promise.all([postgres?.stop(), redisServer?.stop()]);
});

/** An empty register (and no recorded token) for `variant`; its URL for the participants. */
async function reset(variant: LockSetVariant): Promise<string> {
  if (variant.startsWith('pg')) {
    await pool.query('TRUNCATE zk_fencing_tokens, lockset_register');
    await pool.query("INSERT INTO lockset_register VALUES (1, '[]')");
    return postgres.url;
  }
  await redis.flushall();
  await redis.set(REDIS_KEY, '[]');
  return redisServer.url;
}

async function finalItems(variant: LockSetVariant): Promise<string[]> {
  if (variant.startsWith('pg')) return JSON.parse((await pool.query<{ items: string }>('SELECT items FROM lockset_register WHERE id = 1')).rows[0]!.items) as string[];
  return JSON.parse((await redis.get(REDIS_KEY)) ?? '[]') as string[];
}

/** The verdict, logged as the lock-set logs it, and checked: fenced keeps everything, plain loses. */
async function judge(run: LockSetRun, variant: LockSetVariant, fault: string, during: number, times: number): Promise<void> {
  const verdict = checkLockSet(run.acked(), await finalItems(variant));
  const refused = run.lines.filter((l) => l.kind === 'rejected').length;
  console.log(`lock-set ${variant}, ${fault}: ${JSON.stringify({ ...verdict, missing: verdict.missing.length, duplicated: verdict.duplicated.length, acksDuringFaults: during, storeRefused: refused, problems: run.problems() })}`);
  expect(during).toBeGreaterThanOrEqual(times); // not vacuous: the lock moved on and others wrote
  expect(verdict.duplicated).toEqual([]);
  if (variant.endsWith('plain')) expect(verdict.missing.length).toBeGreaterThan(0);
  else {
    expect(verdict.missing).toEqual([]);
    expect(refused).toBeGreaterThan(0); // the stale holder came back and was refused
  }
}

describe('faults - lock-set on Postgres and Redis under SIGSTOP of the holder between its read and its write', () => {
  let space: TestSpace;
  beforeEach(async () => {
    space = new TestSpace();
    await space.admin();
  });
  afterEach(async () => {
    await space.close();
  });

  for (const variant of ['pg-plain', 'pg-fenced', 'redis-plain', 'redis-fenced'] as const) {
    const control = variant.endsWith('plain');
    it(`${variant}: ${control ? 'the negative control loses acknowledged items' : 'every acknowledged item is in the register exactly once'}`, async () => {
      const url = await reset(variant);
      const run = new LockSetRun(variant, url, '/lockset/lock');
      const connect = `${connectString()}${space.root}`;
      const pauses = 2;
      for (let i = 0; i < 3; i++) run.spawn(`p${i}`, connect, { durationMs: 6000 + pauses * 7000, sessionTimeoutMs: T, workMs: 100 });
      let acksDuringPauses = 0;
      try {
        acksDuringPauses = await run.pauseReaders(pauses, 2.5 * T);
        await run.exited();
      } finally {
        run.kill();
      }
      await judge(run, variant, 'SIGSTOP', acksDuringPauses, pauses);
    }, 90_000);
  }
});

describe.skipIf(external)('faults - lock-set on Postgres and Redis with the holder\'s server cut off from the other servers', () => {
  // Write proofs (ZK_LEASE_PROOF=write) on 1 s ticks, T = 2 ticks, as lockset.test.ts's first proof
  // mode; the control (plain) once, on Postgres.
  for (const variant of ['pg-plain', 'pg-fenced', 'redis-fenced'] as const) {
    const control = variant.endsWith('plain');
    it(`${variant}: ${control ? 'the negative control loses acknowledged items' : 'every acknowledged item is in the register exactly once'}`, async () => {
      await using ensemble = await startZooKeeper({ servers: 3, own: true, serverLinks: true, tickTime: 1000, config: { syncLimit: 5 } });
      const leader = (await ensemble.leader())!;
      const follower = ensemble.servers.find((s) => s.id !== leader.id)!;
      const rest = ensemble.servers.filter((s) => s.id !== follower.id).map((s) => s.connectString).join(',');
      const url = await reset(variant);
      const run = new LockSetRun(variant, url, '/lockset/lock');
      const strikes = 2;
      const env = { ZK_LEASE_PROOF: 'write' };
      run.spawn('victim', follower.connectString, { durationMs: strikes * 20_000, sessionTimeoutMs: T, workMs: 2.5 * T, env });
      for (let i = 0; i < 2; i++) run.spawn(`p${i}`, rest, { durationMs: strikes * 20_000, sessionTimeoutMs: T, workMs: 50, env });
      let acksDuringCuts = 0;
      try {
        for (let k = 0; k < strikes; k++) {
          const read = await run.awaitLine((l) => l.who === 'victim' && l.kind === 'read', 30_000);
          const from = run.lines.indexOf(read);
          ensemble.links!.isolate(follower.id, 'hold');
          await run.awaitLine((l) => l.who === 'victim' && (l.kind === 'ack' || l.kind === 'rejected'), 30_000, from);
          acksDuringCuts += run.lines.slice(from).filter((l) => l.kind === 'ack' && l.who !== 'victim').length;
          ensemble.links!.heal();
          await ensemble.waitForQuorum(undefined, { all: true });
        }
      } finally {
        run.kill();
        await run.exited();
      }
      await judge(run, variant, 'write proofs, server cut off', acksDuringCuts, strikes);
    }, 150_000);
  }
});

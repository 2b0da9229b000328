/**
 * The cost of a fenced write against a plain one (issue 41), on each store in one run: private
 * Postgres and Redis servers (the test harness's, on loopback), one connection each, one write
 * outstanding. Postgres: a single autocommit UPDATE, the same UPDATE in a transaction (BEGIN,
 * UPDATE, COMMIT), and fencedWrite (BEGIN, the fence's INSERT ... ON CONFLICT, UPDATE, COMMIT).
 * Redis: SET against fencedSet (EVALSHA of the fence script). Tokens grow by one per write, so
 * every fenced write is accepted and records its token (the common case: the lock's holder).
 */
import pg from 'pg';
import { Redis } from 'ioredis';
import { fencedSet, fencedWrite, fencingTableSql } from '@zk/locks';
import { startPostgres, startRedis } from '@zk/test/harness';
import type { Bench } from '../lib/bench.js';
import { measure } from '../lib/stats.js';

/** The row names: `--only fenced` runs just these. */
export const FENCING_WORKLOAD = { postgres: 'fenced write vs plain: Postgres (pg, 1 outstanding)', redis: 'fenced write vs plain: Redis (ioredis, 1 outstanding)' } as const;

/** Runs the fencing rows (each starts and stops its own server). */
export async function fencingWorkloads(bench: Bench): Promise<void> {
  const count = bench.n(2000, 50);
  if (bench.wants(FENCING_WORKLOAD.postgres)) {
    const server = await startPostgres();
    const client = new pg.Client({ connectionString: server.url });
    try {
      await client.connect();
      await client.query(fencingTableSql());
      await client.query('CREATE TABLE bench (id int PRIMARY KEY, v int NOT NULL)');
      await client.query('INSERT INTO bench VALUES (1, 0)');
      let token = 1n;
      let v = 0;
      const update = (c: { query(text: string, values?: unknown[]): Promise<unknown> }) => c.query('UPDATE bench SET v = $1 WHERE id = 1', [++v]);
      await bench.compare('locks', FENCING_WORKLOAD.postgres, 'writes', [
        ['plain UPDATE', (w) => measure(w ? 50 : count, 1, () => update(client))],
        [
          'plain transaction',
          (w) =>
            measure(w ? 50 : count, 1, async () => {
              await client.query('BEGIN');
              await update(client);
              await client.query('COMMIT');
            }),
        ],
        ['fencedWrite', (w) => measure(w ? 50 : count, 1, () => fencedWrite(client, { resource: 'bench', token: token++ }, update))],
      ]);
    } finally {
      await client.end().catch(() => undefined);
      await server.stop();
    }
  }
  if (bench.wants(FENCING_WORKLOAD.redis)) {
    const server = await startRedis();
    const redis = new Redis(server.port, '127.0.0.1');
    try {
      let token = 1n;
      let v = 0;
      await bench.compare('locks', FENCING_WORKLOAD.redis, 'writes', [
        ['plain SET', (w) => measure(w ? 50 : count, 1, () => redis.set('{bench}:v', String(++v)))],
        ['fencedSet', (w) => measure(w ? 50 : count, 1, () => fencedSet(redis, { resource: 'bench', token: token++ }, '{bench}:v', String(++v)))],
      ]);
    } finally {
      redis.disconnect();
      await server.stop();
    }
  }
}

/**
 * Fenced writes to a real PostgreSQL (a private server the harness starts on loopback), with
 * both drivers: pg (a Pool, and a Client) and postgres.js. Stale, equal and higher tokens; many
 * concurrent writers with interleaved tokens doing a read-modify-write; and the controls: the
 * same read-modify-writes without the fence lose updates, and a paused holder's plain write
 * overwrites its successor's.
 */
import pg from 'pg';
import postgres from 'postgres';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { fence, fencedWrite, fencingTableSql, StaleTokenError, type PgClientLike } from '@zk/locks';
import { startPostgres, type PostgresServer } from '../../harness/postgres.js';
import { outcome } from '../../harness/index.js';

let server: PostgresServer;
let pool: pg.Pool;
let client: pg.Client;
let sql: postgres.Sql;

beforeAll(async () => {
  server = await startPostgres();
  pool = new pg.Pool({ connectionString: server.url, max: 10 });
  client = new pg.Client({ connectionString: server.url });
  await client.connect();
  sql = postgres(server.url, { max: 10, onnotice: () => undefined });
  await pool.query(fencingTableSql());
  await pool.query('CREATE TABLE counter (id int PRIMARY KEY, n int NOT NULL, token bigint)');
  await pool.query('CREATE TABLE log (seq bigserial PRIMARY KEY, resource text NOT NULL, token bigint NOT NULL)');
});

afterAll(async () => {
  await Promise.allSettled([pool?.end(), client?.end(), sql?.end()]);
  await server?.stop();
});

beforeEach(async () => {
  await pool.query('TRUNCATE zk_fencing_tokens, counter, log');
  await pool.query('INSERT INTO counter VALUES (1, 0, NULL)');
});

/** One read-modify-write of the counter in two statements (the read, then the write of read + 1). */
async function increment(run: (text: string, values?: unknown[]) => Promise<unknown[]>, resource: string, token: bigint): Promise<void> {
  const [row] = (await run('SELECT n FROM counter WHERE id = 1')) as [{ n: number }];
  await run('UPDATE counter SET n = $1, token = $2 WHERE id = 1', [row.n + 1, token.toString()]);
  await run('INSERT INTO log (resource, token) VALUES ($1, $2)', [resource, token.toString()]);
}

/** The three ways in: the write gets a pg connection or a postgres.js transaction. */
const drivers = [
  {
    name: 'pg Pool',
    write: (resource: string, token: bigint) => fencedWrite(pool, { resource, token }, (c) => increment(async (t, v) => (await c.query(t, v)).rows, resource, token)),
  },
  {
    name: 'pg Client',
    write: (resource: string, token: bigint) => fencedWrite(client, { resource, token }, (c) => increment(async (t, v) => (await c.query(t, v)).rows, resource, token)),
  },
  {
    name: 'postgres.js',
    write: (resource: string, token: bigint) => fencedWrite(sql, { resource, token }, (tx) => increment(async (t, v) => [...(await tx.unsafe(t, (v ?? []).map(String)))], resource, token)),
  },
] as const;

async function state(): Promise<{ n: number; token: string | null; log: string[] }> {
  const { rows } = await pool.query<{ n: number; token: string | null }>('SELECT n, token::text AS token FROM counter WHERE id = 1');
  const log = (await pool.query<{ token: string }>('SELECT token::text AS token FROM log ORDER BY seq')).rows.map((r) => r.token);
  return { ...rows[0]!, log };
}

describe.each(drivers)('fencing postgres ($name) - tokens', ({ write }) => {
  it('a higher or equal token writes; a lower one is refused with StaleTokenError naming both tokens, and nothing of its write stays', async () => {
    await write('jobs', 10n);
    await write('jobs', 10n); // the same holder again
    await write('jobs', 12n);
    const err = await outcome(write('jobs', 11n));
    expect(err).toBeInstanceOf(StaleTokenError);
    expect(err).toMatchObject({ name: 'StaleTokenError', resource: 'jobs', token: 11n, highest: 12n, isRetryable: false });
    expect(await state()).toEqual({ n: 3, token: '12', log: ['10', '10', '12'] });
    const { rows } = await pool.query('SELECT resource, token::text AS token FROM zk_fencing_tokens');
    expect(rows).toEqual([{ resource: 'jobs', token: '12' }]);
    // Resources are fenced separately: a low token of another resource writes.
    await write('other', 1n);
    expect((await state()).n).toBe(4);
  });

  it('the first write of a resource records its token; tokens out of range are refused before anything is sent', async () => {
    await write('fresh', 0n);
    await expect(write('fresh', -1n)).rejects.toThrow(RangeError);
    await expect(write('fresh', 1n << 63n)).rejects.toThrow(RangeError);
    await write('fresh', (1n << 63n) - 1n); // the largest zxid
    expect((await state()).log).toEqual(['0', '9223372036854775807']);
  });
});

/**
 * 40 tokens in a fixed interleaved order: a seeded shuffle (the highest comes early, most are
 * refused), or neighbours swapped (1001, 1000, 1003, 1002, ...: about half are accepted, racing).
 */
function interleaved(n: number, order: 'shuffled' | 'pairs'): bigint[] {
  if (order === 'pairs') return Array.from({ length: n }, (_, i) => BigInt(1000 + (i % 2 === 0 ? i + 1 : i - 1)));
  const tokens = Array.from({ length: n }, (_, i) => BigInt(1000 + i));
  let seed = 7;
  for (let i = tokens.length - 1; i > 0; i--) {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    const j = seed % (i + 1);
    [tokens[i], tokens[j]] = [tokens[j]!, tokens[i]!];
  }
  return tokens;
}

describe.each(drivers.filter((d) => d.name !== 'pg Client'))('fencing postgres ($name) - concurrent writers', ({ write }) => {
  it.each(['shuffled', 'pairs'] as const)('40 concurrent read-modify-writes with interleaved tokens (%s): accepted ones in token order, none lost, the highest last; the rest refused', async (order) => {
    const tokens = interleaved(40, order);
    const results = await Promise.all(tokens.map((t) => outcome(write('counter', t))));
    const refused = results.filter((r) => r instanceof StaleTokenError) as StaleTokenError[];
    const accepted = results.filter((r) => r === undefined).length;
    expect(results.filter((r) => r !== undefined && !(r instanceof StaleTokenError))).toEqual([]);
    const s = await state();
    // Serialised: no accepted increment was lost, and the commits came in token order.
    expect(s.n).toBe(accepted);
    expect(s.log.map(BigInt)).toEqual([...s.log.map(BigInt)].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
    expect(s.token).toBe('1039'); // the highest token always wins
    for (const r of refused) expect(r.highest).toBeGreaterThan(r.token);
    expect(accepted + refused.length).toBe(40);
    expect(refused.length).toBeGreaterThan(0);
    console.log(`[fencing] postgres concurrent (${order}): ${accepted} accepted, ${refused.length} refused of 40 interleaved tokens`);

    // Once the highest has written, every lower token is refused, all 39 at once.
    const again = await Promise.all(tokens.filter((t) => t !== 1039n).map((t) => outcome(write('counter', t))));
    expect(again.filter((r) => r instanceof StaleTokenError)).toHaveLength(39);
    expect((await state()).n).toBe(accepted);
  });
});

describe('fencing postgres - controls', () => {
  it('control: the same read-modify-writes without the fence lose updates (all read, then all write)', async () => {
    const writers = 10;
    let reads = 0;
    let allRead!: () => void;
    const barrier = new Promise<void>((resolve) => (allRead = resolve));
    await Promise.all(
      Array.from({ length: writers }, async () => {
        const c = await pool.connect();
        try {
          await c.query('BEGIN');
          const [row] = (await c.query<{ n: number }>('SELECT n FROM counter WHERE id = 1')).rows;
          if (++reads === writers) allRead();
          await barrier;
          await c.query('UPDATE counter SET n = $1 WHERE id = 1', [row!.n + 1]);
          await c.query('COMMIT');
        } finally {
          c.release();
        }
      }),
    );
    expect((await state()).n).toBe(1); // 9 of 10 increments lost
  });

  it('control: a check-then-write fence (SELECT the token, compare, UPDATE it) lets concurrent writers through together, and they lose updates', async () => {
    await pool.query("INSERT INTO zk_fencing_tokens (resource, token) VALUES ('naive', 0)");
    const tokens = [3n, 1n, 4n, 2n, 5n];
    let reads = 0;
    let allRead!: () => void;
    const barrier = new Promise<void>((resolve) => (allRead = resolve));
    const accepted: bigint[] = [];
    await Promise.all(
      tokens.map(async (token) => {
        const c = await pool.connect();
        try {
          await c.query('BEGIN');
          const highest = BigInt((await c.query<{ token: string }>("SELECT token::text AS token FROM zk_fencing_tokens WHERE resource = 'naive'")).rows[0]!.token);
          const [row] = (await c.query<{ n: number }>('SELECT n FROM counter WHERE id = 1')).rows;
          if (++reads === tokens.length) allRead();
          await barrier;
          if (token < highest) return void (await c.query('ROLLBACK'));
          await c.query("UPDATE zk_fencing_tokens SET token = $1 WHERE resource = 'naive'", [token.toString()]);
          await c.query('UPDATE counter SET n = $1 WHERE id = 1', [row!.n + 1]);
          await c.query('COMMIT');
          accepted.push(token);
        } finally {
          c.release();
        }
      }),
    );
    expect(accepted).toHaveLength(5); // every token passed the check: nothing was refused
    expect((await state()).n).toBe(1); // and 4 of 5 increments were lost
  });

  it('a paused holder: its successor writes, then the stale write lands; plain it overwrites, fenced it is refused', async () => {
    // Holder A (token 5) reads, pauses; its lock passes to B (token 6), which reads and writes.
    const readA = (await pool.query<{ n: number }>('SELECT n FROM counter WHERE id = 1')).rows[0]!.n;
    await fencedWrite(pool, { resource: 'report', token: 6n }, (c) => increment(async (t, v) => (await c.query(t, v)).rows, 'report', 6n));
    // Control: A's plain write, from its stale read, wipes out B's increment.
    await pool.query('UPDATE counter SET n = $1, token = 5 WHERE id = 1', [readA + 1]);
    expect((await state()).n).toBe(1);
    // Reset, and again with A fenced.
    await pool.query('UPDATE counter SET n = 0 WHERE id = 1');
    await pool.query('TRUNCATE zk_fencing_tokens');
    await fencedWrite(pool, { resource: 'report', token: 6n }, (c) => increment(async (t, v) => (await c.query(t, v)).rows, 'report', 6n));
    const stale = await outcome(fencedWrite(pool, { resource: 'report', token: 5n }, (c: PgClientLike) => c.query('UPDATE counter SET n = $1 WHERE id = 1', [readA + 1])));
    expect(stale).toMatchObject({ name: 'StaleTokenError', token: 5n, highest: 6n, resource: 'report' });
    expect((await state()).n).toBe(1);
  });

  it('fence() inside the caller\'s own transaction (postgres.js begin, pg BEGIN): refused, and the caller\'s transaction rolls back', async () => {
    await sql.begin(async (tx) => {
      await fence(tx, { resource: 'own', token: 3n });
      await tx`UPDATE counter SET n = n + 1 WHERE id = 1`;
    });
    const refused = await outcome(
      sql.begin(async (tx) => {
        await tx`UPDATE counter SET n = n + 100 WHERE id = 1`;
        await fence(tx, { resource: 'own', token: 2n });
      }),
    );
    expect(refused).toMatchObject({ name: 'StaleTokenError', token: 2n, highest: 3n });
    const c = await pool.connect();
    try {
      await c.query('BEGIN');
      await fence(c, { resource: 'own', token: 4n });
      await c.query('UPDATE counter SET n = n + 1 WHERE id = 1');
      await c.query('COMMIT');
    } finally {
      c.release();
    }
    expect((await state()).n).toBe(2);
  });
});

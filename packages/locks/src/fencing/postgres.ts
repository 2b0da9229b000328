/**
 * Fenced writes to Postgres: the caller's write runs in the transaction that checks and records
 * the writer's token, under the lock of the resource's token row.
 *
 * Why it serialises (READ COMMITTED, Postgres's default): `INSERT ... ON CONFLICT (resource) DO
 * UPDATE ... WHERE f.token <= EXCLUDED.token` locks the existing row whether or not its WHERE
 * holds, waiting for a transaction that holds it, and evaluates the WHERE on the newest committed
 * version, not on the statement's snapshot (PostgreSQL docs, INSERT, "ON CONFLICT Clause"; 13.2.1
 * "Read Committed Isolation Level"). So fenced writers of one resource take turns from the fence
 * to their commit; a lower token that waited behind a higher one sees the higher one and is
 * refused; and every statement of the write after the fence takes a snapshot that includes the
 * previous writer's commit, so a read-modify-write inside the transaction sees the last write.
 * Under REPEATABLE READ or SERIALIZABLE, a writer that waited fails with a serialization error
 * (40001) instead: nothing stale is applied, but retry it like any 40001.
 */
import { checkFence, type Fence } from './token.js';
import { StaleTokenError } from './stale-token-error.js';

/** The default name of the token table (see {@link fencingTableSql}). */
export const DEFAULT_FENCING_TABLE = 'zk_fencing_tokens';

/**
 * What the helpers use of a node-postgres (`pg`) `Client` or `PoolClient`, and of anything with
 * the same `query(text, values)`: one connection, statements run in order.
 */
export interface PgClientLike {
  query(text: string, values?: unknown[]): Promise<{ rows: unknown[] }>;
}

/**
 * What the helpers use of a node-postgres `Pool`: a connection for the transaction, returned with
 * `release()`. Told apart from a `Client` by `totalCount`, which a Pool has and a Client has not
 * (a Client's `connect()` opens its socket, which must not happen twice).
 */
export interface PgPoolLike {
  connect(): Promise<PgClientLike & { release(err?: Error | boolean): void }>;
  readonly totalCount: number;
}

/** What the helpers use of a postgres.js transaction (`sql.begin(tx => ...)`'s `tx`): `unsafe(text, values)`. */
export interface PostgresJsTxLike {
  unsafe(text: string, values?: string[]): PromiseLike<readonly unknown[]>;
}

/** What {@link fencedWrite} uses of a postgres.js `sql` (`postgres(url)`): `begin(tx => ...)`. */
export interface PostgresJsLike<Tx extends PostgresJsTxLike = PostgresJsTxLike> {
  begin(body: (tx: Tx) => Promise<unknown>): Promise<unknown>;
}

/**
 * What {@link fencedWrite}'s `write` gets for a `db`, with the driver's own types: a postgres.js
 * `TransactionSql` (tagged templates and all), a pg Pool's `PoolClient`, or the pg Client itself.
 * Read from the last overload of `begin` / `connect` (the callback forms), which is where
 * TypeScript's inference looks.
 */
export type FencedTx<D> = D extends { begin(options: string, body: (tx: infer Tx) => any): any }
  ? Tx
  : D extends { begin(body: (tx: infer Tx) => any): any }
    ? Tx
    : D extends { readonly totalCount: number; connect(callback: (err: any, client: infer C, ...rest: any[]) => void): void }
      ? [NonNullable<C>] extends [PgClientLike]
        ? NonNullable<C>
        : PgClientLike
      : D extends PgPoolLike
        ? PgClientLike
        : D;

/** Options of the Postgres fence. */
export interface PgFenceOptions {
  /** The token table, as {@link fencingTableSql} created it (optionally `schema.table`). Default `zk_fencing_tokens`. */
  table?: string | undefined;
}

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]{0,62}(?:\.[A-Za-z_][A-Za-z0-9_]{0,62})?$/;

function tableOf(options: PgFenceOptions | undefined): string {
  const table = options?.table ?? DEFAULT_FENCING_TABLE;
  if (!IDENTIFIER.test(table)) throw new RangeError(`fencing table ${JSON.stringify(table)} is not a plain [schema.]name identifier`);
  return table;
}

/**
 * The migration that creates the token table: one row per resource, its highest accepted token.
 * `bigint` holds every zxid exactly (a zxid is a Java long, never negative; see token.ts), and
 * compares and indexes as a machine integer, where `numeric(20)` would be a variable-length
 * decimal for values ZooKeeper cannot produce.
 *
 * @example
 * ```ts
 * await pool.query(fencingTableSql()); // once, in your migrations
 * ```
 */
export function fencingTableSql(table: string = DEFAULT_FENCING_TABLE): string {
  const name = tableOf({ table });
  return `CREATE TABLE IF NOT EXISTS ${name} (
  resource   text        PRIMARY KEY,
  token      bigint      NOT NULL CHECK (token >= 0),
  updated_at timestamptz NOT NULL DEFAULT now()
)`;
}

/** Runs one statement on a pg client or a postgres.js transaction; its rows. */
type Run = (text: string, values: string[]) => Promise<readonly unknown[]>;

function runnerOf(tx: PgClientLike | PostgresJsTxLike): Run {
  if (typeof (tx as PostgresJsTxLike).unsafe === 'function') {
    const sql = tx as PostgresJsTxLike;
    return async (text, values) => await sql.unsafe(text, values);
  }
  const client = tx as PgClientLike;
  return async (text, values) => (await client.query(text, values)).rows;
}

function tokenIn(rows: readonly unknown[]): bigint | undefined {
  const row = rows[0] as { token?: unknown } | undefined;
  return row === undefined ? undefined : BigInt(String(row.token));
}

/**
 * Checks and records `fence.token` inside a transaction the caller has open on `tx` (a pg
 * `Client`/`PoolClient` after `BEGIN`, or a postgres.js `sql.begin` transaction); throws
 * {@link StaleTokenError} when the table holds a higher token for the resource. Call it first in
 * the transaction, then write: the resource's token row stays locked until the transaction ends,
 * so fenced writers of the resource take turns. Outside a transaction (autocommit) the lock ends
 * with the statement and the write that follows is not fenced. After a StaleTokenError the
 * transaction must be rolled back (postgres.js does it when the callback throws).
 *
 * @example
 * ```ts
 * await sql.begin(async (tx) => {
 *   await fence(tx, { resource: 'orders', token: lease.fencingToken });
 *   await tx`update orders set status = 'shipped' where id = ${id}`;
 * });
 * ```
 */
export async function fence(tx: PgClientLike | PostgresJsTxLike, fence: Fence, options?: PgFenceOptions): Promise<void> {
  checkFence(fence);
  const table = tableOf(options);
  const run = runnerOf(tx);
  const values = [fence.resource, fence.token.toString()];
  // The row is locked (FOR UPDATE) even when the WHERE refuses the update, so the SELECT below
  // reads the token that refused us, and nobody can change it before we roll back.
  const advanced = await run(
    `INSERT INTO ${table} AS f (resource, token) VALUES ($1, $2::bigint)
     ON CONFLICT (resource) DO UPDATE SET token = EXCLUDED.token, updated_at = now() WHERE f.token <= EXCLUDED.token
     RETURNING f.token::text AS token`,
    values,
  );
  if (advanced.length > 0) return;
  const highest = tokenIn(await run(`SELECT token::text AS token FROM ${table} WHERE resource = $1`, values.slice(0, 1)));
  throw new StaleTokenError(fence.resource, fence.token, highest ?? fence.token);
}

/**
 * Applies `write` only if `fence.token` is at least the highest token recorded for the resource,
 * and records it, in one transaction: commits when `write` resolves, rolls back when it (or the
 * fence) throws. Refused with {@link StaleTokenError}, nothing written. `db` is a pg `Pool`
 * (a connection is taken for the transaction and released), a pg `Client` or `PoolClient`
 * (used as it is: not one already inside a transaction), or a postgres.js `sql`; `write` gets the
 * connection or the postgres.js transaction to write with.
 *
 * @example
 * ```ts
 * await fencedWrite(pool, { resource: 'ledger', token: lease.fencingToken }, async (client) => {
 *   await client.query('INSERT INTO ledger (entry) VALUES ($1)', [entry]);
 * });
 * ```
 */
export function fencedWrite<T, D extends PgPoolLike | PgClientLike | PostgresJsLike>(db: D, fence: Fence, write: (tx: FencedTx<D>) => Promise<T>, options?: PgFenceOptions): Promise<T>;
export async function fencedWrite<T>(db: PgPoolLike | PgClientLike | PostgresJsLike, f: Fence, write: (tx: never) => Promise<T>, options?: PgFenceOptions): Promise<T> {
  checkFence(f);
  tableOf(options);
  if (typeof (db as PostgresJsLike).begin === 'function') {
    return (await (db as PostgresJsLike).begin(async (tx) => {
      await fence(tx, f, options);
      return await write(tx as never);
    })) as T;
  }
  if (typeof (db as PgPoolLike).connect === 'function' && typeof (db as PgPoolLike).totalCount === 'number') {
    const client = await (db as PgPoolLike).connect();
    let broken: Error | undefined;
    try {
      return await inPgTransaction(client, f, write, options);
    } catch (err) {
      // A failed ROLLBACK leaves the connection in an unknown state: drop it rather than pool it.
      if (err instanceof RollbackError) broken = err;
      throw err instanceof RollbackError ? err.cause : err;
    } finally {
      client.release(broken ?? false);
    }
  }
  try {
    return await inPgTransaction(db as PgClientLike, f, write, options);
  } catch (err) {
    throw err instanceof RollbackError ? err.cause : err;
  }
}

/** The rollback after a failed write failed too: `cause` is the write's error, `rollback` the other. */
class RollbackError extends Error {
  override readonly cause: unknown;
  readonly rollback: unknown;
  constructor(cause: unknown, rollback: unknown) {
    super('ROLLBACK failed');
    this.cause = cause;
    this.rollback = rollback;
  }
}

async function inPgTransaction<T>(client: PgClientLike, f: Fence, write: (tx: never) => Promise<T>, options: PgFenceOptions | undefined): Promise<T> {
  await client.query('BEGIN');
  let result: T;
  try {
    await fence(client, f, options);
    result = await write(client as never);
  } catch (err) {
    try {
      await client.query('ROLLBACK');
    } catch (rollback) {
      // The write's error is the one to report; the rollback's goes with it (style §6).
      if (err instanceof Error) (err as Error & { rollbackError?: unknown }).rollbackError = rollback;
      throw new RollbackError(err, rollback);
    }
    throw err;
  }
  await client.query('COMMIT');
  return result;
}

/**
 * Fenced sets on a real Redis 7 (a private server the harness starts on loopback), with both
 * drivers: ioredis (`call`) and node-redis (`sendCommand`), and a plain command function. Stale,
 * equal and higher tokens; the EVAL fallback after SCRIPT FLUSH; many concurrent writers with
 * interleaved tokens; the controls (plain SETs lose an update); and a Redis Cluster (one node
 * with every slot: the slot rules are the same), where the token key and the data key must share
 * a hash tag.
 */
import { Cluster, Redis } from 'ioredis';
import { createClient, createCluster } from 'redis';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { fencedGet, fencedSet, fencingTokenKey, StaleTokenError, type RedisLike } from '@zk/locks';
import { startRedis, type RedisServer } from '../../harness/redis.js';
import { outcome, waitFor } from '../../harness/index.js';

let server: RedisServer;
let ioredis: Redis;
let nodeRedis: ReturnType<typeof createClient>;

beforeAll(async () => {
  server = await startRedis();
  ioredis = new Redis(server.port, '127.0.0.1', { lazyConnect: true });
  await ioredis.connect();
  nodeRedis = createClient({ url: server.url });
  await nodeRedis.connect();
});

afterAll(async () => {
  ioredis?.disconnect();
  await nodeRedis?.close().catch(() => undefined);
  await server?.stop();
});

beforeEach(async () => {
  await ioredis.flushall();
});

const drivers: ReadonlyArray<{ name: string; redis: () => RedisLike }> = [
  { name: 'ioredis', redis: () => ioredis },
  { name: 'node-redis', redis: () => nodeRedis },
  { name: 'a command function', redis: () => (args: string[]) => nodeRedis.sendCommand(args) },
];

describe.each(drivers)('fencing redis ($name) - tokens', ({ redis }) => {
  it('a higher or equal token sets; a lower one is refused with StaleTokenError naming both tokens, and the value stays', async () => {
    const set = (token: bigint, value: string) => fencedSet(redis(), { resource: 'report', token }, '{report}:body', value);
    await set(10n, 'a');
    await set(10n, 'b');
    await set(12n, 'c');
    const err = await outcome(set(11n, 'stale'));
    expect(err).toBeInstanceOf(StaleTokenError);
    expect(err).toMatchObject({ name: 'StaleTokenError', resource: 'report', token: 11n, highest: 12n });
    expect(await ioredis.get('{report}:body')).toBe('c');
    expect(await ioredis.get(fencingTokenKey('report'))).toBe('12');
  });

  it('tokens compare as numbers past 2^53 (not as Lua doubles), and as numbers, not as text', async () => {
    const big = (1n << 62n) + 1n;
    await fencedSet(redis(), { resource: 'big', token: big }, '{big}:v', 'high');
    expect(await outcome(fencedSet(redis(), { resource: 'big', token: big - 1n }, '{big}:v', 'low'))).toMatchObject({ token: big - 1n, highest: big });
    await fencedSet(redis(), { resource: 'text', token: 9n }, '{text}:v', 'nine');
    await fencedSet(redis(), { resource: 'text', token: 10n }, '{text}:v', 'ten'); // "10" < "9" as text
    expect(await outcome(fencedSet(redis(), { resource: 'text', token: 9n }, '{text}:v', 'nine again'))).toMatchObject({ highest: 10n });
    expect(await ioredis.get('{text}:v')).toBe('ten');
  });

  it('fencedGet: reads and raises the bar (a stale holder that read before it cannot write after it); null for a missing key; refused when stale', async () => {
    expect(await fencedGet(redis(), { resource: 'g', token: 4n }, '{g}:v')).toBeNull();
    await fencedSet(redis(), { resource: 'g', token: 4n }, '{g}:v', 'four');
    expect(await fencedGet(redis(), { resource: 'g', token: 5n }, '{g}:v')).toBe('four'); // the next holder reads
    expect(await outcome(fencedSet(redis(), { resource: 'g', token: 4n }, '{g}:v', 'stale'))).toMatchObject({ token: 4n, highest: 5n });
    expect(await outcome(fencedGet(redis(), { resource: 'g', token: 3n }, '{g}:v'))).toMatchObject({ token: 3n, highest: 5n });
    expect(await ioredis.get('{g}:v')).toBe('four');
  });

  it('EVAL when the server lost the script (SCRIPT FLUSH), EVALSHA again after; px sets an expiry', async () => {
    await ioredis.call('SCRIPT', 'FLUSH');
    await fencedSet(redis(), { resource: 'r', token: 1n }, '{r}:k', 'v', { px: 60_000 });
    const pttl = await ioredis.pttl('{r}:k');
    expect(pttl).toBeGreaterThan(50_000);
    await fencedSet(redis(), { resource: 'r', token: 2n }, '{r}:k', 'w');
    expect(await ioredis.get('{r}:k')).toBe('w');
  });
});

describe('fencing redis - checks before sending', () => {
  it('a data key tagged for another slot, a resource with }, a bad px or token: RangeError, nothing sent', async () => {
    await expect(fencedSet(ioredis, { resource: 'a', token: 1n }, '{b}:k', 'v')).rejects.toThrow(/different slots/);
    await expect(fencedSet(ioredis, { resource: 'a}', token: 1n }, 'k', 'v')).rejects.toThrow(RangeError);
    await expect(fencedSet(ioredis, { resource: 'a', token: 1n }, '{a}:k', 'v', { px: 0 })).rejects.toThrow(RangeError);
    await expect(fencedSet(ioredis, { resource: 'a', token: -1n }, '{a}:k', 'v')).rejects.toThrow(RangeError);
    expect(await ioredis.dbsize()).toBe(0);
  });
});

describe.each(drivers.slice(0, 2))('fencing redis ($name) - concurrent writers', ({ redis }) => {
  it('40 concurrent sets with interleaved tokens: the highest token\'s value stays, every refusal names a higher winner; once it wrote, all 39 lower ones are refused', async () => {
    const tokens = Array.from({ length: 40 }, (_, i) => BigInt(2000 + (i % 2 === 0 ? i + 1 : i - 1))).reverse();
    tokens.splice(5, 0, ...tokens.splice(30, 5)); // some low tokens early
    const results = await Promise.all(tokens.map((t) => outcome(fencedSet(redis(), { resource: 'c', token: t }, '{c}:v', `by ${t}`))));
    const refused = results.filter((r) => r instanceof StaleTokenError) as StaleTokenError[];
    expect(results.filter((r) => r !== undefined && !(r instanceof StaleTokenError))).toEqual([]);
    expect(await ioredis.get('{c}:v')).toBe('by 2039');
    for (const r of refused) expect(r.highest).toBeGreaterThan(r.token);
    console.log(`[fencing] redis concurrent: ${40 - refused.length} accepted, ${refused.length} refused of 40 interleaved tokens`);
    const again = await Promise.all(tokens.filter((t) => t !== 2039n).map((t) => outcome(fencedSet(redis(), { resource: 'c', token: t }, '{c}:v', 'late'))));
    expect(again.filter((r) => r instanceof StaleTokenError)).toHaveLength(39);
    expect(await ioredis.get('{c}:v')).toBe('by 2039');
  });
});

describe('fencing redis - controls', () => {
  it('a paused holder: its successor increments, then the stale write lands; a plain SET overwrites, the fenced one is refused', async () => {
    await ioredis.set('{n}:count', '0');
    const readA = Number(await ioredis.get('{n}:count')); // holder A (token 5) reads, then pauses
    const readB = Number(await ioredis.get('{n}:count')); // B (token 6) has the lock now
    await fencedSet(ioredis, { resource: 'n', token: 6n }, '{n}:count', String(readB + 1));
    // Control: A's plain SET from its stale read wipes out B's increment.
    await ioredis.set('{n}:count', String(readA + 1));
    await fencedSet(ioredis, { resource: 'n', token: 6n }, '{n}:count', '2'); // B's next increment
    expect(await ioredis.get('{n}:count')).toBe('2'); // should be 3: one update lost
    // Fenced, A is refused and B's count stays.
    expect(await outcome(fencedSet(ioredis, { resource: 'n', token: 5n }, '{n}:count', String(readA + 1)))).toMatchObject({ token: 5n, highest: 6n });
    expect(await ioredis.get('{n}:count')).toBe('2');
  });
});

describe('fencing redis - cluster', () => {
  let node: RedisServer;
  beforeAll(async () => {
    // Announced at 127.0.0.1: otherwise CLUSTER SLOTS names the node by an empty address and the clients hang.
    node = await startRedis(['--cluster-enabled', 'yes', '--cluster-config-file', 'nodes.conf', '--cluster-announce-ip', '127.0.0.1']);
    const admin = new Redis(node.port, '127.0.0.1');
    await admin.call('CLUSTER', 'ADDSLOTSRANGE', '0', '16383');
    await waitFor('cluster_state:ok', async () => ((await admin.call('CLUSTER', 'INFO')) as string).includes('cluster_state:ok') || undefined, 20_000);
    admin.disconnect();
  });
  afterAll(async () => {
    await node?.stop();
  });

  it('ioredis Cluster and node-redis cluster: keys tagged with the resource work; an untagged data key is refused by the server (CROSSSLOT)', { timeout: 20_000 }, async () => {
    const io = new Cluster([{ host: '127.0.0.1', port: node.port }]);
    const nr = createCluster({ rootNodes: [{ url: node.url }] });
    await nr.connect();
    try {
      await fencedSet(io, { resource: 'orders', token: 7n }, '{orders}:summary', 'io');
      const viaNodeRedis: RedisLike = (args, key) => nr.sendCommand(key, false, args);
      await fencedSet(viaNodeRedis, { resource: 'orders', token: 8n }, '{orders}:summary', 'nr');
      expect(await outcome(fencedSet(io, { resource: 'orders', token: 7n }, '{orders}:summary', 'stale'))).toMatchObject({ name: 'StaleTokenError', highest: 8n });
      expect(await io.get('{orders}:summary')).toBe('nr');
      // Untagged: the key hashes elsewhere than fencing-token:{orders}.
      expect(String(await outcome(fencedSet(io, { resource: 'orders', token: 9n }, 'orders-summary', 'x')))).toMatch(/CROSSSLOT|different slot|Lua script attempted to access a non local key/i);
    } finally {
      io.disconnect();
      await nr.close();
    }
  });
});

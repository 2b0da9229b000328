/**
 * Fenced sets on a real Redis Cluster of three masters (private Redis 7 servers the harness starts
 * on loopback, slots split in three), with ioredis's Cluster and node-redis's createCluster. One
 * resource per master: the token key and the data key of each share its hash tag, hence a slot,
 * hence a master, which is asserted through the servers themselves (CLUSTER KEYSLOT, and the
 * masters that do not serve the slot answer MOVED). Stale tokens are refused on each master;
 * interleaved writers on the three at once; and the hash-tag rule with its negative control: a
 * data key without the resource's tag is refused by the cluster (CROSSSLOT), reported as a
 * RangeError and nothing written, even when its slot is on the same master.
 */
import { createHash } from 'node:crypto';
import { Cluster, Redis } from 'ioredis';
import { createCluster } from 'redis';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { FENCED_SET_SCRIPT, fencedGet, fencedSet, fencingTokenKey, StaleTokenError, type RedisLike } from '@zk/locks';
import { startRedisCluster, type RedisCluster, type RedisClusterNode } from '../../harness/redis.js';
import { outcome } from '../../harness/index.js';

const SHA = createHash('sha1').update(FENCED_SET_SCRIPT).digest('hex');

let cluster: RedisCluster;
let io: Cluster;
let nr: ReturnType<typeof createCluster>;
/** A plain (non-cluster) connection to each master, in the order of cluster.nodes: they answer MOVED for keys of another master's slots. */
let direct: Redis[];
/** One resource per master: resources[i]'s token key hashes to a slot of cluster.nodes[i]. */
let resources: string[];

const keyslot = async (key: string) => Number(await direct[0]!.call('CLUSTER', 'KEYSLOT', key));
const ownerOf = async (key: string): Promise<RedisClusterNode> => cluster.nodeOf(await keyslot(key));
const at = (node: RedisClusterNode) => direct[cluster.nodes.indexOf(node)]!;

beforeAll(async () => {
  cluster = await startRedisCluster(3);
  direct = cluster.nodes.map((n) => new Redis(n.port, n.host));
  io = new Cluster(cluster.nodes.map((n) => ({ host: n.host, port: n.port })));
  nr = createCluster({ rootNodes: cluster.nodes.map((n) => ({ url: n.url })) });
  await nr.connect();
  const found: Array<string | undefined> = cluster.nodes.map(() => undefined);
  for (let i = 0; found.includes(undefined); i++) {
    if (i > 200) throw new Error(`no resource names for every master among res-0..res-${i}: ${JSON.stringify(found)}`);
    const owner = cluster.nodes.indexOf(await ownerOf(fencingTokenKey(`res-${i}`)));
    found[owner] ??= `res-${i}`;
  }
  resources = found as string[];
});

afterAll(async () => {
  io?.disconnect();
  await nr?.close().catch(() => undefined);
  for (const d of direct ?? []) d.disconnect();
  await cluster?.stop();
});

beforeEach(async () => {
  await Promise.all(direct.map((d) => Promise.all([d.flushall(), d.call('SCRIPT', 'FLUSH')])));
});

const drivers: ReadonlyArray<{ name: string; redis: () => RedisLike }> = [
  { name: 'ioredis Cluster', redis: () => io },
  { name: 'node-redis createCluster', redis: () => (args, firstKey) => nr.sendCommand(firstKey, false, args) },
];

describe('fencing redis cluster - the harness', () => {
  it('three masters, each serving a third of the slots, all of them ok; one resource per master', async () => {
    expect(cluster.nodes.map((n) => n.slots)).toEqual([[0, 5460], [5461, 10921], [10922, 16383]]);
    for (const d of direct) {
      const info = String(await d.call('CLUSTER', 'INFO'));
      expect(info).toContain('cluster_state:ok');
      expect(info).toContain('cluster_size:3\r\n');
      expect(info).toContain('cluster_slots_assigned:16384\r\n');
    }
    expect(new Set(cluster.nodes.map((n) => n.id)).size).toBe(3);
    expect(new Set(resources).size).toBe(3);
  });
});

describe.each(drivers)('fencing redis cluster ($name)', ({ redis }) => {
  it('on each master: set, read, a stale set and a stale read refused with StaleTokenError; the token and the value live on the master of their slot, the others answer MOVED', async () => {
    for (const [i, resource] of resources.entries()) {
      const key = `{${resource}}:value`;
      const tokenKey = fencingTokenKey(resource);
      const slot = await keyslot(tokenKey);
      expect(await keyslot(key)).toBe(slot); // the shared hash tag: one slot
      const owner = cluster.nodes[i]!;
      expect(cluster.nodeOf(slot)).toBe(owner);

      await fencedSet(redis(), { resource, token: 10n }, key, `ten ${resource}`);
      expect(await fencedGet(redis(), { resource, token: 11n }, key)).toBe(`ten ${resource}`);
      const staleSet = await outcome(fencedSet(redis(), { resource, token: 10n }, key, 'stale'));
      expect(staleSet).toBeInstanceOf(StaleTokenError);
      expect(staleSet).toMatchObject({ resource, token: 10n, highest: 11n });
      expect(await outcome(fencedGet(redis(), { resource, token: 9n }, key))).toMatchObject({ name: 'StaleTokenError', token: 9n, highest: 11n });
      await fencedSet(redis(), { resource, token: 12n }, key, `twelve ${resource}`);

      expect(await at(owner).get(key)).toBe(`twelve ${resource}`);
      expect(await at(owner).get(tokenKey)).toBe('12');
      for (const other of cluster.nodes.filter((n) => n !== owner)) {
        expect(String(await outcome(at(other).get(key)))).toMatch(new RegExp(`MOVED ${slot} 127\\.0\\.0\\.1:${owner.port}`));
      }
    }
    // The script was loaded on each master by the EVAL fallback (SCRIPT FLUSH before the test).
    for (const d of direct) expect(await d.call('SCRIPT', 'EXISTS', SHA)).toEqual([1]);
  });
});

describe('fencing redis cluster - concurrent writers on the three masters', () => {
  it('20 interleaved tokens per resource, half through each driver, all 60 at once: on every master the highest token\'s value stays and each refusal names a higher winner; then the 19 lower are all refused', async () => {
    const tokens = Array.from({ length: 20 }, (_, i) => BigInt(500 + (i % 2 === 0 ? i + 1 : i - 1))).reverse(); // 519, 518, 517, ... interleaved
    tokens.splice(3, 0, ...tokens.splice(14, 4)); // some low tokens early
    const writes = resources.flatMap((resource) =>
      tokens.map((token, j) => ({ resource, token, driver: drivers[j % 2]!.redis(), key: `{${resource}}:v` })),
    );
    const results = await Promise.all(writes.map((w) => outcome(fencedSet(w.driver, { resource: w.resource, token: w.token }, w.key, `by ${w.token}`))));
    expect(results.filter((r) => r !== undefined && !(r instanceof StaleTokenError))).toEqual([]);
    const refused = results.filter((r): r is StaleTokenError => r instanceof StaleTokenError);
    for (const r of refused) expect(r.highest).toBeGreaterThan(r.token);
    console.log(`[fencing] redis cluster concurrent: ${results.length - refused.length} accepted, ${refused.length} refused of ${results.length} (3 masters x 20 interleaved tokens)`);
    for (const [i, resource] of resources.entries()) {
      expect(await direct[i]!.get(`{${resource}}:v`)).toBe('by 519');
      const again = await Promise.all(tokens.filter((t) => t !== 519n).map((t) => outcome(fencedSet(io, { resource, token: t }, `{${resource}}:v`, 'late'))));
      expect(again.filter((r) => r instanceof StaleTokenError)).toHaveLength(19);
      expect(await direct[i]!.get(`{${resource}}:v`)).toBe('by 519');
    }
  });
});

describe.each(drivers)('fencing redis cluster ($name) - the hash-tag rule', ({ redis }) => {
  it('a data key without the resource\'s tag: refused by the cluster (CROSSSLOT) even when its slot is on the same master, reported as a RangeError, nothing written; tagged for another resource: refused before sending', async () => {
    const resource = resources[0]!;
    const tokenKey = fencingTokenKey(resource);
    const owner = await ownerOf(tokenKey);
    // Untagged keys: one on another master, one on the token key's master but in another slot.
    let elsewhere: string | undefined;
    let sameMaster: string | undefined;
    for (let j = 0; elsewhere === undefined || sameMaster === undefined; j++) {
      const k = `${resource}-summary-${j}`;
      const slot = await keyslot(k);
      if (cluster.nodeOf(slot) !== owner) elsewhere ??= k;
      else if (slot !== (await keyslot(tokenKey))) sameMaster ??= k;
    }
    // The control: the server itself refuses a script given keys of two slots.
    expect(String(await outcome(io.call('EVAL', 'return 1', '2', tokenKey, elsewhere)))).toMatch(/^ReplyError: CROSSSLOT/);
    expect(String(await outcome(at(owner).call('EVAL', 'return 1', '2', tokenKey, sameMaster)))).toMatch(/^ReplyError: CROSSSLOT/);
    // Tagged with the resource, both on one slot: accepted (the positive case, same master).
    await fencedSet(redis(), { resource, token: 5n }, `{${resource}}:summary`, 'ok');

    for (const key of [elsewhere, sameMaster]) {
      const err = await outcome(fencedSet(redis(), { resource, token: 6n }, key, 'x'));
      expect(err).toBeInstanceOf(RangeError);
      expect((err as Error).message).toBe(`key "${key}" and the token key "${tokenKey}" hash to different slots of the Redis Cluster (CROSSSLOT), nothing written: tag the key with {${resource}}, as in "{${resource}}:${key}"`);
      expect(String((err as Error).cause)).toMatch(/CROSSSLOT/);
      expect(await outcome(fencedGet(redis(), { resource, token: 6n }, key))).toBeInstanceOf(RangeError);
      expect(await at(await ownerOf(key)).exists(key)).toBe(0);
    }
    expect(await outcome(fencedSet(redis(), { resource, token: 7n }, `{${resources[1]}}:v`, 'x'))).toMatchObject({ name: 'RangeError', message: expect.stringMatching(/different slots/) });
    // Nothing of the refused calls was applied: the token is still 5, not 6 or 7.
    expect(await at(owner).get(tokenKey)).toBe('5');
    expect(await at(owner).get(`{${resource}}:summary`)).toBe('ok');
  });
});

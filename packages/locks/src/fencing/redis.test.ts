/**
 * fencedSet/fencedGet's error paths against a scripted command function (the real servers, a
 * single one and a 3-master cluster, are in test/integration/fencing): a cluster's CROSSSLOT
 * refusal becomes a RangeError that names both keys and the fix; any other error passes through
 * unchanged; NOSCRIPT still falls back to EVAL.
 */
import { describe, expect, it } from 'vitest';
import { fencedGet, fencedSet, type RedisCommand } from './redis.js';

/** A command function that answers each call with the next scripted reply (an Error rejects). */
function scripted(...replies: unknown[]): RedisCommand & { calls: string[][] } {
  const calls: string[][] = [];
  const fn = async (args: string[]) => {
    calls.push(args);
    const reply = replies.shift();
    if (reply instanceof Error) throw reply;
    return reply;
  };
  return Object.assign(fn, { calls });
}

const CROSSSLOT = "CROSSSLOT Keys in request don't hash to the same slot";

describe('fencing - redis errors', () => {
  it('CROSSSLOT (an untagged key in a cluster): a RangeError naming both keys and the tag to use, the reply as its cause, EVAL not tried', async () => {
    const redis = scripted(new Error(CROSSSLOT));
    const err = (await fencedSet(redis, { resource: 'orders', token: 3n }, 'orders-summary', 'v').catch((e: unknown) => e)) as RangeError;
    expect(err).toBeInstanceOf(RangeError);
    expect(err.message).toBe('key "orders-summary" and the token key "fencing-token:{orders}" hash to different slots of the Redis Cluster (CROSSSLOT), nothing written: tag the key with {orders}, as in "{orders}:orders-summary"');
    expect((err.cause as Error).message).toBe(CROSSSLOT);
    expect(redis.calls.map((c) => c[0])).toEqual(['EVALSHA']);
  });

  it('CROSSSLOT with an untagged tokenKey of the caller\'s, and from fencedGet: the same RangeError', async () => {
    const get = fencedGet(scripted(new Error(CROSSSLOT)), { resource: 'r', token: 1n }, 'k', { tokenKey: 'my-token' });
    await expect(get).rejects.toThrow(new RangeError('key "k" and the token key "my-token" hash to different slots of the Redis Cluster (CROSSSLOT), nothing written: give both the same hash tag'));
  });

  it('control: other errors pass through unchanged; NOSCRIPT falls back to EVAL, and a CROSSSLOT there is reported the same way', async () => {
    const other = new Error('MOVED 1234 127.0.0.1:7001');
    expect(await fencedSet(scripted(other), { resource: 'r', token: 1n }, '{r}:k', 'v').catch((e: unknown) => e)).toBe(other);
    const ok = scripted(new Error('NOSCRIPT No matching script'), [1]);
    await fencedSet(ok, { resource: 'r', token: 1n }, '{r}:k', 'v');
    expect(ok.calls.map((c) => c[0])).toEqual(['EVALSHA', 'EVAL']);
    const late = scripted(new Error('NOSCRIPT No matching script'), new Error(CROSSSLOT));
    await expect(fencedSet(late, { resource: 'r', token: 1n }, 'k', 'v')).rejects.toThrow(/CROSSSLOT\), nothing written/);
  });
});

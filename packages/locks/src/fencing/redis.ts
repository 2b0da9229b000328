/**
 * Fenced writes to Redis: one Lua script compares the writer's token with the highest recorded
 * for the resource, records it and writes, atomically (a script runs alone on the server).
 *
 * Tokens travel as canonical decimal text and are compared as text, length first: Lua's numbers
 * are doubles, exact only up to 2^53, and zxids go past that after 2^21 leader epochs.
 */
import { createHash } from 'node:crypto';
import { checkFence, type Fence } from './token.js';
import { StaleTokenError } from './stale-token-error.js';

/** What the helpers use of an ioredis client or cluster: `call(command, ...args)`. */
export interface IoredisLike {
  call(command: string, ...args: string[]): Promise<unknown>;
}

/** What the helpers use of a node-redis (v4+) client: `sendCommand(args)`. */
export interface NodeRedisLike {
  sendCommand(args: string[]): Promise<unknown>;
}

/**
 * Any other client, or a node-redis cluster, as a function that sends one command (`args[0]` is
 * its name) and resolves with the reply; `firstKey` is the key that routes it in a cluster:
 * `(args, key) => cluster.sendCommand(key, false, args)`.
 */
export type RedisCommand = (args: string[], firstKey: string) => Promise<unknown>;

/** A Redis client the fenced helpers accept: ioredis, node-redis, or a {@link RedisCommand}. */
export type RedisLike = IoredisLike | NodeRedisLike | RedisCommand;

/** Options of {@link fencedSet}. */
export interface FencedSetOptions {
  /** Expire the value after this many ms (`SET ... PX`). Default: no expiry. */
  px?: number | undefined;
  /**
   * Where the resource's highest token is kept. Default `fencing-token:{<resource>}`: its hash tag
   * is the resource, so in a Redis Cluster it shares a slot with data keys tagged `{<resource>}`.
   */
  tokenKey?: string | undefined;
}

/**
 * KEYS[1] the token key, KEYS[2] the data key; ARGV[1] the token (canonical decimal), ARGV[2] the
 * value, ARGV[3] PX in ms or '', ARGV[4] 'get' to read the data key instead of setting it.
 * Returns {1} when written, {1, value} when read, {0, highest} when refused.
 */
export const FENCED_SET_SCRIPT = `local highest = redis.call('GET', KEYS[1])
local token = ARGV[1]
if highest and (#token < #highest or (#token == #highest and token < highest)) then
  return {0, highest}
end
redis.call('SET', KEYS[1], token)
if ARGV[4] == 'get' then
  return {1, redis.call('GET', KEYS[2])}
end
if ARGV[3] ~= '' then
  redis.call('SET', KEYS[2], ARGV[2], 'PX', ARGV[3])
else
  redis.call('SET', KEYS[2], ARGV[2])
end
return {1}`;

const SCRIPT_SHA = createHash('sha1').update(FENCED_SET_SCRIPT).digest('hex');

/**
 * The hash tag of a Redis key: what a cluster hashes instead of the whole key (the text between
 * the first `{` and the next `}`, if not empty; Redis Cluster spec, "Hash tags").
 */
export function hashTag(key: string): string | undefined {
  const open = key.indexOf('{');
  if (open < 0) return undefined;
  const close = key.indexOf('}', open + 1);
  return close > open + 1 ? key.slice(open + 1, close) : undefined;
}

/** The default token key of a resource: `fencing-token:{<resource>}`. */
export function fencingTokenKey(resource: string): string {
  if (resource.includes('}')) throw new RangeError(`resource ${JSON.stringify(resource)} contains '}': it cannot be a Redis hash tag`);
  return `fencing-token:{${resource}}`;
}

/**
 * Sets `key` to `value` only if `fence.token` is at least the highest token recorded for the
 * resource, and records it, in one script; throws {@link StaleTokenError}, nothing written,
 * otherwise. Sent with EVALSHA, and with EVAL when the server answers NOSCRIPT (a restart, a
 * `SCRIPT FLUSH`, a failover). In a Redis Cluster both keys must be in one slot: tag the data key
 * with the resource (`{orders}:summary` for resource `orders`); a key tagged otherwise is refused
 * here with a RangeError, nothing sent, and an untagged one works only on a single server (a
 * cluster answers CROSSSLOT, reported as a RangeError too, nothing written).
 *
 * @example
 * ```ts
 * await fencedSet(redis, { resource: 'report', token: lease.fencingToken }, '{report}:body', text);
 * ```
 */
export async function fencedSet(redis: RedisLike, fence: Fence, key: string, value: string, options: FencedSetOptions = {}): Promise<void> {
  const px = options.px;
  if (px !== undefined && !(Number.isSafeInteger(px) && px > 0)) throw new RangeError(`px must be a positive integer of ms, not ${px}`);
  await run(redis, fence, key, [value, px === undefined ? '' : String(px), 'set'], options.tokenKey);
}

/**
 * Reads `key` only if `fence.token` is at least the highest token recorded for the resource, and
 * records it, in the same script as {@link fencedSet}; null when the key does not exist. The read
 * of a read-modify-write that spans a pause: it raises the bar at the read, so a stale holder
 * that read earlier cannot write back its copy between this read and this holder's write (a
 * plain GET would leave the bar at the stale holder's token until the new holder writes).
 *
 * @example
 * ```ts
 * const count = Number((await fencedGet(redis, fence, '{counter}:n')) ?? '0');
 * await fencedSet(redis, fence, '{counter}:n', String(count + 1));
 * ```
 */
export async function fencedGet(redis: RedisLike, fence: Fence, key: string, options: Pick<FencedSetOptions, 'tokenKey'> = {}): Promise<string | null> {
  const reply = await run(redis, fence, key, ['', '', 'get'], options.tokenKey);
  const value = reply[1];
  return value === null || value === undefined || value === false ? null : String(value);
}

/** Runs the script on `key` with ARGV[2..4] = `rest`; its reply when accepted, StaleTokenError when refused. */
async function run(redis: RedisLike, fence: Fence, key: string, rest: string[], tokenKeyOption: string | undefined): Promise<unknown[]> {
  checkFence(fence);
  const tokenKey = tokenKeyOption ?? fencingTokenKey(fence.resource);
  const tag = hashTag(key);
  if (tag !== undefined && tag !== hashTag(tokenKey)) {
    throw new RangeError(`key ${JSON.stringify(key)} is tagged {${tag}}, the token key ${JSON.stringify(tokenKey)} is not: a cluster keeps them in different slots`);
  }
  let reply: unknown;
  try {
    reply = await evalScript(redis, ['2', tokenKey, key, fence.token.toString(), ...rest]);
  } catch (err) {
    if (!(err instanceof Error && err.message.startsWith('CROSSSLOT'))) throw err;
    // A cluster refuses, before running the script, keys that hash to different slots: an untagged
    // data key (the one case not refused above, as it is fine on a single server).
    const tokenTag = hashTag(tokenKey);
    const fix = tokenTag === undefined ? 'give both the same hash tag' : `tag the key with {${tokenTag}}, as in ${JSON.stringify(`{${tokenTag}}:${key}`)}`;
    throw new RangeError(`key ${JSON.stringify(key)} and the token key ${JSON.stringify(tokenKey)} hash to different slots of the Redis Cluster (CROSSSLOT), nothing written: ${fix}`, { cause: err });
  }
  if (!Array.isArray(reply)) throw new TypeError(`unexpected reply to the fencing script: ${String(reply)}`);
  if (Number(reply[0]) === 1) return reply;
  throw new StaleTokenError(fence.resource, fence.token, BigInt(String(reply[1])));
}

/** EVALSHA, then EVAL if the server does not have the script. */
async function evalScript(redis: RedisLike, args: string[]): Promise<unknown> {
  try {
    return await send(redis, ['EVALSHA', SCRIPT_SHA, ...args]);
  } catch (err) {
    if (!(err instanceof Error && err.message.startsWith('NOSCRIPT'))) throw err;
    return await send(redis, ['EVAL', FENCED_SET_SCRIPT, ...args]);
  }
}

function send(redis: RedisLike, command: string[]): Promise<unknown> {
  if (typeof redis === 'function') return redis(command, command[3] as string);
  if (typeof (redis as IoredisLike).call === 'function') {
    const [name, ...rest] = command;
    return (redis as IoredisLike).call(name as string, ...rest);
  }
  return (redis as NodeRedisLike).sendCommand(command);
}

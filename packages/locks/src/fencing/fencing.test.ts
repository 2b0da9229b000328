import { describe, expect, it } from 'vitest';
import { MAX_FENCING_TOKEN, parseToken, checkFence } from './token.js';
import { fencingTokenKey, hashTag } from './redis.js';
import { MemoryTokenStore, checkFencingToken } from './http-guard.js';
import { StaleTokenError } from './stale-token-error.js';
import { fencingTableSql } from './postgres.js';

describe('fencing - tokens', () => {
  it('parses only canonical decimals in [0, 2^63 - 1]', () => {
    expect(parseToken('0')).toBe(0n);
    expect(parseToken('9223372036854775807')).toBe(MAX_FENCING_TOKEN);
    for (const bad of ['', '-1', '+1', '01', '1.0', ' 1', '1e3', '0x10', '9223372036854775808', '99999999999999999999']) expect(parseToken(bad), bad).toBeUndefined();
  });

  it('a fence needs a resource and a bigint token in range', () => {
    expect(() => checkFence({ resource: '', token: 1n })).toThrow(RangeError);
    expect(() => checkFence({ resource: 'r', token: 1 as unknown as bigint })).toThrow(/bigint/);
    expect(() => checkFence({ resource: 'r', token: MAX_FENCING_TOKEN + 1n })).toThrow(RangeError);
    expect(() => checkFence({ resource: 'r', token: 0n })).not.toThrow();
  });
});

describe('fencing - StaleTokenError', () => {
  it('names the resource, the refused token and the winner; instanceof across copies by brand', () => {
    const err = new StaleTokenError('orders', 4n, 9n);
    expect(err).toMatchObject({ name: 'StaleTokenError', resource: 'orders', token: 4n, highest: 9n, isRetryable: false });
    expect(err.message).toBe('stale fencing token 4 for orders: the store has accepted 9');
    const other = Object.assign(Object.create({ [Symbol.for('@zk/locks:error')]: ['StaleTokenError'] }), {}) as object;
    expect(other instanceof StaleTokenError).toBe(true);
  });
});

describe('fencing - redis keys', () => {
  it('hash tags as Redis Cluster computes them', () => {
    expect(hashTag('{user1000}.following')).toBe('user1000');
    expect(hashTag('foo{}{bar}')).toBeUndefined(); // the first {} is empty: the whole key is hashed
    expect(hashTag('foo{{bar}}zap')).toBe('{bar');
    expect(hashTag('plain')).toBeUndefined();
    expect(hashTag(fencingTokenKey('orders'))).toBe('orders');
    expect(hashTag(fencingTokenKey('a{b'))).toBe('a{b');
    expect(() => fencingTokenKey('a}b')).toThrow(RangeError);
  });
});

describe('fencing - memory token store', () => {
  it('accepts equal and higher tokens per resource, refuses lower ones with the winner', async () => {
    const store = new MemoryTokenStore();
    await checkFencingToken(store, { resource: 'a', token: 5n });
    await checkFencingToken(store, { resource: 'a', token: 5n });
    await checkFencingToken(store, { resource: 'b', token: 1n });
    await expect(checkFencingToken(store, { resource: 'a', token: 4n })).rejects.toMatchObject({ name: 'StaleTokenError', token: 4n, highest: 5n });
    expect(store.get('a')).toBe(5n);
  });
});

describe('fencing - postgres migration', () => {
  it('takes a plain [schema.]table name only', () => {
    expect(fencingTableSql('app.fences')).toMatch(/^CREATE TABLE IF NOT EXISTS app\.fences \(/);
    expect(() => fencingTableSql('x; DROP TABLE y')).toThrow(RangeError);
  });
});

describe('fencing - layers', () => {
  it('the fencing helpers import no ZooKeeper code and no driver: only each other, the error brand and Node built-ins', async () => {
    const { readdirSync, readFileSync } = await import('node:fs');
    const dir = new URL('./', import.meta.url);
    for (const name of readdirSync(dir).filter((n) => n.endsWith('.ts') && !n.endsWith('.test.ts'))) {
      const specs = [...readFileSync(new URL(name, dir), 'utf8').matchAll(/^\s*(?:import|export)[^'"]*from\s+'([^']+)'/gm)].map((m) => m[1] as string);
      expect(specs.filter((s) => !(s.startsWith('./') || s === '../internal/brand.js' || s.startsWith('node:'))), name).toEqual([]);
    }
  });
});

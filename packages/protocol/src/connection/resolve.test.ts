import { lookup as dnsLookup } from 'node:dns';
import type { LookupFunction as NetLookupFunction } from 'node:net';
import { describe, expect, it } from 'vitest';
import { ConnectionLossError } from '../errors.js';
import { resolveHost, type LookupFunction } from './resolve.js';

// The answer shapes a `lookup` may give, and what resolveHost makes of them.

function answering(...args: [Error | null, unknown, number?]): LookupFunction & { calls: number } {
  const fn = Object.assign(
    (_host: string, _options: unknown, callback: (...a: unknown[]) => void) => {
      fn.calls++;
      setImmediate(() => callback(...args));
    },
    { calls: 0 },
  );
  return fn as unknown as LookupFunction & { calls: number };
}

describe('resolve - resolveHost', () => {
  it('resolve - takes every address of a list answer, each once (IPv6 compared without case), in order', async () => {
    const lookup = answering(null, [
      { address: '10.0.0.2', family: 4 },
      { address: 'FD00::1', family: 6 },
      { address: '10.0.0.1', family: 4 },
      { address: 'fd00::1', family: 6 },
      { address: '10.0.0.2', family: 4 },
    ]);
    expect(await resolveHost('zk.local', 2181, { lookup, timeoutMs: 1000 })).toEqual(['10.0.0.2', 'FD00::1', '10.0.0.1']);
  });

  it('resolve - accepts a one-address answer, from a lookup that ignores `all`', async () => {
    expect(await resolveHost('zk.local', 2181, { lookup: answering(null, '10.0.0.9', 4), timeoutMs: 1000 })).toEqual(['10.0.0.9']);
  });

  it('resolve - an IP literal is its own answer: the resolver is not asked', async () => {
    const lookup = answering(null, ['10.9.9.9']);
    expect(await resolveHost('127.0.0.1', 2181, { lookup, timeoutMs: 1000 })).toEqual(['127.0.0.1']);
    expect(await resolveHost('::1', 2181, { lookup, timeoutMs: 1000 })).toEqual(['::1']);
    expect(lookup.calls).toBe(0);
  });

  it('resolve - an answer without an IP address, or a lookup that throws, is a ConnectionLoss naming the host', async () => {
    const empty = await resolveHost('zk.local', 2181, { lookup: answering(null, [{ address: 'not-an-ip', family: 4 }]), timeoutMs: 1000 }).catch((e: unknown) => e);
    expect(empty).toBeInstanceOf(ConnectionLossError);
    expect((empty as Error).message).toBe('could not resolve zk.local:2181: the resolver answered no address');
    const boom = new Error('resolver broke');
    const thrown = await resolveHost('zk.local', 2181, {
      lookup: () => {
        throw boom;
      },
      timeoutMs: 1000,
    }).catch((e: unknown) => e);
    expect(thrown).toMatchObject({ message: 'could not resolve zk.local:2181: resolver broke', cause: boom });
  });

  it('resolve - a late answer after the timeout is ignored', async () => {
    let late: ((err: null, a: { address: string; family: number }[]) => void) | undefined;
    const lookup: LookupFunction = (_h, _o, callback) => void (late = callback);
    await expect(resolveHost('zk.local', 2181, { lookup, timeoutMs: 20 })).rejects.toThrow('could not resolve zk.local:2181: no answer within 20 ms');
    expect(() => late?.(null, [{ address: '10.0.0.1', family: 4 }])).not.toThrow();
  });

  it("resolve - dns.lookup is a LookupFunction, and one is net.connect's `lookup` option", () => {
    const fromDns: LookupFunction = dnsLookup;
    const toNet: NetLookupFunction = fromDns;
    expect(typeof toNet).toBe('function');
  });
});

import { describe, expect, it } from 'vitest';
import { ConnectionLossError, InvalidArgumentError } from '../errors.js';
import { ServerChoice } from '../session/server-choice.js';
import { parseSrvConnectString, resolveSrvHosts, type SrvRecord, type SrvResolver } from './srv.js';

const rec = (name: string, port: number, priority = 0, weight = 0): SrvRecord => ({ name, port, priority, weight });
const answering = (records: SrvRecord[]): SrvResolver => (_name, callback) => callback(null, records);

describe('srv - the dns-srv:// connect string', () => {
  it('names the record and the chroot; other connect strings are not SRV', () => {
    expect(parseSrvConnectString('dns-srv://_zookeeper._tcp.example.com')).toEqual({ name: '_zookeeper._tcp.example.com', chroot: '' });
    expect(parseSrvConnectString('dns-srv://_zk._tcp.internal/app/x')).toEqual({ name: '_zk._tcp.internal', chroot: '/app/x' });
    expect(parseSrvConnectString('127.0.0.1:2181/app')).toBeUndefined();
    expect(parseSrvConnectString('zk1:2181,zk2:2181')).toBeUndefined();
  });

  it('refuses a record with a port, several names or none', () => {
    for (const bad of ['dns-srv://', 'dns-srv:///app', 'dns-srv://zk:2181', 'dns-srv://a,b']) {
      expect(() => parseSrvConnectString(bad), bad).toThrow(InvalidArgumentError);
    }
  });
});

describe('srv - resolving the host list', () => {
  it('takes every target with its own port, once, without the trailing dot; skips unusable records', async () => {
    const asked: string[] = [];
    const resolveSrv: SrvResolver = (name, callback) => {
      asked.push(name);
      callback(null, [rec('zk1.internal.', 2181), rec('zk2.internal', 2182, 10, 5), rec('ZK1.internal', 2181), rec('zk3.internal', 0), rec('.', 2181), rec('zk3.internal', 70000), rec('zk3.internal', 2183)]);
    };
    const hosts = await resolveSrvHosts('_zk._tcp.internal', { resolveSrv, timeoutMs: 1000 });
    expect(hosts).toEqual([{ host: 'zk1.internal', port: 2181 }, { host: 'zk2.internal', port: 2182 }, { host: 'zk3.internal', port: 2183 }]);
    expect(asked).toEqual(['_zk._tcp.internal']);
  });

  it('fails with ConnectionLoss naming the record: the resolver\'s error as cause, no usable record, no answer in time', async () => {
    const notFound = Object.assign(new Error('querySrv ENOTFOUND _zk._tcp.nowhere'), { code: 'ENOTFOUND' });
    const failed = await resolveSrvHosts('_zk._tcp.nowhere', { resolveSrv: (_n, cb) => cb(notFound, []), timeoutMs: 1000 }).catch((e: unknown) => e);
    expect(failed).toBeInstanceOf(ConnectionLossError);
    expect((failed as Error).message).toBe('could not resolve SRV _zk._tcp.nowhere: querySrv ENOTFOUND _zk._tcp.nowhere');
    expect((failed as Error).cause).toBe(notFound);
    await expect(resolveSrvHosts('_zk._tcp.empty', { resolveSrv: answering([rec('.', 0)]), timeoutMs: 1000 })).rejects.toThrow(/could not resolve SRV _zk\._tcp\.empty: the record has no usable target/);
    await expect(resolveSrvHosts('_zk._tcp.slow', { resolveSrv: () => undefined, timeoutMs: 20 })).rejects.toThrow(/no answer within 20 ms/);
    const thrower: SrvResolver = () => {
      throw new Error('broken resolver');
    };
    await expect(resolveSrvHosts('_zk._tcp.x', { resolveSrv: thrower, timeoutMs: 1000 })).rejects.toThrow(/could not resolve SRV _zk\._tcp\.x: broken resolver/);
  });

  it('an aborted lookup rejects with the signal\'s reason', async () => {
    const ac = new AbortController();
    const pending = resolveSrvHosts('_zk._tcp.x', { resolveSrv: () => undefined, timeoutMs: 10_000, signal: ac.signal });
    const reason = new Error('stop');
    ac.abort(reason);
    await expect(pending).rejects.toBe(reason);
  });
});

describe('srv - rounds over the host list (ServerChoice)', () => {
  it('a round starts when the ring wraps; a replaced ring starts over without starting a new round', () => {
    const choice = new ServerChoice([{ host: 'a', port: 1 }, { host: 'b', port: 2 }]);
    expect(choice.roundStart()).toBe(0);
    choice.next();
    expect(choice.roundStart()).toBeUndefined();
    choice.next();
    expect(choice.roundStart()).toBe(1);
    choice.replace([{ host: 'c', port: 3 }]);
    expect(choice.hosts).toEqual([{ host: 'c', port: 3 }]);
    expect(choice.roundStart()).toBe(1);
    expect(choice.next().host).toEqual({ host: 'c', port: 3 });
    expect(choice.roundStart()).toBe(2);
    // An empty answer never empties the ring.
    choice.replace([]);
    expect(choice.hosts).toEqual([{ host: 'c', port: 3 }]);
  });
});

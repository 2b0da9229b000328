import { describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '../errors.js';
import { dialOrder, endpointLabel, parseConnectString, shuffleHosts } from './hosts.js';

describe('hosts - parseConnectString', () => {
  it('parses hosts, default port and chroot', () => {
    expect(parseConnectString('a:1,b,c:3/app/x')).toEqual({
      hosts: [
        { host: 'a', port: 1 },
        { host: 'b', port: 2181 },
        { host: 'c', port: 3 },
      ],
      chroot: '/app/x',
    });
  });

  it('parses IPv6 literals with and without brackets', () => {
    expect(parseConnectString('[::1]:2182,[fe80::1],::1').hosts).toEqual([
      { host: '::1', port: 2182 },
      { host: 'fe80::1', port: 2181 },
      { host: '::1', port: 2181 },
    ]);
  });

  it('refuses a connect string with a scheme, naming the form to use (not as a bad chroot)', () => {
    for (const cs of ['zk://zk1:2181', 'zookeeper://zk1:2181/app', ' tls://a:1']) {
      expect(() => parseConnectString(cs)).toThrow(InvalidArgumentError);
      expect(() => parseConnectString(cs)).toThrow(/starts with a scheme \((zk|zookeeper|tls):\/\/\): write host:port\[,host:port\.\.\.\]\[\/chroot\] without it/);
    }
    expect(parseConnectString('zk1:2181/app').chroot).toBe('/app');
  });

  it('treats a bare / chroot as none', () => {
    expect(parseConnectString('a:1/').chroot).toBe('');
  });

  it.each(['', ' ', ',', 'a:0', 'a:65536', 'a:x', '[::1', '[::1]x', 'a:1/b/', ':1'])('refuses %j', (s) => {
    expect(() => parseConnectString(s)).toThrow(InvalidArgumentError);
  });
});

describe('hosts - shuffleHosts', () => {
  it('keeps every host and does not mutate its input', () => {
    const hosts = [1, 2, 3, 4, 5];
    let seed = 7;
    const rnd = () => ((seed = (seed * 16807) % 2147483647) / 2147483647);
    const out = shuffleHosts(hosts, rnd);
    expect(out.slice().sort()).toEqual(hosts);
    expect(hosts).toEqual([1, 2, 3, 4, 5]);
  });

  it('produces every order over many draws', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 500; i++) seen.add(shuffleHosts(['a', 'b', 'c']).join(''));
    expect(seen.size).toBe(6);
  });
});

describe('hosts - dialOrder', () => {
  const zk = { host: 'zk.local', port: 2181 };
  const addresses = ['10.0.0.1', '10.0.0.2', 'fd00::3'];

  it('hosts - dialOrder: every address once, shuffled by the random source, the host kept', () => {
    const order = dialOrder(zk, addresses, undefined, () => 0);
    expect(order.map((e) => e.address).sort()).toEqual([...addresses].sort());
    expect(order.every((e) => e.host === 'zk.local' && e.port === 2181)).toBe(true);
    expect(order.map((e) => e.address)).toEqual(shuffleHosts(addresses, () => 0));
    expect(order.map((e) => e.address)).not.toEqual(dialOrder(zk, addresses, undefined, () => 0.99).map((e) => e.address));
  });

  it('hosts - dialOrder: the address of the connection that just ended goes last', () => {
    for (const r of [0, 0.3, 0.6, 0.99]) {
      const order = dialOrder(zk, addresses, { host: 'zk.local', port: 2181, address: '10.0.0.1' }, () => r);
      expect(order.at(-1)?.address).toBe('10.0.0.1');
      expect(order).toHaveLength(3);
    }
    // another port (another server) is not that one
    const other = dialOrder(zk, addresses, { host: 'zk.local', port: 2182, address: '10.0.0.1' }, () => 0.99);
    expect(other.map((e) => e.address)).toEqual(shuffleHosts(addresses, () => 0.99));
  });

  it('hosts - endpointLabel names the host, and the address when it differs', () => {
    expect(endpointLabel({ host: 'zk.local', port: 2181, address: '10.0.0.1' })).toBe('zk.local:2181 (10.0.0.1)');
    expect(endpointLabel({ host: '10.0.0.1', port: 2181, address: '10.0.0.1' })).toBe('10.0.0.1:2181');
    expect(endpointLabel({ host: 'zk.local', port: 2181 })).toBe('zk.local:2181');
  });
});

import { describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '../errors.js';
import { parseConnectString, shuffleHosts } from './hosts.js';

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

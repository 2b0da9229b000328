import { describe, expect, it } from 'vitest';
import { canonicalizePolicy, serviceHosts, type HostResolver } from './service-host.js';

/**
 * A resolver with fixed answers that records each lookup: zk-alias.example.com is a CNAME for
 * zk1.internal.example.com (10.0.0.1), whose PTR is zk1.internal.example.com; 10.0.0.9 has no PTR.
 */
function fakeResolver(): HostResolver & { asked: string[] } {
  const cnames: Record<string, string> = { 'zk-alias.example.com': 'zk1.internal.example.com' };
  const ptrs: Record<string, string> = { '10.0.0.1': 'ZK1.Internal.Example.com' };
  const asked: string[] = [];
  return {
    asked,
    async canonicalName(host) {
      asked.push(`forward ${host}`);
      return cnames[host] ?? host;
    },
    async reverse(address) {
      asked.push(`reverse ${address}`);
      return ptrs[address];
    },
  };
}

const conf = (dnsCanonicalizeHostname: boolean | 'fallback', rdns: boolean) => ({ dnsCanonicalizeHostname, rdns });

describe('kerberos/service-host - the host of zookeeper/<host>@REALM', () => {
  it('krb5.conf dns_canonicalize_hostname = false: the name as given, lower-cased, no lookup', async () => {
    const r = fakeResolver();
    expect(await serviceHosts('ZK-Alias.example.com', '10.0.0.1', canonicalizePolicy(undefined, conf(false, true)), r)).toEqual(['zk-alias.example.com']);
    expect(r.asked).toEqual([]);
  });

  it('dns_canonicalize_hostname = true with rdns: the name the address reverse-resolves to (forward asked only when there is none)', async () => {
    const r = fakeResolver();
    expect(await serviceHosts('zk-alias.example.com', '10.0.0.1', canonicalizePolicy(undefined, conf(true, true)), r)).toEqual(['zk1.internal.example.com']);
    expect(r.asked).toEqual(['reverse 10.0.0.1']);
    const noPtr = fakeResolver();
    expect(await serviceHosts('zk-alias.example.com', '10.0.0.9', canonicalizePolicy(undefined, conf(true, true)), noPtr)).toEqual(['zk1.internal.example.com']);
    expect(noPtr.asked).toEqual(['reverse 10.0.0.9', 'forward zk-alias.example.com']);
  });

  it('dns_canonicalize_hostname = true, rdns = false: the forward lookup’s canonical name (CNAME followed), no reverse lookup', async () => {
    const r = fakeResolver();
    // The address has a PTR to another name: with rdns off it must not be used.
    expect(await serviceHosts('zk-alias.example.com', '10.0.0.1', canonicalizePolicy(undefined, conf(true, false)), r)).toEqual(['zk1.internal.example.com']);
    expect(r.asked).toEqual(['forward zk-alias.example.com']);
    // An IP address with rdns off stays the address (MIT: zookeeper/10.0.0.1).
    expect(await serviceHosts('10.0.0.1', '10.0.0.1', canonicalizePolicy(undefined, conf(true, false)), { canonicalName: async (h) => h, reverse: async () => 'never' })).toEqual(['10.0.0.1']);
  });

  it('dns_canonicalize_hostname = fallback: the name as given first, then the canonical one (one entry when they agree)', async () => {
    expect(await serviceHosts('zk-alias.example.com', '10.0.0.1', canonicalizePolicy(undefined, conf('fallback', true)), fakeResolver())).toEqual(['zk-alias.example.com', 'zk1.internal.example.com']);
    expect(await serviceHosts('zk1.internal.example.com', '10.0.0.1', canonicalizePolicy(undefined, conf('fallback', true)), fakeResolver())).toEqual(['zk1.internal.example.com']);
  });

  it('the option overrides krb5.conf: true canonicalises as the Java client (reverse lookup, the name as given when the address has none), false never looks up', async () => {
    const r = fakeResolver();
    expect(await serviceHosts('zk-alias.example.com', '10.0.0.1', canonicalizePolicy(true, conf(false, false)), r)).toEqual(['zk1.internal.example.com']);
    expect(r.asked).toEqual(['reverse 10.0.0.1']);
    // SaslServerPrincipal never uses the bare address: no PTR keeps the name given (no forward lookup).
    const noPtr = fakeResolver();
    expect(await serviceHosts('zk-alias.example.com', '10.0.0.9', canonicalizePolicy(true, conf(false, false)), noPtr)).toEqual(['zk-alias.example.com']);
    expect(noPtr.asked).toEqual(['reverse 10.0.0.9']);
    const never = fakeResolver();
    expect(await serviceHosts('zk-alias.example.com', '10.0.0.1', canonicalizePolicy(false, conf(true, true)), never)).toEqual(['zk-alias.example.com']);
    expect(never.asked).toEqual([]);
  });

  it('a failing resolver is no failure: the name as given (Java and MIT both go on without the lookup)', async () => {
    const failing: HostResolver = { canonicalName: () => Promise.reject(new Error('ESERVFAIL')), reverse: () => Promise.reject(new Error('ENOTFOUND')) };
    expect(await serviceHosts('zk-a', '10.0.0.1', canonicalizePolicy(undefined, conf(true, true)), failing)).toEqual(['zk-a']);
    expect(await serviceHosts('zk-a', '10.0.0.1', canonicalizePolicy(true, conf(true, true)), failing)).toEqual(['zk-a']);
  });
});

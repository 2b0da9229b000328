/**
 * The host part of the service principal `zookeeper/<host>@REALM`: the server's name as given,
 * or canonicalised. Two rules, by who decides:
 * - the client option `canonicalizeHostname` (Java's `zookeeper.sasl.client.canonicalize.hostname`):
 *   `true` is the Java client's SaslServerPrincipal, the name the server's address reverse-resolves
 *   to (InetAddress.getCanonicalHostName), the name as given when it has none; `false` is the name
 *   as given;
 * - without it, krb5.conf's [libdefaults] as MIT's krb5_sname_to_principal reads them:
 *   `dns_canonicalize_hostname` false (as given), true (the forward lookup's canonical name, then,
 *   with `rdns`, the name the address reverse-resolves to when it has one), or `fallback` (as given
 *   first, the canonical name when the KDC does not know the first).
 * Lower-cased, as MIT and Java both do. Lookups go through a {@link HostResolver}.
 */
import { lookupService, Resolver } from 'node:dns/promises';
import type { Krb5Config } from './krb5-conf.js';

/** The lookups canonicalisation needs (node:dns by default; tests inject their own). */
export interface HostResolver {
  /** The canonical name of `host` (the end of its CNAME chain, or itself); undefined when unknown. */
  canonicalName(host: string): Promise<string | undefined>;
  /** The name `address` reverse-resolves to; undefined when it has none. */
  reverse(address: string): Promise<string | undefined>;
}

/** Java's switch, or krb5.conf's pair. */
export type CanonicalizePolicy = { readonly java: boolean } | Pick<Krb5Config, 'dnsCanonicalizeHostname' | 'rdns'>;

/** The option when given, else krb5.conf's settings. */
export function canonicalizePolicy(option: boolean | undefined, conf: Pick<Krb5Config, 'dnsCanonicalizeHostname' | 'rdns'>): CanonicalizePolicy {
  return option === undefined ? { dnsCanonicalizeHostname: conf.dnsCanonicalizeHostname, rdns: conf.rdns } : { java: option };
}

/**
 * The service host names to try, in order (two only for `fallback`): `host` is the server's name
 * as in the connect string, `address` the address dialed for it.
 */
export async function serviceHosts(host: string, address: string, policy: CanonicalizePolicy, resolver: HostResolver): Promise<string[]> {
  const given = host.toLowerCase();
  if ('java' in policy) {
    if (!policy.java) return [given];
    // SaslServerPrincipal: getCanonicalHostName, but never the address itself.
    const name = await quietly(resolver.reverse(address));
    return [name !== undefined && name !== address ? name.toLowerCase() : given];
  }
  if (policy.dnsCanonicalizeHostname === false) return [given];
  const canonical = (await mitCanonical(host, address, policy.rdns, resolver)).toLowerCase();
  if (policy.dnsCanonicalizeHostname === 'fallback') return canonical === given ? [given] : [given, canonical];
  return [canonical];
}

async function mitCanonical(host: string, address: string, rdns: boolean, resolver: HostResolver): Promise<string> {
  if (rdns) {
    const name = await quietly(resolver.reverse(address));
    if (name !== undefined && !isIP(name)) return name;
  }
  return (await quietly(resolver.canonicalName(host))) ?? host;
}

/** An IPv4 or IPv6 address (not a name): node:net's isIP, which this layer may not import (sockets are kdc-transport.ts's). */
const isIP = (s: string): boolean => /^\d{1,3}(\.\d{1,3}){3}$/.test(s) || s.includes(':');

const quietly = <T>(p: Promise<T | undefined>): Promise<T | undefined> => p.catch(() => undefined);

/** At most this many CNAME hops (a loop in DNS must not hang a connect). */
const MAX_CNAME_HOPS = 8;

/**
 * node:dns: reverse by getnameinfo (the hosts file included, as Java's lookup), forward by
 * following CNAME records (DNS only: Node has no AI_CANONNAME), each query bounded.
 */
export function systemResolver(timeoutMs = 2000): HostResolver {
  const dns = new Resolver({ timeout: timeoutMs, tries: 1 });
  return {
    async canonicalName(host) {
      if (isIP(host)) return host;
      let name = host;
      for (let hop = 0; hop < MAX_CNAME_HOPS; hop++) {
        const next = await dns.resolveCname(name).then(
          (r) => r[0],
          () => undefined,
        );
        if (next === undefined) break;
        name = next.replace(/\.$/, '');
      }
      return name;
    },
    async reverse(address) {
      const { hostname } = await lookupService(address, 0);
      return hostname === address ? undefined : hostname;
    },
  };
}

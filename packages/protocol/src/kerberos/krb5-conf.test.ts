import { describe, expect, it } from 'vitest';
import { KerberosDecodeError } from './errors.js';
import { krb5Config, parseKdcEntry, parseProfile } from './krb5-conf.js';

const TEXT = `
# a comment
[libdefaults]
    default_realm = ZK.TEST
    dns_canonicalize_hostname = fallback
    rdns = false
    udp_preference_limit = 1
    ticket_lifetime = 24h *

; another comment
[realms]
    ZK.TEST = {
        kdc = 127.0.0.1:8888
        kdc = tcp/kdc2.zk.test
        kdc = [::1]:750
        kdc = https://kdc.zk.test/KdcProxy
        admin_server = kdc.zk.test
    }
    OTHER.TEST =
    {
        kdc = kdc.other.test
    }

[domain_realm]
    .zk.test = ZK.TEST
`;

describe('kerberos/krb5-conf - the profile format and the settings taken from it', () => {
  it('reads libdefaults and each realm’s kdc list (ports, IPv6, tcp/ prefix; proxies skipped)', () => {
    const c = krb5Config(parseProfile(TEXT));
    expect(c.defaultRealm).toBe('ZK.TEST');
    expect(c.dnsCanonicalizeHostname).toBe('fallback');
    expect(c.rdns).toBe(false);
    expect(c.udpPreferenceLimit).toBe(1);
    expect(c.clockskew).toBe(300);
    expect(c.realms.get('ZK.TEST')?.kdcs).toEqual([
      { host: '127.0.0.1', port: 8888 },
      { host: 'kdc2.zk.test', port: 88 },
      { host: '::1', port: 750 },
    ]);
    expect(c.realms.get('OTHER.TEST')?.kdcs).toEqual([{ host: 'kdc.other.test', port: 88 }]);
  });

  it('MIT defaults when libdefaults says nothing: canonicalise and rdns on', () => {
    const c = krb5Config(parseProfile('[libdefaults]\n'));
    expect([c.defaultRealm, c.dnsCanonicalizeHostname, c.rdns]).toEqual([undefined, true, true]);
  });

  it('later files add to earlier sections; malformed input is a KerberosDecodeError with its line', () => {
    const merged = parseProfile('[libdefaults]\n rdns = true\n', parseProfile('[libdefaults]\n default_realm = A.TEST\n'));
    expect(krb5Config(merged).defaultRealm).toBe('A.TEST');
    expect(() => parseProfile('[realms]\n X = {\n kdc = a\n')).toThrow(KerberosDecodeError);
    expect(() => parseProfile('default_realm = X\n')).toThrow(/line 1/);
    expect(() => parseProfile('[a]\n not a relation\n')).toThrow(/line 2/);
  });

  it('kdc entries', () => {
    expect(parseKdcEntry('udp/host:89')).toEqual({ host: 'host', port: 89 });
    expect(parseKdcEntry('https://x/y')).toBeUndefined();
  });
});

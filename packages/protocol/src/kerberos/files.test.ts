import { readFileSync } from 'node:fs';
import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import { cachedTgt, ccachePath, parseCcache } from './ccache.js';
import { stringToKey } from './crypto.js';
import { KerberosDecodeError, PreauthFailedError, TicketExpiredError } from './errors.js';
import { keysFor, parseKeytab } from './keytab.js';
import { parsePrincipal, principalText } from './principal.js';

// Fixtures made by the real MIT tools (krb5 1.20, Debian 12) for the throwaway test realm ZK.TEST:
// ktutil-alice.keytab by `ktutil addent -password` (alice@ZK.TEST, kvno 3, password "secret-Ω", all
// four AES enctypes; zookeeper/zk1.example.com@ZK.TEST at kvno 300), the ccaches by `kinit alice`
// against test/harness/kdc.ts's KDC (kinit-v3 with ccache_type = 3). No secret of any value.
const fixture = (name: string) => readFileSync(new URL(`./fixtures/${name}`, import.meta.url));

describe('kerberos/keytab - MIT keytab files', () => {
  const entries = parseKeytab(fixture('ktutil-alice.keytab'));

  it('reads every entry: principal, kvno (8- and 32-bit), enctype', () => {
    expect(entries.map((e) => `${principalText(e.principal)} ${e.kvno} ${e.key.enctype}`)).toEqual([
      'alice@ZK.TEST 3 20',
      'alice@ZK.TEST 3 19',
      'alice@ZK.TEST 3 18',
      'alice@ZK.TEST 3 17',
      'zookeeper/zk1.example.com@ZK.TEST 300 18',
    ]);
    expect(entries[4]?.principal.nameType).toBe(1);
  });

  it('ktutil’s keys are our string-to-key of the same password and default salt (an MIT cross-check of RFC 3962 and RFC 8009)', () => {
    for (const key of keysFor(entries, parsePrincipal('alice@ZK.TEST'))) {
      expect(stringToKey(key.enctype, 'secret-Ω', 'ZK.TESTalice').material().equals(key.material()), `enctype ${key.enctype}`).toBe(true);
    }
  });

  it('keysFor names what the keytab holds when the principal is missing', () => {
    expect(() => keysFor(entries, parsePrincipal('bob@ZK.TEST'), 'x.keytab')).toThrow(/x.keytab has no key for bob@ZK.TEST \(it holds: alice@ZK.TEST, zookeeper\/zk1.example.com@ZK.TEST\): give the keytab of bob@ZK.TEST/);
    // The wrong keytab, not a malformed one.
    expect(() => keysFor(entries, parsePrincipal('bob@ZK.TEST'))).toThrow(PreauthFailedError);
  });

  it('a truncated or foreign file is a KerberosDecodeError; holes are skipped', () => {
    const buf = fixture('ktutil-alice.keytab');
    expect(() => parseKeytab(buf.subarray(0, 40))).toThrow(KerberosDecodeError);
    expect(() => parseKeytab(Buffer.from('0401', 'hex'))).toThrow(/not an MIT keytab/);
    const size = buf.readInt32BE(2);
    const holed = Buffer.from(buf);
    holed.writeInt32BE(-size, 2);
    expect(parseKeytab(holed).length).toBe(4);
  });

  it('entries print without their keys', () => {
    expect(inspect(entries, { depth: 9 })).not.toMatch(/0da80127|0d a8 01 27/);
  });
});

describe('kerberos/ccache - kinit’s FILE: caches', () => {
  for (const version of [3, 4] as const) {
    it(`version ${version}: the default principal and its TGT, configuration entries skipped`, () => {
      const cache = parseCcache(fixture(`kinit-v${version}.ccache`));
      expect(cache.version).toBe(version);
      expect(principalText(cache.defaultPrincipal)).toBe('alice@ZK.TEST');
      expect(cache.credentials.map((c) => principalText(c.server))).toEqual(['krbtgt/ZK.TEST@ZK.TEST']);
      const tgt = cachedTgt(cache, cache.credentials[0]!.times.authtime.getTime());
      expect(tgt.sessionKey().enctype).toBe(20);
      expect(tgt.sessionKey().material().length).toBe(32);
      expect(tgt.ticket().realm).toBe('ZK.TEST');
      expect(tgt.times.endtime.getTime() - tgt.times.authtime.getTime()).toBe(10 * 3600_000);
      expect(inspect(tgt)).toContain('[redacted]');
    });
  }

  it('an expired TGT is TicketExpiredError saying to run kinit', () => {
    const cache = parseCcache(fixture('kinit-v4.ccache'));
    expect(() => cachedTgt(cache, Date.now() + 10 * 365 * 86_400_000)).toThrow(TicketExpiredError);
    expect(() => cachedTgt(cache, Date.now() + 10 * 365 * 86_400_000)).toThrow(/run kinit/);
  });

  it('KRB5CCNAME: FILE: and bare paths; other cache types are refused by name', () => {
    expect(ccachePath('FILE:/tmp/x')).toBe('/tmp/x');
    expect(ccachePath('/tmp/y')).toBe('/tmp/y');
    expect(() => ccachePath('KEYRING:persistent:0')).toThrow(/KEYRING/);
    expect(() => parseCcache(fixture('kinit-v4.ccache').subarray(0, 100))).toThrow(KerberosDecodeError);
  });
});

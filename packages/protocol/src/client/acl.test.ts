import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '../errors.js';
import { Perm } from '../constants.js';
import { CREATOR_ALL_ACL, digestACL, digestId, OPEN_ACL_UNSAFE, OPEN_PROVIDER, READ_ACL_UNSAFE, resolveACLProvider, validateACL, type ACL } from './acl.js';

describe('acl - digest identities', () => {
  it('matches the server formula user:base64(sha1(user:password))', () => {
    const expected = createHash('sha1').update('alice:s3cret').digest().toString('base64');
    expect(digestId('alice', 's3cret')).toEqual({ scheme: 'digest', id: `alice:${expected}` });
  });

  it('matches a digest computed by the Java DigestAuthenticationProvider', () => {
    // `java -cp zookeeper.jar org.apache.zookeeper.server.auth.DigestAuthenticationProvider super:test`
    // prints super:test->super:D/InIHSb7yEEbrWz8b9l71RjZJU= (documented in the ZooKeeper admin guide).
    expect(digestId('super', 'test').id).toBe('super:D/InIHSb7yEEbrWz8b9l71RjZJU=');
  });

  it('builds a one-entry ACL', () => {
    expect(digestACL('u', 'p', Perm.READ)).toEqual([{ perms: Perm.READ, id: digestId('u', 'p') }]);
  });
});

describe('acl - validateACL', () => {
  const world = { scheme: 'world', id: 'anyone' };
  it('accepts the well-known lists, digest, ip, sasl and x509 identities', () => {
    expect(() => validateACL(OPEN_ACL_UNSAFE)).not.toThrow();
    expect(() => validateACL(CREATOR_ALL_ACL)).not.toThrow();
    expect(() => validateACL(READ_ACL_UNSAFE)).not.toThrow();
    expect(() => validateACL(digestACL('alice', 's3cret'))).not.toThrow();
    // A SHA-256 digest (DigestAuthenticationProvider.digestAlg on 3.7+): 44 characters.
    const sha256 = createHash('sha256').update('alice:s3cret').digest('base64');
    expect(() => validateACL([{ perms: Perm.ALL, id: { scheme: 'digest', id: `alice:${sha256}` } }])).not.toThrow();
    for (const id of ['10.0.0.0/8', '127.0.0.1', '::1', 'fe80::/10', '192.168.1.7/32', '2001:db8::ff00:42:8329', '::ffff:10.0.0.1', '0.0.0.0/0']) {
      expect(() => validateACL([{ perms: Perm.READ, id: { scheme: 'ip', id } }])).not.toThrow();
    }
    expect(() => validateACL([{ perms: Perm.ALL, id: { scheme: 'sasl', id: 'bob' } }, { perms: Perm.READ | Perm.WRITE, id: { scheme: 'x509', id: 'CN=client' } }])).not.toThrow();
  });

  it('CREATOR_ALL_ACL is the auth scheme with an empty id, as Java\'s ZooDefs.Ids.CREATOR_ALL_ACL', () => {
    expect(CREATOR_ALL_ACL).toEqual([{ perms: 31, id: { scheme: 'auth', id: '' } }]);
  });

  it.each([
    [[], 'non-empty'],
    ['world:anyone', 'non-empty list'],
    [null, 'non-empty list'],
    [{ perms: 31, id: world }, 'non-empty list'],
    [[{ perms: 32, id: world }], 'perms'],
    [[{ perms: 0, id: world }], 'perms'],
    [[{ perms: -1, id: world }], 'perms'],
    [[{ perms: 1.5, id: world }], 'perms'],
    [[{ perms: '31', id: world }], 'perms'],
    [[{ perms: 1, id: { scheme: '', id: 'anyone' } }], 'scheme'],
    [[{ perms: 1 }], 'scheme'],
    [[null], 'perms'],
    [[{ perms: 1, id: { scheme: 'kerberos', id: 'bob' } }], "unknown scheme 'kerberos'"],
    [[{ perms: 1, id: { scheme: 'World', id: 'anyone' } }], "unknown scheme 'World'"],
    [[{ perms: 1, id: { scheme: 'world', id: 'everyone' } }], "one id, 'anyone'"],
    [[{ perms: 1, id: { scheme: 'digest', id: 'alice' } }], 'digest id'],
    [[{ perms: 1, id: { scheme: 'digest', id: 'alice:' } }], 'digest id'],
    [[{ perms: 1, id: { scheme: 'digest', id: ':Vy1hvv8eHfZjSqxLHLaCF/gfbN0=' } }], 'digest id'],
    [[{ perms: 1, id: { scheme: 'digest', id: 'a:b:Vy1hvv8eHfZjSqxLHLaCF/gfbN0=' } }], 'digest id'],
    [[{ perms: 1, id: { scheme: 'digest', id: 'alice:password' } }], 'digest id'],
    [[{ perms: 1, id: { scheme: 'ip', id: '10.0.0.300' } }], 'ip id'],
    [[{ perms: 1, id: { scheme: 'ip', id: '10.0.0.0/33' } }], 'ip id'],
    [[{ perms: 1, id: { scheme: 'ip', id: '10.0.0.0/' } }], 'ip id'],
    [[{ perms: 1, id: { scheme: 'ip', id: 'zk.example.com' } }], 'ip id'],
    [[{ perms: 1, id: { scheme: 'ip', id: '::g' } }], 'ip id'],
    [[{ perms: 1, id: { scheme: 'ip', id: 'fe80::1%eth0' } }], 'ip id'],
    [[{ perms: 1, id: { scheme: 'ip', id: '::1/129' } }], 'ip id'],
    [[{ perms: 1, id: { scheme: 'ip', id: '010.0.0.1' } }], 'ip id'],
    [[{ perms: 1, id: { scheme: 'sasl', id: '' } }], 'must not be empty'],
    [[{ perms: 1, id: { scheme: 'x509', id: '' } }], 'must not be empty'],
    [[{ perms: 31, id: world }, { perms: 31, id: { scheme: 'digest', id: 'nohash' } }], 'entry 1'],
  ])('refuses %j', (acl, reason) => {
    expect(() => validateACL(acl as never)).toThrow(InvalidArgumentError);
    expect(() => validateACL(acl as never)).toThrow(reason);
  });

  it('names the argument, and never repeats what follows a digest id\'s colon (it may be a password)', () => {
    const err = (() => {
      try {
        validateACL([{ perms: 31, id: { scheme: 'digest', id: 'alice:hunter2' } }], 'options.acl');
      } catch (e) {
        return e as InvalidArgumentError;
      }
      return undefined;
    })();
    expect(err?.argument).toBe('options.acl');
    expect(err?.message).toContain("'alice:...'");
    expect(err?.message).not.toContain('hunter2');
  });
});

describe('acl - the acl connect option', () => {
  it('without it, OPEN_ACL_UNSAFE everywhere', () => {
    expect(resolveACLProvider(undefined)).toBe(OPEN_PROVIDER);
    expect(OPEN_PROVIDER.default).toBe(OPEN_ACL_UNSAFE);
  });

  it('a list is validated and copied: changing the caller\'s array later changes nothing', () => {
    const mine: ACL[] = [{ perms: Perm.ALL, id: digestId('owner', 'pw') }];
    const resolved = resolveACLProvider(mine);
    mine[0] = { perms: 0, id: { scheme: 'nope', id: '' } };
    expect(resolved.default).toEqual(digestACL('owner', 'pw'));
    expect(Object.isFrozen(resolved.default) && Object.isFrozen(resolved.default[0]) && Object.isFrozen(resolved.default[0]?.id)).toBe(true);
    expect(resolved.forPath).toBeUndefined();
    expect(resolveACLProvider(CREATOR_ALL_ACL).default).toBe(CREATOR_ALL_ACL);
  });

  it('a provider keeps its forPath', () => {
    const forPath = (p: string) => (p === '/x' ? READ_ACL_UNSAFE : undefined);
    const resolved = resolveACLProvider({ default: CREATOR_ALL_ACL, forPath });
    expect(resolved).toEqual({ default: CREATOR_ALL_ACL, forPath });
  });

  it.each([
    [[], 'acl'],
    ['open', 'acl'],
    [null, 'acl'],
    [{}, 'acl.default'],
    [{ default: [{ perms: 0, id: { scheme: 'world', id: 'anyone' } }] }, 'acl.default'],
    [{ default: OPEN_ACL_UNSAFE, forPath: 'x' }, 'acl.forPath'],
  ])('refuses %j', (option, argument) => {
    try {
      resolveACLProvider(option as never);
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(InvalidArgumentError);
      expect((e as InvalidArgumentError).argument).toBe(argument);
    }
  });
});

import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '../errors.js';
import { Perm } from '../constants.js';
import { CREATOR_ALL_ACL, digestACL, digestId, OPEN_ACL_UNSAFE, validateACL } from './acl.js';

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
  it('accepts the well-known lists', () => {
    expect(() => validateACL(OPEN_ACL_UNSAFE)).not.toThrow();
    expect(() => validateACL(CREATOR_ALL_ACL)).not.toThrow();
  });

  it.each([
    [[], 'non-empty'],
    [[{ perms: 32, id: { scheme: 'world', id: 'anyone' } }], 'perms'],
    [[{ perms: -1, id: { scheme: 'world', id: 'anyone' } }], 'perms'],
    [[{ perms: 1.5, id: { scheme: 'world', id: 'anyone' } }], 'perms'],
    [[{ perms: 1, id: { scheme: '', id: 'anyone' } }], 'scheme'],
    [[{ perms: 1 }], 'scheme'],
  ])('refuses %j', (acl, reason) => {
    expect(() => validateACL(acl as never)).toThrow(InvalidArgumentError);
    expect(() => validateACL(acl as never)).toThrow(reason);
  });
});

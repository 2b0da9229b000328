import { describe, expect, it } from 'vitest';
import { CREATOR_ALL_ACL, OPEN_ACL_UNSAFE, Perm, READ_ACL_UNSAFE } from '@zk/protocol';
import { parseAcl, UsageError } from './args.js';
import { securityFromEnv } from './credentials.js';

const files: Record<string, string> = {
  '/ca.pem': 'CA PEM',
  '/cert.pem': 'CERT PEM',
  '/key.pem': 'KEY PEM',
  '/pass': 'key-passphrase\n',
  '/digest': 'alice:s3cret-pw\n',
  '/sasl': 'sasl-s3cret',
  '/etc/zk.keytab': 'KEYTAB BYTES',
  '/tmp/krb5cc_carol': 'CCACHE BYTES',
  [`/tmp/krb5cc_${process.getuid?.() ?? 0}`]: 'DEFAULT CCACHE',
};
const read = (p: string) => {
  const text = files[p];
  if (text === undefined) throw Object.assign(new Error(`ENOENT: no such file ${p}`), { code: 'ENOENT' });
  return Buffer.from(text);
};

describe('zk-lock - security from the environment', () => {
  it('nothing set: plain, no credentials', () => {
    expect(securityFromEnv({}, read)).toEqual({ options: {}, summary: 'plain, no credentials' });
  });

  it('TLS with a pinned CA, a client certificate and its passphrase; digest and SASL credentials from files', () => {
    const s = securityFromEnv(
      { ZK_TLS_CA: '/ca.pem', ZK_TLS_CERT: '/cert.pem', ZK_TLS_KEY: '/key.pem', ZK_TLS_KEY_PASSPHRASE_FILE: '/pass', ZK_TLS_SERVERNAME: 'zk.internal', ZK_DIGEST_FILE: '/digest', ZK_SASL_USER: 'bob', ZK_SASL_PASSWORD_FILE: '/sasl' },
      read,
    );
    // TLS files are read again at every connection attempt (rotation): a function of them.
    expect(typeof s.options.tls).toBe('function');
    expect(s.options.auth).toEqual([{ scheme: 'digest', auth: 'alice:s3cret-pw' }]);
    expect(s.options.sasl).toEqual({ mechanism: 'DIGEST-MD5', username: 'bob', password: 'sasl-s3cret' });
    expect(s.summary).toBe('TLS (CA pinned, client certificate, server name zk.internal), digest user alice, SASL user bob');
    // The summary (printed in errors) holds no secret.
    for (const secret of ['s3cret-pw', 'sasl-s3cret', 'key-passphrase', 'KEY PEM']) expect(s.summary).not.toContain(secret);
  });

  it('ZK_TLS=1 alone: TLS against the system CAs; ZK_TLS=0 is off', () => {
    expect(securityFromEnv({ ZK_TLS: '1' }, read)).toEqual({ options: { tls: {} }, summary: 'TLS (system CAs)' });
    expect(securityFromEnv({ ZK_TLS: '0' }, read).options.tls).toBeUndefined();
  });

  it.each([
    [{ ZK_TLS_CA: '/missing.pem' }, 'ZK_TLS_CA: cannot read /missing.pem (ENOENT)'],
    [{ ZK_TLS_CERT: '/cert.pem' }, 'ZK_TLS_CERT and ZK_TLS_KEY go together: a client certificate needs its key'],
    [{ ZK_DIGEST_FILE: '/sasl' }, 'ZK_DIGEST_FILE: /sasl must hold user:password on one line'],
    [{ ZK_SASL_USER: 'bob' }, 'ZK_SASL_USER and ZK_SASL_PASSWORD_FILE go together'],
  ])('refuses %j naming the variable, never a file’s content', (env, message) => {
    expect(() => securityFromEnv(env, read)).toThrow(new UsageError(message));
  });
});

describe('zk-lock - Kerberos from the environment (ZK_SASL_MECHANISM=GSSAPI)', () => {
  const gssapi = { ZK_SASL_MECHANISM: 'GSSAPI', KRB5_CONFIG: '/etc/krb5-zk.conf' };

  it('a principal and its keytab (the file checked readable, its content never read into the options or the summary)', () => {
    const s = securityFromEnv({ ...gssapi, ZK_KRB5_PRINCIPAL: 'carol@ZK.TEST', ZK_KRB5_KEYTAB: '/etc/zk.keytab' }, read);
    expect(s).toEqual({
      options: { sasl: { mechanism: 'GSSAPI', principal: 'carol@ZK.TEST', keytab: '/etc/zk.keytab', krb5Conf: '/etc/krb5-zk.conf' } },
      summary: 'Kerberos carol@ZK.TEST (keytab /etc/zk.keytab)',
    });
    expect(JSON.stringify(s)).not.toContain('KEYTAB BYTES');
  });

  it('a kinit ccache from KRB5CCNAME (FILE:path or a path), else the default /tmp/krb5cc_<uid>; mechanism names are case-blind', () => {
    expect(securityFromEnv({ ZK_SASL_MECHANISM: 'gssapi', KRB5CCNAME: 'FILE:/tmp/krb5cc_carol' }, read)).toEqual({ options: { sasl: { mechanism: 'GSSAPI', ccache: 'FILE:/tmp/krb5cc_carol' } }, summary: 'Kerberos (ccache /tmp/krb5cc_carol)' });
    expect(securityFromEnv({ ZK_SASL_MECHANISM: 'GSSAPI', KRB5CCNAME: '/tmp/krb5cc_carol' }, read).options.sasl).toEqual({ mechanism: 'GSSAPI', ccache: 'FILE:/tmp/krb5cc_carol' });
    const fallback = `/tmp/krb5cc_${process.getuid?.() ?? 0}`;
    expect(securityFromEnv({ ZK_SASL_MECHANISM: 'GSSAPI' }, read).options.sasl).toEqual({ mechanism: 'GSSAPI', ccache: `FILE:${fallback}` });
  });

  it('without ZK_SASL_MECHANISM, KRB5CCNAME alone asks for nothing (it is set for other programs too)', () => {
    expect(securityFromEnv({ KRB5CCNAME: 'FILE:/tmp/krb5cc_carol', KRB5_CONFIG: '/etc/krb5-zk.conf' }, read)).toEqual({ options: {}, summary: 'plain, no credentials' });
  });

  it.each([
    [{ ZK_KRB5_KEYTAB: '/etc/zk.keytab' }, 'ZK_KRB5_KEYTAB is for Kerberos: set ZK_SASL_MECHANISM=GSSAPI too'],
    [{ ZK_KRB5_PRINCIPAL: 'carol' }, 'ZK_KRB5_PRINCIPAL is for Kerberos: set ZK_SASL_MECHANISM=GSSAPI too'],
    [{ ZK_SASL_MECHANISM: 'PLAIN' }, 'ZK_SASL_MECHANISM: PLAIN is not GSSAPI (DIGEST-MD5 is chosen by ZK_SASL_USER and ZK_SASL_PASSWORD_FILE)'],
    [{ ZK_SASL_MECHANISM: 'GSSAPI', ZK_KRB5_KEYTAB: '/etc/zk.keytab' }, 'ZK_KRB5_PRINCIPAL and ZK_KRB5_KEYTAB go together (with a kinit ccache, set neither: the principal is the ccache’s)'],
    [{ ZK_SASL_MECHANISM: 'GSSAPI', ZK_KRB5_PRINCIPAL: 'carol', ZK_KRB5_KEYTAB: '/missing.keytab' }, 'ZK_KRB5_KEYTAB: cannot read /missing.keytab (ENOENT)'],
    [{ ZK_SASL_MECHANISM: 'GSSAPI', KRB5CCNAME: 'FILE:/tmp/none' }, 'KRB5CCNAME: cannot read /tmp/none (ENOENT): run kinit, or set ZK_KRB5_PRINCIPAL and ZK_KRB5_KEYTAB'],
    [{ ZK_SASL_MECHANISM: 'GSSAPI', KRB5CCNAME: 'KEYRING:persistent:1000' }, 'KRB5CCNAME: a KEYRING: cache cannot be read; use a FILE: cache (kinit -c FILE:/path)'],
    [{ ZK_SASL_MECHANISM: 'GSSAPI', KRB5CCNAME: '/tmp/krb5cc_carol', ZK_SASL_USER: 'bob', ZK_SASL_PASSWORD_FILE: '/sasl' }, 'ZK_SASL_MECHANISM=GSSAPI and ZK_SASL_USER exclude each other: one SASL identity'],
  ])('refuses %j naming the variable', (env, message) => {
    expect(() => securityFromEnv(env, read)).toThrow(new UsageError(message));
  });
});

describe('zk-lock - --acl', () => {
  it('sasl entries name a Kerberos principal whole (primary/instance@REALM)', () => {
    expect(parseAcl('sasl:zookeeper/zk1.example.com@ZK.TEST:cdrwa, sasl:carol@ZK.TEST:r')).toEqual([
      { perms: Perm.ALL, id: { scheme: 'sasl', id: 'zookeeper/zk1.example.com@ZK.TEST' } },
      { perms: Perm.READ, id: { scheme: 'sasl', id: 'carol@ZK.TEST' } },
    ]);
  });

  it('creator, world, world:r and scheme:id:perms entries, comma-separated', () => {
    expect(parseAcl('creator')).toEqual(CREATOR_ALL_ACL);
    expect(parseAcl('world')).toEqual(OPEN_ACL_UNSAFE);
    expect(parseAcl('world:r')).toEqual(READ_ACL_UNSAFE);
    expect(parseAcl('creator, digest:ops:a2V5aGFzaGtleWhhc2hrZXloYXNo:r, ip:10.0.0.0/8:cd')).toEqual([
      ...CREATOR_ALL_ACL,
      { perms: Perm.READ, id: { scheme: 'digest', id: 'ops:a2V5aGFzaGtleWhhc2hrZXloYXNo' } },
      { perms: Perm.CREATE | Perm.DELETE, id: { scheme: 'ip', id: '10.0.0.0/8' } },
    ]);
  });

  it.each(['creatr', 'digest:x', 'ip:1.2.3.4:', 'ip:1.2.3.4:rwx'])('refuses %j', (spec) => {
    expect(() => parseAcl(spec)).toThrow(UsageError);
  });

  // Issue 37 item 11: `--acl digest:owner:<password>` printed `"<password>" are not permissions`.
  it.each([
    ['digest:owner:Sup3r-S3cret', /entry 1 \(scheme "digest"\) does not end in permissions .*never the password itself/],
    ['creator, digest:owner:Sup3r-S3cret:cdrwa:Sup3r-S3cret', /entry 2 of 2 \(scheme "digest"\) does not end in permissions/],
    ['world, Sup3r-S3cret', /entry 2 of 2 is not creator, world, world:r or scheme:id:perms/],
    ['digest:Sup3r-S3cret', /entry 1 \(scheme "digest"\) is not creator/],
    ['digest:owner:Sup3r-S3cret:', /entry 1 \(scheme "digest"\) is not creator/],
  ])('refuses %j without repeating what follows the scheme (it may be a password)', (spec, message) => {
    let err: unknown;
    try {
      parseAcl(spec);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(UsageError);
    expect((err as Error).message).toMatch(message);
    expect((err as Error).message).not.toContain('Sup3r');
  });
});

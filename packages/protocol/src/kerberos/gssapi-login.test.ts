import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { KerberosLogin, loginFor } from './gssapi-login.js';
import { principalText } from './principal.js';

const dir = mkdtempSync(join(tmpdir(), 'krb5-login-'));
const conf = join(dir, 'krb5.conf');
writeFileSync(conf, '[libdefaults]\n default_realm = ZK.TEST\n[realms]\n ZK.TEST = {\n  kdc = 127.0.0.1:1\n }\n');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('kerberos/gssapi-login - the service principal and the login per options object', () => {
  it('zookeeper/<host>@<client realm> by default; the host canonicalised from the address (127.0.0.1 → localhost)', async () => {
    const login = new KerberosLogin({ mechanism: 'GSSAPI', principal: 'alice', password: 'x', krb5Conf: conf });
    expect(principalText(await login.servicePrincipal('127.0.0.1', '127.0.0.1'))).toBe('zookeeper/localhost@ZK.TEST');
  });

  it('serviceName, serviceHost, serviceRealm and canonicalizeHostname: false as the Java client’s properties', async () => {
    const named = new KerberosLogin({ mechanism: 'GSSAPI', principal: 'alice@ZK.TEST', password: 'x', krb5Conf: conf, serviceName: 'zk', serviceHost: 'ZK1.Example.COM', serviceRealm: 'OTHER.TEST' });
    expect(principalText(await named.servicePrincipal('127.0.0.1', '127.0.0.1'))).toBe('zk/zk1.example.com@OTHER.TEST');
    const plain = new KerberosLogin({ mechanism: 'GSSAPI', principal: 'alice', password: 'x', krb5Conf: conf, canonicalizeHostname: false });
    expect(principalText(await plain.servicePrincipal('zk-a.internal', '10.0.0.1'))).toBe('zookeeper/zk-a.internal@ZK.TEST');
  });

  it('one login per options object (the TGT is shared by a client’s connections)', () => {
    const options = { mechanism: 'GSSAPI' as const, principal: 'alice', password: 'x', krb5Conf: conf };
    expect(loginFor(options)).toBe(loginFor(options));
    expect(loginFor(options)).not.toBe(loginFor({ ...options }));
  });
});

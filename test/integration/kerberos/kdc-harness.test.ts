import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startKdc, type TestKdc } from '../../harness/kdc.js';

describe('kerberos harness - private KDC', () => {
  let kdc: TestKdc;
  beforeAll(async () => {
    kdc = await startKdc();
    kdc.addPrincipal('alice', { password: 'alice-pw' });
    kdc.addPrincipal('zookeeper/localhost');
  });
  afterAll(async () => {
    await kdc?.stop();
  });

  it('kinit with a password and with a keytab gets a TGT from the private realm', () => {
    const cc = kdc.kinit('alice', { password: 'alice-pw' });
    expect(kdc.run('klist', ['-c', cc])).toContain('krbtgt/ZK.TEST@ZK.TEST');
    const kt = kdc.keytab('zookeeper/localhost');
    expect(kdc.run('klist', ['-k', '-e', kt])).toContain('aes256-cts-hmac-sha384-192');
    const cc2 = kdc.kinit('zookeeper/localhost', { keytab: kt });
    expect(kdc.run('klist', ['-c', cc2])).toContain('zookeeper/localhost@ZK.TEST');
    expect(kdc.krb5Conf.startsWith(kdc.dir)).toBe(true);
  });
});

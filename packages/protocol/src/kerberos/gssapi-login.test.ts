import { createSocket } from 'node:dgram';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { KerberosLogin, loginFor } from './gssapi-login.js';
import { principalText } from './principal.js';
import type { HostResolver } from './service-host.js';

/** 127.0.0.1 and 10.0.0.1 reverse-resolve to localhost and zk1.internal; zk-alias is a CNAME of zk1.internal. */
const resolver: HostResolver = {
  canonicalName: async (host) => (host === 'zk-alias' ? 'zk1.internal' : host),
  reverse: async (address) => ({ '127.0.0.1': 'localhost', '10.0.0.1': 'zk1.internal' })[address],
};

const dir = mkdtempSync(join(tmpdir(), 'krb5-login-'));
const conf = join(dir, 'krb5.conf');
const realms = '[realms]\n ZK.TEST = {\n  kdc = 127.0.0.1:1\n }\n';
writeFileSync(conf, `[libdefaults]\n default_realm = ZK.TEST\n${realms}`);
/** krb5.conf files with the canonicalisation settings given. */
const confWith = (name: string, libdefaults: string): string => {
  const file = join(dir, name);
  writeFileSync(file, `[libdefaults]\n default_realm = ZK.TEST\n${libdefaults}\n${realms}`);
  return file;
};
const names = async (login: KerberosLogin, host: string, address: string) => (await login.servicePrincipals(host, address)).map(principalText);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('kerberos/gssapi-login - the service principal and the login per options object', () => {
  it('zookeeper/<host>@<client realm> by default; with krb5.conf silent (MIT defaults: canonicalise, rdns) the host is the name the address reverse-resolves to (127.0.0.1 → localhost)', async () => {
    const login = new KerberosLogin({ mechanism: 'GSSAPI', principal: 'alice', password: 'x', krb5Conf: conf }, resolver);
    expect(await names(login, '127.0.0.1', '127.0.0.1')).toEqual(['zookeeper/localhost@ZK.TEST']);
  });

  it('serviceName, serviceHost, serviceRealm and canonicalizeHostname: false as the Java client’s properties', async () => {
    const named = new KerberosLogin({ mechanism: 'GSSAPI', principal: 'alice@ZK.TEST', password: 'x', krb5Conf: conf, serviceName: 'zk', serviceHost: 'ZK1.Example.COM', serviceRealm: 'OTHER.TEST' }, resolver);
    expect(await names(named, '127.0.0.1', '127.0.0.1')).toEqual(['zk/zk1.example.com@OTHER.TEST']);
    const plain = new KerberosLogin({ mechanism: 'GSSAPI', principal: 'alice', password: 'x', krb5Conf: conf, canonicalizeHostname: false }, resolver);
    expect(await names(plain, 'zk-a.internal', '10.0.0.1')).toEqual(['zookeeper/zk-a.internal@ZK.TEST']);
  });

  it('krb5.conf’s dns_canonicalize_hostname and rdns decide when the option is unset; the option overrides them', async () => {
    const off = confWith('off.conf', ' dns_canonicalize_hostname = false\n rdns = true');
    const forward = confWith('forward.conf', ' dns_canonicalize_hostname = true\n rdns = false');
    const fallback = confWith('fallback.conf', ' dns_canonicalize_hostname = fallback');
    const login = (krb5Conf: string, canonicalizeHostname?: boolean) =>
      new KerberosLogin({ mechanism: 'GSSAPI', principal: 'alice', password: 'x', krb5Conf, ...(canonicalizeHostname === undefined ? {} : { canonicalizeHostname }) }, resolver);
    expect(await names(login(off), '127.0.0.1', '127.0.0.1')).toEqual(['zookeeper/127.0.0.1@ZK.TEST']);
    expect(await names(login(off, true), '127.0.0.1', '127.0.0.1')).toEqual(['zookeeper/localhost@ZK.TEST']);
    expect(await names(login(forward), 'zk-alias', '10.0.0.9')).toEqual(['zookeeper/zk1.internal@ZK.TEST']);
    expect(await names(login(forward), '127.0.0.1', '127.0.0.1')).toEqual(['zookeeper/127.0.0.1@ZK.TEST']);
    expect(await names(login(forward, false), 'zk-alias', '10.0.0.9')).toEqual(['zookeeper/zk-alias@ZK.TEST']);
    expect(await names(login(fallback), 'zk-alias', '10.0.0.1')).toEqual(['zookeeper/zk-alias@ZK.TEST', 'zookeeper/zk1.internal@ZK.TEST']);
  });

  it('one login per options object (the TGT is shared by a client’s connections)', () => {
    const options = { mechanism: 'GSSAPI' as const, principal: 'alice', password: 'x', krb5Conf: conf };
    expect(loginFor(options)).toBe(loginFor(options));
    expect(loginFor(options)).not.toBe(loginFor({ ...options }));
  });

  it('krb5.conf’s udp_preference_limit: 1 sends the AS-REQ by TCP first (as MIT), the default by UDP first', async () => {
    // A KDC on one port, TCP and UDP, that notes which way each request came: TCP closes at once
    // (so the client falls back to UDP), UDP answers a byte that is no Kerberos message.
    const seen: string[] = [];
    const udp = createSocket('udp4');
    udp.on('message', (_m, from) => {
      seen.push('udp');
      udp.send(Buffer.from([0]), from.port, from.address);
    });
    await new Promise<void>((resolve) => udp.bind(0, '127.0.0.1', resolve));
    const port = udp.address().port;
    const tcp = createServer((socket) => {
      seen.push('tcp');
      socket.destroy();
    });
    await new Promise<void>((resolve, reject) => tcp.once('error', reject).listen(port, '127.0.0.1', resolve));
    try {
      const kdcConf = (name: string, libdefaults: string) => {
        const file = join(dir, name);
        writeFileSync(file, `[libdefaults]\n default_realm = ZK.TEST\n${libdefaults}\n[realms]\n ZK.TEST = {\n  kdc = 127.0.0.1:${port}\n }\n`);
        return file;
      };
      const firstWay = async (krb5Conf: string) => {
        seen.length = 0;
        await expect(new KerberosLogin({ mechanism: 'GSSAPI', principal: 'alice', password: 'x', krb5Conf }, resolver).tgt()).rejects.toThrow();
        return [...seen];
      };
      expect(await firstWay(kdcConf('tcp.conf', ' udp_preference_limit = 1'))).toEqual(['tcp', 'udp']);
      expect(await firstWay(kdcConf('default.conf', ''))).toEqual(['udp']);
    } finally {
      udp.close();
      await new Promise((resolve) => tcp.close(resolve));
    }
  });
});

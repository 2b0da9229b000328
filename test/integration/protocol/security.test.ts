import { writeFile, mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuthFailedError, ConnectionLossError, NoAuthError, Perm, ZooKeeper } from '@zk/protocol';
import { freePorts, makeCertificate, makeClientCertificate, serverTlsProperties, startZooKeeper, type TestCertificate, type ZooKeeperEnsemble } from '../../harness/index.js';

const external = process.env.ZK_CONNECT;

describe.skipIf(external)('security - TLS to a secure client port (own server)', () => {
  let cert: TestCertificate;
  let server: ZooKeeperEnsemble;
  let securePort: number;

  beforeAll(async () => {
    cert = await makeCertificate();
    [securePort] = (await freePorts(1)) as [number];
    server = await startZooKeeper({ servers: 1, own: true, config: { secureClientPort: securePort }, systemProperties: serverTlsProperties(cert) });
  }, 120_000);

  afterAll(async () => {
    await server?.close();
  });

  it('connects over TLS with the server certificate as CA and works', async () => {
    await using zk = await ZooKeeper.connect(`127.0.0.1:${securePort}`, { tls: { ca: cert.pem, servername: 'localhost' } });
    const path = await zk.create(`/tls-${Date.now()}`, 'secret');
    expect((await zk.getData(path)).data.toString()).toBe('secret');
    const ids = await zk.whoAmI();
    expect(ids.map((i) => i.authScheme)).toContain('ip');
  });

  it('refuses a server whose certificate it does not trust, with the TLS error as cause', async () => {
    const other = await makeCertificate('elsewhere');
    const err = await ZooKeeper.connect(`127.0.0.1:${securePort}`, { tls: { ca: other.pem }, connectTimeout: 5000 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConnectionLossError);
    // ConnectionLoss -> AggregateError (one per host) -> the dial's ConnectionLoss -> the TLS error
    const attempt = ((err as Error).cause as AggregateError).errors[0] as Error;
    expect((attempt.cause as Error).message).toMatch(/certificate/i);
  });

  it('a plain client on the TLS port does not get a session', async () => {
    await expect(ZooKeeper.connect(`127.0.0.1:${securePort}`, { connectTimeout: 1500 })).rejects.toBeInstanceOf(ConnectionLossError);
  });
});

describe.skipIf(external)('security - mutual TLS: a server that requires client certificates (own server)', () => {
  let server: ZooKeeperEnsemble;
  let cert: TestCertificate;
  let client: Awaited<ReturnType<typeof makeClientCertificate>>;
  let securePort: number;

  beforeAll(async () => {
    cert = await makeCertificate();
    client = await makeClientCertificate(cert);
    [securePort] = (await freePorts(1)) as [number];
    server = await startZooKeeper({ servers: 1, own: true, config: { secureClientPort: securePort }, systemProperties: serverTlsProperties(cert, { clientAuth: 'need', truststore: client.truststore }) });
  }, 120_000);

  afterAll(async () => {
    await server?.close();
  });

  it('connects with a client certificate and is identified by it; without one it is refused', async () => {
    await using zk = await ZooKeeper.connect(`127.0.0.1:${securePort}`, { tls: { ca: cert.pem, servername: 'localhost', pfx: client.pfx, passphrase: client.passphrase } });
    expect(await zk.whoAmI()).toContainEqual({ authScheme: 'x509', user: 'CN=zk-test-client' });
    await expect(ZooKeeper.connect(`127.0.0.1:${securePort}`, { tls: { ca: cert.pem, servername: 'localhost' }, connectTimeout: 3000 })).rejects.toBeInstanceOf(ConnectionLossError);
  });
});

describe.skipIf(external)('security - SASL DIGEST-MD5 against a JAAS-configured server (own server)', () => {
  let server: ZooKeeperEnsemble;

  beforeAll(async () => {
    const dir = await mkdtemp(join(tmpdir(), 'zk-jaas-'));
    const jaas = join(dir, 'jaas.conf');
    await writeFile(jaas, 'Server {\n  org.apache.zookeeper.server.auth.DigestLoginModule required\n  user_bob="bob-secret"\n  user_ann="ann-secret";\n};\n');
    server = await startZooKeeper({
      servers: 1,
      own: true,
      config: { 'authProvider.1': 'org.apache.zookeeper.server.auth.SASLAuthenticationProvider' },
      systemProperties: { 'java.security.auth.login.config': jaas },
    });
  }, 120_000);

  afterAll(async () => {
    await server?.close();
  });

  it('authenticates, is identified as the SASL user, and passes a sasl ACL that others fail', async () => {
    await using bob = await ZooKeeper.connect(server.connectString, { sasl: { mechanism: 'DIGEST-MD5', username: 'bob', password: 'bob-secret' } });
    expect(await bob.whoAmI()).toContainEqual({ authScheme: 'sasl', user: 'bob' });
    const path = await bob.create(`/sasl-${Date.now()}`, 'mine', { acl: [{ perms: Perm.ALL, id: { scheme: 'sasl', id: 'bob' } }] });
    expect((await bob.getData(path)).data.toString()).toBe('mine');
    await using ann = await ZooKeeper.connect(server.connectString, { sasl: { mechanism: 'DIGEST-MD5', username: 'ann', password: 'ann-secret' } });
    await expect(ann.getData(path)).rejects.toBeInstanceOf(NoAuthError);
    await using anonymous = await ZooKeeper.connect(server.connectString);
    await expect(anonymous.getData(path)).rejects.toBeInstanceOf(NoAuthError);
  });

  it('fails with AuthFailed on a wrong password', async () => {
    await expect(ZooKeeper.connect(server.connectString, { sasl: { mechanism: 'DIGEST-MD5', username: 'bob', password: 'wrong' } })).rejects.toBeInstanceOf(AuthFailedError);
  });
});

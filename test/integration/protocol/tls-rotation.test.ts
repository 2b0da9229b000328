/**
 * Certificate files rotated during a session (issue 27 part 4): a client whose `tls` comes from
 * tlsFromFiles reads the files again at every reconnect, keeping its session; a client given
 * the file's contents once keeps them (control).
 */
import { mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tlsFromFiles, ZooKeeper } from '@zk/protocol';
import { freePorts, makeCertificate, serverTlsProperties, startZooKeeper, TcpProxy, waitFor, waitForState, type TestCertificate, type ZooKeeperEnsemble } from '../../harness/index.js';

const external = process.env.ZK_CONNECT;

describe.skipIf(external)('TLS - certificate files rotated during a session (own server)', () => {
  let server: ZooKeeperEnsemble;
  let cert: TestCertificate;
  let other: TestCertificate;
  let securePort: number;
  let dir: string;

  beforeAll(async () => {
    [cert, other] = await Promise.all([makeCertificate(), makeCertificate('elsewhere')]);
    [securePort] = (await freePorts(1)) as [number];
    server = await startZooKeeper({ servers: 1, own: true, config: { secureClientPort: securePort }, systemProperties: serverTlsProperties(cert) });
    dir = mkdtempSync(join(tmpdir(), 'zk-tls-rotation-'));
  }, 120_000);

  afterAll(async () => {
    await server?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  /** Replaces the CA file as a rotation does: a new file renamed over the old one. */
  const rotate = (file: string, pem: string) => {
    writeFileSync(`${file}.new`, pem);
    renameSync(`${file}.new`, file);
  };

  it('reads the CA file again at each reconnect: a wrong CA keeps it out, the right one lets it back into the same session', async () => {
    const caFile = join(dir, 'ca.pem');
    rotate(caFile, cert.pem);
    const proxy = await TcpProxy.start({ host: '127.0.0.1', port: securePort });
    try {
      await using zk = await ZooKeeper.connect(proxy.connectString, { tls: tlsFromFiles({ ca: caFile }, { servername: 'localhost' }), sessionTimeout: 20_000, connectTimeout: 2000 });
      const session = zk.sessionId;
      await using fixed = await ZooKeeper.connect(proxy.connectString, { tls: { ca: cert.pem, servername: 'localhost' }, sessionTimeout: 20_000, connectTimeout: 2000 });

      // A CA that did not sign the server's certificate: the reconnects that read it fail.
      rotate(caFile, other.pem);
      const accepted = proxy.acceptedCount;
      proxy.cut();
      await waitForState(zk, 'suspended');
      await waitFor('two reconnect attempts with the new file', () => (proxy.acceptedCount >= accepted + 3 ? true : undefined));
      expect(zk.state).toBe('suspended');
      // The control, which read the file once, came back with what it read then.
      await waitForState(fixed, 'connected');

      rotate(caFile, cert.pem);
      await waitForState(zk, 'connected');
      expect(zk.sessionId).toBe(session);
      expect(await zk.exists('/')).not.toBeNull();
    } finally {
      await proxy.close();
    }
  });
});

import { createServer, connect, type Server, type Socket } from 'node:net';
import type { LookupAddress, LookupOptions } from 'node:dns';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConnectionLossError, CreateMode, ZooKeeper, type LookupFunction } from '@zk/protocol';
import { freePorts, makeCertificate, serverTlsProperties, startZooKeeper, timing, type ServerHandle, type TestCertificate, type ZooKeeperEnsemble } from '../../harness/index.js';

// Hosts as users deploy them: one name for the whole ensemble (a Kubernetes headless service,
// round-robin DNS), whose addresses all share the connect string's port. Here the name is made
// up (zk.test) and resolved by the client's `lookup` option; each of its loopback addresses
// (127.0.0.1, .2, .3, all on one port) forwards to one server of a real 3-node ensemble.

const external = process.env.ZK_CONNECT;

/** A `lookup` whose answer the test sets, counting its calls. */
class Resolver {
  answer: string[] = [];
  calls = 0;
  readonly lookup: LookupFunction = (_name: string, options: LookupOptions, callback: (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void) => {
    this.calls++;
    const all = this.answer.map((address) => ({ address, family: 4 }));
    setImmediate(() => (options.all ? callback(null, all) : callback(null, all[0]?.address ?? '', 4)));
  };
}

/** Listens on `address:port` and pipes each connection to one server; `close()` makes the address dead. */
class Forwarder {
  readonly #server: Server;
  readonly #sockets = new Set<Socket>();
  /** Connections accepted so far. */
  accepted = 0;

  private constructor(target: ServerHandle) {
    this.#server = createServer((client) => {
      this.accepted++;
      const upstream = connect({ host: target.host, port: target.port });
      for (const s of [client, upstream]) {
        this.#sockets.add(s);
        s.on('error', () => {}).on('close', () => (this.#sockets.delete(s), client.destroy(), upstream.destroy()));
      }
      client.pipe(upstream).pipe(client);
    });
  }

  static async start(address: string, port: number, target: ServerHandle): Promise<Forwarder> {
    const f = new Forwarder(target);
    await new Promise<void>((resolve, reject) => f.#server.once('error', reject).listen(port, address, resolve));
    return f;
  }

  get port(): number {
    return (this.#server.address() as { port: number }).port;
  }

  async close(): Promise<void> {
    for (const s of this.#sockets) s.destroy();
    await new Promise((r) => this.#server.close(r));
  }
}

describe.skipIf(external)('hosts - one name for the ensemble (own 3-node ensemble)', () => {
  let ensemble: ZooKeeperEnsemble;
  const forwarders: Forwarder[] = [];
  let port: number;

  beforeAll(async () => {
    ensemble = await startZooKeeper({ servers: 3, own: true });
    for (const [i, server] of ensemble.servers.entries()) {
      const f = await Forwarder.start(`127.0.0.${i + 1}`, i === 0 ? 0 : port, server);
      port = f.port;
      forwarders.push(f);
    }
  }, 180_000);

  afterAll(async () => {
    for (const f of forwarders) await f.close().catch(() => {});
    await ensemble?.close();
  });

  it('hosts - the client connects through the name; when its server dies and the name points elsewhere, it follows and resumes its session', async () => {
    // Start on the followers' addresses: the session then survives the stop without an election.
    const leader = await ensemble.leader();
    const index = (s: ServerHandle | undefined) => ensemble.servers.findIndex((x) => x.id === s?.id);
    const followers = ensemble.servers.map((_, i) => i).filter((i) => i !== index(leader));
    const dns = new Resolver();
    dns.answer = followers.map((i) => `127.0.0.${i + 1}`);

    await using zk = await ZooKeeper.connect(`zk.test:${port}`, { lookup: dns.lookup, sessionTimeout: 10_000, connectTimeout: 3000 });
    expect(zk.server?.host).toBe('zk.test');
    expect(dns.answer).toContain(zk.server?.address);
    expect(dns.calls).toBe(1);
    const sessionId = zk.sessionId;
    const node = await zk.create(`/dns-${Date.now()}`, 'mine', { mode: CreateMode.EPHEMERAL });

    // The server the client is on goes away with its address; the name now has one other address.
    const on = Number(zk.server!.address.split('.')[3]) - 1;
    const fresh = `127.0.0.${index(leader) + 1}`;
    const states: string[] = [];
    const back = new Promise<void>((resolve) => {
      const off = zk.onStateChange((s) => {
        states.push(s);
        if (s === 'connected') (off(), resolve());
      });
    });
    const callsBefore = dns.calls;
    dns.answer = [fresh];
    await forwarders[on]!.close();
    await ensemble.servers[on]!.stop();
    await back;

    expect(states).toEqual(['suspended', 'connected']);
    expect(zk.server).toEqual({ host: 'zk.test', port, address: fresh });
    expect(dns.calls).toBeGreaterThan(callsBefore);
    expect(zk.sessionId).toBe(sessionId);
    expect((await zk.getData(node)).data.toString()).toBe('mine'); // the ephemeral node lived on: same session
  }, timing(60_000));

  it('hosts - a name that resolves to nothing reachable fails the connect naming the host and the resolver error', async () => {
    const lookup: LookupFunction = (name, _options, callback) =>
      setImmediate(() => callback(Object.assign(new Error(`getaddrinfo ENOTFOUND ${name}`), { code: 'ENOTFOUND' }), []));
    const err = await ZooKeeper.connect(`nowhere.test:${port}`, { lookup, connectTimeout: 500 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConnectionLossError);
    // Not found is definitive: one attempt, not retried for the rest of connectTimeout.
    expect((err as Error).message).toMatch(new RegExp(`^could not connect to nowhere\\.test:${port} \\(1 attempt\\): could not resolve nowhere\\.test:${port}: getaddrinfo ENOTFOUND nowhere\\.test\\. A host name did not resolve: check its spelling and this machine's DNS\\. Not retried: the host failed in a way that trying again cannot change\\.$`));
    expect((err as ConnectionLossError).isRetryable).toBe(false);
  });
});

describe.skipIf(external)('hosts - TLS to a name resolved by the client (own server)', () => {
  let cert: TestCertificate;
  let server: ZooKeeperEnsemble;
  let securePort: number;

  beforeAll(async () => {
    // The certificate names zk.test and 127.0.0.1.
    cert = await makeCertificate('zk.test');
    [securePort] = (await freePorts(1)) as [number];
    server = await startZooKeeper({ servers: 1, own: true, config: { secureClientPort: securePort }, systemProperties: serverTlsProperties(cert) });
  }, 120_000);

  afterAll(async () => {
    await server?.close();
  });

  const loopback: LookupFunction = (_name, _options, callback) => setImmediate(() => callback(null, [{ address: '127.0.0.1', family: 4 }]));

  it('hosts - TLS verifies the certificate against the name dialed through its address', async () => {
    await using zk = await ZooKeeper.connect(`zk.test:${securePort}`, { lookup: loopback, tls: { ca: cert.pem }, connectTimeout: 5000 });
    expect(zk.server).toEqual({ host: 'zk.test', port: securePort, address: '127.0.0.1' });
    expect(await zk.exists('/')).not.toBeNull();
  });

  it('hosts - TLS refuses a name the certificate does not carry, although it carries the address dialed', async () => {
    const err = await ZooKeeper.connect(`other.test:${securePort}`, { lookup: loopback, tls: { ca: cert.pem }, connectTimeout: 2000 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConnectionLossError);
    const attempt = ((err as Error).cause as AggregateError).errors[0] as Error;
    expect((attempt.cause as NodeJS.ErrnoException).code).toBe('ERR_TLS_CERT_ALTNAME_INVALID');
    expect((attempt.cause as Error).message).toContain('other.test');
  });
});

import { createServer, type Server } from 'node:net';
import type { LookupAddress, LookupOptions } from 'node:dns';
import { afterEach, describe, expect, it } from 'vitest';
import { ZooKeeper } from '../client/zookeeper.js';
import { ConnectionLossError, InvalidArgumentError } from '../errors.js';
import { Xid } from '../constants.js';
import { FAKE_SESSION_ID, FakeServer, type FakeServerOptions } from '../testing/fake-server.js';

// A host name that resolves to several addresses (a Kubernetes headless service, round-robin
// DNS) counts as all of them, and is resolved again on every round of attempts. The resolver is
// the client's `lookup` option, faked here: the test sets its answer and counts its calls.

type Answer = string[] | NodeJS.ErrnoException | 'never';

/** A `lookup` (dns.lookup's signature) whose answer the test controls. */
class FakeResolver {
  answer: Answer;
  /** The names asked, one entry per call. */
  readonly calls: string[] = [];
  /** Called at each call, before it is answered. */
  onCall: (() => void) | undefined;

  constructor(answer: Answer) {
    this.answer = answer;
  }

  readonly lookup = (hostname: string, options: LookupOptions, callback: (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void): void => {
    this.calls.push(hostname);
    this.onCall?.();
    const answer = this.answer;
    if (answer === 'never') return;
    // Asynchronous, as a real resolver is.
    setImmediate(() => {
      if (!Array.isArray(answer)) return callback(answer, []);
      const all = answer.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
      if (options.all) callback(null, all);
      else callback(null, all[0]?.address ?? '', all[0]?.family);
    });
  };
}

function notFound(name: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`getaddrinfo ENOTFOUND ${name}`), { code: 'ENOTFOUND', syscall: 'getaddrinfo', hostname: name });
}

const servers: FakeServer[] = [];
const others: Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
  await Promise.all(others.splice(0).map((s) => new Promise((r) => s.close(r))));
});

const answering: FakeServerOptions['onRequest'] = (req, conn) => {
  // Pings and closeSession (-11) answered.
  if (req.xid === Xid.ping || req.type === -11) conn.reply({ xid: req.xid, zxid: 0n, err: 0 });
};

/** Fake servers on 127.0.0.1, .2, .3 ... all on one port, as one name's addresses are. */
async function sameName(options: FakeServerOptions[]): Promise<{ port: number; servers: FakeServer[] }> {
  const out: FakeServer[] = [];
  let port = 0;
  for (const [i, o] of options.entries()) {
    const s = await FakeServer.start({ onRequest: answering, ...o, listen: { host: `127.0.0.${i + 1}`, port } });
    port = s.port;
    servers.push(s);
    out.push(s);
  }
  return { port, servers: out };
}

function connectError(connectString: string, options: Parameters<typeof ZooKeeper.connect>[1]): Promise<unknown> {
  return ZooKeeper.connect(connectString, options).then(
    async (zk) => (await zk.close(), new Error('connected')),
    (e: unknown) => e,
  );
}

describe('hosts - a name with several addresses', () => {
  it('hosts - a name with several addresses counts as all of them: the client gets in through the one that accepts', async () => {
    const { port, servers: [a, b, c] } = await sameName([{ handshake: () => 'close' }, { handshake: () => 'close' }, {}]);
    const dns = new FakeResolver(['127.0.0.1', '127.0.0.2', '127.0.0.3']);
    await using zk = await ZooKeeper.connect(`zk.test:${port}`, { lookup: dns.lookup, connectTimeout: 2000 });
    expect(zk.server).toEqual({ host: 'zk.test', port, address: '127.0.0.3' });
    expect(zk.sessionId).toBe(FAKE_SESSION_ID);
    // Within the first round: one lookup, no address dialed twice.
    expect(dns.calls).toEqual(['zk.test']);
    expect(a!.connections.length).toBeLessThanOrEqual(1);
    expect(b!.connections.length).toBeLessThanOrEqual(1);
    expect(c!.connections).toHaveLength(1);
    // The servers list keeps the name.
    expect(zk.serverList).toEqual([{ host: 'zk.test', port }]);
  });

  it('hosts - every address is dialed once per round (duplicates once), and every round asks the resolver again', async () => {
    const refuse = { handshake: () => 'close' as const };
    const { port, servers: all } = await sameName([refuse, refuse, refuse]);
    const dns = new FakeResolver(['127.0.0.1', '127.0.0.2', '127.0.0.3', '127.0.0.2']);
    const dialedAtLookup: number[][] = [];
    dns.onCall = () => dialedAtLookup.push(all.map((s) => s.connections.length));
    const err = await connectError(`zk.test:${port}`, { lookup: dns.lookup, connectTimeout: 600 });
    expect(err).toBeInstanceOf(ConnectionLossError);
    expect(dns.calls.length).toBeGreaterThan(1);
    // The k-th lookup (from 0) starts round k: by then each address was dialed k times.
    dialedAtLookup.forEach((counts, k) => expect(counts).toEqual([k, k, k]));
    // and the last round was a whole one
    expect(all.map((s) => s.connections.length)).toEqual(all.map(() => dns.calls.length));
  });

  it('hosts - the addresses are shuffled: clients spread over them', async () => {
    const { port } = await sameName([{}, {}, {}]);
    const dns = new FakeResolver(['127.0.0.1', '127.0.0.2', '127.0.0.3']);
    const used = new Set<string | undefined>();
    for (let i = 0; i < 20; i++) {
      await using zk = await ZooKeeper.connect(`zk.test:${port}`, { lookup: dns.lookup, connectTimeout: 2000 });
      used.add(zk.server?.address);
    }
    // All 20 on one address: probability 3 x 3^-20.
    expect(used.size).toBeGreaterThan(1);
  });

  it('hosts - a reconnect resolves the name again and follows a changed answer; the session resumes there', async () => {
    const { port, servers: [a, b] } = await sameName([{}, {}]);
    const dns = new FakeResolver(['127.0.0.1']);
    await using zk = await ZooKeeper.connect(`zk.test:${port}`, { lookup: dns.lookup, sessionTimeout: 10_000, connectTimeout: 1000 });
    expect(zk.server?.address).toBe('127.0.0.1');
    expect(dns.calls).toHaveLength(1);
    const states: string[] = [];
    const back = new Promise<void>((resolve) => {
      const off = zk.onStateChange((s) => {
        states.push(s);
        if (s === 'connected') (off(), resolve());
      });
    });
    // The server is replaced: the old address is dead, the name now points elsewhere.
    dns.answer = ['127.0.0.2'];
    await a!.close();
    await back;
    expect(states).toEqual(['suspended', 'connected']);
    expect(zk.server).toEqual({ host: 'zk.test', port, address: '127.0.0.2' });
    expect(dns.calls.length).toBeGreaterThanOrEqual(2);
    expect(zk.sessionId).toBe(FAKE_SESSION_ID);
    expect(b!.connections.at(-1)!.connectRequest!.sessionId).toBe(FAKE_SESSION_ID);
  });
});

describe('hosts - resolver failures', () => {
  it('hosts - a name that does not resolve: the connect fails in one round naming the host and the DNS error, not retryable', async () => {
    const dns = new FakeResolver(notFound('zk.test'));
    const err = (await connectError('zk.test:2181', { lookup: dns.lookup, connectTimeout: 60_000 })) as ConnectionLossError;
    expect(err).toBeInstanceOf(ConnectionLossError);
    expect(err.message).toBe("could not connect to zk.test:2181 (1 attempt): could not resolve zk.test:2181: getaddrinfo ENOTFOUND zk.test. A host name did not resolve: check its spelling and this machine's DNS. Not retried: the host failed in a way that trying again cannot change.");
    expect(err.isRetryable).toBe(false);
    expect(dns.calls).toHaveLength(1);
    const attempt = (err.cause as AggregateError).errors[0] as Error;
    expect((attempt.cause as NodeJS.ErrnoException).code).toBe('ENOTFOUND');
  });

  it('hosts - a name that does not resolve is skipped for the round; literal addresses never go to the resolver', async () => {
    const s = await FakeServer.start({ onRequest: answering });
    servers.push(s);
    const dns = new FakeResolver(notFound('gone.test'));
    await using zk = await ZooKeeper.connect(`gone.test:${s.port},127.0.0.1:${s.port}`, { lookup: dns.lookup, connectTimeout: 2000 });
    expect(zk.server).toEqual({ host: '127.0.0.1', port: s.port, address: '127.0.0.1' });
    expect(dns.calls.every((name) => name === 'gone.test')).toBe(true);
  });

  it('hosts - a resolver that never answers is bounded by connectTimeout', async () => {
    const dns = new FakeResolver('never');
    const started = performance.now();
    const err = (await connectError('zk.test:2181', { lookup: dns.lookup, connectTimeout: 300 })) as ConnectionLossError;
    expect(err).toBeInstanceOf(ConnectionLossError);
    expect(err.message).toMatch(/could not resolve zk\.test:2181: no answer within 300 ms/);
    expect(performance.now() - started).toBeLessThan(3000);
  });

  it('hosts - a resolver that never answers is abandoned when the connect is aborted', async () => {
    const dns = new FakeResolver('never');
    const abort = new AbortController();
    dns.onCall = () => setImmediate(() => abort.abort(new Error('given up')));
    const err = await connectError('zk.test:2181', { lookup: dns.lookup, connectTimeout: 60_000, signal: abort.signal });
    expect(err).toMatchObject({ message: 'given up' });
  });

  it('hosts - a lookup option that is not a function is refused before anything is dialed', async () => {
    await expect(ZooKeeper.connect('zk.test:2181', { lookup: 'dns' as never })).rejects.toBeInstanceOf(InvalidArgumentError);
  });
});

describe('hosts - TLS to a resolved address', () => {
  it('hosts - the TLS handshake names the host (SNI), not the address dialed', async () => {
    const hellos: Buffer[] = [];
    const server = createServer((socket) => {
      socket.once('data', (chunk: Buffer) => (hellos.push(chunk), socket.destroy()));
      socket.on('error', () => {});
    });
    others.push(server);
    await new Promise<void>((r) => server.listen(0, '127.0.0.2', r));
    const { port } = server.address() as { port: number };
    const dns = new FakeResolver(['127.0.0.2']);
    await connectError(`zk.test:${port}`, { lookup: dns.lookup, tls: {}, connectTimeout: 300 });
    expect(hellos.length).toBeGreaterThan(0);
    // The ClientHello carries server_name in clear.
    expect(hellos[0]!.includes(Buffer.from('zk.test'))).toBe(true);
  });
});

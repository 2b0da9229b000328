import { createServer as createHttpServer } from 'node:http';
import type { LookupAddress, LookupOptions } from 'node:dns';
import { createServer, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { ConnectionLossError, DecodeError } from '../errors.js';
import { Bytes } from '../testing/bytes.js';
import { FakeServer } from '../testing/fake-server.js';
import { ZooKeeper } from './zookeeper.js';

// Servers that are not ZooKeeper, or not well: what a failed connect reports about them.

const servers: Server[] = [];
const sockets: Socket[] = [];
afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy();
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))));
});

/** A loopback server running `onConnection` for each client; resolves with its port. */
async function serve(onConnection: (socket: Socket) => void): Promise<number> {
  const server = createServer((socket) => {
    socket.on('error', () => {});
    sockets.push(socket);
    onConnection(socket);
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return (server.address() as { port: number }).port;
}

/** A port nothing listens on (bound by the OS, then released). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  await new Promise((r) => server.close(r));
  return port;
}

async function connectError(connectString: string, connectTimeout = 300, options: Parameters<typeof ZooKeeper.connect>[1] = {}): Promise<ConnectionLossError> {
  const err = await ZooKeeper.connect(connectString, { ...options, connectTimeout }).then(
    (zk) => (void zk.close(), new Error('connected')),
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ConnectionLossError);
  return err as ConnectionLossError;
}

function distinctCauses(err: Error): Error[] {
  expect(err.cause).toBeInstanceOf(AggregateError);
  return (err.cause as AggregateError).errors as Error[];
}

describe('connect errors - a port that another service answers', () => {
  it('connect errors - an HTTP server: "not a ZooKeeper server (it answered like HTTP)"', async () => {
    const port = await serve((s) => s.once('data', () => s.end('HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n')));
    const err = await connectError(`127.0.0.1:${port}`);
    expect(err.message).toContain(`handshake with 127.0.0.1:${port} failed: not a ZooKeeper server (it answered like HTTP: "HTTP/1.1 400 Bad Request")`);
    expect(err.message).not.toMatch(/exceeds the limit/);
    expect(distinctCauses(err)[0]?.cause).toBeInstanceOf(DecodeError);
  });

  it('connect errors - an SSH server, which sends its banner before we send anything', async () => {
    // The banner goes out on accept; the "server" never reads what the client sends.
    const port = await serve((s) => s.write('SSH-2.0-OpenSSH_9.6p1 Ubuntu-3ubuntu13.5\r\n'));
    const err = await connectError(`127.0.0.1:${port}`);
    expect(err.message).toContain('not a ZooKeeper server (it answered like SSH: "SSH-2.0-OpenSSH_9.6p1 Ubuntu-3ubuntu13.5")');
  });

  it('connect errors - a TLS server answering our plain bytes with an alert record', async () => {
    // Alert, TLS 1.2 record version, length 2: fatal (2), protocol_version (70).
    const port = await serve((s) => s.once('data', () => s.end(Buffer.from([0x15, 0x03, 0x03, 0x00, 0x02, 0x02, 0x46]))));
    const err = await connectError(`127.0.0.1:${port}`);
    expect(err.message).toContain('not a ZooKeeper server (it answered like TLS)');
  });
});

describe('connect errors - an undecodable handshake reply', () => {
  it('connect errors - 16 bytes of garbage are a decode error (ConnectionLoss, cause DecodeError), not UNKNOWN(<n>)', async () => {
    const garbage = Buffer.from('0123456789abget!', 'latin1');
    const port = await serve((s) => s.once('data', () => s.write(new Bytes().int(garbage.length).raw(garbage).build())));
    const err = await connectError(`127.0.0.1:${port}`);
    expect(err.message).toContain("the server's handshake reply could not be decoded");
    expect(err.message).not.toMatch(/UNKNOWN\(/);
    expect(err.isRetryable).toBe(true);
    const attempt = distinctCauses(err)[0] as ConnectionLossError;
    expect(attempt).toBeInstanceOf(ConnectionLossError);
    expect(attempt.cause).toBeInstanceOf(DecodeError);
  });
});

describe('connect errors - the error of a failed connect is short', () => {
  it('connect errors - a refused port: the host, the attempts and the one distinct cause, once', async () => {
    const port = await closedPort();
    const err = await connectError(`127.0.0.1:${port}`, 600);
    const m = /^could not connect to 127\.0\.0\.1:(\d+) \((\d+) attempts\): connect ECONNREFUSED 127\.0\.0\.1:(\d+)\. Nothing accepted the connection: is ZooKeeper running at 127\.0\.0\.1:\1\?$/.exec(err.message);
    expect(m, err.message).not.toBeNull();
    expect(Number(m?.[1])).toBe(port);
    expect(Number(m?.[2])).toBeGreaterThan(1);
    const causes = distinctCauses(err);
    expect(causes).toHaveLength(1);
    expect((causes[0]?.cause as NodeJS.ErrnoException).code).toBe('ECONNREFUSED');
    expect(err.op).toBe('connect');
  });

  it('connect errors - two hosts failing differently: both named, each distinct cause once', async () => {
    const refused = await closedPort();
    const http = await serve((s) => s.once('data', () => s.end('HTTP/1.0 404 Not Found\r\n\r\n')));
    const err = await connectError(`127.0.0.1:${refused},127.0.0.1:${http}`, 600);
    expect(err.message).toMatch(new RegExp(`^could not connect to 127\\.0\\.0\\.1:${refused}, 127\\.0\\.0\\.1:${http} \\(\\d+ attempts\\): `));
    expect(err.message).toContain(`connect ECONNREFUSED 127.0.0.1:${refused}`);
    expect(err.message).toContain('it answered like HTTP: "HTTP/1.0 404 Not Found"');
    expect(distinctCauses(err)).toHaveLength(2);
  });
});

describe('connect errors - a definitive failure is not retried for the whole connectTimeout', () => {
  /** A connect that must end within one round: a connectTimeout far longer than the test may take. */
  const LONG = 60_000;

  async function definitiveError(connectString: string, options: { lookup?: typeof nxLookup } = {}): Promise<{ err: ConnectionLossError; ms: number }> {
    const started = performance.now();
    const err = await connectError(connectString, LONG, options);
    return { err, ms: performance.now() - started };
  }

  /** A resolver that knows no name, as dns.lookup answers for a name that does not exist. */
  function nxLookup(hostname: string, _options: LookupOptions, callback: (err: NodeJS.ErrnoException | null, address: string | LookupAddress[]) => void): void {
    const err: NodeJS.ErrnoException = new Error(`getaddrinfo ENOTFOUND ${hostname}`);
    err.code = 'ENOTFOUND';
    setImmediate(() => callback(err, []));
  }

  it('connect errors - an HTTP server (node:http): one attempt, not retryable', async () => {
    const http = createHttpServer((_req, res) => res.end('hello'));
    servers.push(http as unknown as Server);
    await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
    const { port } = http.address() as { port: number };
    const { err, ms } = await definitiveError(`127.0.0.1:${port}`);
    expect(err.message).toMatch(new RegExp(`^could not connect to 127\\.0\\.0\\.1:${port} \\(1 attempt\\): handshake with 127\\.0\\.0\\.1:${port} failed: not a ZooKeeper server \\(it answered like HTTP: "HTTP/1\\.1 400 Bad Request"\\)`));
    expect(err.message).toContain('Not retried');
    expect(err.isRetryable).toBe(false);
    expect(ms).toBeLessThan(LONG / 10);
  });

  it('connect errors - an SSH banner on every host: one round, not retryable', async () => {
    const ssh = () => serve((s) => s.write('SSH-2.0-OpenSSH_9.6p1\r\n'));
    const [a, b] = await Promise.all([ssh(), ssh()]);
    const { err, ms } = await definitiveError(`127.0.0.1:${a},127.0.0.1:${b}`);
    expect(err.message).toMatch(/\(2 attempts\)/);
    expect(err.message).toContain('not a ZooKeeper server (it answered like SSH: "SSH-2.0-OpenSSH_9.6p1")');
    expect(err.isRetryable).toBe(false);
    expect(ms).toBeLessThan(LONG / 10);
  });

  it('connect errors - ENOTFOUND for every host: one round, not retryable, no repository advice', async () => {
    const { err, ms } = await definitiveError('zk1.example.invalid:2181,zk2.example.invalid:2181', { lookup: nxLookup });
    // The hosts are tried in shuffled order: either may be quoted first.
    expect(err.message).toMatch(/^could not connect to zk1\.example\.invalid:2181, zk2\.example\.invalid:2181 \(2 attempts\): could not resolve zk[12]\.example\.invalid:2181: getaddrinfo ENOTFOUND/);
    expect(err.message).toContain('A host name did not resolve');
    expect(err.message).not.toMatch(/npm run|checkout/);
    expect(err.isRetryable).toBe(false);
    expect(ms).toBeLessThan(LONG / 10);
  });

  it('connect errors - one host not ZooKeeper, the other refusing: the refusing one is tried again until it serves', async () => {
    const refused = await closedPort();
    let httpHits = 0;
    let zookeeper: Promise<FakeServer> | undefined;
    const http = await serve((s) =>
      s.once('data', () => {
        s.end('HTTP/1.1 400 Bad Request\r\n\r\n');
        // After two rounds, ZooKeeper starts on the refusing port.
        if (++httpHits === 2) zookeeper = FakeServer.start({ listen: { port: refused } });
      }),
    );
    try {
      await using zk = await ZooKeeper.connect(`127.0.0.1:${http},127.0.0.1:${refused}`, { connectTimeout: LONG });
      expect(zk.server?.port).toBe(refused);
      expect(httpHits).toBeGreaterThanOrEqual(2);
    } finally {
      await (await zookeeper)?.close();
    }
  });

  it('connect errors - one host not ZooKeeper, the other refusing to the end: retryable, every round tried', async () => {
    const refused = await closedPort();
    const http = await serve((s) => s.once('data', () => s.end('HTTP/1.1 400 Bad Request\r\n\r\n')));
    const err = await connectError(`127.0.0.1:${http},127.0.0.1:${refused}`, 600);
    expect(Number(/\((\d+) attempts\)/.exec(err.message)?.[1])).toBeGreaterThan(2);
    expect(err.message).not.toContain('Not retried');
    expect(err.isRetryable).toBe(true);
  });
});

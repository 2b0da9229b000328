import { createServer, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { ConnectionLossError, DecodeError } from '../errors.js';
import { Bytes } from '../testing/bytes.js';
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

async function connectError(connectString: string, connectTimeout = 300): Promise<ConnectionLossError> {
  const err = await ZooKeeper.connect(connectString, { connectTimeout }).then(
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
    const m = /^could not connect to 127\.0\.0\.1:(\d+) \((\d+) attempts\): connect ECONNREFUSED 127\.0\.0\.1:(\d+)\. Nothing accepted the connection: is ZooKeeper running at 127\.0\.0\.1:\1\? \(In a checkout of this project, `npm run zk -- start` starts one on 127\.0\.0\.1:2181\.\)$/.exec(err.message);
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

import { createServer, Socket, type Server, type Socket as ServerSocket } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ConnectionLossError } from '../errors.js';
import { dial, type Transport } from './transport.js';

/** A loopback server that records what each peer sends. */
async function listen(): Promise<{ server: Server; port: number; peer: Promise<{ socket: ServerSocket; bytes: () => Buffer; ended: Promise<void> }> }> {
  let gotPeer!: (p: { socket: ServerSocket; bytes: () => Buffer; ended: Promise<void> }) => void;
  const peer = new Promise<{ socket: ServerSocket; bytes: () => Buffer; ended: Promise<void> }>((r) => (gotPeer = r));
  const server = createServer((socket) => {
    const chunks: Buffer[] = [];
    socket.on('data', (c: Buffer) => chunks.push(c));
    const ended = new Promise<void>((r) => socket.once('end', () => r()));
    gotPeer({ socket, bytes: () => Buffer.concat(chunks), ended });
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return { server, port: address.port, peer };
}

const servers: Server[] = [];
const transports: Transport[] = [];

afterEach(async () => {
  vi.restoreAllMocks();
  for (const t of transports.splice(0)) t.destroy();
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))));
});

async function connected() {
  const l = await listen();
  const t = await dial({ host: '127.0.0.1', port: l.port, connectTimeout: 2000 });
  transports.push(t);
  return { t, peer: await l.peer };
}

function frames(n: number, size: number): Buffer[] {
  return Array.from({ length: n }, (_, i) => Buffer.alloc(size, i % 251));
}

async function until(check: () => boolean): Promise<void> {
  while (!check()) await new Promise((r) => setImmediate(r));
}

describe('transport - writes', () => {
  it('transport - writes made in one tick leave in one socket write, in order', async () => {
    const { t, peer } = await connected();
    const write = vi.spyOn(Socket.prototype, 'write');
    const sent = frames(100, 30);
    for (const f of sent) t.write(f);
    expect(write).not.toHaveBeenCalled();
    await new Promise((r) => process.nextTick(r));
    expect(write).toHaveBeenCalledTimes(1);
    const expected = Buffer.concat(sent);
    await until(() => peer.bytes().length >= expected.length);
    expect(peer.bytes()).toEqual(expected);
  });

  it('transport - a batch over 64 KiB arrives intact and in order', async () => {
    const { t, peer } = await connected();
    const sent = frames(300, 1000);
    for (const f of sent) t.write(f);
    const expected = Buffer.concat(sent);
    await until(() => peer.bytes().length >= expected.length);
    expect(peer.bytes()).toEqual(expected);
  });

  it('transport - end() sends what is queued, then half-closes', async () => {
    const { t, peer } = await connected();
    t.write(Buffer.from('abc'));
    t.write(Buffer.from('def'));
    t.end();
    await peer.ended;
    expect(peer.bytes().toString()).toBe('abcdef');
  });
});

describe('transport - data and close', () => {
  it('transport - incoming chunks reach the current data handler; a close by the peer is reported once, without error', async () => {
    const { t, peer } = await connected();
    const got: Buffer[] = [];
    t.onData((c) => got.push(c));
    const closes: Array<Error | undefined> = [];
    const closed = new Promise<void>((r) => t.onClose((e) => (closes.push(e), r())));
    peer.socket.write(Buffer.from('hello'));
    await until(() => Buffer.concat(got).length >= 5);
    expect(Buffer.concat(got).toString()).toBe('hello');
    peer.socket.end();
    await closed;
    expect(closes).toEqual([undefined]);
  });

  it('transport - a reset reports its error; a close handler set afterwards still hears about it', async () => {
    const { t, peer } = await connected();
    const first = new Promise<Error | undefined>((r) => t.onClose(r));
    peer.socket.resetAndDestroy();
    const err = await first;
    expect(err).toBeInstanceOf(Error);
    expect((err as NodeJS.ErrnoException).code).toBe('ECONNRESET');
    const late = await new Promise<Error | undefined>((r) => t.onClose(r));
    expect(late).toBe(err);
  });
});

describe('transport - dial', () => {
  it('transport - a refused connection rejects with ConnectionLossError carrying the socket error', async () => {
    const l = await listen();
    await new Promise((r) => l.server.close(r));
    const err = await dial({ host: '127.0.0.1', port: l.port, connectTimeout: 2000 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConnectionLossError);
    expect(((err as Error).cause as NodeJS.ErrnoException).code).toBe('ECONNREFUSED');
  });

  it('transport - an aborted signal rejects with its reason', async () => {
    const l = await listen();
    const reason = new Error('stop');
    await expect(dial({ host: '127.0.0.1', port: l.port, connectTimeout: 2000, signal: AbortSignal.abort(reason) })).rejects.toBe(reason);
  });
});

/**
 * One deferral per request at one outstanding (issue 26): a watch-less read that may be batched
 * waits for the end of its tick, then leaves through Transport.writeNow at once, instead of
 * being queued for one more tick by Transport.write.
 */
import { createServer, Socket, type Server } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { OpCode } from '../constants.js';
import type { JuteReader } from '../jute/reader.js';
import { bytes } from '../testing/bytes.js';
import { replyFrame } from '../testing/fake-server.js';
import { Connection, type ConnectionOptions } from './connection.js';
import { dial, type Transport } from './transport.js';

const connections: Connection[] = [];
const servers: Server[] = [];
afterEach(async () => {
  vi.restoreAllMocks();
  for (const c of connections.splice(0)) c.destroy();
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))));
});

const tick = () => new Promise<void>((r) => process.nextTick(r));
const handshakeReply = bytes().int(0).int(5000).long(9n).buf(Buffer.alloc(16)).bool(false).frame();

/** An in-memory transport answering the handshake, recording how each frame was handed over. */
function recording(withWriteNow: boolean) {
  let data: (chunk: Buffer) => void = () => {};
  const calls: Array<{ how: 'write' | 'writeNow'; xid: number }> = [];
  let handshook = false;
  const take = (how: 'write' | 'writeNow') => (b: Buffer) => {
    if (!handshook) {
      handshook = true;
      setImmediate(() => data(handshakeReply));
      return;
    }
    calls.push({ how, xid: b.readInt32BE(4) });
  };
  const transport: Transport = {
    write: take('write'),
    ...(withWriteNow ? { writeNow: take('writeNow') } : {}),
    onData: (cb) => (data = cb),
    onClose: () => {},
    end: () => {},
    destroy: () => {},
  };
  return { transport, calls, feed: (chunk: Buffer) => data(chunk) };
}

async function open(transport: Transport, coalesceReads: ConnectionOptions['coalesceReads']): Promise<Connection> {
  const events = { notification: () => {}, close: () => {} };
  const conn = await Connection.open({ host: 'fake', port: 1, sessionTimeout: 5000, connectTimeout: 1000, coalesceReads, dial: async () => transport }, events);
  connections.push(conn);
  return conn;
}

const read = (conn: Connection, path: string) =>
  conn.request(OpCode.getData, (w) => w.writeUString(path).writeBool(false), (r: JuteReader) => r.readBuffer(), { coalesce: true });

describe('connection - a lone batchable read', () => {
  for (const mode of ['probe', true] as const) {
    it(`connection - coalesceReads ${String(mode)}: a lone read leaves through writeNow at the end of its tick, and is answered`, async () => {
      const t = recording(true);
      const conn = await open(t.transport, mode);
      const reply = read(conn, '/a');
      expect(t.calls).toEqual([]); // held for the tick's other reads
      await tick();
      expect(t.calls).toEqual([{ how: 'writeNow', xid: 1 }]);
      t.feed(replyFrame({ xid: 1, zxid: 5n, err: 0, body: bytes().buf(Buffer.from('x')).build() }));
      expect((await reply).body).toEqual(Buffer.from('x'));
    });
  }

  it('connection - a read after a plain request in the same tick: both handed over in order, the read last and at once', async () => {
    const t = recording(true);
    const conn = await open(t.transport, 'probe');
    void conn.request(OpCode.exists, (w) => w.writeUString('/e').writeBool(false), undefined).catch(() => {});
    void read(conn, '/a').catch(() => {});
    await tick();
    expect(t.calls).toEqual([
      { how: 'write', xid: 1 },
      { how: 'writeNow', xid: 2 },
    ]);
  });

  it('connection - a transport without writeNow gets the read through write', async () => {
    const t = recording(false);
    const conn = await open(t.transport, 'probe');
    void read(conn, '/a').catch(() => {});
    await tick();
    expect(t.calls).toEqual([{ how: 'write', xid: 1 }]);
  });
});

describe('transport - writeNow', () => {
  async function connected() {
    const chunks: Buffer[] = [];
    const server = createServer((s) => s.on('data', (c: Buffer) => chunks.push(c)));
    servers.push(server);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as { port: number }).port;
    const t = await dial({ host: '127.0.0.1', port, connectTimeout: 2000 });
    return { t, received: () => Buffer.concat(chunks) };
  }

  it('transport - writeNow sends what this tick queued and its own bytes in one socket write, at once', async () => {
    const { t, received } = await connected();
    try {
      const write = vi.spyOn(Socket.prototype, 'write');
      t.write(Buffer.from('ab'));
      t.write(Buffer.from('cd'));
      t.writeNow!(Buffer.from('ef'));
      expect(write).toHaveBeenCalledTimes(1);
      await tick(); // the tick's flush finds nothing left
      expect(write).toHaveBeenCalledTimes(1);
      t.writeNow!(Buffer.from('gh')); // nothing queued: straight to the socket
      expect(write).toHaveBeenCalledTimes(2);
      while (received().length < 8) await new Promise((r) => setImmediate(r));
      expect(received().toString()).toBe('abcdefgh');
    } finally {
      t.destroy();
    }
  });
});

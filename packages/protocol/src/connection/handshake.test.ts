import { afterEach, describe, expect, it, vi } from 'vitest';
import { DecodeError, NotReadOnlyError, PacketTooLargeError, SessionExpiredError, ZooKeeperError } from '../errors.js';
import { Bytes } from '../testing/bytes.js';
import { decodeConnectResponse, encodeConnectRequest, exchangeHandshake } from './handshake.js';
import type { Transport } from './transport.js';

/** ConnectResponse payload built by hand: protocolVersion, timeOut, sessionId, passwd, then the optional flag. */
function response(timeOut: number, sessionId: bigint, passwd: Buffer = Buffer.alloc(16, 3), readOnly: boolean | null = false): Buffer {
  const b = new Bytes().int(0).int(timeOut).long(sessionId).buf(passwd);
  if (readOnly !== null) b.bool(readOnly);
  return b.build();
}

function framed(payload: Buffer): Buffer {
  return new Bytes().int(payload.length).raw(payload).build();
}

/** An in-memory transport: records writes, lets the test feed chunks and close it. */
class FakeTransport implements Transport {
  written: Buffer[] = [];
  destroyed = false;
  #data: (chunk: Buffer) => void = () => {};
  #close: ((err: Error | undefined) => void) | undefined;
  write(bytes: Buffer): void {
    this.written.push(bytes);
  }
  onData(cb: (chunk: Buffer) => void): void {
    this.#data = cb;
  }
  onClose(cb: (err: Error | undefined) => void): void {
    this.#close = cb;
  }
  end(): void {}
  destroy(): void {
    this.destroyed = true;
  }
  feed(chunk: Buffer): void {
    this.#data(chunk);
  }
  close(err?: Error): void {
    this.#close?.(err);
  }
}

afterEach(() => {
  vi.useRealTimers();
});

describe('handshake - encodeConnectRequest', () => {
  it('handshake - a new session is protocol 0, zxid, timeout, session 0, 16 zero bytes of password, then the read-only flag', () => {
    const frame = encodeConnectRequest({ sessionTimeout: 12_345, lastZxidSeen: 0x1_0000_0002n, canBeReadOnly: true });
    const payload = new Bytes().int(0).long(0x1_0000_0002n).int(12_345).long(0n).buf(Buffer.alloc(16)).bool(true).build();
    expect(frame).toEqual(framed(payload));
  });

  it('handshake - a resumption carries the session id and password; read-only defaults to false', () => {
    const passwd = Buffer.from('0123456789abcdef');
    const frame = encodeConnectRequest({ sessionTimeout: 4000, sessionId: 0x7edcba9876543210n, passwd });
    const payload = new Bytes().int(0).long(0n).int(4000).long(0x7edcba9876543210n).buf(passwd).bool(false).build();
    expect(frame).toEqual(framed(payload));
  });
});

describe('handshake - decodeConnectResponse', () => {
  it('handshake - a new session: id, password, negotiated timeout and read-only flag as sent', () => {
    const r = decodeConnectResponse(response(6000, 0x42n, Buffer.alloc(16, 9), true), 0n);
    expect(r).toEqual({ kind: 'new', sessionId: 0x42n, passwd: Buffer.alloc(16, 9), timeOut: 6000, readOnly: true, protocolVersion: 0 });
  });

  it('handshake - the presented id granted again is resumed; another id is new', () => {
    expect(decodeConnectResponse(response(6000, 0x42n), 0x42n).kind).toBe('resumed');
    expect(decodeConnectResponse(response(6000, 0x43n), 0x42n).kind).toBe('new');
  });

  it('handshake - a reply without the trailing flag (servers before 3.4) is not read-only', () => {
    expect(decodeConnectResponse(response(6000, 1n, undefined, null), 0n).readOnly).toBe(false);
  });

  it('handshake - a timeout of 0 or below means the presented session expired', () => {
    expect(() => decodeConnectResponse(response(0, 0n), 0x42n)).toThrow(SessionExpiredError);
    expect(() => decodeConnectResponse(response(-1, 0n), 0x42n)).toThrow(SessionExpiredError);
  });

  it('handshake - a bare reply header with NOTREADONLY is a NotReadOnlyError', () => {
    const header = new Bytes().int(0).long(0n).int(-119).build();
    expect(() => decodeConnectResponse(header, 0n)).toThrow(NotReadOnlyError);
  });

  it('handshake - 16 bytes whose error field is no ZooKeeper code are a DecodeError, not a ZooKeeperError', () => {
    // The last 4 bytes read as err 1734680865 ('get!'): garbage, not a refusal.
    const garbage = Buffer.from('0123456789abget!', 'latin1');
    const err = (() => {
      try {
        decodeConnectResponse(garbage, 0n);
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(DecodeError);
    expect(err).not.toBeInstanceOf(ZooKeeperError);
    expect((err as Error).message).toMatch(/handshake reply could not be decoded/);
  });

  it('handshake - a malformed ConnectResponse is a DecodeError saying the handshake reply could not be decoded', () => {
    // protocolVersion, timeOut, sessionId, then a password length of 1e9 bytes.
    const bad = new Bytes().int(0).int(6000).long(1n).int(1_000_000_000).build();
    expect(() => decodeConnectResponse(bad, 0n)).toThrow(DecodeError);
    expect(() => decodeConnectResponse(bad, 0n)).toThrow(/handshake reply could not be decoded/);
  });

  it('handshake - a reply cut short is a DecodeError', () => {
    const full = response(6000, 1n);
    for (const cut of [0, 3, 11, 19, 25]) expect(() => decodeConnectResponse(full.subarray(0, cut), 0n)).toThrow(DecodeError);
  });
});

describe('handshake - exchangeHandshake', () => {
  const request = encodeConnectRequest({ sessionTimeout: 5000 });

  it('handshake - sends the request and resolves with the reply whatever the chunking, keeping the bytes after it', async () => {
    const payload = response(5000, 7n);
    const after = Buffer.from([0, 0, 0, 9, 1, 2]);
    const stream = Buffer.concat([framed(payload), after]);
    for (let cut = 1; cut < stream.length; cut++) {
      const t = new FakeTransport();
      const p = exchangeHandshake(t, request, 1000);
      expect(t.written).toEqual([request]);
      t.feed(stream.subarray(0, cut));
      t.feed(stream.subarray(cut));
      const reply = await p;
      expect(reply.payload).toEqual(payload);
      expect(Buffer.concat(reply.rest)).toEqual(after);
    }
  });

  it('handshake - chunks arriving after the reply are kept for the caller until it takes over', async () => {
    const t = new FakeTransport();
    const p = exchangeHandshake(t, request, 1000);
    t.feed(framed(response(5000, 7n)));
    t.feed(Buffer.from([1, 2, 3]));
    const reply = await p;
    t.feed(Buffer.from([4]));
    expect(Buffer.concat(reply.rest)).toEqual(Buffer.from([1, 2, 3, 4]));
  });

  it('handshake - the transport closing first rejects, with its error when it has one', async () => {
    const t = new FakeTransport();
    const p = exchangeHandshake(t, request, 1000);
    t.feed(Buffer.from([0, 0]));
    const boom = new Error('ECONNRESET');
    t.close(boom);
    await expect(p).rejects.toBe(boom);

    const t2 = new FakeTransport();
    const p2 = exchangeHandshake(t2, request, 1000);
    t2.close();
    await expect(p2).rejects.toThrow(/closed the connection during the handshake/);
  });

  it('handshake - a negative length is a DecodeError and an over-limit one PacketTooLarge, before any payload arrives', async () => {
    const t = new FakeTransport();
    const p = exchangeHandshake(t, request, 1000);
    t.feed(Buffer.from([0xff, 0xff, 0xff, 0xfe]));
    await expect(p).rejects.toBeInstanceOf(DecodeError);

    const t2 = new FakeTransport();
    const p2 = exchangeHandshake(t2, request, 1000, 100);
    t2.feed(new Bytes().int(101).build());
    const err = await p2.catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PacketTooLargeError);
    expect(err).toMatchObject({ size: 101, limit: 100 });
  });

  it('handshake - no reply within the timeout rejects', async () => {
    vi.useFakeTimers();
    const t = new FakeTransport();
    const p = exchangeHandshake(t, request, 500);
    const settled = vi.fn();
    p.then(settled, settled);
    await vi.advanceTimersByTimeAsync(499);
    expect(settled).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(1);
    await expect(p).rejects.toThrow(/no handshake reply within 500 ms/);
  });

  it('handshake - a timeout above 2^31-1 ms really waits (timers are chained, not fired at once)', async () => {
    vi.useFakeTimers();
    const t = new FakeTransport();
    const p = exchangeHandshake(t, request, 1e10);
    const settled = vi.fn();
    p.then(settled, settled);
    await vi.advanceTimersByTimeAsync(2 ** 31);
    expect(settled).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(1e10 - 2 ** 31);
    await expect(p).rejects.toThrow(/no handshake reply within 10000000000 ms/);
  });

  it.each([
    ['HTTP', Buffer.from('HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n'), /not a ZooKeeper server \(it answered like HTTP: "HTTP\/1.1 400 Bad Request"\)/],
    ['SSH', Buffer.from('SSH-2.0-OpenSSH_9.6p1 Ubuntu-3ubuntu13\r\n'), /not a ZooKeeper server \(it answered like SSH: "SSH-2.0-OpenSSH_9.6p1 Ubuntu-3ubuntu13"\)/],
    ['TLS (alert)', Buffer.from([0x15, 0x03, 0x03, 0x00, 0x02, 0x02, 0x32]), /not a ZooKeeper server \(it answered like TLS\)/],
    ['TLS (handshake)', Buffer.from([0x16, 0x03, 0x01, 0x00, 0x30, 0x02]), /not a ZooKeeper server \(it answered like TLS\)/],
    ['text', Buffer.from('-ERR unknown command\r\n'), /not a ZooKeeper server \(it answered with text: "-ERR unknown command"\)/],
  ])('handshake - a reply that looks like %s is "not a ZooKeeper server", a DecodeError', async (_name, reply, message) => {
    for (const chunks of [[reply], [reply.subarray(0, 2), reply.subarray(2)]]) {
      const t = new FakeTransport();
      const p = exchangeHandshake(t, request, 1000);
      for (const c of chunks) t.feed(c);
      const err = await p.catch((e: unknown) => e);
      expect(err).toBeInstanceOf(DecodeError);
      expect((err as Error).message).toMatch(message);
    }
  });

  it('handshake - an abort rejects with the signal reason; an already aborted signal sends nothing', async () => {
    const ac = new AbortController();
    const t = new FakeTransport();
    const p = exchangeHandshake(t, request, 1000, undefined, ac.signal);
    const reason = new Error('stop');
    ac.abort(reason);
    await expect(p).rejects.toBe(reason);

    const t2 = new FakeTransport();
    await expect(exchangeHandshake(t2, request, 1000, undefined, AbortSignal.abort(reason))).rejects.toBe(reason);
    expect(t2.written).toEqual([]);
  });

  it('handshake - a reply after the exchange failed is ignored', async () => {
    const t = new FakeTransport();
    const p = exchangeHandshake(t, request, 1000);
    t.close();
    await expect(p).rejects.toThrow();
    // Late bytes go nowhere and throw nothing.
    expect(() => t.feed(framed(response(5000, 1n)))).not.toThrow();
  });
});

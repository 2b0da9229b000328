/**
 * The fault proxy (test/harness/proxy.ts): forwarding, pause, cut and block, and the network
 * nemeses: latency with jitter (order kept), one-way drop, and the storm (corrupt) mode. Against
 * loopback servers of the test's own and the real ZooKeeper server.
 */
import { connect, createServer, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ZooKeeper } from '@zk/protocol';
import { fourLetter, freePorts, modeOf, TcpProxy, timing, UNDECODABLE_FRAME, waitFor } from '../../harness/index.js';

describe('harness - proxy', () => {
  let echo: Server;
  let port = 0;

  beforeAll(async () => {
    echo = createServer({ allowHalfOpen: true }, (s) => {
      s.on('error', () => {}); // resets are the point of these tests
      s.pipe(s);
    });
    await new Promise<void>((r) => echo.listen(0, '127.0.0.1', () => r()));
    port = (echo.address() as { port: number }).port;
  });

  afterAll(async () => {
    await new Promise<void>((r) => echo.close(() => r()));
  });

  /** A client connection; `arrived(n)` resolves at the time (performance.now()) it has n bytes, and rejects after 10 s. */
  interface Client {
    socket: Socket;
    received: () => string;
    arrived: (n: number) => Promise<number>;
    closed: Promise<Error | undefined>;
  }

  function open(proxy: TcpProxy): Promise<Client> {
    return new Promise((resolve) => {
      const socket = connect({ host: '127.0.0.1', port: proxy.port });
      let data = '';
      const waiting: { n: number; resolve: (t: number) => void }[] = [];
      socket.on('data', (d: Buffer) => {
        data += d.toString('latin1');
        const now = performance.now();
        for (const w of waiting.filter((x) => data.length >= x.n)) {
          waiting.splice(waiting.indexOf(w), 1);
          w.resolve(now);
        }
      });
      const arrived = (n: number) =>
        data.length >= n
          ? Promise.resolve(performance.now())
          : new Promise<number>((resolve, reject) => {
              const timer = setTimeout(() => reject(new Error(`${n} bytes did not arrive in time; got ${JSON.stringify(data)}`)), timing(10_000));
              waiting.push({ n, resolve: (t) => (clearTimeout(timer), resolve(t)) });
            });
      const closed = new Promise<Error | undefined>((r) => {
        let error: Error | undefined;
        socket.on('error', (e) => (error = e));
        socket.on('close', () => r(error));
      });
      // A refused connection may be reset before or after 'connect': resolve on whichever comes first.
      const result: Client = { socket, received: () => data, arrived, closed };
      socket.on('connect', () => resolve(result));
      void closed.then(() => resolve(result));
    });
  }

  it('forwards bytes both ways', async () => {
    const proxy = await TcpProxy.start({ host: '127.0.0.1', port });
    const c = await open(proxy);
    c.socket.write('hello');
    await waitFor('echo', () => (c.received() === 'hello' ? true : undefined));
    c.socket.destroy();
    await proxy.close();
  });

  it('holds bytes while paused and delivers them on resume', async () => {
    const proxy = await TcpProxy.start({ host: '127.0.0.1', port });
    const c = await open(proxy);
    proxy.pause('up');
    c.socket.write('held');
    await waitFor('bytes to be held', () => (proxy.heldBytes('up') === 4 ? true : undefined));
    expect(c.received()).toBe('');
    proxy.resume('up');
    await waitFor('echo after resume', () => (c.received() === 'held' ? true : undefined));

    proxy.pause('down');
    c.socket.write('back');
    await waitFor('reply to be held', () => (proxy.heldBytes('down') === 4 ? true : undefined));
    expect(c.received()).toBe('held');
    proxy.resume();
    await waitFor('reply after resume', () => (c.received() === 'heldback' ? true : undefined));
    c.socket.destroy();
    await proxy.close();
  });

  it('cut resets every connection and still accepts new ones; block refuses them', async () => {
    const proxy = await TcpProxy.start({ host: '127.0.0.1', port });
    const a = await open(proxy);
    const b = await open(proxy);
    await waitFor('two connections', () => (proxy.connectionCount === 2 ? true : undefined));
    proxy.cut();
    const [ea, eb] = await Promise.all([a.closed, b.closed]);
    expect((ea as NodeJS.ErrnoException | undefined)?.code).toBe('ECONNRESET');
    expect((eb as NodeJS.ErrnoException | undefined)?.code).toBe('ECONNRESET');
    const c = await open(proxy);
    c.socket.write('again');
    await waitFor('echo on a new connection', () => (c.received() === 'again' ? true : undefined));
    proxy.block();
    expect((await c.closed as NodeJS.ErrnoException | undefined)?.code).toBe('ECONNRESET');
    const refused = await open(proxy);
    expect(((await refused.closed) as NodeJS.ErrnoException | undefined)?.code).toBe('ECONNRESET');
    await proxy.close();
  });

  /** A loopback server that records what each connection sent, and lets the test answer. */
  async function recordingServer(): Promise<{ port: number; accepted: (i: number) => Promise<Peer>; close: () => Promise<void> }> {
    const peers: Peer[] = [];
    const waiting: (() => void)[] = [];
    const server = createServer({ allowHalfOpen: true }, (socket) => {
      socket.on('error', () => {});
      let data = '';
      const arrivals: { n: number; resolve: () => void }[] = [];
      socket.on('data', (d: Buffer) => {
        data += d.toString('latin1');
        for (const a of arrivals.filter((x) => data.length >= x.n)) a.resolve();
      });
      peers.push({ socket, received: () => data, arrived: (n) => (data.length >= n ? Promise.resolve() : new Promise((r) => arrivals.push({ n, resolve: r }))) });
      for (const w of waiting.splice(0)) w();
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    const accepted = async (i: number): Promise<Peer> => {
      while (!peers[i]) await new Promise<void>((r) => waiting.push(r));
      return peers[i]!;
    };
    const close = () => new Promise<void>((r) => server.close(() => r()));
    return { port: (server.address() as { port: number }).port, accepted, close };
  }
  interface Peer {
    socket: Socket;
    received: () => string;
    arrived: (n: number) => Promise<void>;
  }

  /** A length-prefixed frame, as ZooKeeper's. */
  const frame = (body: string) => Buffer.concat([Buffer.from([0, 0, 0, body.length]), Buffer.from(body, 'latin1')]);
  const latin1 = (...parts: Buffer[]) => Buffer.concat(parts).toString('latin1');

  it('latency delays each direction by [min, max] ms; undefined turns it off', async () => {
    const proxy = await TcpProxy.start({ host: '127.0.0.1', port });
    const c = await open(proxy);
    const roundTrip = async (text: string) => {
      const t0 = performance.now();
      const n = c.received().length + text.length;
      c.socket.write(text);
      return (await c.arrived(n)) - t0;
    };
    const lane = { min: 100, max: 120 };
    expect(await roundTrip('a')).toBeLessThan(lane.min);
    proxy.setLatency(lane, 'up');
    const up = await roundTrip('b');
    proxy.setLatency(undefined, 'up');
    proxy.setLatency(lane, 'down');
    const down = await roundTrip('c');
    proxy.setLatency(lane);
    const both = await roundTrip('d');
    proxy.setLatency(undefined);
    const off = await roundTrip('e');
    console.log(`proxy latency [100, 120] ms: up ${up.toFixed(1)}, down ${down.toFixed(1)}, both ${both.toFixed(1)}, off ${off.toFixed(1)} ms`);
    // One direction delayed: at least min, and not twice (the other direction is not delayed).
    for (const one of [up, down]) {
      expect(one).toBeGreaterThanOrEqual(lane.min);
      expect(one).toBeLessThan(2 * lane.min);
    }
    expect(both).toBeGreaterThanOrEqual(2 * lane.min);
    expect(off).toBeLessThan(lane.min);
    expect(c.received()).toBe('abcde');
    expect(() => proxy.setLatency({ min: 10, max: 5 })).toThrow(RangeError);
    c.socket.destroy();
    await proxy.close();
  });

  it('jitter never reorders: 40 chunks delayed at random in [0, 80] ms arrive in the order sent', async () => {
    const proxy = await TcpProxy.start({ host: '127.0.0.1', port });
    const c = await open(proxy);
    proxy.setLatency({ min: 0, max: 80 }, 'up');
    let sent = '';
    const t0 = performance.now();
    for (let i = 0; i < 40; i++) {
      const chunk = `<${i}>`;
      sent += chunk;
      c.socket.write(chunk);
      await new Promise((r) => setTimeout(r, 2)); // the sending schedule: one chunk every 2 ms, so the proxy reads them apart
    }
    const sentFor = performance.now() - t0;
    const took = (await c.arrived(sent.length)) - t0;
    expect(c.received()).toBe(sent);
    // The last chunk waited behind the earlier ones' delays; without jitter it takes ~sentFor.
    expect(took).toBeGreaterThan(sentFor);
    c.socket.destroy();
    await proxy.close();
  });

  it("drop('down') discards the server's bytes silently while the client's arrive; the connection that lost bytes stays black-holed after undrop, new ones flow", async () => {
    const sink = await recordingServer();
    const proxy = await TcpProxy.start({ host: '127.0.0.1', port: sink.port });
    const c = await open(proxy);
    const s = await sink.accepted(0);
    proxy.drop('down');
    c.socket.write('up-1');
    await s.arrived(4);
    s.socket.write('down-1');
    await waitFor('the proxy to drop the answer', () => (proxy.droppedBytes('down') === 6 ? true : undefined), timing(5000), 5);
    c.socket.write('up-2');
    await s.arrived(8);
    expect(s.received()).toBe('up-1up-2');

    proxy.undrop('down');
    s.socket.write('down-2');
    await waitFor('the proxy to drop the second answer', () => (proxy.droppedBytes('down') === 12 ? true : undefined), timing(5000), 5);
    s.socket.end();
    await new Promise((r) => s.socket.once('finish', r));
    // The absence of a FIN or a reset can only be observed over a window.
    await new Promise((r) => setTimeout(r, 100));
    expect(c.received()).toBe('');
    expect(c.socket.readableEnded).toBe(false);
    expect(c.socket.destroyed).toBe(false);
    expect(proxy.droppedBytes('up')).toBe(0);

    const fresh = await open(proxy);
    const s2 = await sink.accepted(1);
    s2.socket.write('fresh');
    await fresh.arrived(5);
    expect(fresh.received()).toBe('fresh');
    c.socket.destroy();
    fresh.socket.destroy();
    await proxy.close();
    await sink.close();
  });

  it('corrupt() gives each new connection the whole first frame, then an undecodable frame, then nothing from the server; others are untouched', async () => {
    const sink = await recordingServer();
    const proxy = await TcpProxy.start({ host: '127.0.0.1', port: sink.port });
    const before = await open(proxy);
    const sBefore = await sink.accepted(0);
    proxy.corrupt();
    const c = await open(proxy);
    const s = await sink.accepted(1);
    const first = frame('handshake');
    // The first frame in two pieces: the proxy waits for the whole of it before injecting.
    s.socket.write(first.subarray(0, 6));
    await new Promise((r) => setTimeout(r, 20)); // the sending schedule: the pieces arrive apart
    s.socket.write(Buffer.concat([first.subarray(6), frame('second')]));
    await c.arrived(first.length + UNDECODABLE_FRAME.length);
    await waitFor('the rest to be discarded', () => (proxy.droppedBytes('down') === frame('second').length ? true : undefined), timing(5000), 5);
    expect(c.received()).toBe(latin1(first, UNDECODABLE_FRAME));
    expect(proxy.corruptedCount).toBe(1);
    c.socket.write('ping'); // the client's bytes still pass
    await s.arrived(4);

    sBefore.socket.write(Buffer.concat([frame('a'), frame('b')]));
    await before.arrived(10);
    expect(before.received()).toBe(latin1(frame('a'), frame('b')));
    proxy.uncorrupt();
    const after = await open(proxy);
    const s3 = await sink.accepted(2);
    s3.socket.write(Buffer.concat([frame('x'), frame('y')]));
    await after.arrived(10);
    expect(after.received()).toBe(latin1(frame('x'), frame('y')));
    expect(proxy.corruptedCount).toBe(1);
    for (const k of [before, c, after]) k.socket.destroy();
    await proxy.close();
    await sink.close();
  });

  it('deferConnect keeps a new connection from the target while up is held, and dials it on resume', async () => {
    const sink = await recordingServer();
    const proxy = await TcpProxy.start({ host: '127.0.0.1', port: sink.port }, { deferConnect: true });
    proxy.pause('up');
    const c = await open(proxy);
    c.socket.write('held with its handshake');
    let reached = false;
    const first = sink.accepted(0).then((p) => ((reached = true), p));
    await waitFor('the bytes to be held', () => (proxy.heldBytes('up') === 23 ? true : undefined), timing(5000), 5);
    // The absence of a connection can only be observed over a window.
    await new Promise((r) => setTimeout(r, 100));
    expect(reached).toBe(false);
    proxy.resume('up');
    const s = await first;
    await s.arrived(23);
    expect(s.received()).toBe('held with its handshake');
    c.socket.destroy();
    await proxy.close();
    await sink.close();
  });

  it('connectRetryMs dials a refusing target again until it listens; without it the client is reset', async () => {
    const [free] = await freePorts(1);
    const eager = await TcpProxy.start({ host: '127.0.0.1', port: free! });
    const refused = await open(eager);
    expect(((await refused.closed) as NodeJS.ErrnoException | undefined)?.code).toBe('ECONNRESET');
    await eager.close();

    const proxy = await TcpProxy.start({ host: '127.0.0.1', port: free! }, { connectRetryMs: timing(5000) });
    const c = await open(proxy);
    c.socket.write('early');
    await new Promise((r) => setTimeout(r, 200)); // a few refused dials
    const late = createServer((s) => {
      s.on('error', () => {}); // the proxy's close resets it
      s.pipe(s);
    });
    await new Promise<void>((r) => late.listen(free!, '127.0.0.1', () => r()));
    await c.arrived(5);
    expect(c.received()).toBe('early');
    c.socket.destroy();
    await proxy.close();
    await new Promise<void>((r) => late.close(() => r()));
  });

  it('cutHoled resets only the connections that lost bytes', async () => {
    const proxy = await TcpProxy.start({ host: '127.0.0.1', port });
    const holed = await open(proxy);
    const kept = await open(proxy);
    await waitFor('two connections', () => (proxy.connectionCount === 2 ? true : undefined));
    proxy.drop('up');
    holed.socket.write('lost');
    await waitFor('the bytes to be dropped', () => (proxy.droppedBytes('up') === 4 ? true : undefined), timing(5000), 5);
    proxy.undrop('up');
    proxy.cutHoled();
    expect(((await holed.closed) as NodeJS.ErrnoException | undefined)?.code).toBe('ECONNRESET');
    kept.socket.write('kept');
    await kept.arrived(4);
    expect(proxy.connectionCount).toBe(1);
    kept.socket.destroy();
    await proxy.close();
  });

  describe('to a real ZooKeeper server', () => {
    let proxy: TcpProxy;
    let target: { host: string; port: number };

    beforeAll(async () => {
      // The shared server (or the first host of ZK_CONNECT).
      const first = inject('zkConnect').split('/')[0]!.split(',')[0]!;
      const colon = first.lastIndexOf(':');
      target = { host: first.slice(0, colon), port: Number(first.slice(colon + 1)) };
      proxy = await TcpProxy.start(target);
    });

    afterAll(async () => {
      await proxy.close();
    });

    /** Sends srvr through the proxy; `answered` flips when the answer is complete. */
    function srvr(): { answer: Promise<string>; answered: () => boolean } {
      let done = false;
      const answer = fourLetter('127.0.0.1', proxy.port, 'srvr', timing(30_000)).finally(() => (done = true));
      answer.catch(() => {});
      return { answer, answered: () => done };
    }

    it('passes a four-letter word through', async () => {
      expect(modeOf(await fourLetter('127.0.0.1', proxy.port, 'srvr'))).toMatch(/^(standalone|leader|follower|observer)$/);
    });

    it('holds the request while up is paused and the answer while down is paused', async () => {
      proxy.pause('up');
      const a = srvr();
      await waitFor('the request to be held', () => (proxy.heldBytes('up') === 4 ? true : undefined));
      expect(a.answered()).toBe(false);
      proxy.resume('up');
      expect(modeOf(await a.answer)).toBeDefined();

      proxy.pause('down');
      const b = srvr();
      // The whole answer arrives at the proxy and stays there (the server has closed its side).
      await waitFor('the answer to be held', () => (proxy.heldBytes('down') > 0 && proxy.connectionCount === 1 ? true : undefined));
      expect(b.answered()).toBe(false);
      const held = proxy.heldBytes('down');
      proxy.resume('down');
      const answer = await b.answer;
      expect(Buffer.byteLength(answer)).toBeGreaterThanOrEqual(held);
      expect(modeOf(answer)).toBeDefined();
    });

    it('cut resets a connection whose request is held', async () => {
      proxy.pause('up');
      const a = srvr();
      await waitFor('the request to be held', () => (proxy.heldBytes('up') === 4 ? true : undefined));
      proxy.cut();
      proxy.resume();
      await expect(a.answer).rejects.toMatchObject({ code: 'ECONNRESET' });
      expect(proxy.connectionCount).toBe(0);
      expect(modeOf(await fourLetter('127.0.0.1', proxy.port, 'srvr'))).toBeDefined();
    });

    it('corrupt(): a real client completes each handshake and its connection dies on the injected frame; after uncorrupt() its session is served again', async () => {
      const p = await TcpProxy.start(target);
      const zk = await ZooKeeper.connect(p.connectString, { sessionTimeout: 6000 });
      const id = zk.sessionId;
      p.corrupt();
      p.cut();
      // The proxy injects only after a whole first frame (the ConnectResponse) came from the server.
      await waitFor('three handshakes answered and corrupted', () => (p.corruptedCount >= 3 ? true : undefined), timing(10_000), 10);
      expect(p.acceptedCount).toBeGreaterThanOrEqual(4);
      p.uncorrupt();
      await waitFor('the session to be served again', async () => ((await zk.exists('/').catch(() => undefined)) ? true : undefined), timing(10_000), 50);
      expect(zk.sessionId).toBe(id);
      await zk.close();
      await p.close();
    });
  });
});

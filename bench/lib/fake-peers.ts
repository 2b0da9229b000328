/**
 * In-process loopback servers that answer a client's reads at once, for benches that measure the
 * client's own CPU (otel-cost.ts `--fake`): a ZooKeeper that answers the handshake, the generation
 * probe (`exists /zookeeper/config`), getData with fixed data, pings and closeSession (NoNode to
 * anything else), and a Redis that answers GET with fixed data, INFO with `loading:0` and
 * anything else with +OK. Each answers all the frames of one socket read in one write.
 *
 * Why: against a real server on a loaded 2-core machine the client's CPU per request at 64
 * outstanding swung 2x between repetitions of one mode (13 to 31 µs user), because how many
 * replies one socket read brings depends on when the server gets a core. Here the server runs on
 * the client's thread, every mode sends and reads the same batches, and the difference between
 * modes is the instrumentation's. The server's CPU is in the process's, the same in every mode.
 */
import { createServer, type Server, type Socket } from 'node:net';

/** A fake server listening on 127.0.0.1. */
export interface FakePeer {
  /** `127.0.0.1:port`. */
  readonly hostPort: string;
  close(): Promise<void>;
}

function listen(server: Server, sockets: Set<Socket>): Promise<FakePeer> {
  server.on('connection', (s) => {
    sockets.add(s);
    s.setNoDelay(true);
    s.on('close', () => sockets.delete(s));
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      resolve({
        hostPort: `127.0.0.1:${port}`,
        close: () =>
          new Promise<void>((done) => {
            for (const s of sockets) s.destroy();
            server.close(() => done());
          }),
      });
    });
  });
}

/** A Stat of zeros (zookeeper.jute's Stat: 68 bytes). */
const STAT = Buffer.alloc(68);
const NONODE = -101;

/** A ZooKeeper reply frame: length, ReplyHeader `{ xid, zxid, err }`, body. */
function reply(xid: number, err: number, body?: Buffer): Buffer {
  const frame = Buffer.alloc(4 + 16 + (body?.length ?? 0));
  frame.writeInt32BE(frame.length - 4, 0);
  frame.writeInt32BE(xid, 4);
  frame.writeBigInt64BE(1n, 8);
  frame.writeInt32BE(err, 16);
  body?.copy(frame, 20);
  return frame;
}

/** A fake ZooKeeper whose every node holds `data` (getData); see the file's comment. */
export function startFakeZooKeeper(data: Buffer): Promise<FakePeer> {
  const getDataBody = Buffer.concat([Buffer.alloc(4), data, STAT]);
  getDataBody.writeInt32BE(data.length, 0);
  const sockets = new Set<Socket>();
  let sessions = 0;
  const server = createServer((socket) => {
    let pending: Buffer = Buffer.alloc(0);
    let connected = false;
    socket.on('data', (chunk: Buffer) => {
      pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
      const out: Buffer[] = [];
      let at = 0;
      while (pending.length - at >= 4) {
        const len = pending.readInt32BE(at);
        if (pending.length - at - 4 < len) break;
        const f = pending.subarray(at + 4, at + 4 + len);
        at += 4 + len;
        if (!connected) {
          // ConnectRequest { protocolVersion, lastZxidSeen, timeOut, sessionId, passwd, readOnly }:
          // ConnectResponse { protocolVersion 0, timeOut, sessionId, passwd, readOnly false }.
          connected = true;
          const r = Buffer.alloc(4 + 4 + 4 + 8 + 4 + 16 + 1);
          r.writeInt32BE(r.length - 4, 0);
          r.writeInt32BE(f.readInt32BE(12), 8);
          r.writeBigInt64BE(0x5eed0000n + BigInt(++sessions), 12);
          r.writeInt32BE(16, 20);
          out.push(r);
          continue;
        }
        const xid = f.readInt32BE(0);
        const type = f.readInt32BE(4);
        if (type === 4) out.push(reply(xid, 0, getDataBody));
        else if (type === 3) out.push(reply(xid, 0, STAT)); // the generation probe: a 3.5+ server
        else if (type === 11 || type === -11) out.push(reply(xid, 0)); // ping, closeSession
        else out.push(reply(xid, NONODE));
      }
      pending = pending.subarray(at);
      if (out.length > 0) socket.write(out.length === 1 ? out[0]! : Buffer.concat(out));
    });
    socket.on('error', () => {});
  });
  return listen(server, sockets);
}

/** A fake Redis whose every key holds `value` (GET); see the file's comment. */
export function startFakeRedis(value: Buffer): Promise<FakePeer> {
  const bulk = (b: Buffer) => Buffer.concat([Buffer.from(`$${b.length}\r\n`), b, Buffer.from('\r\n')]);
  const getReply = bulk(value);
  const infoReply = bulk(Buffer.from('# Server\r\nloading:0\r\n'));
  const ok = Buffer.from('+OK\r\n');
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    let pending: Buffer = Buffer.alloc(0);
    socket.on('data', (chunk: Buffer) => {
      pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
      const out: Buffer[] = [];
      let at = 0;
      // Commands as RESP arrays of bulk strings: *N\r\n then N times $len\r\n<bytes>\r\n.
      for (;;) {
        const command = parseCommand(pending, at);
        if (command === undefined) break;
        at = command.next;
        const name = command.name.toLowerCase();
        out.push(name === 'get' ? getReply : name === 'info' ? infoReply : ok);
      }
      pending = pending.subarray(at);
      if (out.length > 0) socket.write(out.length === 1 ? out[0]! : Buffer.concat(out));
    });
    socket.on('error', () => {});
  });
  return listen(server, sockets);
}

/** One RESP command at `at`: its name and where the next starts, or undefined when incomplete. */
function parseCommand(buf: Buffer, at: number): { name: string; next: number } | undefined {
  const line = (from: number) => {
    const end = buf.indexOf('\r\n', from);
    return end < 0 ? undefined : { text: buf.toString('latin1', from + 1, end), next: end + 2 };
  };
  if (at >= buf.length) return undefined;
  const head = line(at);
  if (head === undefined) return undefined;
  let next = head.next;
  let name = '';
  for (let i = 0; i < Number(head.text); i++) {
    const len = line(next);
    if (len === undefined) return undefined;
    const end = len.next + Number(len.text);
    if (buf.length < end + 2) return undefined;
    if (i === 0) name = buf.toString('latin1', len.next, end);
    next = end + 2;
  }
  return { name, next };
}

/**
 * The floor rows' client: a ZooKeeper session on a bare `net.Socket` with fixed frames, no parsing,
 * no timers, no session object: what the kernel, the loopback and the server cost, below which no
 * Node client can go. Used by the bench's `bare socket (floor)` rows (workloads/raw.ts) and by the
 * A/B scripts (scripts/bare-socket.mjs re-exports it from dist/). Node built-ins only.
 */
import { connect as netConnect } from 'node:net';

/** A bare session: fixed getData frames of one path, replies counted by their length prefix. */
export interface BareSocket {
  /** One getData of the path (no watch); resolves at its reply's frame, unparsed. */
  getData(): Promise<void>;
  /** closeSession, then waits for the server to close the socket. */
  close(): Promise<void>;
}

/** ConnectRequest: protocol 0, zxid 0, timeout 10 s, session 0, 16-byte zero password, not read-only. */
const HELLO = (() => {
  const b = Buffer.alloc(4 + 44 + 1);
  b.writeInt32BE(45, 0);
  b.writeInt32BE(10_000, 16);
  b.writeInt32BE(16, 28);
  return b;
})();

/**
 * Opens a session on a bare socket to the first server of `connect` (`host:port[,...][/chroot]`;
 * the chroot is ignored) and resolves once the handshake is answered. `path` is what
 * {@link BareSocket.getData} reads (default `/`); only the xid of its frame changes.
 */
export async function bareSocket(connect: string, path = '/'): Promise<BareSocket> {
  const [host, port] = connect.split(',')[0]!.split('/')[0]!.split(':') as [string, string];
  const socket = netConnect({ host, port: Number(port) });
  socket.setNoDelay(true);
  let pending: Buffer = Buffer.alloc(0);
  let onFrame: (() => void) | undefined;
  socket.on('data', (chunk: Buffer) => {
    pending = pending.length ? Buffer.concat([pending, chunk]) : chunk;
    while (pending.length >= 4 && pending.length >= 4 + pending.readInt32BE(0)) {
      pending = pending.subarray(4 + pending.readInt32BE(0));
      onFrame?.();
    }
  });
  const frame = () => new Promise<void>((resolve) => (onFrame = resolve));
  await new Promise<void>((resolve, reject) => {
    socket.once('error', reject);
    socket.once('connect', () => resolve());
  });
  const hello = frame();
  socket.write(HELLO);
  await hello;
  const name = Buffer.from(path);
  const request = Buffer.alloc(17 + name.length);
  request.writeInt32BE(request.length - 4, 0);
  request.writeInt32BE(4, 8); // getData, then the path, then watch false
  request.writeInt32BE(name.length, 12);
  name.copy(request, 16);
  let xid = 0;
  return {
    getData() {
      request.writeInt32BE(++xid, 4);
      const reply = frame();
      socket.write(request);
      return reply;
    },
    async close() {
      const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
      const closeSession = Buffer.from([0, 0, 0, 8, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xf5]);
      closeSession.writeInt32BE(++xid, 4);
      socket.on('end', () => socket.end());
      socket.write(closeSession);
      await closed;
    },
  };
}

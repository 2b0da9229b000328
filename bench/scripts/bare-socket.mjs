/**
 * Shared by the scripts of this folder (ab-builds.mjs, one-outstanding.mjs): the bare-socket floor
 * at one outstanding, and the timing of every socket's reads and writes in the process.
 */
import { connect as netConnect, Socket } from 'node:net';

/**
 * A session on a bare socket doing getData of `path` (no watch) one at a time, as the bench's
 * `bare socket (floor)` row does: each request a fixed frame (only the xid changes), each reply
 * counted by its length prefix and not parsed. No client at all: what the kernel, the loopback
 * and the server cost a round trip.
 * @param {string} connect `host:port` (the first of a connect string)
 * @param {string} path
 * @returns {Promise<{ getData(): Promise<void>, close(): Promise<void> }>}
 */
export async function bareSocket(connect, path) {
  const [host, port] = connect.split(',')[0].split('/')[0].split(':');
  const socket = netConnect({ host, port: Number(port) });
  socket.setNoDelay(true);
  let pending = Buffer.alloc(0);
  let onFrame;
  socket.on('data', (chunk) => {
    pending = pending.length ? Buffer.concat([pending, chunk]) : chunk;
    while (pending.length >= 4 && pending.length >= 4 + pending.readInt32BE(0)) {
      pending = pending.subarray(4 + pending.readInt32BE(0));
      onFrame?.();
    }
  });
  await new Promise((resolve, reject) => (socket.once('error', reject), socket.once('connect', resolve)));
  const frame = () => new Promise((resolve) => (onFrame = resolve));
  const hello = Buffer.alloc(49); // protocol 0, zxid 0, timeout 10 s, session 0, 16-byte password, not read-only
  hello.writeInt32BE(45, 0);
  hello.writeInt32BE(10_000, 16);
  hello.writeInt32BE(16, 28);
  const helloReply = frame();
  socket.write(hello);
  await helloReply;
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
      const closed = new Promise((resolve) => socket.once('close', resolve));
      const closeSession = Buffer.from([0, 0, 0, 8, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xf5]);
      closeSession.writeInt32BE(++xid, 4);
      socket.on('end', () => socket.end());
      socket.write(closeSession);
      await closed;
    },
  };
}

/**
 * Times every net.Socket of the process (call before anything connects): from a 'data' event to
 * the next write (the client's turnaround: its part of a round trip at one outstanding), and from
 * a write's return to the next 'data' event (kernel, loopback, server and wake-up). Recorded
 * between start() and stop() only; stop() returns both, sorted, in ms. `hooks.onData` and
 * `hooks.onWrite` are called at each 'data' event and before each write, for finer marks.
 * @param {{ onData?: () => void, onWrite?: () => void }} [hooks]
 */
export function timeSockets(hooks = {}) {
  let lastData = -1;
  let lastWrite = -1;
  let turns;
  let away;
  const { emit, write } = Socket.prototype;
  Socket.prototype.emit = function (event, ...rest) {
    if (event === 'data') {
      hooks.onData?.();
      lastData = performance.now();
      if (lastWrite >= 0) away?.push(lastData - lastWrite);
      lastWrite = -1;
    }
    return emit.call(this, event, ...rest);
  };
  Socket.prototype.write = function (...rest) {
    if (lastData >= 0) turns?.push(performance.now() - lastData);
    lastData = -1;
    hooks.onWrite?.();
    const r = write.apply(this, rest);
    lastWrite = performance.now();
    return r;
  };
  return {
    start() {
      turns = [];
      away = [];
    },
    stop() {
      const out = { turnaround: Float64Array.from(turns ?? []).sort(), away: Float64Array.from(away ?? []).sort() };
      turns = away = undefined;
      return out;
    },
  };
}

/** The median of a sorted array, ms to µs; NaN when empty. */
export const medianUs = (sorted) => (sorted.length ? sorted[sorted.length >> 1] * 1000 : NaN);

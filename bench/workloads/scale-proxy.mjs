// The harness's TcpProxy (test/harness/proxy.ts) in a process of its own, for the curve of
// reconnects with watches (bench/workloads/scale-client.ts): the client under test (ours in the
// bench process, the Java client in its JVM) reaches the server through it, so copying the
// megabytes of SetWatches runs on neither client's threads, the same for both. Runs the built
// test package (`tsc -b` first).
//
//   node scale-proxy.mjs <host> <port>
//
// Prints "READY <port>" once listening. On the stdin line "cut" it resets every connection and
// prints "CUT <ns>" (process.hrtime before the reset: CLOCK_MONOTONIC, which Java's
// System.nanoTime reads too), then "DIALED <ns>" when it accepts the next connection (the
// client's reconnect; from the net.server.socket diagnostics channel, at accept). Exits when
// stdin ends.
import { subscribe } from 'node:diagnostics_channel';
import { createInterface } from 'node:readline';
import { TcpProxy } from '@zk/test/harness';

const [host, port] = process.argv.slice(2);
const proxy = await TcpProxy.start({ host, port: Number(port) });
let awaitingDial = false;
// Both clients and the server set TCP_NODELAY on their sockets; the proxy's own sockets (Node's
// default) would add Nagle's algorithm in between: a second small reply held until the client's
// delayed ACK, 40 ms here. Seen: ours took 48 ms from the dial to the request's reply with 1,000
// watches (the SetWatches reply, then the multiRead probe's), the Java client 5 to 56 ms.
subscribe('net.server.socket', ({ socket }) => socket.setNoDelay(true));
subscribe('net.client.socket', ({ socket }) => socket.setNoDelay(true));
subscribe('net.server.socket', () => {
  if (!awaitingDial) return;
  awaitingDial = false;
  process.stdout.write(`DIALED ${process.hrtime.bigint()}\n`);
});
process.stdout.write(`READY ${proxy.port}\n`);
for await (const line of createInterface({ input: process.stdin, crlfDelay: Infinity })) {
  if (line !== 'cut') continue;
  const at = process.hrtime.bigint();
  awaitingDial = true;
  proxy.cut();
  process.stdout.write(`CUT ${at}\n`);
}
await proxy.close();

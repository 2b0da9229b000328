/**
 * Free TCP ports for servers that must be told their port before they start (a ZooKeeper
 * ensemble's client, quorum and election ports, the proxies between its servers, a KDC, ...).
 *
 * Chosen below the system's ephemeral range (Linux `ip_local_port_range`, 32768 and up by
 * default), at random, and checked by listening on each. The operating system gives every
 * outgoing connection a local port from the ephemeral range, so a port taken from that range
 * (listen on port 0, read it, close) could be handed to one of the many client connections the
 * tests open in the moment between the close and the server's own bind: a bind that failed with
 * EADDRINUSE in the flake hunt of 30 November (a quorum proxy). Below the range, only another
 * listener choosing the same port at the same moment can collide.
 *
 * All ports of one call are held open together, so one call never returns the same port twice,
 * and this process never hands out a port again while it is remembered (calls running side by
 * side, e.g. two ensembles starting at once, cannot collide before their servers bind).
 * startZooKeeper also retries on a bind failure.
 */
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';

const issued = new Set<number>();
const REMEMBER = 4096;
/** The lowest port chosen: above the common services' ports. */
const FLOOR = 10_000;

/** The first port of the ephemeral range (Linux's setting; else 49152, the IANA range other systems use). */
function ephemeralLow(): number {
  try {
    const low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    if (Number.isInteger(low) && low > 0) return low;
  } catch {
    // not Linux
  }
  return 49_152;
}

const CEILING = ephemeralLow();

/** Listens on `port` of 127.0.0.1 (0: one the OS chooses); the server, or undefined when the port is taken. */
async function tryListen(port: number): Promise<Server | undefined> {
  const server = createServer();
  return new Promise((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) => (err.code === 'EADDRINUSE' || err.code === 'EACCES' ? resolve(undefined) : reject(err)));
    server.listen(port, '127.0.0.1', () => resolve(server));
  });
}

/** `count` distinct free ports on 127.0.0.1, none handed out before by this process (recently). */
export async function freePorts(count: number): Promise<number[]> {
  const servers: Server[] = [];
  const ports: number[] = [];
  // Below the ephemeral range when it leaves room (a system whose range starts low: the OS's choice).
  const below = CEILING - FLOOR >= 1000;
  try {
    // Ports this process already issued stay held (so the OS offers others) until we are done.
    for (let attempts = 0; ports.length < count; attempts++) {
      if (attempts > count + 1000) throw new Error(`could not find ${count} free ports`);
      const wanted = below ? FLOOR + Math.floor(Math.random() * (CEILING - FLOOR)) : 0;
      if (issued.has(wanted) || ports.includes(wanted)) continue;
      const server = await tryListen(wanted);
      if (server === undefined) continue;
      servers.push(server);
      const addr = server.address();
      if (addr === null || typeof addr === 'string') throw new Error('unexpected server address');
      if (!issued.has(addr.port)) ports.push(addr.port);
    }
  } finally {
    await Promise.all(servers.map((s) => new Promise<void>((r) => s.close(() => r()))));
  }
  for (const p of ports) issued.add(p);
  // Forget the oldest (Sets iterate in insertion order): the OS cycles through its range anyway.
  for (const p of issued) {
    if (issued.size <= REMEMBER) break;
    issued.delete(p);
  }
  return ports;
}

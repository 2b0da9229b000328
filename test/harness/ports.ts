/**
 * Free TCP ports chosen by the operating system: listen on port 0, read the port, close. All
 * ports of one call are held open together, so one call never returns the same port twice, and
 * this process never hands out a port again while it is remembered (calls running side by side,
 * e.g. two ensembles starting at once, cannot collide before their servers bind). Another process
 * can still take a port between close and bind: startZooKeeper retries on a bind failure.
 */
import { createServer, type Server } from 'node:net';

const issued = new Set<number>();
const REMEMBER = 4096;

/** `count` distinct free ports on 127.0.0.1, none handed out before by this process (recently). */
export async function freePorts(count: number): Promise<number[]> {
  const servers: Server[] = [];
  const ports: number[] = [];
  try {
    // Ports this process already issued stay held (so the OS offers others) until we are done.
    for (let attempts = 0; ports.length < count; attempts++) {
      if (attempts > count + 1000) throw new Error(`could not find ${count} free ports`);
      const server = createServer();
      servers.push(server);
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(0, '127.0.0.1', () => resolve());
      });
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

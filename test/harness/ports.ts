/**
 * Free TCP ports chosen by the operating system: listen on port 0, read the port, close. All
 * ports of one call are held open together, so one call never returns the same port twice.
 */
import { createServer, type Server } from 'node:net';

/** `count` distinct free ports on 127.0.0.1. */
export async function freePorts(count: number): Promise<number[]> {
  const servers: Server[] = [];
  try {
    for (let i = 0; i < count; i++) {
      const server = createServer();
      servers.push(server);
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(0, '127.0.0.1', () => resolve());
      });
    }
    return servers.map((s) => {
      const addr = s.address();
      if (addr === null || typeof addr === 'string') throw new Error('unexpected server address');
      return addr.port;
    });
  } finally {
    await Promise.all(servers.map((s) => new Promise<void>((r) => s.close(() => r()))));
  }
}

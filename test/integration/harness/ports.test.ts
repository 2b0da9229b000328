/**
 * freePorts (test/harness/ports.ts): ports below the ephemeral range, where no outgoing
 * connection's local port can land between the choice and the server's bind.
 */
import { readFileSync } from 'node:fs';
import { connect, createServer, type Server } from 'node:net';
import { describe, expect, it } from 'vitest';
import { freePorts } from '../../harness/index.js';

const range = (() => {
  try {
    return readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number) as [number, number];
  } catch {
    return undefined;
  }
})();

describe.skipIf(range === undefined || range[0] < 11_000)('harness - free ports', () => {
  it('are distinct, bindable, and below the ephemeral range, where outgoing connections never get a port', async () => {
    const ports = await freePorts(40);
    expect(new Set(ports).size).toBe(40);
    for (const p of ports) expect(p, `port ${p}`).toBeLessThan(range![0]);
    // What an outgoing connection is given: from the range, never one of those.
    const server = createServer((s) => s.destroy());
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    const socket = connect((server.address() as { port: number }).port, '127.0.0.1');
    await new Promise<void>((r) => socket.once('connect', () => r()));
    expect(socket.localPort!).toBeGreaterThanOrEqual(range![0]);
    socket.destroy();
    server.close();
    // Each can be bound (nothing else took it), and a later call hands out none of them again.
    const servers: Server[] = [];
    for (const p of ports) {
      const s = createServer();
      await new Promise<void>((resolve, reject) => {
        s.once('error', reject);
        s.listen(p, '127.0.0.1', () => resolve());
      });
      servers.push(s);
    }
    await Promise.all(servers.map((s) => new Promise<void>((r) => s.close(() => r()))));
    const again = await freePorts(40);
    expect(again.filter((p) => ports.includes(p))).toEqual([]);
  });
});

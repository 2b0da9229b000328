/**
 * A loopback TCP proxy for fault tests: each accepted connection is piped to the target.
 * - `pause('up' | 'down' | 'both')` holds bytes in that direction (buffered, not dropped) until
 *   `resume()`: a network that stalls without closing anything.
 * - `cut()` resets every open connection (TCP RST) and keeps accepting new ones.
 * - `block()` additionally refuses new connections until `unblock()`: a partition.
 * "up" is client -> server, "down" is server -> client.
 */
import { createServer, connect, type Server, type Socket } from 'node:net';

type Direction = 'up' | 'down';

interface Pair {
  client: Socket;
  server: Socket;
  held: Record<Direction, Buffer[]>;
  /** The sending side ended while this direction was paused: end after the held bytes. */
  endHeld: Record<Direction, boolean>;
}

/** A TCP proxy on 127.0.0.1 to one target. */
export class TcpProxy {
  readonly #server: Server;
  readonly #target: { host: string; port: number };
  readonly #pairs = new Set<Pair>();
  readonly #paused: Record<Direction, boolean> = { up: false, down: false };
  #blocked = false;
  #accepted = 0;
  port = 0;

  private constructor(target: { host: string; port: number }) {
    this.#target = target;
    this.#server = createServer({ allowHalfOpen: true }, (client) => this.#accept(client));
  }

  /** Starts a proxy on a free port. */
  static async start(target: { host: string; port: number }): Promise<TcpProxy> {
    const proxy = new TcpProxy(target);
    await new Promise<void>((resolve, reject) => {
      proxy.#server.once('error', reject);
      proxy.#server.listen(0, '127.0.0.1', () => resolve());
    });
    const addr = proxy.#server.address();
    if (addr === null || typeof addr === 'string') throw new Error('unexpected proxy address');
    proxy.port = addr.port;
    return proxy;
  }

  /** `127.0.0.1:<port>` of the proxy. */
  get connectString(): string {
    return `127.0.0.1:${this.port}`;
  }
  /** Connections open now. */
  get connectionCount(): number {
    return this.#pairs.size;
  }
  /** Connections accepted since start. */
  get acceptedCount(): number {
    return this.#accepted;
  }
  /** Bytes held in a direction across all connections. */
  heldBytes(direction: Direction): number {
    let n = 0;
    for (const p of this.#pairs) for (const b of p.held[direction]) n += b.length;
    return n;
  }

  /** Holds bytes flowing in `direction` ('both' for both). */
  pause(direction: Direction | 'both' = 'both'): void {
    for (const d of dirs(direction)) this.#paused[d] = true;
  }

  /** Delivers what was held and lets bytes flow again. */
  resume(direction: Direction | 'both' = 'both'): void {
    for (const d of dirs(direction)) {
      this.#paused[d] = false;
      for (const p of this.#pairs) {
        const to = d === 'up' ? p.server : p.client;
        for (const b of p.held[d].splice(0)) to.write(b);
        if (p.endHeld[d]) to.end();
        p.endHeld[d] = false;
      }
    }
  }

  /** Resets every open connection (RST); new connections are still accepted. */
  cut(): void {
    for (const p of [...this.#pairs]) {
      p.client.resetAndDestroy();
      p.server.resetAndDestroy();
      this.#pairs.delete(p);
    }
  }

  /** Refuses new connections (they are reset at once) and cuts the open ones: a partition. */
  block(): void {
    this.#blocked = true;
    this.cut();
  }

  /** Accepts connections again, and lets held bytes flow. */
  unblock(): void {
    this.#blocked = false;
    this.resume('both');
  }

  /** Stops listening and resets every connection. */
  async close(): Promise<void> {
    this.cut();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  #accept(client: Socket): void {
    if (this.#blocked) {
      client.resetAndDestroy();
      return;
    }
    this.#accepted++;
    const server = connect({ ...this.#target, allowHalfOpen: true });
    const pair: Pair = { client, server, held: { up: [], down: [] }, endHeld: { up: false, down: false } };
    this.#pairs.add(pair);
    const forward = (d: Direction, to: Socket) => (chunk: Buffer) => {
      if (this.#paused[d]) pair.held[d].push(chunk);
      else to.write(chunk);
    };
    // A half-close travels through (after any held bytes), so request/answer protocols that
    // end their side, like the four-letter words, work through the proxy.
    const half = (d: Direction, to: Socket) => () => {
      if (this.#paused[d]) pair.endHeld[d] = true;
      else to.end();
    };
    client.on('data', forward('up', server));
    server.on('data', forward('down', client));
    client.on('end', half('up', server));
    server.on('end', half('down', client));
    const onClose = () => {
      if (client.destroyed && server.destroyed) this.#pairs.delete(pair);
    };
    const onError = () => {
      // One side failed: the other sees a reset too, as it would through a broken network.
      this.#pairs.delete(pair);
      if (!client.destroyed) client.resetAndDestroy();
      if (!server.destroyed) server.resetAndDestroy();
    };
    client.on('close', onClose);
    server.on('close', onClose);
    client.on('error', onError);
    server.on('error', onError);
  }
}

function dirs(d: Direction | 'both'): Direction[] {
  return d === 'both' ? ['up', 'down'] : [d];
}

/**
 * A loopback TCP proxy for fault tests: each accepted connection is piped to the target.
 * "up" is client -> server, "down" is server -> client. Faults, each per direction where that
 * makes sense:
 * - `pause(d)` holds bytes (buffered, not dropped) until `resume(d)`: a network that stalls
 *   without closing anything.
 * - `drop(d)` discards bytes silently (no RST, no FIN) until `undrop(d)`: a one-way partition.
 *   A connection that lost bytes stays black-holed in that direction until it closes: its byte
 *   stream has a hole, and TCP delivers nothing past a hole.
 * - `setLatency({ min, max }, d)` delays every chunk by a random time in [min, max] ms, order
 *   preserved (a later chunk never overtakes an earlier one); `setLatency(undefined, d)` stops.
 * - `corrupt()`: every connection accepted from now on gets the server's first frame (the
 *   ZooKeeper ConnectResponse) and then an undecodable frame instead of anything else the server
 *   sends, so the client's connection dies right after a successful handshake (a storm server).
 *   `uncorrupt()` stops it for new connections.
 * - `cut()` resets every open connection (TCP RST) and keeps accepting new ones.
 * - `block()` additionally refuses new connections until `unblock()`: a partition.
 * A chunk goes through the stages in that order: corrupt (down only), drop, pause, latency.
 */
import { createServer, connect, type Server, type Socket } from 'node:net';

type Direction = 'up' | 'down';

/** Delay bounds of {@link TcpProxy.setLatency}, ms. */
export interface Latency {
  min: number;
  max: number;
}

/**
 * The default frame `corrupt()` injects: a reply 3 bytes long, shorter than any reply header
 * (xid, zxid, err: 16 bytes), so no client can decode it.
 */
export const UNDECODABLE_FRAME: Buffer = Buffer.from([0, 0, 0, 3, 1, 2, 3]);

/** One direction of one connection. `null` in a queue stands for the sender's half-close. */
interface Lane {
  readonly to: Socket;
  /** Held while paused. */
  held: (Buffer | null)[];
  /** Delay line: delivered at `at` (performance.now() ms), in order. */
  line: { at: number; chunk: Buffer | null }[];
  timer: NodeJS.Timeout | undefined;
  /** Bytes were dropped: nothing more is delivered in this direction. */
  holed: boolean;
}

interface Pair {
  client: Socket;
  server: Socket;
  lanes: Record<Direction, Lane>;
  /** In corrupt mode: the server's bytes until its first frame is complete; `done` once injected. */
  corrupt: { buffered: Buffer; frame: Buffer; done: boolean } | undefined;
}

/** A TCP proxy on 127.0.0.1 to one target. */
export class TcpProxy {
  readonly #server: Server;
  readonly #target: { host: string; port: number };
  readonly #pairs = new Set<Pair>();
  readonly #paused: Record<Direction, boolean> = { up: false, down: false };
  readonly #dropped: Record<Direction, boolean> = { up: false, down: false };
  readonly #droppedBytes: Record<Direction, number> = { up: 0, down: 0 };
  readonly #latency: Record<Direction, Latency | undefined> = { up: undefined, down: undefined };
  #corruptFrame: Buffer | undefined;
  #corrupted = 0;
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
  /** Connections accepted since start (refused ones while blocked not counted). */
  get acceptedCount(): number {
    return this.#accepted;
  }
  /** Connections that got the injected frame since start. */
  get corruptedCount(): number {
    return this.#corrupted;
  }
  /** Bytes held in a direction across all connections. */
  heldBytes(direction: Direction): number {
    let n = 0;
    for (const p of this.#pairs) for (const b of p.lanes[direction].held) n += b?.length ?? 0;
    return n;
  }
  /** Bytes discarded in a direction since start (by `drop`, and after the injected frame of `corrupt`). */
  droppedBytes(direction: Direction): number {
    return this.#droppedBytes[direction];
  }

  /** Holds bytes flowing in `direction` ('both' for both). */
  pause(direction: Direction | 'both' = 'both'): void {
    for (const d of dirs(direction)) this.#paused[d] = true;
  }

  /** Delivers what was held (through the latency, if set) and lets bytes flow again. */
  resume(direction: Direction | 'both' = 'both'): void {
    for (const d of dirs(direction)) {
      this.#paused[d] = false;
      for (const p of this.#pairs) for (const chunk of p.lanes[d].held.splice(0)) this.#delay(p.lanes[d], d, chunk);
    }
  }

  /** Discards bytes flowing in `direction`, silently: a one-way partition. */
  drop(direction: Direction | 'both'): void {
    for (const d of dirs(direction)) this.#dropped[d] = true;
  }

  /** Stops discarding for new bytes; connections that already lost bytes stay black-holed that way. */
  undrop(direction: Direction | 'both' = 'both'): void {
    for (const d of dirs(direction)) this.#dropped[d] = false;
  }

  /**
   * Delays each chunk in `direction` by a random time in [min, max] ms, never overtaking an
   * earlier chunk; `undefined` adds no more delay (chunks already delayed keep their time).
   */
  setLatency(latency: Latency | undefined, direction: Direction | 'both' = 'both'): void {
    if (latency && !(latency.min >= 0 && latency.max >= latency.min)) throw new RangeError(`bad latency ${JSON.stringify(latency)}`);
    for (const d of dirs(direction)) this.#latency[d] = latency && { ...latency };
  }

  /**
   * From now on every new connection gets the server's first frame and then `frame` (default
   * {@link UNDECODABLE_FRAME}); the server's later bytes are discarded. Open connections are not
   * touched: `cut()` them to make the client reconnect into the storm.
   */
  corrupt(frame: Buffer = UNDECODABLE_FRAME): void {
    this.#corruptFrame = frame;
  }

  /** New connections are piped faithfully again. */
  uncorrupt(): void {
    this.#corruptFrame = undefined;
  }

  /** Resets every open connection (RST); new connections are still accepted. */
  cut(): void {
    for (const p of [...this.#pairs]) this.#reset(p);
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
    // Both ends set TCP_NODELAY; with Nagle on the proxy's own legs a second small write waited
    // for the peer's delayed ACK (~40 ms), a delay the direct path does not have.
    client.setNoDelay(true);
    server.setNoDelay(true);
    const lane = (to: Socket): Lane => ({ to, held: [], line: [], timer: undefined, holed: false });
    const pair: Pair = {
      client,
      server,
      lanes: { up: lane(server), down: lane(client) },
      corrupt: this.#corruptFrame && { buffered: Buffer.alloc(0), frame: this.#corruptFrame, done: false },
    };
    this.#pairs.add(pair);
    // A half-close travels through as `null` (after any held or delayed bytes), so
    // request/answer protocols that end their side, like the four-letter words, work through it.
    client.on('data', (chunk: Buffer) => this.#receive(pair, 'up', chunk));
    server.on('data', (chunk: Buffer) => this.#receive(pair, 'down', chunk));
    client.on('end', () => this.#receive(pair, 'up', null));
    server.on('end', () => this.#receive(pair, 'down', null));
    const onClose = () => {
      if (client.destroyed && server.destroyed) this.#forget(pair);
    };
    // One side failed: the other sees a reset too, as it would through a broken network.
    const onError = () => this.#reset(pair);
    client.on('close', onClose);
    server.on('close', onClose);
    client.on('error', onError);
    server.on('error', onError);
  }

  /** The corrupt stage (down only), then the drop stage. */
  #receive(pair: Pair, d: Direction, chunk: Buffer | null): void {
    const c = pair.corrupt;
    if (d === 'down' && c) {
      if (c.done) {
        // The stream is garbage from here on: the server's bytes are discarded (and counted).
        this.#droppedBytes[d] += chunk?.length ?? 0;
        return;
      }
      if (chunk === null) return this.#drop(pair, d, null);
      c.buffered = Buffer.concat([c.buffered, chunk]);
      if (c.buffered.length < 4 || c.buffered.length < 4 + c.buffered.readUInt32BE(0)) return;
      const end = 4 + c.buffered.readUInt32BE(0);
      c.done = true;
      this.#corrupted++;
      this.#droppedBytes[d] += c.buffered.length - end;
      this.#drop(pair, d, c.buffered.subarray(0, end));
      return this.#drop(pair, d, c.frame);
    }
    this.#drop(pair, d, chunk);
  }

  /** The drop stage, then the pause stage. */
  #drop(pair: Pair, d: Direction, chunk: Buffer | null): void {
    const lane = pair.lanes[d];
    if (this.#dropped[d] || lane.holed) {
      lane.holed = true;
      this.#droppedBytes[d] += chunk?.length ?? 0;
      return;
    }
    if (this.#paused[d]) lane.held.push(chunk);
    else this.#delay(lane, d, chunk);
  }

  /** The latency stage: delivers now, or after a random delay behind every earlier chunk. */
  #delay(lane: Lane, d: Direction, chunk: Buffer | null): void {
    const latency = this.#latency[d];
    if (!latency && lane.line.length === 0) return deliver(lane.to, chunk);
    const now = performance.now();
    const delay = latency ? latency.min + Math.random() * (latency.max - latency.min) : 0;
    const last = lane.line.at(-1)?.at ?? now;
    lane.line.push({ at: Math.max(now + delay, last), chunk });
    if (lane.line.length === 1) this.#schedule(lane);
  }

  #schedule(lane: Lane): void {
    const head = lane.line[0];
    if (!head) return;
    lane.timer = setTimeout(() => {
      lane.timer = undefined;
      // A timer may fire a little early (millisecond rounding): what is not due waits again.
      const now = performance.now();
      while (lane.line.length > 0 && lane.line[0]!.at <= now) deliver(lane.to, lane.line.shift()!.chunk);
      this.#schedule(lane);
    }, Math.max(0, Math.ceil(head.at - performance.now())));
  }

  #reset(pair: Pair): void {
    this.#forget(pair);
    if (!pair.client.destroyed) pair.client.resetAndDestroy();
    if (!pair.server.destroyed) pair.server.resetAndDestroy();
  }

  #forget(pair: Pair): void {
    this.#pairs.delete(pair);
    for (const lane of Object.values(pair.lanes)) {
      clearTimeout(lane.timer);
      lane.line = [];
    }
  }
}

function deliver(to: Socket, chunk: Buffer | null): void {
  if (to.destroyed || to.writableEnded) return;
  if (chunk === null) to.end();
  else to.write(chunk);
}

function dirs(d: Direction | 'both'): Direction[] {
  return d === 'both' ? ['up', 'down'] : [d];
}

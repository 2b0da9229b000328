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
 * - `cutHoled()` resets the connections that lost bytes (to heal a `drop` for good).
 * Options of `start` (for server-to-server links, server-links.ts): rewrite the first bytes each
 * client sends, retry a target that refuses, keep new connections from the target while held.
 * A chunk goes through the stages in that order: rewrite (up only), corrupt (down only), drop,
 * pause, latency.
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

/** Options of {@link TcpProxy.start}. */
export interface TcpProxyOptions {
  /** The port to listen on (default: one the OS chooses), e.g. one from `freePorts()`. */
  port?: number;
  /**
   * Rewrites the start of what each client sends: called with every byte received from the
   * client so far (chunks may split anywhere) until it returns a buffer, which is sent on in
   * place of those bytes; `'need-more'` waits for more bytes (a half-close sends what arrived
   * as is). Returning its argument passes the stream through untouched.
   */
  rewriteFirstUp?: (received: Buffer) => Buffer | 'need-more';
  /**
   * When the target refuses a connection, dial it again every 50 ms for up to this long (the
   * client's bytes held meanwhile), then reset the client; default 0: reset at once. The proxy
   * accepts before it knows whether the target will, so a client that retries a refused connect
   * (ZooKeeper's Learner) sees a reset after a successful connect instead and gives up.
   */
  connectRetryMs?: number;
  /**
   * While bytes to the target are held (`pause('up')`) or dropped (`drop('up')`), a new
   * connection is not passed on to the target either (a held link holds the handshake too):
   * it is dialed when bytes flow again. Default false: dialed at once.
   */
  deferConnect?: boolean;
}

/** How often a refused connection is dialed again under `connectRetryMs`. */
const CONNECT_RETRY_INTERVAL_MS = 50;

/** One direction of one connection. `null` in a queue stands for the sender's half-close. */
interface Lane {
  /** Undefined for "up" until the target is dialed. */
  to: Socket | undefined;
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
  /** The connection to the target; undefined until dialed (see `deferConnect`). */
  server: Socket | undefined;
  /** The target accepted: until then the client's bytes are held. */
  connected: boolean;
  lanes: Record<Direction, Lane>;
  /** In corrupt mode: the server's bytes until its first frame is complete; `done` once injected. */
  corrupt: { buffered: Buffer; frame: Buffer; done: boolean } | undefined;
  /** With `rewriteFirstUp`: the client's bytes until the rewrite is done (then undefined). */
  rewrite: Buffer | undefined;
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
  readonly #rewriteFirstUp: TcpProxyOptions['rewriteFirstUp'];
  readonly #connectRetryMs: number;
  readonly #deferConnect: boolean;
  port = 0;

  private constructor(target: { host: string; port: number }, options: TcpProxyOptions) {
    this.#target = target;
    this.#rewriteFirstUp = options.rewriteFirstUp;
    this.#connectRetryMs = options.connectRetryMs ?? 0;
    this.#deferConnect = options.deferConnect ?? false;
    this.#server = createServer({ allowHalfOpen: true }, (client) => this.#accept(client));
  }

  /** Starts a proxy on a free port (or `options.port`). */
  static async start(target: { host: string; port: number }, options: TcpProxyOptions = {}): Promise<TcpProxy> {
    const proxy = new TcpProxy(target, options);
    await new Promise<void>((resolve, reject) => {
      proxy.#server.once('error', reject);
      proxy.#server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
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
      // The client's bytes wait on for a target not connected yet.
      for (const p of this.#pairs) if (d === 'down' || p.connected) for (const chunk of p.lanes[d].held.splice(0)) this.#delay(p.lanes[d], d, chunk);
    }
    this.#dialDeferred();
  }

  /** Discards bytes flowing in `direction`, silently: a one-way partition. */
  drop(direction: Direction | 'both'): void {
    for (const d of dirs(direction)) this.#dropped[d] = true;
  }

  /** Stops discarding for new bytes; connections that already lost bytes stay black-holed that way. */
  undrop(direction: Direction | 'both' = 'both'): void {
    for (const d of dirs(direction)) this.#dropped[d] = false;
    this.#dialDeferred();
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

  /**
   * Resets every open connection that lost bytes to `drop` (in either direction): such a
   * connection delivers nothing more that way, so only a new one carries bytes again.
   */
  cutHoled(): void {
    for (const p of [...this.#pairs]) if (p.lanes.up.holed || p.lanes.down.holed) this.#reset(p);
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
    // Both legs set TCP_NODELAY; with Nagle on the proxy's own legs a second small write waited
    // for the peer's delayed ACK (~40 ms), a delay the direct path does not have.
    client.setNoDelay(true);
    const lane = (to: Socket | undefined): Lane => ({ to, held: [], line: [], timer: undefined, holed: false });
    const pair: Pair = {
      client,
      server: undefined,
      connected: false,
      lanes: { up: lane(undefined), down: lane(client) },
      corrupt: this.#corruptFrame && { buffered: Buffer.alloc(0), frame: this.#corruptFrame, done: false },
      rewrite: this.#rewriteFirstUp && Buffer.alloc(0),
    };
    this.#pairs.add(pair);
    // A half-close travels through as `null` (after any held or delayed bytes), so
    // request/answer protocols that end their side, like the four-letter words, work through it.
    client.on('data', (chunk: Buffer) => this.#receive(pair, 'up', chunk));
    client.on('end', () => this.#receive(pair, 'up', null));
    client.on('close', () => this.#closed(pair));
    // One side failed: the other sees a reset too, as it would through a broken network.
    client.on('error', () => this.#reset(pair));
    if (!(this.#deferConnect && (this.#paused.up || this.#dropped.up))) this.#dial(pair, performance.now() + this.#connectRetryMs);
  }

  /** Connects the pair to the target; the client's bytes held so far follow once it accepts. */
  #dial(pair: Pair, deadline: number): void {
    const server = connect({ ...this.#target, allowHalfOpen: true });
    server.setNoDelay(true);
    pair.server = server;
    pair.lanes.up.to = server;
    server.on('connect', () => {
      pair.connected = true;
      if (!this.#paused.up) for (const chunk of pair.lanes.up.held.splice(0)) this.#delay(pair.lanes.up, 'up', chunk);
    });
    server.on('data', (chunk: Buffer) => this.#receive(pair, 'down', chunk));
    server.on('end', () => this.#receive(pair, 'down', null));
    server.on('close', () => this.#closed(pair));
    server.on('error', (err: NodeJS.ErrnoException) => {
      if (!pair.connected && err.code === 'ECONNREFUSED' && performance.now() < deadline && this.#pairs.has(pair)) {
        setTimeout(() => this.#pairs.has(pair) && !pair.client.destroyed && this.#dial(pair, deadline), CONNECT_RETRY_INTERVAL_MS);
        return;
      }
      this.#reset(pair);
    });
  }

  /** Dials the connections `deferConnect` kept from the target, once bytes may flow to it. */
  #dialDeferred(): void {
    if (this.#paused.up || this.#dropped.up) return;
    // One that lost bytes would carry nothing: it waits for cutHoled().
    for (const p of this.#pairs) if (!p.server && !p.lanes.up.holed) this.#dial(p, performance.now() + this.#connectRetryMs);
  }

  #closed(pair: Pair): void {
    if (pair.client.destroyed && (!pair.server || pair.server.destroyed)) this.#forget(pair);
  }

  /** The rewrite stage (up only), the corrupt stage (down only), then the drop stage. */
  #receive(pair: Pair, d: Direction, chunk: Buffer | null): void {
    if (d === 'up' && pair.rewrite && this.#rewriteFirstUp) {
      if (chunk === null) {
        const received = pair.rewrite;
        pair.rewrite = undefined;
        if (received.length > 0) this.#drop(pair, d, received);
        return this.#drop(pair, d, null);
      }
      const received = Buffer.concat([pair.rewrite, chunk]);
      const out = this.#rewriteFirstUp(received);
      if (out === 'need-more') {
        pair.rewrite = received;
        return;
      }
      pair.rewrite = undefined;
      // One write: a reader may expect the header in one read (InitialMessage.parse does).
      return this.#drop(pair, d, out);
    }
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
    if (this.#paused[d] || (d === 'up' && !pair.connected)) lane.held.push(chunk);
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
    abort(pair.client);
    if (pair.server) abort(pair.server);
  }

  #forget(pair: Pair): void {
    this.#pairs.delete(pair);
    for (const lane of Object.values(pair.lanes)) {
      clearTimeout(lane.timer);
      lane.line = [];
    }
  }
}

/**
 * Resets a socket (RST), or only destroys it once its half-close went out: a reset while the
 * shutdown request is pending can leave the native handle open, and Node then spins at exit in
 * Environment::CleanupHandles (seen on Node 20; libp2p/js-libp2p#3597 on Node 24).
 */
function abort(socket: Socket): void {
  if (socket.destroyed) return;
  if (socket.writableEnded) socket.destroy();
  else socket.resetAndDestroy();
}

function deliver(to: Socket | undefined, chunk: Buffer | null): void {
  if (!to || to.destroyed || to.writableEnded) return;
  if (chunk === null) to.end();
  else to.write(chunk);
}

function dirs(d: Direction | 'both'): Direction[] {
  return d === 'both' ? ['up', 'down'] : [d];
}

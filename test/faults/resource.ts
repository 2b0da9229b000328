/**
 * The fault suite's guarded resource (see fixture.ts): an HTTP server the participants write to
 * with their fencing token, which fences them and logs every write, accepted or not.
 */
import { createServer, type Server } from 'node:http';
import type { ZooKeeper } from '@zk/protocol';
import { checkCapacityWrites, checkFenced, type ResourceWrite } from './checker.js';

/**
 * Whether the lease node `node` still exists with creation zxid `token`: the fence of a resource
 * that `capacity` holders share (the writer's permit is alive at the server right now).
 */
export type LeaseCheck = (token: bigint, node: string) => Promise<boolean>;

/**
 * A fenced resource. With one holder at a time (a lock, a leader) it accepts a write only if its
 * token is not below the highest accepted. Shared by `capacity` holders (a semaphore), it accepts
 * a write only while the writer's lease node exists with that token (`alive`), since no token
 * order tells a legitimate older holder from a stale one.
 */
export class GuardedResource {
  readonly writes: ResourceWrite[] = [];
  /** Holders allowed at once. */
  readonly capacity: number;
  #highest = -1n;
  readonly #server: Server;
  url = '';

  private constructor(capacity: number, alive: LeaseCheck | undefined) {
    this.capacity = capacity;
    this.#server = createServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://x');
      const token = BigInt(url.searchParams.get('token') ?? '-1');
      const node = url.searchParams.get('node') ?? '';
      const decided = (accepted: boolean) => {
        this.writes.push({ who: url.searchParams.get('who') ?? '?', t: process.hrtime.bigint(), token, accepted });
        res.statusCode = accepted ? 200 : 409;
        res.end();
      };
      if (alive) {
        alive(token, node).then(decided, () => decided(false));
        return;
      }
      const accepted = token >= this.#highest;
      if (accepted) this.#highest = token;
      decided(accepted);
    });
  }

  /**
   * Starts one on a free loopback port: fenced by the highest token, or with `capacity` > 1 by
   * `alive` (required then).
   */
  static async start(options: { capacity?: number; alive?: LeaseCheck } = {}): Promise<GuardedResource> {
    const capacity = options.capacity ?? 1;
    if (capacity > 1 && !options.alive) throw new Error('a resource shared by more than one holder needs a lease check');
    const r = new GuardedResource(capacity, capacity > 1 ? options.alive : undefined);
    await new Promise<void>((resolve) => r.#server.listen(0, '127.0.0.1', () => resolve()));
    r.url = `http://127.0.0.1:${(r.#server.address() as { port: number }).port}/write`;
    return r;
  }

  /** Writes refused because they were stale. */
  get staleRejected(): number {
    return this.writes.filter((w) => !w.accepted).length;
  }

  /**
   * What the log shows was accepted but stale (must be nothing): a token below one accepted
   * before (checkFenced) or, shared by N holders, more than N tokens writing at once
   * (checkCapacityWrites).
   */
  fenceViolations(): string[] {
    return this.capacity > 1 ? checkCapacityWrites(this.writes, this.capacity) : checkFenced(this.writes);
  }

  /** Stale writes accepted (must be none: see {@link fenceViolations}). */
  get staleAccepted(): number {
    return this.fenceViolations().length;
  }

  /** Stops the server. */
  close(): Promise<void> {
    return new Promise((resolve) => this.#server.close(() => resolve()));
  }
}

/**
 * Whether `node` exists with creation zxid `token`. On an ensemble the resource's server may lag
 * behind the writer's (a follower serves reads from what it has applied): a sync first makes the
 * answer at least as new as the moment of asking, so a lease just created is seen and one just
 * deleted is not. Reads only, so they are asked again after a connection loss (a server
 * restarted by a nemesis), for up to 10 s; then the write is refused.
 */
export async function leaseAlive(zk: ZooKeeper, token: bigint, node: string): Promise<boolean> {
  if (node === '') return false;
  const deadline = Date.now() + 10_000;
  for (;;) {
    try {
      await zk.sync(node);
      return (await zk.exists(node))?.czxid === token;
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 50)); // the client reconnects meanwhile
    }
  }
}

/**
 * Fencing for HTTP services: the header convention, a store of the highest token seen per
 * resource, a plain check, and a `(req, res, next)` guard for node:http and Express (and any
 * framework that hands over Node's request and response).
 *
 * The convention: the holder sends `Fencing-Token: <token>` (canonical decimal) and
 * `Fencing-Resource: <name>` (what the token is for; the guard may fix it instead). A request
 * without a token is answered 428 Precondition Required (RFC 6585), a malformed one 400, a stale
 * one 409 Conflict, each with an `application/problem+json` body (RFC 9457) that names the
 * resource and, for 409, the refused token and the one that won, as decimal strings.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { checkFence, parseToken, type Fence } from './token.js';
import { StaleTokenError } from './stale-token-error.js';

/** The request header carrying the token (HTTP headers are case-insensitive). */
export const FENCING_TOKEN_HEADER = 'Fencing-Token';
/** The request header naming the resource the token is for. */
export const FENCING_RESOURCE_HEADER = 'Fencing-Resource';
/** The problem `type` of a 409 answer: the token was stale. */
export const STALE_TOKEN_PROBLEM = 'urn:zk-locks:fencing:stale-token';

/**
 * Where a service keeps the highest token it accepted per resource. The default,
 * {@link MemoryTokenStore}, is one process's memory: service instances that share a resource
 * need a shared store whose `advance` is atomic (a database row, a Redis script).
 */
export interface TokenStore {
  /**
   * Accepts `token` if it is at least the highest recorded for `resource`, recording it, all at
   * once; `highest` is the recorded token afterwards (`token` itself when accepted).
   */
  advance(resource: string, token: bigint): { accepted: boolean; highest: bigint } | Promise<{ accepted: boolean; highest: bigint }>;
}

/** A {@link TokenStore} in this process's memory. */
export class MemoryTokenStore implements TokenStore {
  readonly #highest = new Map<string, bigint>();

  advance(resource: string, token: bigint): { accepted: boolean; highest: bigint } {
    const highest = this.#highest.get(resource);
    if (highest !== undefined && token < highest) return { accepted: false, highest };
    this.#highest.set(resource, token);
    return { accepted: true, highest: token };
  }

  /** The highest token accepted for `resource`, if any. */
  get(resource: string): bigint | undefined {
    return this.#highest.get(resource);
  }
}

/**
 * Accepts `fence` in `store` or throws {@link StaleTokenError}: the plain check, for a handler
 * that reads the token itself (a queue consumer, an RPC framework).
 *
 * @example
 * ```ts
 * await checkFencingToken(store, { resource: 'reports', token: BigInt(message.token) });
 * ```
 */
export async function checkFencingToken(store: TokenStore, fence: Fence): Promise<void> {
  checkFence(fence);
  const { accepted, highest } = await store.advance(fence.resource, fence.token);
  if (!accepted) throw new StaleTokenError(fence.resource, fence.token, highest);
}

/** Options of {@link fencingGuard}. */
export interface FencingGuardOptions {
  /** Where the highest tokens are kept. Default: a new {@link MemoryTokenStore}. */
  store?: TokenStore | undefined;
  /**
   * The resource of a request: a fixed name, or a function of the request. Default: the
   * `Fencing-Resource` header, else the request's path (without the query).
   */
  resource?: string | ((req: IncomingMessage) => string | undefined) | undefined;
  /**
   * Let one request per resource past the guard at a time, the next once the response is done
   * (`close`). Default true: a check and the write it admits are otherwise two steps, and a
   * stale request checked just before a newer one could still write after it.
   */
  serialize?: boolean | undefined;
}

/** The guard: call it with the request, the response and what to run when the token is accepted. */
export type FencingGuard = (req: IncomingMessage, res: ServerResponse, next: (err?: unknown) => void) => void;

/**
 * A `(req, res, next)` guard that calls `next()` for a request with a current token (not below
 * the highest accepted for its resource) and answers the others itself: 428 without a token,
 * 400 with a malformed one, 409 with a stale one. A failing store goes to `next(err)`.
 *
 * @example
 * ```ts
 * const guard = fencingGuard({ resource: 'reports' });
 * createServer((req, res) => guard(req, res, () => writeReport(req, res))); // node:http
 * app.put('/reports/:id', guard, writeReport);                              // Express
 * ```
 */
export function fencingGuard(options: FencingGuardOptions = {}): FencingGuard {
  const store = options.store ?? new MemoryTokenStore();
  const serialize = options.serialize ?? true;
  const turns = new Map<string, Promise<void>>();
  return (req, res, next) => {
    const resource = resourceOf(req, options.resource);
    if (resource === undefined || resource === '') return problem(res, 400, { title: 'No fencing resource', detail: `name it in a ${FENCING_RESOURCE_HEADER} header` });
    const raw = req.headers[FENCING_TOKEN_HEADER.toLowerCase()];
    if (raw === undefined) return problem(res, 428, { title: 'Fencing token required', detail: `send the lock's token in a ${FENCING_TOKEN_HEADER} header`, resource });
    const token = typeof raw === 'string' ? parseToken(raw.trim()) : undefined;
    if (token === undefined) return problem(res, 400, { title: 'Malformed fencing token', detail: `${FENCING_TOKEN_HEADER} must be one decimal integer in [0, 2^63 - 1]`, resource });
    let closed = false;
    const admit = async (): Promise<void> => {
      if (closed) return; // the client went away while waiting for its turn
      try {
        await checkFencingToken(store, { resource, token });
      } catch (err) {
        if (!(err instanceof StaleTokenError)) throw err;
        problem(res, 409, {
          type: STALE_TOKEN_PROBLEM,
          title: 'Stale fencing token',
          detail: err.message,
          resource,
          token: err.token.toString(),
          highest: err.highest.toString(),
        });
        return;
      }
      next();
    };
    if (!serialize) return void admit().catch(next);
    // Each request of a resource waits for the previous one's response to end.
    const previous = turns.get(resource) ?? Promise.resolve();
    let done!: () => void;
    const mine = new Promise<void>((resolve) => (done = resolve));
    const tail = previous.then(() => mine);
    turns.set(resource, tail);
    const finish = (): void => {
      closed = true;
      done();
      if (turns.get(resource) === tail) turns.delete(resource);
    };
    res.once('close', finish);
    void previous.then(admit).catch((err: unknown) => next(err));
  };
}

function resourceOf(req: IncomingMessage, option: FencingGuardOptions['resource']): string | undefined {
  if (typeof option === 'string') return option;
  if (typeof option === 'function') return option(req);
  const header = req.headers[FENCING_RESOURCE_HEADER.toLowerCase()];
  if (typeof header === 'string') return header;
  return new URL(req.url ?? '/', 'http://localhost').pathname;
}

function problem(res: ServerResponse, status: number, body: Record<string, string>): void {
  const text = JSON.stringify({ type: 'about:blank', status, ...body });
  res.writeHead(status, { 'content-type': 'application/problem+json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

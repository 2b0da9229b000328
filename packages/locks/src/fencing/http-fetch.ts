/**
 * The lock holder's side of the HTTP convention (http-guard.ts): a fetch that sends the lease's
 * token with every request and turns a 409 stale-token answer into a {@link StaleTokenError}.
 */
import { FENCING_RESOURCE_HEADER, FENCING_TOKEN_HEADER, STALE_TOKEN_PROBLEM } from './http-guard.js';
import { checkToken } from './token.js';
import { StaleTokenError } from './stale-token-error.js';

/**
 * What {@link fencedFetch} uses of a lease (a `Lease`, a `Leadership`, a `MultiLease` part):
 * its token, its path (the default resource), and when present its held check and loss signal.
 */
export interface FencingHolder {
  readonly fencingToken: bigint;
  readonly path: string;
  /** Throws when the hold is lost or released: called before each request. */
  assertHeld?(): void;
  /** Aborts when the hold is at risk: a request in flight is aborted with it. */
  readonly signal?: AbortSignal;
}

/** Options of {@link fencedFetch}. */
export interface FencedFetchOptions {
  /** The `Fencing-Resource` sent. Default: the lease's lock path. */
  resource?: string | undefined;
  /** The fetch to wrap. Default: the global `fetch`. */
  fetch?: typeof fetch | undefined;
}

/**
 * A `fetch` for the holder of `lease`: each request carries `Fencing-Token` and
 * `Fencing-Resource`, is refused locally (the lease's own error) once the lease is lost, and is
 * aborted if the lease is lost while it is in flight. A 409 whose problem type is the stale token
 * rejects with {@link StaleTokenError}; every other response is returned as it is.
 *
 * The local checks only narrow the window: a holder paused after them still sends a stale
 * token, and only the service's check (`fencingGuard`) refuses it.
 *
 * @example
 * ```ts
 * const put = fencedFetch(lease);
 * await put('http://reports.internal/daily', { method: 'PUT', body: text });
 * ```
 */
export function fencedFetch(lease: FencingHolder, options: FencedFetchOptions = {}): typeof fetch {
  checkToken(lease.fencingToken);
  const send = options.fetch ?? fetch;
  const resource = options.resource ?? lease.path;
  const wrapped = async (input: string | URL | Request, init: RequestInit = {}): Promise<Response> => {
    lease.assertHeld?.();
    const headers = new Headers(input instanceof Request && init.headers === undefined ? input.headers : init.headers);
    headers.set(FENCING_TOKEN_HEADER, lease.fencingToken.toString());
    headers.set(FENCING_RESOURCE_HEADER, resource);
    const signals = [init.signal, input instanceof Request ? input.signal : undefined, lease.signal].filter((s): s is AbortSignal => s != null);
    const signal = signals.length > 1 ? AbortSignal.any(signals) : signals[0];
    const response = await send(input, { ...init, headers, ...(signal ? { signal } : {}) });
    if (response.status !== 409 || !response.headers.get('content-type')?.includes('json')) return response;
    const body = (await response.clone().json().catch(() => undefined)) as { type?: unknown; resource?: unknown; token?: unknown; highest?: unknown } | undefined;
    if (body?.type !== STALE_TOKEN_PROBLEM) return response;
    const highest = typeof body.highest === 'string' && /^\d+$/.test(body.highest) ? BigInt(body.highest) : lease.fencingToken;
    throw new StaleTokenError(typeof body.resource === 'string' ? body.resource : resource, lease.fencingToken, highest);
  };
  return wrapped as typeof fetch;
}

/**
 * Host names to addresses, at dial time. A name may stand for several servers (a Kubernetes
 * headless service, round-robin DNS): the session dials each address, and asks again on every
 * round, so a server replaced under the same name is found at its new address (kazoo #794: a
 * client that resolved once kept dialing dead addresses). The Java client's StaticHostProvider
 * also resolves on every `next()`, with `InetAddress.getAllByName`.
 */
import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { ConnectionLossError } from '../errors.js';
import { setLongTimeout } from '../util/timer.js';
import { isIpAddress } from './transport.js';

/**
 * A resolver with the signature of `dns.lookup` (and of the `lookup` option of `net.connect`),
 * so either, or a function of your own, can be passed as the client's `lookup` option. The
 * client calls it with `{ all: true }` and takes every address of the answer; a function that
 * answers with one address (`callback(null, address, family)`) is accepted too.
 *
 * @example
 * ```ts
 * import { lookup } from 'node:dns';
 * const viaDns: LookupFunction = lookup;
 * const fixed: LookupFunction = (_name, _options, callback) => callback(null, [{ address: '10.0.0.7', family: 4 }]);
 * ```
 */
export type LookupFunction = (
  hostname: string,
  options: LookupOptions,
  callback: (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void,
) => void;

/** How {@link resolveHost} resolves. */
export interface ResolveOptions {
  /** The resolver; `dns.lookup` by default. */
  lookup?: LookupFunction | undefined;
  /** How long to wait for its answer, ms. */
  timeoutMs: number;
  signal?: AbortSignal | undefined;
}

/**
 * Every address of `host`, duplicates removed, in the resolver's order (IPv4 and IPv6 as it
 * answers them). A literal IP address is its own answer: no lookup. Rejects with ConnectionLoss
 * `could not resolve host:port: <the resolver's message>` (its `cause` the resolver's error, e.g.
 * code `ENOTFOUND`) when the lookup fails, finds no address, or has not answered within
 * `timeoutMs`; with the signal's reason when it aborts. A lookup cannot be cancelled: an answer
 * that comes after that is ignored.
 *
 * @example
 * ```ts
 * await resolveHost('zk.local', 2181, { timeoutMs: 10_000 }); // ['10.0.0.7', '10.0.0.8', 'fd00::7']
 * await resolveHost('10.0.0.7', 2181, { timeoutMs: 10_000 }); // ['10.0.0.7'], without a lookup
 * ```
 */
export function resolveHost(host: string, port: number, options: ResolveOptions): Promise<string[]> {
  if (isIpAddress(host)) return Promise.resolve([host]);
  return new Promise<string[]>((resolve, reject) => {
    options.signal?.throwIfAborted();
    let settled = false;
    const finish = (err: unknown, addresses?: string[]) => {
      if (settled) return;
      settled = true;
      timer.clear();
      options.signal?.removeEventListener('abort', onAbort);
      if (addresses) return resolve(addresses);
      if (options.signal?.aborted && err === options.signal.reason) return reject(err);
      reject(new ConnectionLossError(`could not resolve ${host}:${port}: ${(err as Error)?.message ?? String(err)}`, { op: 'connect', cause: err }));
    };
    const onAbort = () => finish(options.signal?.reason);
    const timer = setLongTimeout(() => finish(new Error(`no answer within ${options.timeoutMs} ms`)), options.timeoutMs);
    options.signal?.addEventListener('abort', onAbort, { once: true });
    try {
      (options.lookup ?? dnsLookup)(host, { all: true }, (err, answer) => {
        if (err) return finish(err);
        const addresses = addressesOf(answer);
        if (addresses.length === 0) finish(new Error('the resolver answered no address'));
        else finish(undefined, addresses);
      });
    } catch (err) {
      finish(err);
    }
  });
}

/** The IP addresses of a lookup's answer (one address, or a list), each once. */
function addressesOf(answer: string | readonly LookupAddress[] | undefined): string[] {
  const all = typeof answer === 'string' ? [answer] : Array.isArray(answer) ? answer.map((a: LookupAddress | undefined) => a?.address) : [];
  const out: string[] = [];
  for (const address of all) {
    if (typeof address !== 'string' || !isIpAddress(address)) continue;
    if (!out.some((a) => a.toLowerCase() === address.toLowerCase())) out.push(address);
  }
  return out;
}

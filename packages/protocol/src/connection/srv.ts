/**
 * The host list from a DNS SRV record (ZooKeeper 3.10's `DnsSrvHostProvider`, ZOOKEEPER-4956):
 * the connect string `dns-srv://_zookeeper._tcp.example.com[/chroot]` names a record whose
 * answers are the servers, each with its own port. It is asked at connect, and again at the start
 * of every later round over the hosts (session/session.ts), so servers added, moved or removed
 * behind the name are found without a restart; a failed or empty answer then keeps the list it
 * had (Java's provider likewise keeps its list and retries at its next refresh). Each target name
 * is then resolved to addresses at dial time, like any host (resolve.ts, the `lookup` option).
 *
 * As in Java's provider, priority and weight are not used: the list is shuffled like a connect
 * string's (every client spreading over every server is what an ensemble wants).
 */
import { resolveSrv as dnsResolveSrv } from 'node:dns';
import { ConnectionLossError, InvalidArgumentError } from '../errors.js';
import { normaliseChroot } from '../util/paths.js';
import { setLongTimeout } from '../util/timer.js';

/** The connect string prefix of an SRV host list (Java's `ConnectStringParser.DNS_SRV_PREFIX`). */
export const SRV_SCHEME = 'dns-srv://';

/** One answer of an SRV lookup, as `dns.resolveSrv` gives it. */
export interface SrvRecord {
  /** The target host name. */
  name: string;
  port: number;
  priority: number;
  weight: number;
}

/**
 * A resolver with the signature of `dns.resolveSrv`, so that, or a function of your own (a
 * service registry, a fixed answer in tests), can be passed as the client's `resolveSrv` option.
 *
 * @example
 * ```ts
 * import { resolveSrv } from 'node:dns';
 * const viaDns: SrvResolver = resolveSrv;
 * const fixed: SrvResolver = (_name, callback) => callback(null, [{ name: 'zk1.internal', port: 2181, priority: 0, weight: 0 }]);
 * ```
 */
export type SrvResolver = (hostname: string, callback: (err: NodeJS.ErrnoException | null, records: SrvRecord[]) => void) => void;

/** A `dns-srv://` connect string: the record's name and the chroot (`''` for none); undefined for any other connect string. */
export function parseSrvConnectString(connectString: string): { name: string; chroot: string } | undefined {
  if (typeof connectString !== 'string' || !connectString.trimStart().toLowerCase().startsWith(SRV_SCHEME)) return undefined;
  const rest = connectString.trim().slice(SRV_SCHEME.length);
  const slash = rest.indexOf('/');
  const name = (slash === -1 ? rest : rest.slice(0, slash)).trim();
  if (name === '' || /[\s,:]/.test(name)) {
    throw new InvalidArgumentError('connectString', `${JSON.stringify(connectString)}: write dns-srv://<record name>[/chroot], one name, no port (the record gives the ports)`);
  }
  return { name, chroot: normaliseChroot(slash === -1 ? undefined : rest.slice(slash)) };
}

/**
 * The servers an SRV record names: its targets (a trailing dot removed) with their ports, each
 * once, in the resolver's order. Rejects with ConnectionLoss `could not resolve SRV <name>: ...`
 * (its `cause` the resolver's error, e.g. code `ENOTFOUND`) when the lookup fails, gives no usable
 * record, or has not answered within `timeoutMs`; with the signal's reason when it aborts.
 */
export function resolveSrvHosts(name: string, options: { resolveSrv?: SrvResolver | undefined; timeoutMs: number; signal?: AbortSignal | undefined }): Promise<{ host: string; port: number }[]> {
  return new Promise((resolve, reject) => {
    options.signal?.throwIfAborted();
    let settled = false;
    const finish = (err: unknown, hosts?: { host: string; port: number }[]) => {
      if (settled) return;
      settled = true;
      timer.clear();
      options.signal?.removeEventListener('abort', onAbort);
      if (hosts) return resolve(hosts);
      if (options.signal?.aborted && err === options.signal.reason) return reject(err);
      reject(new ConnectionLossError(`could not resolve SRV ${name}: ${(err as Error)?.message ?? String(err)}`, { op: 'connect', cause: err }));
    };
    const onAbort = () => finish(options.signal?.reason);
    const timer = setLongTimeout(() => finish(new Error(`no answer within ${options.timeoutMs} ms`)), options.timeoutMs);
    options.signal?.addEventListener('abort', onAbort, { once: true });
    try {
      (options.resolveSrv ?? dnsResolveSrv)(name, (err, records) => {
        if (err) return finish(err);
        const hosts = hostsOf(records);
        if (hosts.length === 0) finish(new Error('the record has no usable target (a host name and a port in 1..65535)'));
        else finish(undefined, hosts);
      });
    } catch (err) {
      finish(err);
    }
  });
}

/** The usable targets of an answer, each once. */
function hostsOf(records: readonly SrvRecord[] | undefined): { host: string; port: number }[] {
  const out: { host: string; port: number }[] = [];
  for (const r of Array.isArray(records) ? records : []) {
    if (r === null || typeof r !== 'object' || typeof r.name !== 'string') continue;
    const host = r.name.endsWith('.') ? r.name.slice(0, -1) : r.name;
    const port = r.port;
    // SRV's "." target means "no service here" (RFC 2782).
    if (host === '' || !Number.isInteger(port) || port < 1 || port > 65535) continue;
    if (!out.some((h) => h.port === port && h.host.toLowerCase() === host.toLowerCase())) out.push({ host, port });
  }
  return out;
}

/**
 * The host list's source for a `dns-srv://` connect string: each call asks the record again.
 * The session calls it at the start of every round over the hosts after the first.
 */
export function srvHostSource(name: string, resolveSrv: SrvResolver | undefined, timeoutMs: number): (signal?: AbortSignal) => Promise<{ host: string; port: number }[]> {
  return (signal) => resolveSrvHosts(name, { resolveSrv, timeoutMs, signal });
}

/**
 * Connect strings: `host[:port][,host[:port]...][/chroot]`, with IPv6 literals in brackets
 * (`[::1]:2181`). Pure.
 */
import { InvalidArgumentError } from '../errors.js';
import { normaliseChroot } from '../util/paths.js';

/** One server address from a connect string. */
export interface HostAddress {
  /** Host name or IP address (IPv6 without brackets). */
  readonly host: string;
  /** TCP port (default 2181). */
  readonly port: number;
}

/** A parsed connect string. */
export interface ConnectString {
  /** The servers, in the order given. */
  readonly hosts: readonly HostAddress[];
  /** The chroot (`''` for none). */
  readonly chroot: string;
}

/** ZooKeeper's client port by convention. */
export const DEFAULT_PORT = 2181;

/**
 * Parses a connect string. Throws {@link InvalidArgumentError} on an empty host list, a bad
 * port, an unclosed IPv6 bracket or an invalid chroot.
 *
 * @example
 * ```ts
 * parseConnectString('zk1:2181,[::1]:2182/app')
 * // { hosts: [{ host: 'zk1', port: 2181 }, { host: '::1', port: 2182 }], chroot: '/app' }
 * ```
 */
export function parseConnectString(connectString: string): ConnectString {
  if (typeof connectString !== 'string' || connectString.trim() === '') {
    throw new InvalidArgumentError('connectString', 'must name at least one host');
  }
  // `zk://host:2181` would otherwise be read as host `zk:` and chroot `//host:2181`.
  const scheme = /^\s*([a-z][a-z0-9+.-]*):\/\//i.exec(connectString);
  if (scheme) {
    throw new InvalidArgumentError('connectString', `${JSON.stringify(connectString)} starts with a scheme (${scheme[1]}://): write host:port[,host:port...][/chroot] without it (TLS is the \`tls\` option)`);
  }
  const slash = connectString.indexOf('/');
  const hostPart = slash === -1 ? connectString : connectString.slice(0, slash);
  const chroot = normaliseChroot(slash === -1 ? undefined : connectString.slice(slash));
  const hosts: HostAddress[] = [];
  for (const raw of hostPart.split(',')) {
    const item = raw.trim();
    if (item === '') continue;
    hosts.push(parseHost(item));
  }
  if (hosts.length === 0) throw new InvalidArgumentError('connectString', `no host in ${JSON.stringify(connectString)}`);
  return { hosts, chroot };
}

function parseHost(item: string): HostAddress {
  let host: string;
  let portText: string | undefined;
  if (item.startsWith('[')) {
    const close = item.indexOf(']');
    if (close === -1) throw new InvalidArgumentError('connectString', `unclosed [ in ${JSON.stringify(item)}`);
    host = item.slice(1, close);
    const rest = item.slice(close + 1);
    if (rest !== '' && !rest.startsWith(':')) throw new InvalidArgumentError('connectString', `unexpected ${JSON.stringify(rest)} after ]`);
    portText = rest === '' ? undefined : rest.slice(1);
  } else {
    const colon = item.lastIndexOf(':');
    if (colon !== -1 && item.indexOf(':') !== colon) {
      // More than one colon and no brackets: a bare IPv6 literal without a port.
      host = item;
    } else {
      host = colon === -1 ? item : item.slice(0, colon);
      portText = colon === -1 ? undefined : item.slice(colon + 1);
    }
  }
  if (host === '') throw new InvalidArgumentError('connectString', `empty host in ${JSON.stringify(item)}`);
  const port = portText === undefined ? DEFAULT_PORT : Number(portText);
  if (!/^\d+$/.test(portText ?? '0') || !Number.isInteger(port) || port < 1 || port > 65535) {
    throw new InvalidArgumentError('connectString', `bad port in ${JSON.stringify(item)}`);
  }
  return { host, port };
}

/** A copy of `hosts` in random order (Fisher-Yates), so clients spread over the ensemble. */
export function shuffleHosts<T>(hosts: readonly T[], random: () => number = Math.random): T[] {
  const out = hosts.slice();
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    const a = out[i] as T;
    out[i] = out[j] as T;
    out[j] = a;
  }
  return out;
}

/** One address to dial: a host of the list, and one address it resolved to. */
export interface Endpoint extends HostAddress {
  /** The IP address dialed (`host` itself when that is an IP literal). */
  readonly address: string;
}

/**
 * The order in which to dial the addresses a host resolved to: shuffled (so clients spread over
 * the servers behind one name, as they do over the names of a list), except that the address of
 * the connection that just ended (`last`, when it is this host's) goes last, so a reconnect tries
 * the other servers first.
 *
 * @example
 * ```ts
 * dialOrder({ host: 'zk', port: 2181 }, ['10.0.0.1', '10.0.0.2'], { host: 'zk', port: 2181, address: '10.0.0.1' })
 * // [{ host: 'zk', port: 2181, address: '10.0.0.2' }, { host: 'zk', port: 2181, address: '10.0.0.1' }]
 * ```
 */
export function dialOrder(host: HostAddress, addresses: readonly string[], last?: Endpoint, random: () => number = Math.random): Endpoint[] {
  const order = shuffleHosts(addresses, random).map((address) => ({ host: host.host, port: host.port, address }));
  const i = last === undefined || last.port !== host.port ? -1 : order.findIndex((e) => e.address.toLowerCase() === last.address.toLowerCase());
  if (i !== -1) order.push(...order.splice(i, 1));
  return order;
}

/** `host:port`, and the address dialed when it is not the host itself: `zk.local:2181 (10.0.0.7)`. */
export function endpointLabel(e: HostAddress & { address?: string | undefined }): string {
  return e.address === undefined || e.address === e.host ? `${e.host}:${e.port}` : `${e.host}:${e.port} (${e.address})`;
}

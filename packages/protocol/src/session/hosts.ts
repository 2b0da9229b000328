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

/**
 * Dynamic reconfiguration (ZooKeeper 3.5+): the ensemble's configuration as the `/zookeeper/config`
 * node holds it, parsed into members; the `reconfig` request (op 16) built and checked before any
 * byte is sent; and the client addresses a host list is made of. Pure.
 *
 * The config text is what the server's `QuorumVerifier.toString()` writes: one line per member,
 * `server.<id>=<host>:<quorumPort>:<electionPort>[:<role>][;[<clientHost>:]<clientPort>]`, and a
 * last line `version=<hex>` (the zxid of the reconfig that made it).
 */
import { CONFIG_NODE } from '../constants.js';
import { InvalidArgumentError } from '../errors.js';
import type { Stat } from '../jute/data.js';
import { parseConnectString, type HostAddress } from '../session/hosts.js';

export { CONFIG_NODE };

/** One member of the ensemble, from its `server.N` line. */
export interface EnsembleMember {
  /** The server id (`myid`). */
  readonly id: number;
  /** Host of its quorum and election ports (the first one when it lists several with `|`). */
  readonly host: string;
  /** Port followers use to talk to the leader. */
  readonly quorumPort: number;
  /** Port of leader election. */
  readonly electionPort: number;
  /** A voting member or an observer. */
  readonly role: 'participant' | 'observer';
  /**
   * Where clients reach it, as the server states it (`0.0.0.0` when it listens on every
   * address); `undefined` when its line has no client port (it serves no clients).
   */
  readonly client: HostAddress | undefined;
  /** The line as the server wrote it, without the trailing newline (`server.1=...`). */
  readonly spec: string;
}

/** The ensemble's configuration, as {@link ZooKeeper.getConfig} and {@link ZooKeeper.reconfig} return it. */
export interface EnsembleConfig {
  /** The members, in the order of the config text. */
  readonly members: readonly EnsembleMember[];
  /**
   * The config version (the `version=` line, hexadecimal in the text): what `reconfig`'s
   * `fromConfig` expects. `-1n` when the text has none.
   */
  readonly version: bigint;
  /** The node's text as the server sent it. */
  readonly raw: string;
  /** The config node's Stat. */
  readonly stat: Stat;
}

/** A member to add, when not given as its `server.N=...` line. */
export interface MemberInput {
  readonly id: number;
  readonly host: string;
  readonly quorumPort: number;
  readonly electionPort: number;
  /** Default `'participant'`. */
  readonly role?: 'participant' | 'observer';
  /** Where it serves clients (a member without one serves none). */
  readonly client?: HostAddress;
}

/** A change of membership for {@link ZooKeeper.reconfig}. */
export interface ReconfigChange {
  /** Incremental: members to add (or whose line to replace), as `server.N=...` lines or objects. */
  joining?: ReadonlyArray<string | MemberInput>;
  /** Incremental: the ids of the members to remove. */
  leaving?: readonly number[];
  /** Non-incremental: the whole new membership (cannot be combined with `joining` or `leaving`). */
  members?: ReadonlyArray<string | MemberInput>;
  /**
   * Apply only if the config version is still this one (from {@link EnsembleConfig.version});
   * otherwise the server refuses with BadVersionError. Default `-1n`: whatever it is.
   */
  fromConfig?: bigint;
}

/** @internal The body of a ReconfigRequest. */
export interface ReconfigBody {
  joiningServers: string | null;
  leavingServers: string | null;
  newMembers: string | null;
  curConfigId: bigint;
}

/**
 * Parses the config node's text. Lines other than `server.N=` and `version=` (3.5's
 * `group.`/`weight.` lines of hierarchical quorums) are kept in `raw` only.
 */
export function parseConfig(raw: string, stat: Stat): EnsembleConfig {
  const members: EnsembleMember[] = [];
  let version = -1n;
  for (const text of raw.split('\n')) {
    const line = text.trim();
    if (line.startsWith('version=')) {
      const hex = line.slice('version='.length);
      if (/^[0-9a-fA-F]{1,16}$/.test(hex)) version = BigInt(`0x${hex}`);
    } else if (line.startsWith('server.')) {
      const member = parseMemberLine(line);
      if (member) members.push(member);
    }
  }
  return { members, version, raw, stat };
}

/**
 * One `server.N=...` line, or `undefined` when it does not parse (the server wrote it, so a line
 * we cannot read is skipped, not fatal).
 */
export function parseMemberLine(line: string): EnsembleMember | undefined {
  const m = /^server\.(\d+)=(.*)$/.exec(line.trim());
  if (!m) return undefined;
  const id = Number(m[1]);
  const [serverPart = '', clientPart] = (m[2] as string).split(';', 2);
  // 3.6+ may list several addresses with '|' (the role follows the last); the first names the member.
  const addresses = serverPart.split('|');
  const parts = splitHostPorts(addresses[0] as string);
  const last = addresses.length > 1 ? splitHostPorts(addresses[addresses.length - 1] as string) : parts;
  if (!parts || !last || parts.rest.length < 2 || parts.rest.length > 3 || last.rest.length < 2 || last.rest.length > 3) return undefined;
  const quorumPort = port(parts.rest[0]);
  const electionPort = port(parts.rest[1]);
  const roleText = last.rest[2] ?? 'participant';
  if (quorumPort === undefined || electionPort === undefined || (roleText !== 'participant' && roleText !== 'observer')) return undefined;
  let client: HostAddress | undefined;
  if (clientPart !== undefined && clientPart.trim() !== '') {
    client = parseClientAddress(clientPart.trim());
    if (!client) return undefined;
  }
  return { id, host: parts.host, quorumPort, electionPort, role: roleText, client, spec: line.trim() };
}

/** `host:port`, `[v6]:port` or a bare `port` (every address: `0.0.0.0`). */
function parseClientAddress(text: string): HostAddress | undefined {
  if (/^\d+$/.test(text)) {
    const p = port(text);
    return p === undefined ? undefined : { host: '0.0.0.0', port: p };
  }
  const parts = splitHostPorts(text);
  if (!parts || parts.rest.length !== 1) return undefined;
  const p = port(parts.rest[0]);
  return p === undefined ? undefined : { host: parts.host, port: p };
}

/** `host:a:b...` or `[v6]:a:b...` into the host and the colon-separated rest. */
function splitHostPorts(text: string): { host: string; rest: string[] } | undefined {
  if (text.startsWith('[')) {
    const close = text.indexOf(']');
    if (close === -1 || text[close + 1] !== ':') return undefined;
    return { host: text.slice(1, close), rest: text.slice(close + 2).split(':') };
  }
  const [host = '', ...rest] = text.split(':');
  return host === '' ? undefined : { host, rest };
}

function port(text: string | undefined): number | undefined {
  if (text === undefined || !/^\d{1,5}$/.test(text)) return undefined;
  const n = Number(text);
  return n >= 1 && n <= 65535 ? n : undefined;
}

/**
 * The addresses clients connect to: each member's client address, its quorum host when the
 * member listens on every address (`0.0.0.0` / `::`, as Curator's EnsembleTracker does), observers
 * included; members without a client port are left out. In config order, without duplicates.
 */
export function clientHosts(config: Pick<EnsembleConfig, 'members'>): HostAddress[] {
  const out: HostAddress[] = [];
  for (const m of config.members) {
    if (!m.client) continue;
    const wildcard = m.client.host === '0.0.0.0' || m.client.host === '::' || m.client.host === '0:0:0:0:0:0:0:0';
    const host = { host: wildcard ? m.host : m.client.host, port: m.client.port };
    if (!out.some((h) => sameHost(h, host))) out.push(host);
  }
  return out;
}

/** True when two addresses name the same server (host compared without case). */
export function sameHost(a: HostAddress, b: HostAddress): boolean {
  return a.port === b.port && a.host.toLowerCase() === b.host.toLowerCase();
}

/**
 * Checks a change and builds the request body: incremental (`joining` and/or `leaving`) or
 * non-incremental (`members`), never both, never empty; every id a positive integer, no id both
 * joining and leaving, every member line well formed. Throws {@link InvalidArgumentError}.
 */
export function reconfigBody(change: ReconfigChange): ReconfigBody {
  if (change === null || typeof change !== 'object') throw new InvalidArgumentError('change', 'must be { joining?, leaving?, members?, fromConfig? }');
  const { joining, leaving, members, fromConfig } = change;
  if (fromConfig !== undefined && (typeof fromConfig !== 'bigint' || fromConfig < -1n || fromConfig > 0x7fff_ffff_ffff_ffffn)) {
    throw new InvalidArgumentError('fromConfig', `must be a config version (bigint >= -1n), got ${String(fromConfig)}`);
  }
  const curConfigId = fromConfig ?? -1n;
  if (members !== undefined) {
    if (joining !== undefined || leaving !== undefined) throw new InvalidArgumentError('members', 'a non-incremental reconfig (members) cannot be combined with joining or leaving');
    const lines = memberLines(members, 'members');
    if (lines.length === 0) throw new InvalidArgumentError('members', 'must list at least one member');
    return { joiningServers: null, leavingServers: null, newMembers: lines.join(','), curConfigId };
  }
  const join = joining === undefined ? [] : memberLines(joining, 'joining');
  if (leaving !== undefined && !Array.isArray(leaving)) throw new InvalidArgumentError('leaving', 'must be an array of server ids');
  const leave = leaving ?? [];
  for (const id of leave) {
    if (!Number.isInteger(id) || id < 0) throw new InvalidArgumentError('leaving', `server ids are integers >= 0, got ${String(id)}`);
  }
  if (join.length === 0 && leave.length === 0) throw new InvalidArgumentError('change', 'nothing to change: give joining, leaving or members');
  const joiningIds = join.map((l) => Number(/^server\.(\d+)=/.exec(l)?.[1]));
  const both = leave.find((id) => joiningIds.includes(id));
  if (both !== undefined) throw new InvalidArgumentError('leaving', `server ${both} is both joining and leaving`);
  return {
    joiningServers: join.length > 0 ? join.join(',') : null,
    leavingServers: leave.length > 0 ? leave.join(',') : null,
    newMembers: null,
    curConfigId,
  };
}

function memberLines(list: ReadonlyArray<string | MemberInput>, argument: string): string[] {
  if (!Array.isArray(list)) throw new InvalidArgumentError(argument, 'must be an array of server lines or members');
  const ids = new Set<number>();
  return list.map((item, i) => {
    const line = typeof item === 'string' ? item.trim() : formatMember(item, argument, i);
    // The server splits the list on ',' and each line on ';' and ':' itself.
    if (line.includes(',')) throw new InvalidArgumentError(argument, `entry ${i}: one member per entry, got ${JSON.stringify(line)}`);
    const parsed = parseMemberLine(line);
    if (!parsed) throw new InvalidArgumentError(argument, `entry ${i}: expected server.<id>=<host>:<quorumPort>:<electionPort>[:participant|observer][;[<host>:]<clientPort>], got ${JSON.stringify(line)}`);
    if (ids.has(parsed.id)) throw new InvalidArgumentError(argument, `server ${parsed.id} given twice`);
    ids.add(parsed.id);
    return line;
  });
}

function formatMember(m: MemberInput, argument: string, i: number): string {
  if (m === null || typeof m !== 'object') throw new InvalidArgumentError(argument, `entry ${i}: expected a server line or a member object`);
  if (!Number.isInteger(m.id) || m.id < 0) throw new InvalidArgumentError(argument, `entry ${i}: id must be an integer >= 0`);
  if (typeof m.host !== 'string' || m.host === '') throw new InvalidArgumentError(argument, `entry ${i}: host must be a non-empty string`);
  const host = (h: string) => (h.includes(':') ? `[${h}]` : h);
  const client = m.client ? `;${host(m.client.host)}:${m.client.port}` : '';
  return `server.${m.id}=${host(m.host)}:${m.quorumPort}:${m.electionPort}:${m.role ?? 'participant'}${client}`;
}

/**
 * The host list of {@link ZooKeeper.updateServerList}: a connect string (whose chroot, if any,
 * must be the client's: a session cannot change its chroot) or addresses. Throws
 * {@link InvalidArgumentError}.
 */
export function serverListOf(input: string | readonly HostAddress[], chroot: string): HostAddress[] {
  if (typeof input === 'string') {
    const parsed = parseConnectString(input);
    if (parsed.chroot !== '' && parsed.chroot !== chroot) {
      throw new InvalidArgumentError('hosts', `the chroot ${parsed.chroot} is not the client's (${chroot || 'none'}); a session keeps its chroot`);
    }
    return parsed.hosts.slice();
  }
  if (!Array.isArray(input) || input.length === 0) throw new InvalidArgumentError('hosts', 'must be a connect string or a non-empty array of { host, port }');
  return input.map((h, i) => {
    if (h === null || typeof h !== 'object' || typeof h.host !== 'string' || h.host === '') throw new InvalidArgumentError('hosts', `entry ${i}: host must be a non-empty string`);
    if (!Number.isInteger(h.port) || h.port < 1 || h.port > 65535) throw new InvalidArgumentError('hosts', `entry ${i}: bad port ${String(h.port)}`);
    return { host: h.host, port: h.port };
  });
}

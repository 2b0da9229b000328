/**
 * krb5.conf (MIT's profile format: [sections], `tag = value` relations, `tag = { ... }`
 * subsections, `#` / `;` comments, the `*` final marker, `include` / `includedir`): the parse
 * tree, and the settings this client reads from it: default_realm, dns_canonicalize_hostname,
 * rdns, udp_preference_limit, clockskew, and each realm's kdc list. KRB5_CONFIG names the files.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { KerberosDecodeError } from './errors.js';
import type { KdcAddress } from './kdc-transport.js';

/** A section or subsection: each tag's values in file order (strings, or nested subsections). */
export type ProfileNode = Map<string, Array<string | ProfileNode>>;

/** Parses one file's text into sections. */
export function parseProfile(text: string, into: Map<string, ProfileNode> = new Map()): Map<string, ProfileNode> {
  let section: ProfileNode | undefined;
  const stack: ProfileNode[] = [];
  const lines = text.split(/\r?\n/);
  for (let n = 0; n < lines.length; n++) {
    const line = (lines[n] as string).trim();
    if (line === '' || line.startsWith('#') || line.startsWith(';')) continue;
    const header = /^\[([^\]]+)\]\s*\*?$/.exec(line);
    if (header) {
      if (stack.length > 0) throw new KerberosDecodeError(`krb5.conf line ${n + 1}: a section inside an unclosed '{'`);
      const name = header[1] as string;
      section = into.get(name) ?? new Map();
      into.set(name, section);
      continue;
    }
    if (section === undefined) {
      if (/^include(dir)?\s/.test(line)) continue; // handled by loadKrb5Conf
      throw new KerberosDecodeError(`krb5.conf line ${n + 1}: a relation before any [section]`);
    }
    const current = stack[stack.length - 1] ?? section;
    if (/^}\s*\*?$/.test(line)) {
      if (stack.length === 0) throw new KerberosDecodeError(`krb5.conf line ${n + 1}: '}' without '{'`);
      stack.pop();
      continue;
    }
    const rel = /^([^=\s]+)\s*=\s*(.*)$/.exec(line);
    if (!rel) throw new KerberosDecodeError(`krb5.conf line ${n + 1}: expected 'tag = value'`);
    const tag = rel[1] as string;
    let value = (rel[2] as string).trim();
    if (value === '' && (lines[n + 1] ?? '').trim() === '{') {
      n++;
      value = '{';
    }
    const values = current.get(tag) ?? [];
    current.set(tag, values);
    if (value === '{') {
      const child: ProfileNode = new Map();
      values.push(child);
      stack.push(child);
    } else {
      values.push(value.replace(/\s*\*$/, '').replace(/^"(.*)"$/, '$1'));
    }
  }
  if (stack.length > 0) throw new KerberosDecodeError(`krb5.conf: ${stack.length} unclosed '{'`);
  return into;
}

/** What this client takes from krb5.conf. */
export interface Krb5Config {
  readonly defaultRealm: string | undefined;
  /** MIT default true; 'fallback' tries the name as given first. */
  readonly dnsCanonicalizeHostname: boolean | 'fallback';
  /** Reverse lookup while canonicalising (MIT default true). */
  readonly rdns: boolean;
  readonly udpPreferenceLimit: number | undefined;
  /** Seconds (MIT default 300). */
  readonly clockskew: number;
  readonly realms: ReadonlyMap<string, { readonly kdcs: readonly KdcAddress[] }>;
}

const strings = (node: ProfileNode | undefined, tag: string): string[] => (node?.get(tag) ?? []).filter((v): v is string => typeof v === 'string');

function bool(value: string | undefined, fallback: boolean): boolean {
  if (value === undefined) return fallback;
  return ['y', 'yes', 'true', 't', '1', 'on'].includes(value.toLowerCase());
}

/** `host`, `host:port`, `[v6]:port`; a `tcp/` or `udp/` prefix is dropped; https:// (MS-KKDCP) entries are skipped. */
export function parseKdcEntry(entry: string): KdcAddress | undefined {
  const e = entry.replace(/^(tcp|udp)\//, '');
  if (/^https?:\/\//.test(e)) return undefined;
  const v6 = /^\[([^\]]+)\](?::(\d+))?$/.exec(e);
  if (v6) return { host: v6[1] as string, port: v6[2] ? Number(v6[2]) : 88 };
  const m = /^([^:]+)(?::(\d+))?$/.exec(e);
  if (!m) return undefined;
  return { host: m[1] as string, port: m[2] ? Number(m[2]) : 88 };
}

/** The client settings from a parsed profile. */
export function krb5Config(profile: Map<string, ProfileNode>): Krb5Config {
  const lib = profile.get('libdefaults');
  const first = (tag: string) => strings(lib, tag)[0];
  const canon = first('dns_canonicalize_hostname');
  const realms = new Map<string, { kdcs: KdcAddress[] }>();
  for (const [realm, nodes] of profile.get('realms') ?? []) {
    const node = nodes.find((v): v is ProfileNode => typeof v !== 'string');
    realms.set(realm, { kdcs: strings(node, 'kdc').flatMap((k) => parseKdcEntry(k) ?? []) });
  }
  const limit = first('udp_preference_limit');
  const skew = first('clockskew');
  return {
    defaultRealm: first('default_realm'),
    dnsCanonicalizeHostname: canon?.toLowerCase() === 'fallback' ? 'fallback' : bool(canon, true),
    rdns: bool(first('rdns'), true),
    udpPreferenceLimit: limit === undefined ? undefined : Number(limit),
    clockskew: skew === undefined ? 300 : Number(skew),
    realms,
  };
}

/** Reads KRB5_CONFIG's files (colon-separated; default /etc/krb5.conf), following include / includedir. Missing files are skipped. */
export async function loadKrb5Conf(files: string = process.env.KRB5_CONFIG ?? '/etc/krb5.conf'): Promise<Krb5Config> {
  const profile = new Map<string, ProfileNode>();
  const seen = new Set<string>();
  const load = async (path: string): Promise<void> => {
    if (seen.has(path)) return;
    seen.add(path);
    let text: string;
    try {
      text = await readFile(path, 'utf8');
    } catch {
      return;
    }
    parseProfile(text, profile);
    for (const m of text.matchAll(/^\s*include\s+(\S+)\s*$/gm)) await load(m[1] as string);
    for (const m of text.matchAll(/^\s*includedir\s+(\S+)\s*$/gm)) {
      const dir = m[1] as string;
      const names = await readdir(dir).catch(() => [] as string[]);
      for (const name of names.filter((f) => /^[\w-]+(\.conf)?$/.test(f)).sort()) await load(join(dir, name));
    }
  };
  for (const path of files.split(':').filter(Boolean)) await load(path);
  return krb5Config(profile);
}

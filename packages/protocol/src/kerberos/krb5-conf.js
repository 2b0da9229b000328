/**
 * krb5.conf (MIT's profile format: [sections], `tag = value` relations, `tag = { ... }`
 * subsections, `#` / `;` comments, the `*` final marker, `include` / `includedir`): the parse
 * tree, and the settings this client reads from it: default_realm, dns_canonicalize_hostname,
 * rdns, udp_preference_limit, clockskew, and each realm's kdc list. KRB5_CONFIG names the files.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { KerberosDecodeError } from './errors.js';
/** Parses one file's text into sections. */
export function parseProfile(text, into = new Map()) {
    let section;
    const stack = [];
    const lines = text.split(/\r?\n/);
    for (let n = 0; n < lines.length; n++) {
        const line = lines[n].trim();
        if (line === '' || line.startsWith('#') || line.startsWith(';'))
            continue;
        const header = /^\[([^\]]+)\]\s*\*?$/.exec(line);
        if (header) {
            if (stack.length > 0)
                throw new KerberosDecodeError(`krb5.conf line ${n + 1}: a section inside an unclosed '{'`);
            const name = header[1];
            section = into.get(name) ?? new Map();
            into.set(name, section);
            continue;
        }
        if (section === undefined) {
            if (/^include(dir)?\s/.test(line))
                continue; // handled by loadKrb5Conf
            throw new KerberosDecodeError(`krb5.conf line ${n + 1}: a relation before any [section]`);
        }
        const current = stack[stack.length - 1] ?? section;
        if (/^}\s*\*?$/.test(line)) {
            if (stack.length === 0)
                throw new KerberosDecodeError(`krb5.conf line ${n + 1}: '}' without '{'`);
            stack.pop();
            continue;
        }
        const rel = /^([^=\s]+)\s*=\s*(.*)$/.exec(line);
        if (!rel)
            throw new KerberosDecodeError(`krb5.conf line ${n + 1}: expected 'tag = value'`);
        const tag = rel[1];
        let value = rel[2].trim();
        if (value === '' && (lines[n + 1] ?? '').trim() === '{') {
            n++;
            value = '{';
        }
        const values = current.get(tag) ?? [];
        current.set(tag, values);
        if (value === '{') {
            const child = new Map();
            values.push(child);
            stack.push(child);
        }
        else {
            values.push(value.replace(/\s*\*$/, '').replace(/^"(.*)"$/, '$1'));
        }
    }
    if (stack.length > 0)
        throw new KerberosDecodeError(`krb5.conf: ${stack.length} unclosed '{'`);
    return into;
}
const strings = (node, tag) => (node?.get(tag) ?? []).filter((v) => typeof v === 'string');
function bool(value, fallback) {
    if (value === undefined)
        return fallback;
    return ['y', 'yes', 'true', 't', '1', 'on'].includes(value.toLowerCase());
}
/** `host`, `host:port`, `[v6]:port`; a `tcp/` or `udp/` prefix is dropped; https:// (MS-KKDCP) entries are skipped. */
export function parseKdcEntry(entry) {
    const e = entry.replace(/^(tcp|udp)\//, '');
    if (/^https?:\/\//.test(e))
        return undefined;
    const v6 = /^\[([^\]]+)\](?::(\d+))?$/.exec(e);
    if (v6)
        return { host: v6[1], port: v6[2] ? Number(v6[2]) : 88 };
    const m = /^([^:]+)(?::(\d+))?$/.exec(e);
    if (!m)
        return undefined;
    return { host: m[1], port: m[2] ? Number(m[2]) : 88 };
}
/** The client settings from a parsed profile. */
export function krb5Config(profile) {
    const lib = profile.get('libdefaults');
    const first = (tag) => strings(lib, tag)[0];
    const canon = first('dns_canonicalize_hostname');
    const realms = new Map();
    for (const [realm, nodes] of profile.get('realms') ?? []) {
        const node = nodes.find((v) => typeof v !== 'string');
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
export async function loadKrb5Conf(files = process.env.KRB5_CONFIG ?? '/etc/krb5.conf') {
    const profile = new Map();
    const seen = new Set();
    const load = async (path) => {
        if (seen.has(path))
            return;
        seen.add(path);
        let text;
        try {
            text = await readFile(path, 'utf8');
        }
        catch {
            return;
        }
        parseProfile(text, profile);
        for (const m of text.matchAll(/^\s*include\s+(\S+)\s*$/gm))
            await load(m[1]);
        for (const m of text.matchAll(/^\s*includedir\s+(\S+)\s*$/gm)) {
            const dir = m[1];
            const names = await readdir(dir).catch(() => []);
            for (const name of names.filter((f) => /^[\w-]+(\.conf)?$/.test(f)).sort())
                await load(join(dir, name));
        }
    };
    for (const path of files.split(':').filter(Boolean))
        await load(path);
    return krb5Config(profile);
}
//# sourceMappingURL=krb5-conf.js.map
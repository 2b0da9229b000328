/**
 * MIT credential caches of the FILE: type, versions 3 and 4 (0x0503, 0x0504: big-endian; the
 * format MIT krb5 documents in doc/formats/ccache_file_format.rst): the default principal and
 * each credential (client, server, session key, times, flags, ticket). Configuration entries
 * (server realm X-CACHECONF:) are skipped. KRB5CCNAME names the file (`FILE:/path` or a path).
 */
import { readFile } from 'node:fs/promises';
import { Credential } from './credential.js';
import { decode } from './der.js';
import { KerberosDecodeError, TicketExpiredError } from './errors.js';
import { EncryptionKey } from './keys.js';
import { decodeTicket } from './messages.js';
import { principalText, samePrincipal, tgsPrincipal, type Principal } from './principal.js';

/** A parsed credential cache. */
export interface CredentialCache {
  readonly version: 3 | 4;
  readonly defaultPrincipal: Principal;
  readonly credentials: readonly Credential[];
  /** The KDC time offset header (v4), seconds, when kinit recorded one. */
  readonly kdcOffset: number | undefined;
}

class Reader {
  pos = 0;
  constructor(readonly buf: Buffer) {}
  need(n: number): void {
    if (this.pos + n > this.buf.length) throw new KerberosDecodeError(`ccache: truncated at offset ${this.pos}`);
  }
  u8(): number {
    this.need(1);
    return this.buf.readUInt8(this.pos++);
  }
  u16(): number {
    this.need(2);
    this.pos += 2;
    return this.buf.readUInt16BE(this.pos - 2);
  }
  u32(): number {
    this.need(4);
    this.pos += 4;
    return this.buf.readUInt32BE(this.pos - 4);
  }
  i32(): number {
    this.need(4);
    this.pos += 4;
    return this.buf.readInt32BE(this.pos - 4);
  }
  data(): Buffer {
    const n = this.u32();
    this.need(n);
    this.pos += n;
    return this.buf.subarray(this.pos - n, this.pos);
  }
  principal(): Principal {
    const nameType = this.u32();
    const count = this.u32();
    if (count > 64) throw new KerberosDecodeError(`ccache: a principal of ${count} components`);
    const realm = this.data().toString('utf8');
    const components: string[] = [];
    for (let i = 0; i < count; i++) components.push(this.data().toString('utf8'));
    return { nameType, components, realm };
  }
  time(): Date | undefined {
    const t = this.u32();
    return t === 0 ? undefined : new Date(t * 1000);
  }
}

/** Parses a ccache file's bytes. */
export function parseCcache(buf: Buffer): CredentialCache {
  if (buf.length < 2 || buf[0] !== 5 || (buf[1] !== 3 && buf[1] !== 4)) throw new KerberosDecodeError('ccache: not an MIT FILE ccache of version 3 or 4 (0x0503, 0x0504)');
  const version = buf[1] as 3 | 4;
  const r = new Reader(buf);
  r.pos = 2;
  let kdcOffset: number | undefined;
  if (version === 4) {
    const end = r.u16() + r.pos;
    while (r.pos < end) {
      const tag = r.u16();
      const len = r.u16();
      r.need(len);
      if (tag === 1 && len === 8) kdcOffset = buf.readInt32BE(r.pos);
      r.pos += len;
    }
  }
  const defaultPrincipal = r.principal();
  const credentials: Credential[] = [];
  while (r.pos < buf.length) {
    const client = r.principal();
    const server = r.principal();
    const enctype = r.u16();
    // Version 3 stores the enctype twice (MIT ccache_file_format.rst, "keyblock").
    if (version === 3) r.u16();
    const key = new EncryptionKey(enctype, r.data());
    const authtime = r.time();
    const starttime = r.time();
    const endtime = r.time();
    const renewTill = r.time();
    r.u8(); // is_skey
    const flags = r.u32();
    for (let n = r.u32(); n > 0; n--) (r.u16(), r.data());
    for (let n = r.u32(); n > 0; n--) (r.u16(), r.data());
    const ticket = r.data();
    r.data(); // second ticket (user-to-user)
    if (server.realm === 'X-CACHECONF:') continue;
    credentials.push(new Credential(client, server, decodeTicket(decode(ticket)), key, { authtime: authtime ?? new Date(0), starttime, endtime: endtime ?? new Date(0), renewTill }, flags));
  }
  return { version, defaultPrincipal, credentials, kdcOffset };
}

/** The file a KRB5CCNAME names: `FILE:/path` or a bare path; other types (KEYRING:, KCM:, DIR:) are refused. Default /tmp/krb5cc_<uid>. */
export function ccachePath(name: string | undefined = process.env.KRB5CCNAME): string {
  if (name === undefined || name === '') return `/tmp/krb5cc_${process.getuid?.() ?? 0}`;
  if (name.startsWith('FILE:')) return name.slice(5);
  const type = /^([A-Z]+):/.exec(name)?.[1];
  if (type !== undefined) throw new KerberosDecodeError(`KRB5CCNAME=${type}:... is not a FILE: cache; this client reads FILE: caches only (kinit -c FILE:/path)`);
  return name;
}

export async function readCcache(path: string = ccachePath()): Promise<CredentialCache> {
  return parseCcache(await readFile(path));
}

/** The cache's TGT (krbtgt/REALM@REALM for its default principal), expired or not; undefined when it holds none. */
export function tgtOf(cache: CredentialCache): Credential | undefined {
  const realm = cache.defaultPrincipal.realm;
  return cache.credentials.find((c) => samePrincipal(c.server, tgsPrincipal(realm)) && samePrincipal(c.client, cache.defaultPrincipal));
}

/** The cache's TGT for its default principal's realm; TicketExpiredError when it has expired. */
export function cachedTgt(cache: CredentialCache, now: number = Date.now()): Credential {
  const realm = cache.defaultPrincipal.realm;
  const tgt = tgtOf(cache);
  if (!tgt) throw new TicketExpiredError(`the credential cache holds no TGT for ${principalText(cache.defaultPrincipal)} (krbtgt/${realm}): run kinit`);
  if (tgt.expiresWithin(0, now)) throw new TicketExpiredError(`the TGT of ${principalText(cache.defaultPrincipal)} in the credential cache expired at ${tgt.times.endtime.toISOString()}, and there is no keytab or password to get another: run kinit`);
  return tgt;
}

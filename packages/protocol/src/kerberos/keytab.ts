/**
 * MIT keytab files (the FILE: keytab format, version 0x0502; 0x0501 read too): every entry's
 * principal, timestamp, kvno and key. Holes (negative record sizes left by deleted entries) are
 * skipped. Format: MIT krb5's doc/formats/keytab_file_format.rst.
 */
import { readFile } from 'node:fs/promises';
import { KerberosDecodeError, PreauthFailedError } from './errors.js';
import { EncryptionKey } from './keys.js';
import { principalText, samePrincipal, type Principal } from './principal.js';

/** One keytab entry. */
export interface KeytabEntry {
  readonly principal: Principal;
  readonly timestamp: Date;
  readonly kvno: number;
  readonly key: EncryptionKey;
}

class Cursor {
  pos = 0;
  constructor(
    readonly buf: Buffer,
    readonly end: number,
  ) {}
  need(n: number): void {
    if (this.pos + n > this.end) throw new KerberosDecodeError(`keytab: truncated record at offset ${this.pos}`);
  }
  u8(): number {
    this.need(1);
    return this.buf.readUInt8(this.pos++);
  }
  u16(): number {
    this.need(2);
    const v = this.buf.readUInt16BE(this.pos);
    this.pos += 2;
    return v;
  }
  u32(): number {
    this.need(4);
    const v = this.buf.readUInt32BE(this.pos);
    this.pos += 4;
    return v;
  }
  bytes(): Buffer {
    const n = this.u16();
    this.need(n);
    const b = this.buf.subarray(this.pos, this.pos + n);
    this.pos += n;
    return b;
  }
}

/** Parses a keytab's bytes. */
export function parseKeytab(buf: Buffer): KeytabEntry[] {
  if (buf.length < 2 || buf[0] !== 0x05 || (buf[1] !== 0x02 && buf[1] !== 0x01)) throw new KerberosDecodeError('keytab: not an MIT keytab (version 0x0502 or 0x0501 expected)');
  const v1 = buf[1] === 0x01;
  const entries: KeytabEntry[] = [];
  let pos = 2;
  while (pos + 4 <= buf.length) {
    const size = buf.readInt32BE(pos);
    pos += 4;
    if (size === 0) break;
    if (size < 0) {
      pos += -size;
      continue;
    }
    if (pos + size > buf.length) throw new KerberosDecodeError(`keytab: record of ${size} bytes at offset ${pos - 4} runs past the end`);
    const c = new Cursor(buf, pos + size);
    c.pos = pos;
    let count = c.u16();
    if (v1) count -= 1; // 0x0501 counted the realm among the components
    const realm = c.bytes().toString('utf8');
    const components: string[] = [];
    for (let i = 0; i < count; i++) components.push(c.bytes().toString('utf8'));
    const nameType = v1 ? 1 : c.u32();
    const timestamp = new Date(c.u32() * 1000);
    let kvno = c.u8();
    const enctype = c.u16();
    const key = new EncryptionKey(enctype, c.bytes());
    // A 32-bit kvno follows when the record has room for it (kvno above 255).
    if (c.pos + 4 <= c.end) {
      const wide = c.u32();
      if (wide !== 0) kvno = wide;
    }
    entries.push({ principal: { nameType, components, realm }, timestamp, kvno, key });
    pos += size;
  }
  return entries;
}

export async function readKeytab(path: string): Promise<KeytabEntry[]> {
  return parseKeytab(await readFile(path));
}

/**
 * The principal's keys of its highest kvno in the keytab. A keytab without them is the wrong
 * keytab (PreauthFailedError, naming the principals it does hold), not a malformed file.
 */
export function keysFor(entries: readonly KeytabEntry[], principal: Principal, path = 'the keytab'): EncryptionKey[] {
  const mine = entries.filter((e) => samePrincipal(e.principal, principal));
  if (mine.length === 0) {
    const held = [...new Set(entries.map((e) => principalText(e.principal)))].join(', ') || 'none';
    throw new PreauthFailedError(`${path} has no key for ${principalText(principal)} (it holds: ${held}): give the keytab of ${principalText(principal)}, or the principal the keytab is for (klist -kt)`);
  }
  const kvno = Math.max(...mine.map((e) => e.kvno));
  return mine.filter((e) => e.kvno === kvno).map((e) => e.key);
}

/**
 * A minimal DER codec (X.690) for the ASN.1 that Kerberos (RFC 4120 §5) and GSS-API (RFC 2743
 * §3.1) use: INTEGER, OCTET STRING, GeneralString (KerberosString), GeneralizedTime
 * (KerberosTime), BIT STRING (KerberosFlags), SEQUENCE / SEQUENCE OF, [n] EXPLICIT context tags
 * and [APPLICATION n] tags. Encoders return Buffers; the decoder reads one TLV at a time, checks
 * every length against what is left, and throws KerberosDecodeError on anything else.
 */
import { KerberosDecodeError } from './errors.js';

/** The first identifier octet's class bits (X.690 §8.1.2.2). */
export const TagClass = { universal: 0x00, application: 0x40, context: 0x80, private: 0xc0 } as const;
const CONSTRUCTED = 0x20;

/** Universal tag numbers used here. */
export const Universal = { INTEGER: 2, BIT_STRING: 3, OCTET_STRING: 4, SEQUENCE: 16, GeneralizedTime: 24, GeneralString: 27 } as const;

// ---- encoding ------------------------------------------------------------------------------

function lengthOctets(n: number): Buffer {
  if (n < 0x80) return Buffer.from([n]);
  const bytes: number[] = [];
  for (let v = n; v > 0; v = Math.floor(v / 256)) bytes.unshift(v & 0xff);
  return Buffer.from([0x80 | bytes.length, ...bytes]);
}

/** One TLV with a single-octet identifier (every tag Kerberos uses is below 31). */
export function tlv(identifier: number, content: Buffer): Buffer {
  return Buffer.concat([Buffer.from([identifier]), lengthOctets(content.length), content]);
}

/** INTEGER, minimal two's complement (Kerberos uses Int32, UInt32 and microseconds). */
export function integer(value: number | bigint): Buffer {
  let v = BigInt(value);
  const bytes: number[] = [];
  // Emit bytes until the remaining value is all sign and the top bit already shows that sign.
  for (;;) {
    const byte = Number(v & 0xffn);
    bytes.unshift(byte);
    v >>= 8n;
    if ((v === 0n && (byte & 0x80) === 0) || (v === -1n && (byte & 0x80) !== 0)) break;
  }
  return tlv(Universal.INTEGER, Buffer.from(bytes));
}

export function octetString(value: Buffer): Buffer {
  return tlv(Universal.OCTET_STRING, value);
}

/** GeneralString; Kerberos names are IA5 in practice, so their UTF-8 bytes (RFC 4120 §5.2.1). */
export function generalString(value: string): Buffer {
  return tlv(Universal.GeneralString, Buffer.from(value, 'utf8'));
}

/** KerberosTime: GeneralizedTime `YYYYMMDDHHMMSSZ`, UTC, no fraction (RFC 4120 §5.2.3). */
export function kerberosTime(date: Date): Buffer {
  const iso = date.toISOString(); // 2024-01-02T03:04:05.678Z
  const text = `${iso.slice(0, 4)}${iso.slice(5, 7)}${iso.slice(8, 10)}${iso.slice(11, 13)}${iso.slice(14, 16)}${iso.slice(17, 19)}Z`;
  return tlv(Universal.GeneralizedTime, Buffer.from(text, 'ascii'));
}

/**
 * KerberosFlags: a BIT STRING of at least 32 bits (RFC 4120 §5.2.8), here always exactly 32;
 * `flags` holds Kerberos bit 0 (the leftmost) in its most significant bit.
 */
export function kerberosFlags(flags: number): Buffer {
  const content = Buffer.alloc(5);
  content.writeUInt32BE(flags >>> 0, 1);
  return tlv(Universal.BIT_STRING, content);
}

/** The uint32 with the given Kerberos bit numbers set (bit 0 = most significant). */
export function flagBits(...bits: number[]): number {
  return bits.reduce((acc, b) => (acc | (1 << (31 - b))) >>> 0, 0);
}

/** SEQUENCE of the given encoded elements; `undefined` ones (absent OPTIONAL fields) are left out. */
export function sequence(elements: ReadonlyArray<Buffer | undefined>): Buffer {
  return tlv(TagClass.universal | CONSTRUCTED | Universal.SEQUENCE, Buffer.concat(elements.filter((e): e is Buffer => e !== undefined)));
}

/** `[n] EXPLICIT` around one encoded element; undefined stays undefined (an absent OPTIONAL). */
export function explicit(n: number, inner: Buffer | undefined): Buffer | undefined {
  return inner === undefined ? undefined : tlv(TagClass.context | CONSTRUCTED | n, inner);
}

/** `[APPLICATION n]` around one encoded element (always constructed in Kerberos). */
export function application(n: number, inner: Buffer): Buffer {
  return tlv(TagClass.application | CONSTRUCTED | n, inner);
}

// ---- decoding ------------------------------------------------------------------------------

/** One decoded TLV: its identifier octet, its content, and where the next one starts. */
export interface Tlv {
  readonly identifier: number;
  readonly tagClass: number;
  readonly constructed: boolean;
  readonly tagNumber: number;
  readonly content: Buffer;
  /** The whole TLV, identifier and length included (kept for checksums over encodings). */
  readonly raw: Buffer;
}

/** Reads the TLV at `offset`; returns it and the offset after it. */
export function readTlv(buf: Buffer, offset = 0): { tlv: Tlv; next: number } {
  if (offset >= buf.length) throw new KerberosDecodeError(`DER: expected a TLV at offset ${offset}, got the end of ${buf.length} bytes`);
  const identifier = buf[offset] as number;
  if ((identifier & 0x1f) === 0x1f) throw new KerberosDecodeError(`DER: multi-octet tag at offset ${offset} (none is used by Kerberos)`);
  let pos = offset + 1;
  if (pos >= buf.length) throw new KerberosDecodeError(`DER: truncated length at offset ${pos}`);
  const first = buf[pos++] as number;
  let length = first;
  if (first === 0x80) throw new KerberosDecodeError(`DER: indefinite length at offset ${offset} (not DER)`);
  if (first > 0x80) {
    const count = first & 0x7f;
    if (count > 4) throw new KerberosDecodeError(`DER: a ${count}-octet length at offset ${offset}`);
    if (pos + count > buf.length) throw new KerberosDecodeError(`DER: truncated length at offset ${pos}`);
    length = 0;
    for (let i = 0; i < count; i++) length = length * 256 + (buf[pos++] as number);
  }
  if (pos + length > buf.length) throw new KerberosDecodeError(`DER: length ${length} at offset ${offset} runs past the end (${buf.length - pos} left)`);
  const tlv: Tlv = {
    identifier,
    tagClass: identifier & 0xc0,
    constructed: (identifier & CONSTRUCTED) !== 0,
    tagNumber: identifier & 0x1f,
    content: buf.subarray(pos, pos + length),
    raw: buf.subarray(offset, pos + length),
  };
  return { tlv, next: pos + length };
}

/** Decodes exactly one TLV filling `buf` (trailing bytes are an error). */
export function decode(buf: Buffer): Tlv {
  const { tlv, next } = readTlv(buf, 0);
  if (next !== buf.length) throw new KerberosDecodeError(`DER: ${buf.length - next} trailing bytes after the element`);
  return tlv;
}

/** The TLVs inside a constructed element, in order. */
export function children(parent: Tlv): Tlv[] {
  if (!parent.constructed) throw new KerberosDecodeError(`DER: tag 0x${parent.identifier.toString(16)} is primitive, expected a constructed element`);
  const out: Tlv[] = [];
  for (let pos = 0; pos < parent.content.length; ) {
    const { tlv, next } = readTlv(parent.content, pos);
    out.push(tlv);
    pos = next;
  }
  return out;
}

function expectIdentifier(t: Tlv, identifier: number, what: string): void {
  if (t.identifier !== identifier) throw new KerberosDecodeError(`DER: ${what}: expected tag 0x${identifier.toString(16)}, got 0x${t.identifier.toString(16)}`);
}

/** The element inside `[APPLICATION n]`. */
export function unwrapApplication(t: Tlv, n: number, what: string): Tlv {
  expectIdentifier(t, TagClass.application | CONSTRUCTED | n, what);
  return decode(t.content);
}

/** The elements of a SEQUENCE / SEQUENCE OF. */
export function sequenceOf(t: Tlv, what: string): Tlv[] {
  expectIdentifier(t, CONSTRUCTED | Universal.SEQUENCE, what);
  return children(t);
}

/**
 * The fields of a SEQUENCE whose components are all `[n] EXPLICIT` (as every Kerberos record's
 * are), by n, unwrapped. Tags must increase; an unknown tag is kept (extensibility markers).
 */
export function fields(t: Tlv, what: string): Fields {
  const map = new Map<number, Tlv>();
  let last = -1;
  for (const c of sequenceOf(t, what)) {
    if (c.tagClass !== TagClass.context || !c.constructed) throw new KerberosDecodeError(`DER: ${what}: a field without a context tag (0x${c.identifier.toString(16)})`);
    if (c.tagNumber <= last) throw new KerberosDecodeError(`DER: ${what}: field [${c.tagNumber}] out of order`);
    last = c.tagNumber;
    map.set(c.tagNumber, decode(c.content));
  }
  return new Fields(map, what);
}

/** A record's fields by context tag, with required / optional access. */
export class Fields {
  constructor(
    private readonly map: ReadonlyMap<number, Tlv>,
    private readonly what: string,
  ) {}

  required(n: number, name: string): Tlv {
    const t = this.map.get(n);
    if (t === undefined) throw new KerberosDecodeError(`DER: ${this.what}: missing ${name} [${n}]`);
    return t;
  }

  optional(n: number): Tlv | undefined {
    return this.map.get(n);
  }
}

/** INTEGER as a number (Kerberos integers fit: Int32, UInt32, Microseconds). */
export function asInteger(t: Tlv, what = 'INTEGER'): number {
  expectIdentifier(t, Universal.INTEGER, what);
  if (t.content.length === 0 || t.content.length > 5) throw new KerberosDecodeError(`DER: ${what}: an INTEGER of ${t.content.length} octets`);
  let v = BigInt.asIntN(8, BigInt(t.content[0] as number));
  for (let i = 1; i < t.content.length; i++) v = (v << 8n) | BigInt(t.content[i] as number);
  return Number(v);
}

export function asOctetString(t: Tlv, what = 'OCTET STRING'): Buffer {
  expectIdentifier(t, Universal.OCTET_STRING, what);
  return t.content;
}

export function asGeneralString(t: Tlv, what = 'GeneralString'): string {
  expectIdentifier(t, Universal.GeneralString, what);
  return t.content.toString('utf8');
}

/** KerberosTime; a fractional part, which RFC 4120 forbids but some encoders send, is accepted. */
export function asKerberosTime(t: Tlv, what = 'KerberosTime'): Date {
  expectIdentifier(t, Universal.GeneralizedTime, what);
  const m = /^(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})(?:\.(\d+))?Z$/.exec(t.content.toString('ascii'));
  if (!m) throw new KerberosDecodeError(`DER: ${what}: not a UTC GeneralizedTime`);
  const [, y, mo, d, h, mi, s, frac] = m;
  const ms = frac === undefined ? 0 : Math.floor(Number(`0.${frac}`) * 1000);
  return new Date(Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s), ms));
}

/** KerberosFlags as a uint32 (bit 0 = most significant); bits past 31 are ignored. */
export function asKerberosFlags(t: Tlv, what = 'KerberosFlags'): number {
  expectIdentifier(t, Universal.BIT_STRING, what);
  if (t.content.length === 0) throw new KerberosDecodeError(`DER: ${what}: empty BIT STRING`);
  const bits = Buffer.alloc(4);
  t.content.subarray(1, 5).copy(bits);
  return bits.readUInt32BE(0);
}

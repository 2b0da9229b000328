/**
 * What an encryption type is (RFC 3961 §3), as the four AES enctypes need it, and the encrypt /
 * decrypt / checksum operations every one of them shares: a random confounder block, CBC-CTS
 * with a zero IV, and a truncated HMAC, over keys derived per key usage (RFC 4120 §7.5.1).
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { ctsDecrypt, ctsEncrypt } from './aes-cts.js';
import { IntegrityError, KerberosDecodeError } from './errors.js';

/** The keys derived from a base key for one usage: checksum, encryption, integrity. */
export interface UsageKeys {
  readonly kc: Buffer;
  readonly ke: Buffer;
  readonly ki: Buffer;
}

/** One encryption type's parameters and key functions. */
export interface Enctype {
  /** The etype number (IANA Kerberos registry). */
  readonly id: number;
  readonly name: string;
  readonly keySize: number;
  /** The checksum type of the same family (used in authenticators and GSS tokens). */
  readonly checksumType: number;
  /** Bytes of the truncated HMAC. */
  readonly macSize: number;
  /** RFC 8009 MACs the IV and ciphertext; RFC 3962 the confounder and plaintext. */
  readonly macOverCiphertext: boolean;
  stringToKey(password: Buffer, salt: Buffer, s2kparams?: Buffer): Buffer;
  usageKeys(base: Buffer, usage: number): UsageKeys;
  mac(key: Buffer, data: Buffer): Buffer;
}

/** The 5-byte derivation constant: the usage as 4 big-endian bytes, then 0x99 (Kc), 0xAA (Ke) or 0x55 (Ki). */
export function usageConstant(usage: number, kind: 0x99 | 0xaa | 0x55): Buffer {
  const c = Buffer.alloc(5);
  c.writeUInt32BE(usage, 0);
  c[4] = kind;
  return c;
}

const CONFOUNDER = 16;

/** Encrypts with a fresh confounder (`confounder` is for known-answer tests). */
export function encryptWith(e: Enctype, base: Buffer, usage: number, plaintext: Buffer, confounder: Buffer = randomBytes(CONFOUNDER)): Buffer {
  const { ke, ki } = e.usageKeys(base, usage);
  const data = Buffer.concat([confounder, plaintext]);
  const c = ctsEncrypt(ke, data);
  const h = e.macOverCiphertext ? e.mac(ki, Buffer.concat([Buffer.alloc(16), c])) : e.mac(ki, data);
  return Buffer.concat([c, h]);
}

/** Decrypts and checks integrity; throws IntegrityError when the key or the bytes are wrong. */
export function decryptWith(e: Enctype, base: Buffer, usage: number, ciphertext: Buffer): Buffer {
  if (ciphertext.length < CONFOUNDER + e.macSize) throw new KerberosDecodeError(`${e.name}: ciphertext of ${ciphertext.length} bytes is too short`);
  const { ke, ki } = e.usageKeys(base, usage);
  const c = ciphertext.subarray(0, ciphertext.length - e.macSize);
  const h = ciphertext.subarray(ciphertext.length - e.macSize);
  const check = (expected: Buffer) => {
    if (!timingSafeEqual(expected, h)) throw new IntegrityError(`${e.name}: integrity check failed (key usage ${usage}): wrong key, or the message was altered`);
  };
  if (e.macOverCiphertext) check(e.mac(ki, Buffer.concat([Buffer.alloc(16), c])));
  const data = ctsDecrypt(ke, c);
  if (!e.macOverCiphertext) check(e.mac(ki, data));
  return data.subarray(CONFOUNDER);
}

/** The keyed checksum of the enctype's family (RFC 3961 §5.4 / RFC 8009 §5) with Kc. */
export function checksumWith(e: Enctype, base: Buffer, usage: number, data: Buffer): Buffer {
  return e.mac(e.usageKeys(base, usage).kc, data);
}

/**
 * The enctypes this client speaks, by number, and the key operations on EncryptionKey holders:
 * string-to-key, encrypt, decrypt, checksum. The rest of kerberos/ uses these, never the profiles.
 */
import { timingSafeEqual } from 'node:crypto';
import { checksumWith, decryptWith, encryptWith, type Enctype } from './enctype.js';
import { IntegrityError, NoUsableEnctypeError } from './errors.js';
import { EncryptionKey } from './keys.js';
import { aes128CtsHmacSha196, aes256CtsHmacSha196 } from './rfc3962.js';
import { aes128CtsHmacSha256128, aes256CtsHmacSha384192 } from './rfc8009.js';

/** Enctype numbers (IANA "Kerberos Encryption Type Numbers"). */
export const EncType = {
  aes128CtsHmacSha196: 17,
  aes256CtsHmacSha196: 18,
  aes128CtsHmacSha256128: 19,
  aes256CtsHmacSha384192: 20,
} as const;

const byId = new Map<number, Enctype>([aes256CtsHmacSha384192, aes128CtsHmacSha256128, aes256CtsHmacSha196, aes128CtsHmacSha196].map((e) => [e.id, e]));

/** Our preference order, strongest first, as sent in a KDC-REQ's etype list. */
export const SUPPORTED_ENCTYPES: readonly number[] = [...byId.keys()];

/** True for the enctypes implemented here. */
export function isSupported(enctype: number): boolean {
  return byId.has(enctype);
}

export function enctype(id: number): Enctype {
  const e = byId.get(id);
  if (!e) throw new NoUsableEnctypeError(`enctype ${id} is not supported (supported: ${SUPPORTED_ENCTYPES.join(', ')}; check permitted_enctypes / the principal's keys in the KDC)`);
  return e;
}

/** The enctype's name, or `enctype <n>` for one we do not speak. */
export function enctypeName(id: number): string {
  return byId.get(id)?.name ?? `enctype ${id}`;
}

/** A long-term key from a password and salt (the principal's salt: realm and name components, unless the KDC says otherwise). */
export function stringToKey(id: number, password: string | Buffer, salt: string | Buffer, s2kparams?: Buffer): EncryptionKey {
  const e = enctype(id);
  const bytes = e.stringToKey(Buffer.from(password), Buffer.from(salt), s2kparams);
  const key = new EncryptionKey(id, bytes);
  bytes.fill(0);
  return key;
}

export function encrypt(key: EncryptionKey, usage: number, plaintext: Buffer): Buffer {
  return encryptWith(enctype(key.enctype), key.material(), usage, plaintext);
}

export function decrypt(key: EncryptionKey, usage: number, ciphertext: Buffer): Buffer {
  return decryptWith(enctype(key.enctype), key.material(), usage, ciphertext);
}

/** The keyed checksum of `data` for `usage`, with its checksum type. */
export function checksum(key: EncryptionKey, usage: number, data: Buffer): { type: number; value: Buffer } {
  const e = enctype(key.enctype);
  return { type: e.checksumType, value: checksumWith(e, key.material(), usage, data) };
}

export function verifyChecksum(key: EncryptionKey, usage: number, data: Buffer, value: Buffer): void {
  const expected = checksum(key, usage, data).value;
  if (expected.length !== value.length || !timingSafeEqual(expected, value)) throw new IntegrityError(`checksum mismatch (key usage ${usage}): wrong key, or the message was altered`);
}

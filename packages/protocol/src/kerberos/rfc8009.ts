/**
 * RFC 8009: aes128-cts-hmac-sha256-128 (19) and aes256-cts-hmac-sha384-192 (20). PBKDF2 over
 * SHA-2 with the enctype name in the salt, KDF-HMAC-SHA2 (SP 800-108 counter mode) for every
 * derived key, and an HMAC over the IV and ciphertext (encrypt-then-MAC) for integrity.
 */
import { createHmac, pbkdf2Sync } from 'node:crypto';
import { usageConstant, type Enctype, type UsageKeys } from './enctype.js';

/** KDF-HMAC-SHA2 (RFC 8009 §3): the first `bits` of HMAC(key, 00000001 | label | 00 | bits). */
export function kdfHmacSha2(hash: 'sha256' | 'sha384', key: Buffer, label: Buffer, bits: number): Buffer {
  const i = Buffer.from([0, 0, 0, 1]);
  const k = Buffer.alloc(4);
  k.writeUInt32BE(bits, 0);
  return createHmac(hash, key).update(Buffer.concat([i, label, Buffer.from([0]), k])).digest().subarray(0, bits / 8);
}

function profile(id: 19 | 20): Enctype {
  const is128 = id === 19;
  const name = is128 ? 'aes128-cts-hmac-sha256-128' : 'aes256-cts-hmac-sha384-192';
  const hash = is128 ? 'sha256' : 'sha384';
  const keySize = is128 ? 16 : 32;
  // Kc and Ki are 128 bits for aes128, 192 for aes256; Ke is the AES key length (§5).
  const macBits = is128 ? 128 : 192;
  return {
    id,
    name,
    keySize,
    checksumType: is128 ? 19 : 20,
    macSize: macBits / 8,
    macOverCiphertext: true,
    // saltp = enctype name | 0x00 | salt; 32768 iterations by default (§4).
    stringToKey(password, salt, params) {
      const iterations = params && params.length === 4 ? params.readUInt32BE(0) : 32768;
      const saltp = Buffer.concat([Buffer.from(name), Buffer.from([0]), salt]);
      const tkey = pbkdf2Sync(password, saltp, iterations, keySize, hash);
      return kdfHmacSha2(hash, tkey, Buffer.from('kerberos'), keySize * 8);
    },
    usageKeys(base, usage): UsageKeys {
      return {
        kc: kdfHmacSha2(hash, base, usageConstant(usage, 0x99), macBits),
        ke: kdfHmacSha2(hash, base, usageConstant(usage, 0xaa), keySize * 8),
        ki: kdfHmacSha2(hash, base, usageConstant(usage, 0x55), macBits),
      };
    },
    mac: (key, data) => createHmac(hash, key).update(data).digest().subarray(0, macBits / 8),
  };
}

export const aes128CtsHmacSha256128 = profile(19);
export const aes256CtsHmacSha384192 = profile(20);

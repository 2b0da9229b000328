/**
 * The simplified profile of RFC 3961 §5.3 for AES (RFC 3962): aes128-cts-hmac-sha1-96 (17) and
 * aes256-cts-hmac-sha1-96 (18). PBKDF2-HMAC-SHA1 string-to-key, DK key derivation from n-fold,
 * CBC-CTS encryption with a confounder, HMAC-SHA1 truncated to 96 bits for integrity.
 */
import { createHmac, pbkdf2Sync } from 'node:crypto';
import { ctsEncrypt, nfold } from './aes-cts.js';
import { usageConstant, type Enctype, type UsageKeys } from './enctype.js';

/** DR (RFC 3961 §5.1): AES of the n-folded constant, then of each output, until the key length is filled. */
function derive(key: Buffer, constant: Buffer): Buffer {
  let block = constant.length === 16 ? constant : nfold(constant, 16);
  const out: Buffer[] = [];
  for (let have = 0; have < key.length; have += 16) {
    block = ctsEncrypt(key, block);
    out.push(block);
  }
  return Buffer.concat(out).subarray(0, key.length);
}

function profile(id: 17 | 18, keySize: 16 | 32, checksumType: number): Enctype {
  const hmac96 = (key: Buffer, data: Buffer) => createHmac('sha1', key).update(data).digest().subarray(0, 12);
  return {
    id,
    name: id === 17 ? 'aes128-cts-hmac-sha1-96' : 'aes256-cts-hmac-sha1-96',
    keySize,
    checksumType,
    macSize: 12,
    macOverCiphertext: false,
    // 4096 iterations unless the KDC's s2kparams say otherwise (RFC 3962 §4).
    stringToKey(password, salt, params) {
      const iterations = params && params.length === 4 ? params.readUInt32BE(0) : 4096;
      const tkey = pbkdf2Sync(password, salt, iterations, keySize, 'sha1');
      return derive(tkey, Buffer.from('kerberos'));
    },
    usageKeys(base, usage): UsageKeys {
      return { kc: derive(base, usageConstant(usage, 0x99)), ke: derive(base, usageConstant(usage, 0xaa)), ki: derive(base, usageConstant(usage, 0x55)) };
    },
    mac: hmac96,
  };
}

export const aes128CtsHmacSha196 = profile(17, 16, 15);
export const aes256CtsHmacSha196 = profile(18, 32, 16);

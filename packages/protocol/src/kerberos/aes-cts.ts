/**
 * AES in CBC mode with ciphertext stealing as Kerberos uses it (RFC 3962 §5: CBC-CS3, the last
 * two blocks always swapped, a single block plain CBC) over node:crypto's aes-*-cbc and aes-*-ecb,
 * and RFC 3961's n-fold (§5.1), the other primitive its key derivation needs.
 */
import { createCipheriv, createDecipheriv } from 'node:crypto';
import { KerberosDecodeError } from './errors.js';

const BLOCK = 16;

function cipherName(key: Buffer, mode: 'cbc' | 'ecb'): string {
  if (key.length !== 16 && key.length !== 32) throw new RangeError(`AES key of ${key.length} bytes (expected 16 or 32)`);
  return `aes-${key.length * 8}-${mode}`;
}

function cbc(encrypt: boolean, key: Buffer, iv: Buffer, data: Buffer): Buffer {
  const c = encrypt ? createCipheriv(cipherName(key, 'cbc'), key, iv) : createDecipheriv(cipherName(key, 'cbc'), key, iv);
  c.setAutoPadding(false);
  return Buffer.concat([c.update(data), c.final()]);
}

function ecbDecryptBlock(key: Buffer, block: Buffer): Buffer {
  const d = createDecipheriv(cipherName(key, 'ecb'), key, null);
  d.setAutoPadding(false);
  return Buffer.concat([d.update(block), d.final()]);
}

/** Encrypts at least one block; the output is exactly as long as the input. */
export function ctsEncrypt(key: Buffer, plaintext: Buffer, iv: Buffer = Buffer.alloc(BLOCK)): Buffer {
  if (plaintext.length < BLOCK) throw new RangeError(`CBC-CTS needs at least ${BLOCK} bytes, got ${plaintext.length}`);
  if (plaintext.length === BLOCK) return cbc(true, key, iv, plaintext);
  // CBC over the zero-padded input: the padding's ciphertext bytes are exactly what stealing
  // drops, so the output is C1..Cn-2, Cn, then Cn-1 cut to the last block's length.
  const blocks = Math.ceil(plaintext.length / BLOCK);
  const tail = plaintext.length - (blocks - 1) * BLOCK;
  const padded = Buffer.alloc(blocks * BLOCK);
  plaintext.copy(padded);
  const c = cbc(true, key, iv, padded);
  const last = c.subarray((blocks - 1) * BLOCK);
  const beforeLast = c.subarray((blocks - 2) * BLOCK, (blocks - 1) * BLOCK);
  return Buffer.concat([c.subarray(0, (blocks - 2) * BLOCK), last, beforeLast.subarray(0, tail)]);
}

/** Inverse of {@link ctsEncrypt}. */
export function ctsDecrypt(key: Buffer, ciphertext: Buffer, iv: Buffer = Buffer.alloc(BLOCK)): Buffer {
  if (ciphertext.length < BLOCK) throw new KerberosDecodeError(`CBC-CTS ciphertext of ${ciphertext.length} bytes (at least ${BLOCK})`);
  if (ciphertext.length === BLOCK) return cbc(false, key, iv, ciphertext);
  const blocks = Math.ceil(ciphertext.length / BLOCK);
  const tail = ciphertext.length - (blocks - 1) * BLOCK;
  const head = ciphertext.subarray(0, (blocks - 2) * BLOCK);
  const cn = ciphertext.subarray((blocks - 2) * BLOCK, (blocks - 1) * BLOCK);
  const stolen = ciphertext.subarray((blocks - 1) * BLOCK);
  // D(Cn) = Pn(zero-padded) xor Cn-1: its bytes past the tail are Cn-1's, which rebuilds Cn-1.
  const d = ecbDecryptBlock(key, cn);
  const cPrev = Buffer.concat([stolen, d.subarray(tail)]);
  const pn = Buffer.alloc(tail);
  for (let i = 0; i < tail; i++) pn[i] = (d[i] as number) ^ (cPrev[i] as number);
  const front = cbc(false, key, iv, Buffer.concat([head, cPrev]));
  return Buffer.concat([front, pn]);
}

/**
 * n-fold (RFC 3961 §5.1): the input repeated lcm(len, n) / len times, each copy rotated 13 bits
 * further right than the one before, cut into n-byte pieces, and those added with end-around carry.
 */
export function nfold(input: Buffer, n: number): Buffer {
  const inBits = BigInt(input.length * 8);
  const outBits = BigInt(n * 8);
  const inMask = (1n << inBits) - 1n;
  const outMask = (1n << outBits) - 1n;
  const x = BigInt(`0x${input.toString('hex') || '0'}`);
  const gcd = (a: number, b: number): number => (b === 0 ? a : gcd(b, a % b));
  const copies = n / gcd(input.length, n);
  let all = 0n;
  for (let k = 0; k < copies; k++) {
    const r = BigInt(13 * k) % inBits;
    const rotated = ((x >> r) | (x << (inBits - r))) & inMask;
    all = (all << inBits) | rotated;
  }
  let sum = 0n;
  for (let rest = all, pieces = (BigInt(copies) * inBits) / outBits; pieces > 0n; pieces--) {
    sum += rest & outMask;
    rest >>= outBits;
  }
  while (sum > outMask) sum = (sum & outMask) + (sum >> outBits);
  return Buffer.from(sum.toString(16).padStart(n * 2, '0'), 'hex');
}

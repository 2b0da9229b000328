import { describe, expect, it } from 'vitest';
import { decode } from './der.js';
import { IntegrityError } from './errors.js';
import { frameContextToken, gssChecksum, TokId, unframeContextToken, unwrap, wrap } from './gss-tokens.js';
import { EncryptionKey } from './keys.js';

const key = new EncryptionKey(18, Buffer.alloc(32, 3));
const keys = { key, acceptorSubkey: true };

/** Rotates the data after the 16-byte header right by `rrc` and sets the RRC field, as a Windows acceptor sends. */
function rotate(token: Buffer, rrc: number): Buffer {
  const body = token.subarray(16);
  const r = rrc % body.length;
  const out = Buffer.concat([token.subarray(0, 16), body.subarray(body.length - r), body.subarray(0, body.length - r)]);
  out.writeUInt16BE(rrc, 6);
  return out;
}

describe('kerberos/gss-tokens - RFC 4121 framing and Wrap tokens', () => {
  it('context tokens carry [APPLICATION 0], the krb5 OID and the TOK_ID', () => {
    const t = frameContextToken(TokId.AP_REQ, Buffer.from('6e00', 'hex'));
    expect(t.toString('hex')).toBe('600f06092a864886f7120102020100' + '6e00');
    expect(decode(t).identifier).toBe(0x60);
    expect(unframeContextToken(t)).toEqual({ tokId: 0x0100, inner: Buffer.from('6e00', 'hex') });
  });

  it('the 0x8003 checksum is Lgth 16, zero bindings, little-endian flags', () => {
    expect(gssChecksum(0x3e).toString('hex')).toBe('10000000' + '00'.repeat(16) + '3e000000');
  });

  it('Wrap tokens round-trip sealed and signed, with the header as RFC 4121 §4.2.6.2 lays it out', () => {
    for (const conf of [true, false]) {
      const t = wrap(keys, true, 7n, Buffer.from('hello'), conf);
      expect(t.subarray(0, 4).toString('hex')).toBe(`0504${conf ? '07' : '05'}ff`);
      expect(t.readBigUInt64BE(8)).toBe(7n);
      if (!conf) expect(t.readUInt16BE(4)).toBe(12); // EC holds the HMAC-SHA1-96 length
      expect(unwrap(keys, true, t)).toEqual({ message: Buffer.from('hello'), seq: 7n, confidential: conf });
    }
  });

  it('a rotated token (RRC ≠ 0) is unrotated before checking', () => {
    for (const conf of [true, false]) {
      for (const rrc of [1, 16, 28, 300]) {
        expect(unwrap(keys, false, rotate(wrap(keys, false, 1n, Buffer.from('rotated'), conf), rrc)).message.toString(), `${conf} ${rrc}`).toBe('rotated');
      }
    }
  });

  it('a reflected token (wrong direction), a changed sequence number or a flipped byte is refused', () => {
    const t = wrap(keys, false, 1n, Buffer.from('x'), true);
    expect(() => unwrap(keys, true, t)).toThrow(/direction/);
    const seq = Buffer.from(t);
    seq[15] = 2;
    expect(() => unwrap(keys, false, seq)).toThrow(IntegrityError);
    const signed = wrap(keys, false, 1n, Buffer.from('abc'), false);
    signed[16] = 0x41;
    expect(() => unwrap(keys, false, signed)).toThrow(IntegrityError);
  });
});

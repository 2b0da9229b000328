import { describe, expect, it } from 'vitest';
import {
  application,
  asGeneralString,
  asInteger,
  asKerberosFlags,
  asKerberosTime,
  asOctetString,
  decode,
  explicit,
  fields,
  flagBits,
  generalString,
  integer,
  kerberosFlags,
  kerberosTime,
  octetString,
  sequence,
  sequenceOf,
  unwrapApplication,
} from './der.js';
import { KerberosDecodeError } from './errors.js';

const hex = (b: Buffer) => b.toString('hex');

describe('kerberos/der - encodings', () => {
  it('INTEGER is minimal two’s complement (X.690 §8.3)', () => {
    const cases: Array<[number, string]> = [
      [0, '020100'],
      [127, '02017f'],
      [128, '02020080'],
      [256, '02020100'],
      [-1, '0201ff'],
      [-128, '020180'],
      [-129, '0202ff7f'],
      [2 ** 31 - 1, '02047fffffff'],
      [2 ** 32 - 1, '020500ffffffff'],
      [-(2 ** 31), '020480000000'],
    ];
    for (const [n, enc] of cases) {
      expect(hex(integer(n)), String(n)).toBe(enc);
      expect(asInteger(decode(Buffer.from(enc, 'hex'))), enc).toBe(n);
    }
  });

  it('lengths use the short form below 128 and the long form above', () => {
    expect(hex(octetString(Buffer.alloc(127))).slice(0, 4)).toBe('047f');
    expect(hex(octetString(Buffer.alloc(200))).slice(0, 6)).toBe('0481c8');
    expect(hex(octetString(Buffer.alloc(300))).slice(0, 8)).toBe('0482012c');
    expect(asOctetString(decode(octetString(Buffer.alloc(300, 7))))).toEqual(Buffer.alloc(300, 7));
  });

  it('KerberosTime is YYYYMMDDHHMMSSZ without a fraction', () => {
    const t = kerberosTime(new Date(Date.UTC(2026, 10, 29, 6, 5, 4, 999)));
    expect(t.toString('latin1', 2)).toBe('20261129060504Z');
    expect(hex(t).slice(0, 4)).toBe('180f');
    expect(asKerberosTime(decode(t)).toISOString()).toBe('2026-11-29T06:05:04.000Z');
    expect(asKerberosTime(decode(Buffer.concat([Buffer.from([0x18, 17]), Buffer.from('19700101000000.5Z')]))).toISOString()).toBe('1970-01-01T00:00:00.500Z');
  });

  it('KerberosFlags: forwardable, renewable, canonicalize, renewable-ok is 03 05 00 40 81 00 10', () => {
    const flags = flagBits(1, 8, 15, 27);
    expect(hex(kerberosFlags(flags))).toBe('030500408100' + '10');
    expect(asKerberosFlags(decode(kerberosFlags(flags)))).toBe(0x40810010);
    // A BIT STRING shorter than 32 bits (some encoders trim) reads as zero-padded.
    expect(asKerberosFlags(decode(Buffer.from('03020040', 'hex')))).toBe(0x40000000);
  });

  it('a PrincipalName (krbtgt/ZK.TEST, NT-SRV-INST) encodes as the hand-built bytes', () => {
    const name = sequence([explicit(0, integer(2)), explicit(1, sequence([generalString('krbtgt'), generalString('ZK.TEST')]))]);
    expect(hex(name)).toBe('301aa003020102a1133011' + '1b06' + Buffer.from('krbtgt').toString('hex') + '1b07' + Buffer.from('ZK.TEST').toString('hex'));
    const f = fields(decode(name), 'PrincipalName');
    expect(asInteger(f.required(0, 'name-type'))).toBe(2);
    expect(sequenceOf(f.required(1, 'name-string'), 'name-string').map((t) => asGeneralString(t))).toEqual(['krbtgt', 'ZK.TEST']);
    expect(f.optional(2)).toBeUndefined();
  });

  it('APPLICATION tags wrap and unwrap ([APPLICATION 10] is 6a)', () => {
    const enc = application(10, sequence([explicit(1, integer(5))]));
    expect(hex(enc)).toBe('6a073005a103020105');
    expect(asInteger(fields(unwrapApplication(decode(enc), 10, 'AS-REQ'), 'KDC-REQ').required(1, 'pvno'))).toBe(5);
  });

  it('absent OPTIONAL fields are left out of a SEQUENCE', () => {
    expect(hex(sequence([explicit(0, undefined), explicit(1, integer(1))]))).toBe('3005a103020101');
  });
});

describe('kerberos/der - suspicious decoding', () => {
  const bad = (h: string) => () => decode(Buffer.from(h, 'hex'));
  it('rejects truncation, indefinite lengths, trailing bytes and wrong tags with KerberosDecodeError', () => {
    expect(bad('0405abcd')).toThrow(KerberosDecodeError);
    expect(bad('3080')).toThrow(/indefinite/);
    expect(bad('02010000')).toThrow(/trailing/);
    expect(bad('04')).toThrow(/truncated/);
    expect(bad('0485ffffffffff')).toThrow(/5-octet length/);
    expect(() => asInteger(decode(Buffer.from('040100', 'hex')))).toThrow(/expected tag 0x2/);
    expect(() => fields(decode(Buffer.from('300aa103020101a003020101'.replace(/ /g, ''), 'hex')), 'X')).toThrow(/out of order/);
    expect(() => fields(decode(Buffer.from('3000', 'hex')), 'X').required(0, 'pvno')).toThrow(/missing pvno/);
  });
});

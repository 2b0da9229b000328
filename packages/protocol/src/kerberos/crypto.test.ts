import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import { ctsDecrypt, ctsEncrypt, nfold } from './aes-cts.js';
import { checksum, decrypt, encrypt, stringToKey, verifyChecksum } from './crypto.js';
import { checksumWith, decryptWith, encryptWith } from './enctype.js';
import { IntegrityError } from './errors.js';
import { EncryptionKey } from './keys.js';
import { aes128CtsHmacSha196, aes256CtsHmacSha196 } from './rfc3962.js';
import { aes128CtsHmacSha256128, aes256CtsHmacSha384192 } from './rfc8009.js';

const h = (s: string) => Buffer.from(s, 'hex');
const hex = (b: Buffer) => b.toString('hex');

// Every vector below is copied from the RFC named, as published (also in jcmturner/gokrb5's
// v8/crypto tests and several other implementations' test suites, where they were cross-checked).

describe('kerberos/crypto - RFC 3961 Appendix A.1 n-fold', () => {
  it('matches the published n-fold outputs', () => {
    const cases: Array<[string, number, string]> = [
      ['012345', 64, 'be072631276b1955'],
      ['password', 56, '78a07b6caf85fa'],
      ['Rough Consensus, and Running Code', 64, 'bb6ed30870b7f0e0'],
      ['password', 168, '59e4a8ca7c0385c3c37b3f6d2000247cb6e6bd5b3e'],
      ['MASSACHVSETTS INSTITVTE OF TECHNOLOGY', 192, 'db3b0d8f0b061e603282b308a50841229ad798fab9540c1b'],
      ['Q', 168, '518a54a215a8452a518a54a215a8452a518a54a215'],
      ['ba', 168, 'fb25d531ae8974499f52fd92ea9857c4ba24cf297e'],
      ['kerberos', 64, '6b65726265726f73'],
      ['kerberos', 128, '6b65726265726f737b9b5b2b93132b93'],
    ];
    for (const [input, bits, out] of cases) expect(hex(nfold(Buffer.from(input), bits / 8)), `${bits}-fold(${input})`).toBe(out);
  });
});

describe('kerberos/crypto - RFC 3962 Appendix B', () => {
  // key "chicken teriyaki", IV zero
  const key = Buffer.from('chicken teriyaki');
  const text = "I would like the General Gau's Chicken, please, and wonton soup.";
  const cts: Array<[number, string]> = [
    [17, 'c6353568f2bf8cb4d8a580362da7ff7f97'],
    [31, 'fc00783e0efdb2c1d445d4c8eff7ed2297687268d6ecccc0c07b25e25ecfe5'],
    [32, '39312523a78662d5be7fcbcc98ebf5a897687268d6ecccc0c07b25e25ecfe584'],
    [47, '97687268d6ecccc0c07b25e25ecfe584b3fffd940c16a18c1b5549d2f838029e39312523a78662d5be7fcbcc98ebf5'],
    [48, '97687268d6ecccc0c07b25e25ecfe5849dad8bbb96c4cdc03bc103e1a194bbd839312523a78662d5be7fcbcc98ebf5a8'],
    [64, '97687268d6ecccc0c07b25e25ecfe58439312523a78662d5be7fcbcc98ebf5a84807efe836ee89a526730dbc2f7bc8409dad8bbb96c4cdc03bc103e1a194bbd8'],
  ];
  it('CBC-CTS encrypts and decrypts the sample texts', () => {
    for (const [len, out] of cts) {
      const plain = Buffer.from(text.slice(0, len));
      expect(hex(ctsEncrypt(key, plain)), `${len} bytes`).toBe(out);
      expect(ctsDecrypt(key, h(out)).toString(), `${len} bytes`).toBe(plain.toString());
    }
  });

  it('CBC-CTS round-trips every length from one block to five', () => {
    const k = Buffer.alloc(32, 9);
    for (let n = 16; n <= 80; n++) {
      const p = Buffer.from(Array.from({ length: n }, (_, i) => (i * 7) & 0xff));
      expect(ctsDecrypt(k, ctsEncrypt(k, p)), String(n)).toEqual(p);
    }
  });

  it('string-to-key gives the published AES-128 and AES-256 keys', () => {
    const gClef = h('f09d849e').toString('utf8');
    const cases: Array<[number, string | Buffer, string | Buffer, string, string]> = [
      [1, 'password', 'ATHENA.MIT.EDUraeburn', '42263c6e89f4fc28b8df68ee09799f15', 'fe697b52bc0d3ce14432ba036a92e65bbb52280990a2fa27883998d72af30161'],
      [2, 'password', 'ATHENA.MIT.EDUraeburn', 'c651bf29e2300ac27fa469d693bdda13', 'a2e16d16b36069c135d5e9d2e25f896102685618b95914b467c67622225824ff'],
      [1200, 'password', 'ATHENA.MIT.EDUraeburn', '4c01cd46d632d01e6dbe230a01ed642a', '55a6ac740ad17b4846941051e1e8b0a7548d93b0ab30a8bc3ff16280382b8c2a'],
      [5, 'password', h('1234567878563412'), 'e9b23d52273747dd5c35cb55be619d8e', '97a4e786be20d81a382d5ebc96d5909cabcdadc87ca48f574504159f16c36e31'],
      [1200, 'X'.repeat(64), 'pass phrase equals block size', '59d1bb789a828b1aa54ef9c2883f69ed', '89adee3608db8bc71f1bfbfe459486b05618b70cbae22092534e56c553ba4b34'],
      [1200, 'X'.repeat(65), 'pass phrase exceeds block size', 'cb8005dc5f90179a7f02104c0018751d', 'd78c5c9cb872a8c9dad4697f0bb5b2d21496c82beb2caeda2112fceea057401b'],
      [50, gClef, 'EXAMPLE.COMpianist', 'f149c1f2e154a73452d43e7fe62a56e5', '4b6d9839f84406df1f09cc166db4b83c571848b784a3d6bdc346589a3e393f9e'],
    ];
    for (const [iterations, password, salt, k128, k256] of cases) {
      const params = Buffer.alloc(4);
      params.writeUInt32BE(iterations, 0);
      expect(hex(aes128CtsHmacSha196.stringToKey(Buffer.from(password), Buffer.from(salt), params)), `aes128 ${iterations}`).toBe(k128);
      expect(hex(aes256CtsHmacSha196.stringToKey(Buffer.from(password), Buffer.from(salt), params)), `aes256 ${iterations}`).toBe(k256);
    }
  });
});

describe('kerberos/crypto - RFC 8009 Appendix A', () => {
  const salt = Buffer.concat([h('10df9dd783e5bc8acea1730e74355f61'), Buffer.from('ATHENA.MIT.EDUraeburn')]);
  const iter = h('00008000'); // 32768

  it('string-to-key', () => {
    expect(hex(aes128CtsHmacSha256128.stringToKey(Buffer.from('password'), salt, iter))).toBe('089bca48b105ea6ea77ca5d2f39dc5e7');
    expect(hex(aes256CtsHmacSha384192.stringToKey(Buffer.from('password'), salt, iter))).toBe('45bd806dbf6a833a9cffc1c94589a222367a79bc21c413718906e9f578a78467');
  });

  const suites = [
    {
      e: aes128CtsHmacSha256128,
      base: '3705d96080c17728a0e800eab6e0d23c',
      kc: 'b31a018a48f54776f403e9a396325dc3',
      ke: '9b197dd1e8c5609d6e67c3e37c62c72e',
      ki: '9fda0e56ab2d85e1569a688696c26a6c',
      checksum: 'd78367186643d67b411cba9139fc1dee',
      encryptions: [
        ['', '7e5895eaf2672435bad817f545a37148', 'ef85fb890bb8472f4dab20394dca781dad877eda39d50c870c0d5a0a8e48c718'],
        ['000102030405', '7bca285e2fd4130fb55b1a5c83bc5b24', '84d7f30754ed987bab0bf3506beb09cfb55402cef7e6877ce99e247e52d16ed4421dfdf8976c'],
        ['000102030405060708090a0b0c0d0e0f', '56ab21713ff62c0a1457200f6fa9948f', '3517d640f50ddc8ad3628722b3569d2ae07493fa8263254080ea65c1008e8fc295fb4852e7d83e1e7c48c37eebe6b0d3'],
        ['000102030405060708090a0b0c0d0e0f1011121314', 'a7a4e29a4728ce10664fb64e49ad3fac', '720f73b18d9859cd6ccb4346115cd336c70f58edc0c4437c5573544c31c813bce1e6d072c186b39a413c2f92ca9b8334a287ffcbfc'],
      ],
    },
    {
      e: aes256CtsHmacSha384192,
      base: '6d404d37faf79f9df0d33568d320669800eb4836472ea8a026d16b7182460c52',
      kc: 'ef5718be86cc84963d8bbb5031e9f5c4ba41f28faf69e73d',
      ke: '56ab22bee63d82d7bc5227f6773f8ea7a5eb1c825160c38312980c442e5c7e49',
      ki: '69b16514e3cd8e56b82010d5c73012b622c4d00ffc23ed1f',
      checksum: '45ee791567eefca37f4ac1e0222de80d43c3bfa06699672a',
      encryptions: [
        ['', 'f764e9fa15c276478b2c7d0c4e5f58e4', '41f53fa5bfe7026d91faf9be959195a058707273a96a40f0a01960621ac612748b9bbfbe7eb4ce3c'],
        ['000102030405', 'b80d3251c1f6471494256ffe712d0b9a', '4ed7b37c2bcac8f74f23c1cf07e62bc7b75fb3f637b9f559c7f664f69eab7b6092237526ea0d1f61cb20d69d10f2'],
        ['000102030405060708090a0b0c0d0e0f', '53bf8a0d105265d4e276428624ce5e63', 'bc47ffec7998eb91e8115cf8d19dac4bbbe2e163e87dd37f49beca92027764f68cf51f14d798c2273f35df574d1f932e40c4ff255b36a266'],
        ['000102030405060708090a0b0c0d0e0f1011121314', '763e65367e864f02f55153c7e3b58af1', '40013e2df58e8751957d2878bcd2d6fe101ccfd556cb1eae79db3c3ee86429f2b2a602ac86fef6ecb647d6295fae077a1feb517508d2c16b4192e01f62'],
      ],
    },
  ];

  for (const s of suites) {
    it(`${s.e.name}: key derivation for usage 2, checksum, and the four sample encryptions`, () => {
      const base = h(s.base);
      const keys = s.e.usageKeys(base, 2);
      expect([hex(keys.kc), hex(keys.ke), hex(keys.ki)]).toEqual([s.kc, s.ke, s.ki]);
      expect(hex(checksumWith(s.e, base, 2, h('000102030405060708090a0b0c0d0e0f1011121314')))).toBe(s.checksum);
      for (const [plain, confounder, cipher] of s.encryptions as Array<[string, string, string]>) {
        expect(hex(encryptWith(s.e, base, 2, h(plain), h(confounder))), `encrypt ${plain.length / 2} bytes`).toBe(cipher);
        expect(hex(decryptWith(s.e, base, 2, h(cipher))), `decrypt ${plain.length / 2} bytes`).toBe(plain);
      }
    });
  }
});

describe('kerberos/crypto - keys', () => {
  it('encrypt/decrypt round-trip for every enctype; a wrong key or usage or a flipped bit is an IntegrityError', () => {
    for (const id of [17, 18, 19, 20]) {
      const key = stringToKey(id, 'secret', 'ZK.TESTalice', Buffer.from([0, 0, 0, 2]));
      const other = stringToKey(id, 'secret2', 'ZK.TESTalice', Buffer.from([0, 0, 0, 2]));
      const ct = encrypt(key, 3, Buffer.from('hello kerberos'));
      expect(decrypt(key, 3, ct).toString()).toBe('hello kerberos');
      expect(() => decrypt(other, 3, ct)).toThrow(IntegrityError);
      expect(() => decrypt(key, 4, ct)).toThrow(IntegrityError);
      const flipped = Buffer.from(ct);
      flipped[5] = (flipped[5] as number) ^ 1;
      expect(() => decrypt(key, 3, flipped)).toThrow(IntegrityError);
      const sum = checksum(key, 10, Buffer.from('data'));
      verifyChecksum(key, 10, Buffer.from('data'), sum.value);
      expect(() => verifyChecksum(key, 10, Buffer.from('datA'), sum.value)).toThrow(IntegrityError);
    }
  });

  it('an EncryptionKey never shows its bytes: inspect, JSON, String', () => {
    const key = new EncryptionKey(18, h('fe697b52bc0d3ce14432ba036a92e65bbb52280990a2fa27883998d72af30161'));
    const shown = [inspect(key), inspect({ nested: { key } }, { depth: 5 }), JSON.stringify({ key }), String(key), `${key}`];
    for (const s of shown) {
      expect(s).not.toContain('fe69');
      expect(s).not.toContain('fe 69');
      expect(s).toContain('redacted');
    }
  });
});
